package steps

import (
	"context"
	"sync"

	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
)

// Dispatcher runs the steps of a plan that is still being written: each
// step added starts as soon as its dependencies are done (and a slot of
// max_concurrency is free), as in a visit of the execute node, while
// later steps are yet to come. A planner streaming its reply adds each
// step as its text completes (see plan.Stream), so the first tool call
// starts while the model is still writing the rest of the plan.
//
// While a Dispatcher runs it owns st.Plan: the steps added are appended to
// it and their outcomes written to it. Read st.Plan only after Close or
// Abort returned.
type Dispatcher struct {
	feed   *feed
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// Dispatch starts a Dispatcher for st with e's strategy, concurrency and
// tools; its step events come from e's node id. Add steps to it, then
// Close it (or Abort it).
func (e *Execute) Dispatch(ctx context.Context, st *state.State) *Dispatcher {
	ctx, cancel := context.WithCancel(ctx)
	d := &Dispatcher{feed: &feed{wake: make(chan struct{}, 1)}, cancel: cancel, done: make(chan struct{})}
	sched := e.newScheduler(ctx, st)
	sched.feed = d.feed
	go func() {
		defer close(d.done)
		d.err = sched.run(ctx)
	}()
	return d
}

// Add hands steps to the dispatcher, in plan order. Their ids must be new
// to the plan; a step may depend on a step not added yet (it waits for
// it). Add never blocks on running steps.
func (d *Dispatcher) Add(steps ...plan.Step) {
	if len(steps) > 0 {
		d.feed.add(steps)
	}
}

// Close says no more steps come, waits until every step that can run has
// run (steps whose dependencies never arrived stay pending), and returns
// what a visit of the execute node would: nil, or the error that ended it
// (cancellation, a model-provider failure).
func (d *Dispatcher) Close() error {
	d.feed.close()
	<-d.done
	d.cancel()
	return d.err
}

// Abort cancels the running steps and waits for them to end; the plan
// keeps the outcomes reached so far (cancelled steps are failed).
func (d *Dispatcher) Abort() {
	d.cancel()
	d.feed.close()
	<-d.done
}

// feed passes steps from the writer of a plan to the scheduler: add and
// close signal wake, which the scheduler waits on beside running steps.
type feed struct {
	mu     sync.Mutex
	steps  []plan.Step
	closed bool
	wake   chan struct{} // buffered 1: a pending signal is enough
}

func (f *feed) add(steps []plan.Step) {
	f.mu.Lock()
	f.steps = append(f.steps, steps...)
	f.mu.Unlock()
	f.signal()
}

func (f *feed) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.signal()
}

func (f *feed) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// drain returns the steps added since the last drain and whether the feed
// is closed.
func (f *feed) drain() ([]plan.Step, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	steps := f.steps
	f.steps = nil
	return steps, f.closed
}
