// Package temporal runs planner pipelines as Temporal workflows
// (go.temporal.io/sdk), so that a run outlives the worker that started it
// and a suite spreads across machines. It is opt-in: nothing below it
// imports the SDK (internal/layout's test keeps it so).
//
// Temporal's history plays the journal's role. The workflow (Workflow,
// registered as WorkflowName) holds the run's journal entries
// (journal.Entry) as its state and loops on one activity, Advance: each
// Advance runs the pipeline against an in-memory store holding the entries
// so far (journal/memstore), in the journal's one-live-call mode
// (journal.WithLiveBudget): every journaled call is replayed, the first
// live model or tool call is made and journaled, and the run stops at the
// next one (journal.ErrSuspended). The activity returns the new entries,
// which the workflow appends. So every model and tool call is its own
// activity, with the pipeline's retry policy, and a worker that dies
// loses at most the call in flight; another worker replays the rest.
//
// An Advance that stops before a model call makes the next Advance run on
// the model task queue (ModelQueue), whose workers share a task-queue
// rate limit (Options.ModelRate): the provider's quota holds however
// many workers run. Approvals are signals (SignalApproval, a
// journal.Decision); a run's trace events and status are queries
// (QueryEvents, QueryStatus).
package temporal
