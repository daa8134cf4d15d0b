package temporal

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/trace"
)

// StartOptions says which run to start, where.
type StartOptions struct {
	// ID is the workflow id, chosen by the caller (say, the comparison's
	// name, the config and the task id): starting an id again attaches to
	// its run, running or finished, rather than running it twice; only a
	// run that failed, was cancelled or terminated is started afresh.
	ID string
	// Queue is the workers' task queue.
	Queue string
	// Input is what to run.
	Input RunInput
}

// Start starts the run o names, or attaches to the one that has o.ID
// (see StartOptions.ID). Get its Outcome with the handle's Get or Result.
func Start(ctx context.Context, c client.Client, o StartOptions) (client.WorkflowRun, error) {
	if o.ID == "" || o.Queue == "" || o.Input.Config == "" {
		return nil, fmt.Errorf("%w: a run needs an id, a task queue and a config", ErrBadInput)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    o.ID,
		TaskQueue:             o.Queue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		// An id that is running or finished: return its handle.
		WorkflowExecutionErrorWhenAlreadyStarted: false,
	}, WorkflowName, o.Input)
	if err != nil {
		return nil, fmt.Errorf("temporal: starting run %s: %w", o.ID, err)
	}
	return run, nil
}

// Result waits for the run with workflow id id (its latest execution) to
// end and returns its Outcome.
func Result(ctx context.Context, c client.Client, id string) (*Outcome, error) {
	var out Outcome
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, &out); err != nil {
		return nil, fmt.Errorf("temporal: run %s: %w", id, err)
	}
	return &out, nil
}

// Decide answers the tool call the run id waits for (SignalApproval).
func Decide(ctx context.Context, c client.Client, id string, d journal.Decision) error {
	if err := c.SignalWorkflow(ctx, id, "", SignalApproval, d); err != nil {
		return fmt.Errorf("temporal: approval for run %s: %w", id, err)
	}
	return nil
}

// Events returns the run's latest trace events (QueryEvents).
func Events(ctx context.Context, c client.Client, id string) ([]trace.Event, error) {
	v, err := c.QueryWorkflow(ctx, id, "", QueryEvents)
	if err != nil {
		return nil, fmt.Errorf("temporal: events of run %s: %w", id, err)
	}
	var evs []trace.Event
	if err := v.Get(&evs); err != nil {
		return nil, fmt.Errorf("temporal: events of run %s: %w", id, err)
	}
	return evs, nil
}

// Query returns where the run stands (QueryStatus).
func Query(ctx context.Context, c client.Client, id string) (Progress, error) {
	var p Progress
	v, err := c.QueryWorkflow(ctx, id, "", QueryStatus)
	if err != nil {
		return p, fmt.Errorf("temporal: status of run %s: %w", id, err)
	}
	if err := v.Get(&p); err != nil {
		return p, fmt.Errorf("temporal: status of run %s: %w", id, err)
	}
	return p, nil
}
