package temporal

import (
	"errors"
	"time"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
)

// Names the workflow, its activity, signal and queries are registered
// under. They are part of the wire format: changing one breaks the runs
// in flight.
const (
	// WorkflowName is the registered name of Workflow.
	WorkflowName = "planner.Run"
	// AdvanceName is the registered name of Activities.Advance.
	AdvanceName = "planner.Advance"
	// SignalApproval is the signal that answers the tool call a run waits
	// for; its payload is a journal.Decision.
	SignalApproval = "approval"
	// QueryEvents returns the run's trace events so far ([]trace.Event,
	// at most MaxEvents, the latest ones).
	QueryEvents = "events"
	// QueryStatus returns the run's Progress.
	QueryStatus = "status"
)

// MaxEvents caps the trace events an Advance returns (the latest ones):
// they travel in the workflow's history.
const MaxEvents = 2000

// ModelQueue is the task queue of the Advance activities that make model
// calls, for a workflow whose task queue is queue.
func ModelQueue(queue string) string { return queue + "-model" }

// Sentinel errors.
var (
	// ErrNoEngine: Options.Engine or NewActivities' engine is nil.
	ErrNoEngine = errors.New("temporal: no engine")
	// ErrNoProgress: an Advance stopped without journaling anything, so
	// the next one would stop at the same place.
	ErrNoProgress = errors.New("temporal: the run made no progress")
	// ErrBadInput: a RunInput or StartOptions misses a required field.
	ErrBadInput = errors.New("temporal: bad input")
)

// RunInput is a workflow's input: what to run.
type RunInput struct {
	// Config is the pipeline's YAML path, as the workers see it.
	Config string `json:"config"`
	// LLM overrides the pipeline's llm block (planner.WithLLM, the
	// command line's --llm); "" keeps it.
	LLM string `json:"llm,omitempty"`
	// Task is the task to run.
	Task state.Task `json:"task"`
	// MaxSteps and Timeout override the pipeline's limits when non-zero
	// (planner.WithMaxSteps, planner.WithTimeout).
	MaxSteps int           `json:"max_steps,omitempty"`
	Timeout  time.Duration `json:"timeout,omitempty"`
}

// Status is where a run stands after an Advance.
type Status string

// The statuses of a run.
const (
	// StatusRunning: the workflow is advancing the run.
	StatusRunning Status = "running"
	// StatusSuspended: the Advance stopped before a live call (Kind); the
	// next Advance makes it.
	StatusSuspended Status = "suspended"
	// StatusWaiting: a tool call waits for a decision (SignalApproval).
	StatusWaiting Status = "waiting"
	// StatusDone: the run ended with an answer, complete or not.
	StatusDone Status = "done"
	// StatusFailed: the run failed; the Outcome says why (Failure, Error).
	StatusFailed Status = "failed"
)

// Policy is how the workflow runs Advance activities: the pipeline's
// retry policy (llm.retry) and its timeout (limits.timeout). The first
// Advance uses the defaults; later ones the policy the pipeline reported.
type Policy struct {
	// MaxAttempts is the number of tries of one Advance.
	MaxAttempts int `json:"max_attempts"`
	// InitialInterval and MaxInterval bound the backoff between tries.
	InitialInterval time.Duration `json:"initial_interval"`
	MaxInterval     time.Duration `json:"max_interval"`
	// Timeout bounds one Advance (StartToCloseTimeout).
	Timeout time.Duration `json:"timeout"`
}

// AdvanceInput is one Advance's input.
type AdvanceInput struct {
	// Run is the workflow's input.
	Run RunInput `json:"run"`
	// Entries is the run's journal so far.
	Entries []journal.Entry `json:"entries,omitempty"`
	// Pending and Decision answer the tool call the run waited for, when
	// the workflow got a decision; both nil otherwise.
	Pending  *journal.Approval `json:"pending,omitempty"`
	Decision *journal.Decision `json:"decision,omitempty"`
}

// Summary is a finished run's result, as planner.Result has it.
type Summary struct {
	// Answer, Complete, Reason and Failure are planner.Result's.
	Answer   string `json:"answer"`
	Complete bool   `json:"complete"`
	Reason   string `json:"reason,omitempty"`
	Failure  string `json:"failure,omitempty"`
	// Usage counts the whole run's calls and tokens (replayed calls are
	// counted as the in-process run counts them).
	Usage state.UsageSnapshot `json:"usage"`
	// Steps are the ids of the nodes executed, in order.
	Steps []string `json:"steps,omitempty"`
	// Error is the run's error text when it failed.
	Error string `json:"error,omitempty"`
}

// AdvanceOutput is one Advance's result.
type AdvanceOutput struct {
	// Entries are the journal entries the Advance appended.
	Entries []journal.Entry `json:"entries,omitempty"`
	// Status is StatusSuspended, StatusWaiting, StatusDone or
	// StatusFailed.
	Status Status `json:"status"`
	// Kind is the kind of the call a suspended run stopped at.
	Kind journal.Kind `json:"kind,omitempty"`
	// Pending is the call a waiting run waits for.
	Pending *journal.Approval `json:"pending,omitempty"`
	// Result is set when the run ended (done or failed).
	Result *Summary `json:"result,omitempty"`
	// Events are the run's trace events so far, the latest MaxEvents.
	Events []trace.Event `json:"events,omitempty"`
	// Policy is the pipeline's.
	Policy Policy `json:"policy"`
}

// Progress is what QueryStatus returns.
type Progress struct {
	// Status is where the run stands.
	Status Status `json:"status"`
	// Advances counts the Advance activities completed, and Entries the
	// journal's entries.
	Advances int `json:"advances"`
	Entries  int `json:"entries"`
	// Pending is the call the run waits for when Status is StatusWaiting.
	Pending *journal.Approval `json:"pending,omitempty"`
}

// Outcome is the workflow's result.
type Outcome struct {
	Summary
	// Status is StatusDone or StatusFailed.
	Status Status `json:"status"`
	// Advances counts the Advance activities the run took: one per live
	// model or tool call (and one for an approval's resumption).
	Advances int `json:"advances"`
	// Entries counts the run's journal entries.
	Entries int `json:"entries"`
}
