package journal

import (
	"context"
	"errors"
	"fmt"
)

// ErrSuspended: a run in the one-live-call mode (LiveCalls) reached a
// live side effect after its budget of live calls was spent; the run
// stopped there, with everything before it journaled, to be resumed (by
// another process, another activity) for the next call.
var ErrSuspended = errors.New("journal: the run is suspended before its next live call")

// Stopped reports whether err is the journal's own reason to stop a call
// (ErrDiverged, ErrCorrupt or ErrSuspended), not the call's failure:
// callers pass it on unchanged rather than classify, retry or record it.
func Stopped(err error) bool {
	return errors.Is(err, ErrDiverged) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrSuspended)
}

// SuspendedError stops a run in the one-live-call mode at its next live
// call, the one it would have made. It matches ErrSuspended.
type SuspendedError struct {
	// Kind is the kind of the call the run stopped at (KindModel,
	// KindTool, or KindApproval for a decision a resumed run must
	// record, KindNode for a transition after the suspension).
	Kind Kind
	// Scope and Node say where the call was made.
	Scope, Node string
	// Digest identifies the call's request ("" for a node transition or
	// an approval).
	Digest string
	// LiveErr is the error of the run's allowed live call, when that call
	// failed before the run reached this one: resuming would make it
	// again, so the caller should treat the suspension as that failure
	// (and retry it).
	LiveErr error
}

// Error names the call the run stopped at.
func (e *SuspendedError) Error() string {
	s := fmt.Sprintf("%s: %s call in %s", ErrSuspended, e.Kind, scopeName(e.Scope))
	if e.Node != "" {
		s += fmt.Sprintf(" (node %s)", e.Node)
	}
	if e.LiveErr != nil {
		s += fmt.Sprintf(", after the run's live call failed: %v", e.LiveErr)
	}
	return s
}

// Unwrap returns ErrSuspended.
func (e *SuspendedError) Unwrap() error { return ErrSuspended }

// OpenOption configures a session (Open).
type OpenOption func(*Run)

// LiveCalls makes the session allow only n live external calls — model
// and tool calls; calls answered from the journal are free, and node
// transitions and approval decisions are journaled as usual. The run's
// next live call after the n-th does not happen: it returns a
// *SuspendedError, and from then on the session journals nothing more
// (its node transitions and decisions fail with the same error), so that
// a run that swallowed the error does not journal a path it took because
// of it. While an allowed live call is in flight, another branch that
// reaches a live call, or an approval, waits for it to finish and be
// journaled before it is suspended, so a branch's error cannot cancel the
// allowed call before it is saved. A durable engine (package temporal)
// resumes the run once per call, each time with n = 1. Default: no limit;
// n < 0 means no limit.
func LiveCalls(n int) OpenOption {
	return func(r *Run) {
		if n >= 0 {
			r.gate = &gate{left: n}
		} else {
			r.gate = nil
		}
	}
}

// gate is the state of the one-live-call mode of a Run; r.mu guards it.
type gate struct {
	// left is how many live calls the session may still make.
	left int
	// inflight is closed when the live call being made has finished (and
	// is journaled, when it succeeded); nil when none is in flight.
	inflight chan struct{}
	// suspended is the session's first suspension; once set, nothing more
	// is journaled.
	suspended *SuspendedError
	// liveErr is the error of a live call that failed.
	liveErr error
}

// admit decides whether a live call of kind may be made: it returns the
// release function to call once the call has finished (err its error,
// nil when the call was journaled), or the *SuspendedError that stops
// the run. Without a budget it admits everything.
func (r *Run) admit(ctx context.Context, kind Kind, scope, node, sum string) (release func(err error), err error) {
	if r.gate == nil {
		return func(error) {}, nil
	}
	for {
		r.mu.Lock()
		g := r.gate
		if g.suspended == nil && g.left > 0 && g.inflight == nil {
			g.left--
			ch := make(chan struct{})
			g.inflight = ch
			r.mu.Unlock()
			return func(err error) {
				r.mu.Lock()
				if err != nil && g.liveErr == nil {
					g.liveErr = err
				}
				g.inflight = nil
				close(ch)
				r.mu.Unlock()
			}, nil
		}
		ch := g.inflight
		if ch == nil {
			se := r.suspendLocked(kind, scope, node, sum)
			r.mu.Unlock()
			return nil, se
		}
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// suspendLocked records the session's suspension (the first one stays)
// and returns the error for a call of kind; r.mu is held.
func (r *Run) suspendLocked(kind Kind, scope, node, sum string) *SuspendedError {
	g := r.gate
	se := &SuspendedError{Kind: kind, Scope: scope, Node: node, Digest: sum, LiveErr: g.liveErr}
	if g.suspended == nil {
		g.suspended = se
	}
	return se
}

// quiesce waits, in the one-live-call mode, until no live call is in
// flight, and returns the session's suspension (as a *SuspendedError of
// kind) if it has one: a node transition or an approval decision is not
// journaled after a suspension.
func (r *Run) quiesce(ctx context.Context, kind Kind, scope, node string) error {
	if r.gate == nil {
		return nil
	}
	for {
		r.mu.Lock()
		g := r.gate
		if ch := g.inflight; ch != nil {
			r.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		defer r.mu.Unlock()
		if g.suspended == nil {
			return nil
		}
		return &SuspendedError{Kind: kind, Scope: scope, Node: node, LiveErr: g.liveErr}
	}
}

// Suspension returns the session's first suspension in the one-live-call
// mode, or nil: the call a resumed run must make next.
func (r *Run) Suspension() *SuspendedError {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gate == nil || r.gate.suspended == nil {
		return nil
	}
	se := *r.gate.suspended
	se.LiveErr = r.gate.liveErr
	return &se
}
