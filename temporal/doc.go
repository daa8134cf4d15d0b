// Package temporal runs planner pipelines as Temporal workflows
// (go.temporal.io/sdk), so that a run outlives the worker that started it
// and a suite spreads across machines. It is opt-in: nothing below it
// imports the SDK (internal/layout's test keeps it so).
//
// Temporal's history plays the journal's role. The workflow (Workflow,
// registered as WorkflowName) loops on one activity, Advance, and every
// model and tool call is its own Advance, with the pipeline's retry
// policy: a worker that dies loses at most the call in flight, and
// another worker goes on from the journal.
//
// # What travels, and what the workers keep
//
// A worker keeps each run it advances (a session): the pipeline's run
// itself, live, over an in-memory store of its journal (journal/memstore),
// paused by a run hook before each live model or tool call. An Advance
// lets one call through and returns when the run pauses at the next one
// (StatusSuspended, with that call's kind), waits for an approval
// (StatusWaiting) or ends; it returns only what is new: the journal
// entries the run appended (compacted, journal.Compact) and its trace
// events since the last Advance. Its input is as small: how many entries
// the workflow holds and their chain digest (AdvanceInput). So a run's
// history grows with its calls, and an Advance costs one call, not a
// replay of the run so far.
//
// The workflow is the run's durable record: it holds the journal, in
// memory, from the Advances' results. A worker that lacks the run (the
// Advances ran elsewhere, it restarted, it dropped an idle run) or holds
// another journal than the workflow's fails the Advance with a
// BehindError saying how much it holds; the workflow sends the rest,
// packed, with the run's input, and the worker rebuilds the run by
// replaying its journal, then goes on live. A retried Advance (same Seq)
// makes no second call when its first try's worker still has the run.
// The workflow's code depends only on the Advances' results, so it
// replays deterministically.
//
// Every DefaultContinueAfter Advances (RunInput.ContinueAfter), or once
// its history passes MaxHistoryBytes or the server suggests it, the
// workflow continues as new, carrying the packed journal, the latest
// MaxEvents events, its counts and the approvals not used yet
// (Continued): no execution's history grows without bound. A run of 1,000
// scripted ReAct calls leaves about 4 MB of history in 4 executions.
//
// Advances heartbeat (RunInput.Heartbeat, DefaultHeartbeat): one whose
// worker dies or never got the task is retried within seconds, while the
// pipeline's timeout bounds each Advance, not the run: a run waits
// between its calls (for the rate-limited model queue, for an approval)
// as long as it must.
//
// An Advance that stops before a model call makes the next Advance run on
// the model task queue (ModelQueue), whose workers share a task-queue
// rate limit (Options.ModelRate): the provider's quota holds however
// many workers run. Approvals are signals (SignalApproval, a
// journal.Decision); a run's trace events and status are queries
// (QueryEvents, QueryStatus).
//
// The scripted model plays on workers as it does in-process: "scripted"
// alone (each task's own replies, which the worker's engine must have:
// planner worker --suite) or scripted:FILE, whose place in the script
// each run keeps for itself (scripted.PositionPerRun).
package temporal
