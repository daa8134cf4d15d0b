package temporal

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/trace"
)

// activityOptions are the options of an Advance on queue under pol.
func activityOptions(queue string, pol Policy) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: pol.Timeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    pol.InitialInterval,
			BackoffCoefficient: 2,
			MaximumInterval:    pol.MaxInterval,
			MaximumAttempts:    int32(min(max(pol.MaxAttempts, 1), 1<<30)),
		},
	}
}

// Workflow runs in as a durable run: it loops on the Advance activity,
// keeping the run's journal entries as its state, until the run ends;
// a run that waits for approval waits for SignalApproval. Register it as
// WorkflowName (NewWorker does). It answers QueryEvents and QueryStatus.
// It fails only when an Advance fails after its retries.
func Workflow(ctx workflow.Context, in RunInput) (*Outcome, error) {
	log := workflow.GetLogger(ctx)
	var (
		entries  []journal.Entry
		events   []trace.Event
		progress = Progress{Status: StatusRunning}
	)
	if err := workflow.SetQueryHandler(ctx, QueryEvents, func() ([]trace.Event, error) { return events, nil }); err != nil {
		return nil, fmt.Errorf("temporal: query handler %s: %w", QueryEvents, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Progress, error) { return progress, nil }); err != nil {
		return nil, fmt.Errorf("temporal: query handler %s: %w", QueryStatus, err)
	}
	approvals := workflow.GetSignalChannel(ctx, SignalApproval)
	queue := workflow.GetInfo(ctx).TaskQueueName
	pol := defaultPolicy(in.Timeout)
	// Most pipelines begin with a model call: the first Advance runs
	// where model calls are rate limited.
	next := ModelQueue(queue)
	var (
		pending  *journal.Approval
		decision *journal.Decision
	)
	for {
		actx := workflow.WithActivityOptions(ctx, activityOptions(next, pol))
		var out AdvanceOutput
		err := workflow.ExecuteActivity(actx, AdvanceName, AdvanceInput{Run: in, Entries: entries, Pending: pending, Decision: decision}).Get(ctx, &out)
		if err != nil {
			return nil, fmt.Errorf("temporal: advance %d of %s: %w", progress.Advances+1, in.Config, err)
		}
		progress.Advances++
		entries = append(entries, out.Entries...)
		progress.Entries = len(entries)
		if out.Events != nil {
			events = out.Events
		}
		if out.Policy.Timeout > 0 {
			pol = out.Policy
		}
		pending, decision = nil, nil
		progress.Pending = nil
		switch out.Status {
		case StatusDone, StatusFailed:
			progress.Status = out.Status
			o := &Outcome{Status: out.Status, Advances: progress.Advances, Entries: len(entries)}
			if out.Result != nil {
				o.Summary = *out.Result
			}
			log.Info("run ended", "status", out.Status, "advances", progress.Advances, "entries", len(entries))
			return o, nil
		case StatusWaiting:
			if out.Pending == nil {
				return nil, fmt.Errorf("temporal: advance %d: %w: waiting for no call", progress.Advances, ErrNoProgress)
			}
			progress.Status, progress.Pending = StatusWaiting, out.Pending
			log.Info("waiting for approval", "tool", out.Pending.Tool)
			var d journal.Decision
			approvals.Receive(ctx, &d)
			pending, decision = out.Pending, &d
			progress.Status, progress.Pending = StatusRunning, nil
			next = queue
		case StatusSuspended:
			if len(out.Entries) == 0 {
				return nil, fmt.Errorf("temporal: advance %d: %w: it stopped before a %s call", progress.Advances, ErrNoProgress, out.Kind)
			}
			progress.Status = StatusRunning
			next = queue
			if out.Kind == journal.KindModel {
				next = ModelQueue(queue)
			}
		default:
			return nil, fmt.Errorf("temporal: advance %d: %w: status %q", progress.Advances, ErrBadInput, out.Status)
		}
	}
}
