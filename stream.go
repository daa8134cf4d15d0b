package planner

import (
	"context"
	"iter"
	"slices"
	"sync"

	"github.com/planner-engine/planner/trace"
)

// WithTokens makes the run's model calls stream: each chunk of a reply is
// a trace event of kind trace.KindToken (see llm.WithTokenEvents for its
// fields) that reaches the WithTraceSink sinks, the WithTraceFile file and
// Run.Events as it arrives. Token events are not kept in Result.Trace.
// The answer is the same as without streaming. Default off: no call
// streams and no token events are emitted.
func WithTokens() RunOption {
	return func(o *runOptions) { o.tokens = true }
}

// Run is a run started by Pipeline.Start: it goes on in the background
// while its events can be read with Events. It is safe for concurrent use.
type Run struct {
	done   chan struct{}
	events *eventLog
	res    *Result
	err    error
}

// Start starts a run of the pipeline on question in the background, with
// the same options and behaviour as Pipeline.Run, and returns at once.
// Read its events, in order and as they happen, with Run.Events, and its
// result with Run.Wait. Cancel ctx to stop it.
func (p *Pipeline) Start(ctx context.Context, question string, opts ...RunOption) *Run {
	r := &Run{done: make(chan struct{}), events: newEventLog()}
	go func() {
		defer close(r.done)
		defer r.events.close()
		r.res, r.err = p.Run(ctx, question, append(slices.Clone(opts), WithTraceSink(r.events))...)
	}()
	return r
}

// Events returns an iterator over the run's events, scrubbed and in
// sequence order: it yields every event emitted so far, then each new one
// as it is emitted, and ends when the run has ended and every event was
// yielded. Breaking out of the loop does not stop the run. Each call
// starts again from the run's first event; token events (WithTokens) are
// included.
func (r *Run) Events() iter.Seq[trace.Event] {
	return func(yield func(trace.Event) bool) {
		for i := 0; ; i++ {
			e, ok := r.events.at(i)
			if !ok || !yield(e) {
				return
			}
		}
	}
}

// Done returns a channel that is closed when the run has ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait waits for the run to end and returns what Pipeline.Run returns.
func (r *Run) Wait() (*Result, error) {
	<-r.done
	return r.res, r.err
}

// eventLog is a trace sink that keeps every event and lets readers wait
// for the next one.
type eventLog struct {
	mu     sync.Mutex
	cond   *sync.Cond
	events []trace.Event
	closed bool
}

func newEventLog() *eventLog {
	l := &eventLog{}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// Emit implements trace.Sink.
func (l *eventLog) Emit(e trace.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	l.cond.Broadcast()
}

func (l *eventLog) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.cond.Broadcast()
}

// at returns event i, waiting for it; ok is false when the log is closed
// with fewer events.
func (l *eventLog) at(i int) (trace.Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i >= len(l.events) && !l.closed {
		l.cond.Wait()
	}
	if i >= len(l.events) {
		return trace.Event{}, false
	}
	return l.events[i], true
}
