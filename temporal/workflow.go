package temporal

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/trace"
)

// activityOptions are the options of an Advance on queue under pol, with
// heartbeat as its heartbeat timeout.
func activityOptions(queue string, pol Policy, heartbeat time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: pol.Timeout,
		HeartbeatTimeout:    heartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    pol.InitialInterval,
			BackoffCoefficient: 2,
			MaximumInterval:    pol.MaxInterval,
			MaximumAttempts:    int32(min(max(pol.MaxAttempts, 1), 1<<30)),
		},
	}
}

// Workflow runs in as a durable run: it loops on the Advance activity
// until the run ends; a run that waits for approval waits for
// SignalApproval. Register it as WorkflowName (NewWorker does). It
// answers QueryEvents and QueryStatus. It fails only when an Advance fails
// after its retries.
//
// The workflow holds the run's journal (compacted entries, in memory:
// they come in the Advances' results, each once) and sends the workers
// only what is new: how many entries it holds and their chain digest. A
// worker that lacks them says so (BehindError) and gets them, packed, in
// the next try. Every in.ContinueAfter Advances (DefaultContinueAfter), or
// once the history passes MaxHistoryBytes or the server suggests it, the
// workflow continues as new, carrying the packed journal, the latest
// events and its counts (Continued): a run's history grows with its calls,
// and no execution's history grows without bound.
func Workflow(ctx workflow.Context, in RunInput) (*Outcome, error) {
	log := workflow.GetLogger(ctx)
	w, err := startRun(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := workflow.SetQueryHandler(ctx, QueryEvents, func() ([]trace.Event, error) { return latest(w.events), nil }); err != nil {
		return nil, fmt.Errorf("temporal: query handler %s: %w", QueryEvents, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Progress, error) { return w.progress, nil }); err != nil {
		return nil, fmt.Errorf("temporal: query handler %s: %w", QueryStatus, err)
	}
	approvals := workflow.GetSignalChannel(ctx, SignalApproval)
	queue := workflow.GetInfo(ctx).TaskQueueName
	var (
		pending  *journal.Approval
		decision *journal.Decision
	)
	for {
		if decision == nil && w.continueNow(ctx) {
			return nil, w.continueAsNew(ctx, approvals)
		}
		out, err := w.advance(ctx, queue, pending, decision)
		if err != nil {
			return nil, fmt.Errorf("temporal: advance %d of %s: %w", w.progress.Advances+1, w.in.Config, err)
		}
		w.absorb(out)
		pending, decision = nil, nil
		switch out.Status {
		case StatusDone, StatusFailed:
			w.progress.Status = out.Status
			o := &Outcome{Status: out.Status, Advances: w.progress.Advances, Entries: len(w.entries), Executions: w.progress.Executions}
			if out.Result != nil {
				o.Summary = *out.Result
			}
			log.Info("run ended", "status", out.Status, "advances", w.progress.Advances, "entries", len(w.entries), "executions", w.progress.Executions)
			return o, nil
		case StatusWaiting:
			if out.Pending == nil {
				return nil, fmt.Errorf("temporal: advance %d: %w: waiting for no call", w.progress.Advances, ErrNoProgress)
			}
			w.progress.Status, w.progress.Pending = StatusWaiting, out.Pending
			log.Info("waiting for approval", "tool", out.Pending.Tool)
			d := w.receive(ctx, approvals)
			pending, decision = out.Pending, &d
			w.progress.Status, w.progress.Pending = StatusRunning, nil
			w.kind = journal.KindTool
		case StatusSuspended:
			if len(out.Entries) == 0 {
				return nil, fmt.Errorf("temporal: advance %d: %w: it stopped before a %s call", w.progress.Advances, ErrNoProgress, out.Kind)
			}
			w.progress.Status = StatusRunning
			w.kind = out.Kind
		default:
			return nil, fmt.Errorf("temporal: advance %d: %w: status %q", w.progress.Advances, ErrBadInput, out.Status)
		}
	}
}

// wfRun is the state of a run in one workflow execution.
type wfRun struct {
	// in is the workflow's input, without Continued.
	in RunInput
	// thread is the key the workers keep the run under.
	thread string
	// entries is the run's journal, and chain[i] the chain digest of its
	// first i entries (chain[len(entries)] is the journal's).
	entries []journal.Entry
	chain   []string
	// events are the latest trace events (at least MaxEvents when there
	// are that many), and eventCount counts every event reported.
	events     []trace.Event
	eventCount int
	progress   Progress
	pol        Policy
	// kind is the kind of the run's next call ("" before the first).
	kind journal.Kind
	// advances counts this execution's Advances.
	advances int
	// decisions are approvals signalled to an earlier execution and not
	// used yet.
	decisions []journal.Decision
}

// startRun returns the state of a run starting with in: a new run, or
// the one an earlier execution continued (in.Continued).
func startRun(ctx workflow.Context, in RunInput) (*wfRun, error) {
	info := workflow.GetInfo(ctx)
	c := in.Continued
	in.Continued = nil
	w := &wfRun{in: in, progress: Progress{Status: StatusRunning, Executions: 1}, pol: defaultPolicy(in.Timeout), chain: []string{""}}
	if c == nil {
		w.thread = info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID
		return w, nil
	}
	w.thread, w.eventCount, w.pol, w.kind, w.decisions = c.Thread, c.EventCount, c.Policy, c.Kind, c.Decisions
	w.progress.Advances, w.progress.Executions = c.Advances, c.Executions+1
	if err := unpack(c.Journal, &w.entries); err != nil {
		return nil, fmt.Errorf("temporal: the journal the run continued with: %w", err)
	}
	if err := unpack(c.Events, &w.events); err != nil {
		return nil, fmt.Errorf("temporal: the events the run continued with: %w", err)
	}
	w.chain = extendChain(w.chain, w.entries)
	if len(w.entries) != c.Entries || w.digest() != c.Digest {
		return nil, fmt.Errorf("temporal: the journal the run continued with: %w: %d entries, %d expected, or another digest", journal.ErrCorrupt, len(w.entries), c.Entries)
	}
	w.progress.Entries = len(w.entries)
	return w, nil
}

// digest returns the chain digest of the run's journal.
func (w *wfRun) digest() string { return w.chain[len(w.entries)] }

// latest returns the last MaxEvents of evs.
func latest(evs []trace.Event) []trace.Event {
	if len(evs) > MaxEvents {
		return evs[len(evs)-MaxEvents:]
	}
	return evs
}

// heartbeat is the Advances' heartbeat timeout.
func (w *wfRun) heartbeat() time.Duration {
	if w.in.Heartbeat > 0 {
		return w.in.Heartbeat
	}
	return DefaultHeartbeat
}

// advance runs one Advance on the queue for the run's next call (queue,
// or ModelQueue(queue) for a model call and for the first Advance, as most
// pipelines begin with a model call), with the decision on pending when
// there is one. A worker that lacks the run's journal fails with a
// BehindError; the Advance is then tried again with the entries it lacks
// (or all of them, when what it holds is not this journal's beginning)
// and the run's input.
func (w *wfRun) advance(ctx workflow.Context, queue string, pending *journal.Approval, decision *journal.Decision) (AdvanceOutput, error) {
	if w.kind == "" || w.kind == journal.KindModel {
		queue = ModelQueue(queue)
	}
	actx := workflow.WithActivityOptions(ctx, activityOptions(queue, w.pol, w.heartbeat()))
	in := AdvanceInput{Thread: w.thread, Seq: w.progress.Advances + 1, Base: len(w.entries), Digest: w.digest(), Events: w.eventCount,
		Kind: w.kind, Pending: pending, Decision: decision}
	if len(w.entries) == 0 {
		run := w.in
		in.Run = &run
	}
	for try := 0; ; try++ {
		var out AdvanceOutput
		err := workflow.ExecuteActivity(actx, AdvanceName, in).Get(ctx, &out)
		var b Behind
		if try >= 2 || !isBehind(err, &b) {
			return out, err
		}
		from := 0
		if try == 0 && b.Have > 0 && b.Have <= len(w.entries) && w.chain[b.Have] == b.Digest {
			from = b.Have
		}
		packed, err := pack(w.entries[from:])
		if err != nil {
			return out, err
		}
		run := w.in
		in.Run, in.From, in.Resent = &run, from, packed
	}
}

// isBehind reports whether err is an Advance's BehindError, and reads
// what the worker holds into b.
func isBehind(err error, b *Behind) bool {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != BehindError {
		return false
	}
	if app.HasDetails() {
		_ = app.Details(b) // without them the worker holds nothing usable
	}
	return true
}

// absorb takes in an Advance's result.
func (w *wfRun) absorb(out AdvanceOutput) {
	w.progress.Advances++
	w.advances++
	w.chain = extendChain(w.chain, out.Entries)
	w.entries = append(w.entries, out.Entries...)
	w.progress.Entries = len(w.entries)
	w.events = append(w.events, out.Events...)
	if len(w.events) > 2*MaxEvents {
		w.events = append([]trace.Event(nil), latest(w.events)...)
	}
	if out.EventCount > 0 {
		w.eventCount = out.EventCount
	} else {
		w.eventCount += len(out.Events)
	}
	if out.Policy.Timeout > 0 {
		w.pol = out.Policy
	}
}

// continueNow reports whether the execution should continue as new
// before its next Advance: it ran ContinueAfter Advances, its history
// passed MaxHistoryBytes, or the server suggests it.
func (w *wfRun) continueNow(ctx workflow.Context) bool {
	if w.advances == 0 {
		return false
	}
	after := w.in.ContinueAfter
	if after <= 0 {
		after = DefaultContinueAfter
	}
	info := workflow.GetInfo(ctx)
	return w.advances >= after || info.GetCurrentHistorySize() >= MaxHistoryBytes || info.GetContinueAsNewSuggested()
}

// continueAsNew returns the error that continues the run in a new
// execution, carrying what it needs (Continued) and the approvals
// signalled but not received.
func (w *wfRun) continueAsNew(ctx workflow.Context, approvals workflow.ReceiveChannel) error {
	decisions := w.decisions
	for {
		var d journal.Decision
		if !approvals.ReceiveAsync(&d) {
			break
		}
		decisions = append(decisions, d)
	}
	j, err := pack(w.entries)
	if err != nil {
		return err
	}
	evs, err := pack(latest(w.events))
	if err != nil {
		return err
	}
	next := w.in
	next.Continued = &Continued{Thread: w.thread, Journal: j, Entries: len(w.entries), Digest: w.digest(), Events: evs, EventCount: w.eventCount,
		Advances: w.progress.Advances, Executions: w.progress.Executions, Policy: w.pol, Kind: w.kind, Decisions: decisions}
	workflow.GetLogger(ctx).Info("continuing as new", "advances", w.progress.Advances, "entries", len(w.entries), "executions", w.progress.Executions)
	return workflow.NewContinueAsNewError(ctx, WorkflowName, next)
}

// receive returns the next approval decision: one an earlier execution
// carried, else the next signal.
func (w *wfRun) receive(ctx workflow.Context, approvals workflow.ReceiveChannel) journal.Decision {
	if len(w.decisions) > 0 {
		d := w.decisions[0]
		w.decisions = w.decisions[1:]
		return d
	}
	var d journal.Decision
	approvals.Receive(ctx, &d)
	return d
}
