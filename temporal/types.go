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

// MaxEvents caps the trace events the workflow keeps for QueryEvents
// (the latest ones) and carries into the next execution when it
// continues as new.
const MaxEvents = 2000

// Defaults of a RunInput's zero fields.
const (
	// DefaultHeartbeat is the Advance activities' heartbeat timeout: an
	// Advance whose worker stops heartbeating (it died, or lost the task)
	// is retried after this long, not after the pipeline's timeout.
	DefaultHeartbeat = 10 * time.Second
	// DefaultContinueAfter is how many Advances one workflow execution
	// runs before it continues as new.
	DefaultContinueAfter = 500
	// MaxHistoryBytes is the history size at which a workflow execution
	// continues as new whatever its count of Advances (Temporal fails an
	// execution whose history passes 50 MB).
	MaxHistoryBytes = 4 << 20
)

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
	// ErrBehind: the worker that got an Advance lacks the run's journal
	// (another worker ran the Advances before, or this one restarted).
	// The Advance fails with an application error of type BehindError
	// whose details are a Behind, and the workflow sends what is missing.
	ErrBehind = errors.New("temporal: the worker lacks the run's journal")
)

// BehindError is the application error type of an Advance that failed
// with ErrBehind. It is part of the wire format.
const BehindError = "planner.Behind"

// Behind is the detail of a BehindError: how much of the run's journal
// the worker holds.
type Behind struct {
	// Have is the number of the journal's first entries the worker holds
	// (0: none), and Digest their chain digest, for the workflow to check
	// they are its own.
	Have   int    `json:"have"`
	Digest string `json:"digest,omitempty"`
}

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
	// (planner.WithMaxSteps, planner.WithTimeout). The timeout bounds
	// each Advance (one model or tool call), not the run as a whole: a
	// run on Temporal waits between its calls (for a rate-limited queue,
	// for an approval) as long as it must.
	MaxSteps int           `json:"max_steps,omitempty"`
	Timeout  time.Duration `json:"timeout,omitempty"`
	// Heartbeat is the Advances' heartbeat timeout; 0 means
	// DefaultHeartbeat.
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// ContinueAfter is how many Advances one workflow execution runs
	// before it continues as new; 0 means DefaultContinueAfter.
	ContinueAfter int `json:"continue_after,omitempty"`
	// Continued is set by the workflow when it continues as new: what
	// the next execution needs of the run so far. Callers leave it nil.
	Continued *Continued `json:"continued,omitempty"`
}

// Continued is what a run carries from one workflow execution into the
// next when it continues as new: its journal (the entries, compacted and
// packed: gzip of their JSON), the latest trace events (at most
// MaxEvents, packed), its counts and where it stands.
type Continued struct {
	// Thread is the key the workers keep the run under (the workflow id
	// and the run id of its first execution).
	Thread string `json:"thread"`
	// Journal holds the run's Entries journal entries, packed, and
	// Digest their chain digest.
	Journal []byte `json:"journal,omitempty"`
	Entries int    `json:"entries"`
	Digest  string `json:"digest,omitempty"`
	// Events holds the latest trace events, packed; EventCount counts
	// every event the run reported.
	Events     []byte `json:"events,omitempty"`
	EventCount int    `json:"event_count"`
	// Advances counts the Advances so far, Executions the workflow
	// executions (1 for the first).
	Advances   int `json:"advances"`
	Executions int `json:"executions"`
	// Policy is the pipeline's, and Kind the kind of the call the run
	// stopped at.
	Policy Policy       `json:"policy"`
	Kind   journal.Kind `json:"kind,omitempty"`
	// Decisions are approvals signalled but not yet used.
	Decisions []journal.Decision `json:"decisions,omitempty"`
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

// AdvanceInput is one Advance's input. It carries what is new, not the
// run so far: the worker keeps each run it advances (its journal and its
// paused pipeline run) under Thread, and a worker that lacks them fails
// the Advance with ErrBehind, for the workflow to send them (Run, From
// and Resent) in the next try.
type AdvanceInput struct {
	// Run is the workflow's input (without Continued); sent with the
	// run's first Advance and with a resend, nil otherwise.
	Run *RunInput `json:"run,omitempty"`
	// Thread is the key the workers keep the run under.
	Thread string `json:"thread,omitempty"`
	// Seq numbers the run's Advances from 1: a retried Advance has the
	// same Seq, and finds what its first try did.
	Seq int `json:"seq,omitempty"`
	// Base counts the run's journal entries so far, Digest is their
	// chain digest, and Events counts the trace events reported so far.
	Base   int    `json:"base,omitempty"`
	Digest string `json:"digest,omitempty"`
	Events int    `json:"events,omitempty"`
	// Kind is the kind of the call the Advance is for (the queue it was
	// sent to): a run that waits at several calls makes one of this kind.
	Kind journal.Kind `json:"kind,omitempty"`
	// From and Resent are a resend after ErrBehind: the journal's entries
	// from the From-th (0-based) to Base, packed.
	From   int    `json:"from,omitempty"`
	Resent []byte `json:"resent,omitempty"`
	// Entries is the whole journal, as workflows of earlier versions
	// send it (without Thread); new ones leave it empty.
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
	// Events are the run's trace events since the ones the input counted
	// (at most MaxEvents, the latest), and EventCount the run's count of
	// events after them.
	Events     []trace.Event `json:"events,omitempty"`
	EventCount int           `json:"event_count,omitempty"`
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
	// Executions counts the workflow executions of the run: 1, plus one
	// per continue-as-new.
	Executions int `json:"executions,omitempty"`
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
	// Executions counts the workflow executions the run took: 1, plus
	// one per continue-as-new.
	Executions int `json:"executions,omitempty"`
}
