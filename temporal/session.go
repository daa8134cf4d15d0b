package temporal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/trace"
)

// errBroken: the worker's run of a thread can no longer be advanced (its
// live call failed, an Advance's deadline cut it, the worker stopped it);
// the next Advance rebuilds it from the journal. The Advance that finds
// out fails with it, for Temporal to retry.
var errBroken = errors.New("temporal: the worker's run broke off")

// errSuperseded: a newer try of the same Advance took the run over.
var errSuperseded = errors.New("temporal: a newer try of the Advance took the run over")

// session is one run that a worker keeps between its Advances: the
// pipeline's run itself, live in a goroutine over the run's journal
// (journal/memstore), which pauses before each live model or tool call
// until an Advance lets one through (the gate: a run hook, outermost but
// for the budget). So an Advance costs one call and what the run computes
// up to the next one, not a replay of the run so far; a worker that lacks
// the run rebuilds it once, replaying its journal, and goes on live.
//
// Sessions hold no state the workflow does not: each Advance says how
// many journal entries the workflow holds and their chain digest, and a
// session whose journal does not begin with them is rebuilt.
type session struct {
	key    string
	run    RunInput
	policy Policy
	stop   context.CancelCauseFunc
	exited chan struct{}

	mu sync.Mutex
	// wake is closed, and replaced, whenever the state below changes.
	wake chan struct{}
	// entries is the run's journal, and chain[i] the chain digest of its
	// first i entries.
	entries []journal.Entry
	chain   []string
	// events are the run's trace events as this session emitted them.
	// evMark is the index of the first one after the journal's replay
	// (-1 until the replay ends), which is the workflow's event evBase.
	events []trace.Event
	evMark int
	evBase int
	// credits is 1 when the next live call may go through at once, busy
	// counts the calls let through and not finished, waiting the calls
	// that wait at the gate and calls the cancel functions of the calls
	// in flight.
	credits  int
	busy     int
	waiting  []*gated
	calls    map[int]context.CancelCauseFunc
	nextCall int
	// approvals are the tool calls that wait for a decision.
	approvals []*approvalWait
	// liveErr is the first failure of a live call; broken marks a session
	// to rebuild.
	liveErr error
	broken  bool
	// ended is set when the run returned res and runErr.
	ended  bool
	res    *planner.Result
	runErr error
	// handled is the Seq of the last Advance acted on, owner the
	// generation of the Advance that waits on the session, used when one
	// last did.
	handled int
	owner   int
	used    time.Time
}

// gated is a live call waiting at the gate.
type gated struct {
	kind    journal.Kind
	ready   chan struct{}
	granted bool
}

// approvalWait is a tool call waiting for a decision.
type approvalWait struct {
	ap     journal.Approval
	answer chan journal.Decision
}

// newSession returns the session of thread key for run, whose journal so
// far is entries, with chain[i] the chain digest of its first i entries
// (len(entries)+1 of them), and whose workflow has counted events trace
// events.
func newSession(key string, run RunInput, pol Policy, entries []journal.Entry, chain []string, events int) *session {
	s := &session{key: key, run: run, policy: pol, exited: make(chan struct{}), wake: make(chan struct{}),
		calls: map[int]context.CancelCauseFunc{}, evMark: -1, evBase: events, used: time.Now()}
	s.entries = append(make([]journal.Entry, 0, len(entries)+16), entries...)
	s.chain = append(make([]string, 0, len(chain)+16), chain...)
	if len(entries) == 0 {
		s.evMark = 0 // nothing to replay
	}
	return s
}

// start runs the pipeline p over the session's journal in a goroutine,
// with approver deciding its tool calls that need approval and runID
// stamped on its events ("" for a random one).
func (s *session) start(ctx context.Context, p *planner.Pipeline, approver journal.Approver, runID string) error {
	store, err := memstore.Load(ctx, journal.Thread{Name: threadName, Pipeline: s.run.Config, Status: journal.StatusInterrupted}, s.entries)
	if err != nil {
		return fmt.Errorf("temporal: loading the journal: %w", err)
	}
	// The run outlives the Advance that starts it: its context is the
	// session's.
	rctx, stop := context.WithCancelCause(context.Background())
	s.stop = stop
	opts := []planner.RunOption{planner.WithTask(s.run.Task), planner.WithThread(sessionStore{Store: store, s: s}, threadName),
		planner.WithApprover(approver), planner.WithTraceSink(s), planner.WithRunHooks(gate{s: s})}
	if runID != "" {
		opts = append(opts, planner.WithRunID(runID))
	}
	go func() {
		defer close(s.exited)
		res, err := p.Run(rctx, "", opts...)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ended, s.res, s.runErr = true, res, err
		s.replayEndedLocked()
		s.signalLocked()
	}()
	return nil
}

// halt stops the session's run and waits up to wait for it to return.
func (s *session) halt(cause error, wait time.Duration) {
	if s.stop != nil {
		s.stop(cause)
	}
	s.mu.Lock()
	s.broken = true
	s.signalLocked()
	s.mu.Unlock()
	if s.stop == nil || wait <= 0 {
		return
	}
	select {
	case <-s.exited:
	case <-time.After(wait):
	}
}

// signalLocked wakes whoever waits for the session's state to change.
// s.mu is held.
func (s *session) signalLocked() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// replayEndedLocked marks the end of the journal's replay in the events,
// once. s.mu is held.
func (s *session) replayEndedLocked() {
	if s.evMark < 0 {
		s.evMark = len(s.events)
	}
}

// Emit records a trace event of the run (trace.Sink).
func (s *session) Emit(e trace.Event) {
	if e.Kind == trace.KindToken {
		return
	}
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

// appended records an entry the run journaled.
func (s *session) appended(e journal.Entry) {
	s.mu.Lock()
	s.entries = append(s.entries, e)
	s.chain = append(s.chain, chainDigest(s.chain[len(s.chain)-1], e))
	s.signalLocked()
	s.mu.Unlock()
}

// usable reports whether the session can take an Advance of a workflow
// that holds base entries of chain digest digest: it is not broken and
// its journal begins with them.
func (s *session) usable(base int, digest string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.broken && base < len(s.chain) && s.chain[base] == digest
}

// prefix returns the session's first n journal entries and the chain
// digests of their first 0 to n (chain[n] is theirs), or false when it
// has fewer.
func (s *session) prefix(n int) (entries []journal.Entry, chain []string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > len(s.entries) {
		return nil, nil, false
	}
	return append([]journal.Entry(nil), s.entries[:n]...), append([]string(nil), s.chain[:n+1]...), true
}

// held returns how many of the first base entries the session holds and
// their chain digest, for a Behind.
func (s *session) held(base int) Behind {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := min(len(s.entries), base)
	return Behind{Have: n, Digest: s.chain[n]}
}

// idle returns how long ago an Advance last used the session, and
// whether its run ended.
func (s *session) idle(now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return now.Sub(s.used), s.ended
}

// sessionStore is the session's journal store: a memstore that tells the
// session of every entry the run appends.
type sessionStore struct {
	*memstore.Store
	s *session
}

// Append appends e, compacted, and records it in the session. The journal
// reads its store's entries only when a session opens, and replays
// compacted entries as it does whole ones (journal.Compact): a long run
// keeps its replies, not every prompt it sent.
func (st sessionStore) Append(ctx context.Context, name string, e journal.Entry) (int64, error) {
	e = journal.Compact(e)
	seq, err := st.Store.Append(ctx, name, e)
	if err != nil {
		return seq, err
	}
	e.Seq = seq
	st.s.appended(e)
	return seq, nil
}

// Approve waits for the decision on a, which an Advance delivers
// (journal.Approver): the Advance in progress reports the run waiting.
func (s *session) Approve(ctx context.Context, a journal.Approval) (journal.Decision, error) {
	w := &approvalWait{ap: a, answer: make(chan journal.Decision, 1)}
	s.mu.Lock()
	s.approvals = append(s.approvals, w)
	s.signalLocked()
	s.mu.Unlock()
	select {
	case d := <-w.answer:
		return d, nil
	case <-ctx.Done():
		s.mu.Lock()
		for i, o := range s.approvals {
			if o == w {
				s.approvals = append(s.approvals[:i], s.approvals[i+1:]...)
				break
			}
		}
		s.signalLocked()
		s.mu.Unlock()
		return journal.Decision{}, context.Cause(ctx)
	}
}

// decideLocked answers the waiting approval of pending (the first one
// when pending is nil) with d; it reports false when none waits for it.
// s.mu is held.
func (s *session) decideLocked(pending *journal.Approval, d journal.Decision) bool {
	for i, w := range s.approvals {
		if pending == nil || (w.ap.Tool == pending.Tool && w.ap.Input == pending.Input) {
			s.approvals = append(s.approvals[:i], s.approvals[i+1:]...)
			w.answer <- d
			s.signalLocked()
			return true
		}
	}
	return false
}

// gate is the session's run hook: it holds every live model and tool call
// until an Advance lets it through, and records whether it failed. Calls
// the journal will answer (the session replays its journal) pass. It
// makes the run keep its own place in a scripted model's script
// (scripted.PositionPerRun), as the worker's runs share its models.
type gate struct{ s *session }

// WrapModel gates model calls (hooks.ModelHook).
func (g gate) WrapModel(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		scripted.PositionPerRun(ctx)
		cctx, done, err := g.s.admit(ctx, journal.KindModel)
		if err != nil {
			return nil, err
		}
		res, err := next(cctx, call)
		done(err)
		return res, err
	}
}

// WrapTool gates tool calls (hooks.ToolHook); a call of an unknown tool,
// which runs nothing, passes.
func (g gate) WrapTool(next hooks.ToolFunc) hooks.ToolFunc {
	return func(ctx context.Context, call *hooks.ToolCall) (*hooks.ToolResult, error) {
		if call.Unknown {
			return next(ctx, call)
		}
		cctx, done, err := g.s.admit(ctx, journal.KindTool)
		if err != nil {
			return nil, err
		}
		res, err := next(cctx, call)
		done(err)
		return res, err
	}
}

// admit holds a live call of kind until it may go, and returns its
// context (cancelled if the Advance it belongs to ends first) and the
// function to call with its error when it is done. While the journal has
// entries left to replay, calls pass at once: the journal answers them
// (a call of a parallel branch that the journal does not hold is then
// made without waiting, in the Advance that rebuilds the run).
func (s *session) admit(ctx context.Context, kind journal.Kind) (context.Context, func(error), error) {
	if j := journal.From(ctx); j != nil {
		if _, _, unused := j.Stats(); unused > 0 {
			// It passes, but counts as busy until it is done: a parallel
			// branch's call that the journal does not hold is made live,
			// and the Advance must wait for its entry rather than report
			// the run paused without it (the next Advance, on a worker
			// that lacks the entry, would make the call again).
			s.mu.Lock()
			s.busy++
			s.mu.Unlock()
			return ctx, func(error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.busy--
				s.signalLocked()
			}, nil
		}
	}
	s.mu.Lock()
	s.replayEndedLocked()
	if s.credits > 0 {
		s.credits--
		s.busy++
	} else {
		g := &gated{kind: kind, ready: make(chan struct{})}
		s.waiting = append(s.waiting, g)
		s.signalLocked()
		s.mu.Unlock()
		select {
		case <-g.ready:
		case <-ctx.Done():
		}
		s.mu.Lock()
		if !g.granted {
			for i, o := range s.waiting {
				if o == g {
					s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
					break
				}
			}
			s.signalLocked()
			s.mu.Unlock()
			return nil, nil, context.Cause(ctx)
		}
	}
	cctx, cancel := context.WithCancelCause(ctx)
	id := s.nextCall
	s.nextCall++
	s.calls[id] = cancel
	s.mu.Unlock()
	return cctx, func(err error) {
		cancel(nil)
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.calls, id)
		s.busy--
		if err != nil && s.liveErr == nil {
			s.liveErr = err
		}
		s.signalLocked()
	}, nil
}

// grantLocked lets one live call through: the first waiting one of kind,
// else the first waiting one, else the next to arrive. s.mu is held.
func (s *session) grantLocked(kind journal.Kind) {
	if len(s.waiting) == 0 {
		s.credits = 1
		return
	}
	i := 0
	for j, g := range s.waiting {
		if g.kind == kind {
			i = j
			break
		}
	}
	g := s.waiting[i]
	s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
	g.granted = true
	s.busy++
	close(g.ready)
}

// advance is one Advance on the session: it lets the run's next live
// call through (or delivers the decision the run waits for) and waits
// until the run pauses again, waits for a decision or ends, heartbeating
// meanwhile. A retried Advance (same Seq) lets nothing more through: it
// reports what its first try did.
func (s *session) advance(ctx context.Context, in AdvanceInput) (*AdvanceOutput, error) {
	s.mu.Lock()
	s.owner++
	me := s.owner
	s.used = time.Now()
	if in.Seq == 0 || in.Seq != s.handled {
		s.handled = in.Seq
		switch {
		case len(s.approvals) > 0 && in.Decision != nil:
			s.decideLocked(in.Pending, *in.Decision)
		case len(s.approvals) > 0:
			// A retry of the Advance that reported the wait: report it again.
		default:
			s.grantLocked(in.Kind)
		}
	}
	beat, stopBeat := heartbeats(ctx)
	defer stopBeat()
	for {
		if me != s.owner {
			s.mu.Unlock()
			return nil, errSuperseded
		}
		if out, err, ok := s.outcomeLocked(in); ok {
			s.used = time.Now()
			s.mu.Unlock()
			return out, err
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-beat:
			activity.RecordHeartbeat(ctx, in.Seq)
		case <-ctx.Done():
			s.mu.Lock()
			if me == s.owner {
				// The calls this Advance let through end with it: another
				// try, here or on another worker, makes them again.
				for _, cancel := range s.calls {
					cancel(context.Cause(ctx))
				}
			}
			s.mu.Unlock()
			return nil, fmt.Errorf("temporal: advancing the run: %w", context.Cause(ctx))
		}
		s.mu.Lock()
	}
}

// heartbeats returns a channel that ticks a few times per heartbeat
// timeout of the activity of ctx (nil, which never ticks, outside an
// activity or without a heartbeat timeout) and the function that stops
// it.
func heartbeats(ctx context.Context) (<-chan time.Time, func()) {
	if !activity.IsActivity(ctx) {
		return nil, func() {}
	}
	hb := activity.GetInfo(ctx).HeartbeatTimeout
	if hb <= 0 {
		return nil, func() {}
	}
	t := time.NewTicker(max(hb/4, 50*time.Millisecond))
	return t.C, t.Stop
}

// outcomeLocked returns the Advance's result when the run has paused,
// waits for a decision or ended; ok is false while it runs. s.mu is
// held.
func (s *session) outcomeLocked(in AdvanceInput) (out *AdvanceOutput, err error, ok bool) {
	paused := s.credits == 0 && s.busy == 0 && len(s.waiting) > 0
	switch {
	case s.ended:
		out, err = s.endLocked(in)
		return out, err, true
	case s.broken:
		return nil, errBroken, true
	case s.liveErr != nil && (paused || len(s.approvals) > 0):
		// The live call failed and the run went on without it: another
		// try must make it again, from the journal before it.
		s.broken = true
		return nil, fmt.Errorf("temporal: the run's live call failed: %w", s.liveErr), true
	case len(s.approvals) > 0:
		out = s.outputLocked(in, StatusWaiting)
		ap := s.approvals[0].ap
		out.Pending = &ap
		return out, nil, true
	case paused:
		out = s.outputLocked(in, StatusSuspended)
		out.Kind = s.waiting[0].kind
		return out, nil, true
	}
	return nil, nil, false
}

// endLocked is the result of an Advance of a run that ended. s.mu is
// held.
func (s *session) endLocked(in AdvanceInput) (*AdvanceOutput, error) {
	res, runErr := s.res, s.runErr
	var (
		suspended *journal.SuspendedError
		waiting   *journal.WaitingError
	)
	switch {
	case errors.Is(runErr, journal.ErrDiverged), errors.Is(runErr, journal.ErrCorrupt):
		// The workers run another pipeline or model than the one the
		// history was made with: retrying gives the same answer.
		s.broken = true
		return nil, sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf("temporal: advancing the run: %v", runErr), "journal", runErr)
	case s.broken, res == nil, errors.As(runErr, &suspended), errors.As(runErr, &waiting):
		s.broken = true
		return nil, fmt.Errorf("%w: %w", errBroken, runErr)
	}
	status := StatusDone
	if runErr != nil {
		status = StatusFailed
	}
	out := s.outputLocked(in, status)
	out.Result = &Summary{Answer: res.Answer, Complete: res.Complete, Reason: res.Reason, Failure: res.Failure, Usage: res.Usage, Steps: res.Steps}
	if runErr != nil {
		out.Result.Error = runErr.Error()
	}
	return out, nil
}

// outputLocked is an Advance's result of status: the journal entries and
// trace events the workflow does not have yet. s.mu is held.
func (s *session) outputLocked(in AdvanceInput, status Status) *AdvanceOutput {
	out := &AdvanceOutput{Status: status, Policy: s.policy}
	if in.Base < len(s.entries) {
		out.Entries = compacted(s.entries[in.Base:])
	}
	s.replayEndedLocked()
	start := s.evMark + in.Events - s.evBase
	if in.Thread == "" {
		start = 0 // a workflow of an earlier version keeps the events it was given last
	}
	start = min(max(start, s.evMark, 0), len(s.events))
	out.EventCount = in.Events + len(s.events) - start
	evs := s.events[start:]
	if len(evs) > MaxEvents {
		evs = evs[len(evs)-MaxEvents:]
	}
	out.Events = append([]trace.Event(nil), evs...)
	return out
}
