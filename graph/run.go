package graph

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// DefaultMaxSteps bounds a run when no limit is given.
const DefaultMaxSteps = 100

// EventKind says what happened in a run.
type EventKind string

// The events a run reports to observers.
const (
	EventNodeStart EventKind = "node_start"
	EventNodeEnd   EventKind = "node_end"
	EventRoute     EventKind = "route"
	EventError     EventKind = "node_error"
)

// Event is one observation of a run.
type Event struct {
	Kind EventKind
	// Step is the 1-based index of the node execution.
	Step int
	// Node is the node the event is about.
	Node string
	// Route is the route returned, for EventRoute and EventNodeEnd.
	Route string
	// To is the next node, for EventRoute.
	To string
	// Elapsed is the node's run time, for EventNodeEnd and EventError.
	Elapsed time.Duration
	// Err is the node's error, for EventError.
	Err error
}

// Observer receives run events synchronously, in order. It must not block
// for long: the run waits for it.
type Observer interface {
	Observe(ctx context.Context, e Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(ctx context.Context, e Event)

// Observe calls f.
func (f ObserverFunc) Observe(ctx context.Context, e Event) { f(ctx, e) }

// RunOption configures one run.
type RunOption func(*runConfig)

type runConfig struct {
	maxSteps  int
	observers []Observer
	wrap      NodeWrap
}

// NodeWrap wraps every node execution of a run: it is given the
// execution's number in the run (from 1), the node's id and run, which
// executes the node with the context it is given; it returns the route
// the execution takes. It may act before and after run, and its error
// fails the run (wrapped in a *NodeError naming the node when it is not
// one already). The pipeline runs its hooks (the journal, spans) this
// way.
type NodeWrap func(ctx context.Context, step int, node string, run func(context.Context) (string, error)) (string, error)

// WithNodeWrap wraps every node execution of the run in w. Optional.
// Default: none. A later WithNodeWrap replaces an earlier one.
func WithNodeWrap(w NodeWrap) RunOption {
	return func(c *runConfig) { c.wrap = w }
}

// WithMaxSteps bounds the number of node executions. Optional. Defaults to
// DefaultMaxSteps (100). Values below 1 mean the default.
func WithMaxSteps(n int) RunOption {
	return func(c *runConfig) {
		if n > 0 {
			c.maxSteps = n
		}
	}
}

// WithObserver adds an observer of run events.
func WithObserver(o Observer) RunOption {
	return func(c *runConfig) { c.observers = append(c.observers, o) }
}

// Result describes a finished run.
type Result struct {
	// Steps lists the node ids executed, in order.
	Steps []string
}

// MaxStepsError is returned when a run hits its step limit. It carries the
// steps taken so far.
type MaxStepsError struct {
	Limit int
	Steps []string
}

func (e *MaxStepsError) Error() string {
	last := ""
	if n := len(e.Steps); n > 0 {
		last = fmt.Sprintf(" (last node %q)", e.Steps[n-1])
	}
	return fmt.Sprintf("%v: %d node executions%s; raise limits.max_steps or give the loop an exit", ErrMaxSteps, e.Limit, last)
}

// Unwrap returns ErrMaxSteps.
func (e *MaxStepsError) Unwrap() error { return ErrMaxSteps }

// NodeError is a failure inside a node. Err is the node's error, or
// ErrNodePanic wrapped with the panic value.
type NodeError struct {
	Node  string
	Step  int
	Err   error
	Stack string
}

func (e *NodeError) Error() string { return fmt.Sprintf("node %q: %v", e.Node, e.Err) }

// Unwrap returns the node's error.
func (e *NodeError) Unwrap() error { return e.Err }

// Run executes the graph on state from START until END. It returns the steps
// taken, also on error. Cancelling ctx stops the run before the next node and
// is passed to the running node, which must honour it.
func (c *Compiled[S]) Run(ctx context.Context, state S, opts ...RunOption) (Result, error) {
	cfg := runConfig{maxSteps: DefaultMaxSteps}
	for _, o := range opts {
		o(&cfg)
	}
	cur := c.first
	res := Result{Steps: make([]string, 0, 16)}
	emit := func(e Event) {
		for _, o := range cfg.observers {
			o.Observe(ctx, e)
		}
	}
	for cur != END {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("run stopped before node %q: %w", cur, context.Cause(ctx))
		}
		if len(res.Steps) >= cfg.maxSteps {
			return res, &MaxStepsError{Limit: cfg.maxSteps, Steps: res.Steps}
		}
		entry := c.nodes[cur]
		res.Steps = append(res.Steps, cur)
		step := len(res.Steps)
		if cfg.observers != nil {
			emit(Event{Kind: EventNodeStart, Step: step, Node: cur})
		}
		began := time.Now()
		var (
			route string
			err   error
		)
		if cfg.wrap == nil {
			route, err = runNode(ctx, entry, state, step)
		} else {
			route, err = cfg.wrap(ctx, step, cur, func(ctx context.Context) (string, error) { return runNode(ctx, entry, state, step) })
			var ne *NodeError
			if err != nil && !errors.As(err, &ne) {
				err = &NodeError{Node: cur, Step: step, Err: err}
			}
		}
		elapsed := time.Since(began)
		if err != nil {
			if cfg.observers != nil {
				emit(Event{Kind: EventError, Step: step, Node: cur, Elapsed: elapsed, Err: err})
			}
			return res, err
		}
		next, ok := c.next(cur, route)
		if !ok {
			err := &NodeError{Node: cur, Step: step, Err: fmt.Errorf("%w: %q (declared: %v)", ErrBadRoute, route, entry.routes)}
			if cfg.observers != nil {
				emit(Event{Kind: EventError, Step: step, Node: cur, Elapsed: elapsed, Err: err})
			}
			return res, err
		}
		if cfg.observers != nil {
			emit(Event{Kind: EventNodeEnd, Step: step, Node: cur, Route: route, Elapsed: elapsed})
			emit(Event{Kind: EventRoute, Step: step, Node: cur, Route: route, To: next})
		}
		cur = next
	}
	return res, nil
}

func (c *Compiled[S]) next(from, route string) (string, bool) {
	e := c.edges[from]
	if e == nil {
		return "", false
	}
	if route == DefaultRoute {
		return e.plain, e.plain != ""
	}
	to, ok := e.routes[route]
	return to, ok
}

func runNode[S any](ctx context.Context, entry *nodeEntry[S], state S, step int) (route string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &NodeError{Node: entry.id, Step: step, Err: fmt.Errorf("%w: %v", ErrNodePanic, p), Stack: string(debug.Stack())}
		}
	}()
	route, err = entry.node.Run(ctx, state)
	if err != nil {
		var ne *NodeError
		if errors.As(err, &ne) && ne.Node == entry.id {
			return route, err
		}
		return route, &NodeError{Node: entry.id, Step: step, Err: err}
	}
	return route, nil
}
