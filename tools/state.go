package tools

import (
	"context"
	"sync"
)

// RunState holds the per-run state of stateful tools: the page a docstore
// search opened, which its lookups then page through. A pipeline attaches
// a fresh RunState to each run's context (WithRunState), so concurrent runs
// of one pipeline, which share the tool objects, never share state. It is
// safe for concurrent use.
type RunState struct {
	mu     sync.Mutex
	values map[any]any
}

// NewRunState returns an empty RunState.
func NewRunState() *RunState { return &RunState{values: map[any]any{}} }

// WithRunState returns ctx carrying s; the tool calls of a run see it
// through State.
func WithRunState(ctx context.Context, s *RunState) context.Context {
	return withEnv(ctx, func(e *callEnv) { e.run = s })
}

// RunStateFrom returns the RunState in ctx, or nil.
func RunStateFrom(ctx context.Context) *RunState {
	if e := envOf(ctx); e != nil {
		return e.run
	}
	return nil
}

// State returns the value stored under key in the run state of ctx,
// creating it with create on first use in that run. key should be a value
// the tool owns (a pointer to its shared store, or an unexported key
// type), so that two tools never collide. Without a run state in ctx (a
// one-off call such as `planner tools call`), every call gets a fresh
// value from create: a call outside a run has no earlier calls to continue.
func State[T any](ctx context.Context, key any, create func() T) T {
	s := RunStateFrom(ctx)
	if s == nil {
		return create()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.values[key]; ok {
		if t, ok := v.(T); ok {
			return t
		}
	}
	v := create()
	s.values[key] = v
	return v
}
