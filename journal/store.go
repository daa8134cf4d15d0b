// Package journal makes runs durable. A thread is a named run whose every
// side effect — each node transition, model-call result, tool-call result
// and approval decision — is appended to the thread's journal, in order,
// before the run proceeds past it. Resuming a thread runs its pipeline
// again from the start with the journal in the context: every call the
// journal holds is answered from it (the request must be the one recorded;
// a different one is reported by what differs, with a diff when the
// journal keeps requests whole, as a cassette mismatch is), and the run
// continues live where the journal ends. A model call is journaled with
// its reply and the usage the metering measured for it, and its request
// as digests (KeepRequests keeps it whole, for debugging): a replayed call
// is answered with its journaled usage, not measured again, and a
// thread's journal grows with its calls, not with the square of them.
// No completed model or tool
// call is ever made twice; a process killed at any instant repeats at most
// the one call that was in flight.
//
// Calls are matched inside scopes: one per node execution ("3:react"),
// refined by Branch for each branch of a parallel fan-out, so that
// concurrent branches replay their own calls whatever their interleaving.
//
// A Store keeps threads and journals, and may read a journal a page at a
// time (EntryPager), which a session does as its run replays the journal;
// package journal/sqlitestore is the
// default one (one SQLite file), journal/memstore keeps one in memory
// (for a journal held elsewhere, such as a Temporal workflow's history),
// and journal/journaltest is the conformance suite every Store must pass.
package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Status is a thread's state.
type Status string

// The statuses of a thread.
const (
	// StatusRunning: a process is running the thread, or was when it died
	// (a thread whose lock is free while it says running was interrupted).
	StatusRunning Status = "running"
	// StatusInterrupted: the run was stopped (Ctrl-C, a crash) and can be
	// resumed.
	StatusInterrupted Status = "interrupted"
	// StatusWaiting: the run waits for a human to approve a tool call
	// (Thread.Pending).
	StatusWaiting Status = "waiting"
	// StatusDone: the run ended with an answer (complete or not).
	StatusDone Status = "done"
	// StatusFailed: the run failed; resuming retries from the failure.
	StatusFailed Status = "failed"
)

// Kind is the kind of a journal entry.
type Kind string

// The kinds of journal entries.
const (
	// KindNode is a node transition: Request {"step","node"}, Response
	// {"route"}.
	KindNode Kind = "node"
	// KindModel is a model call. Request is {"role","compacted":true,
	// "shape"}: the caller's role and the request's size and the digests
	// of its options and of its first and last messages (see
	// KeepRequests), or, kept whole, {"role","request"} with the call's
	// cassette.Request (KeepRequests, and journals written before
	// requests were kept as digests). Response is the call's
	// cassette.Response with, when the call was metered, "usage": the
	// tokens and cost the metering measured (Entry.Usage).
	KindModel Kind = "model"
	// KindTool is a tool call: Request {"tool","input"}, Response
	// {"output","error","class"}.
	KindTool Kind = "tool"
	// KindApproval is a human decision on a tool call: Request
	// {"tool","input"}, Response a Decision.
	KindApproval Kind = "approval"
)

// Entry is one journal record.
type Entry struct {
	// Seq numbers the thread's entries from 1, in append order. Append
	// assigns it.
	Seq int64 `json:"seq"`
	// Kind says what the entry records.
	Kind Kind `json:"kind"`
	// Scope is where in the run the call was made: the node execution
	// ("3:react") and any branches ("3:lats/sample.1"); "" for node
	// transitions.
	Scope string `json:"scope"`
	// Node is the id of the node that made the call.
	Node string `json:"node,omitempty"`
	// Digest identifies the request: the hex SHA-256 of its canonical
	// form (and the caller's role). Replay matches on it.
	Digest string `json:"digest"`
	// Request is what was asked, as JSON.
	Request json.RawMessage `json:"request"`
	// Response is what came back, as JSON.
	Response json.RawMessage `json:"response"`
	// Time is when the entry was appended. Append sets it when zero.
	Time time.Time `json:"time"`
}

// Approval is a tool call that needs a human's decision.
type Approval struct {
	// Node is the id of the node that makes the call.
	Node string `json:"node,omitempty"`
	// Tool is the tool's registered name.
	Tool string `json:"tool"`
	// Input is the input the tool would get.
	Input string `json:"input"`
}

// Decision is a human's answer to an Approval.
type Decision struct {
	// Approved is true when the call may run.
	Approved bool `json:"approved"`
	// Reason is why it was denied (shown to the model), or a note.
	Reason string `json:"reason,omitempty"`
	// By says who decided: "terminal", "resume --approve", an API user...
	By string `json:"by,omitempty"`
}

// Thread is a durable run.
type Thread struct {
	// Name identifies the thread in its store (see ValidName).
	Name string `json:"name"`
	// Pipeline names the pipeline: its config path or name.
	Pipeline string `json:"pipeline"`
	// Task is the run's task (an agent.Task) as JSON.
	Task json.RawMessage `json:"task,omitempty"`
	// Meta is what the creator needs to start the run again (the command
	// line's flags), opaque to the store.
	Meta json.RawMessage `json:"meta,omitempty"`
	// Status is the thread's state.
	Status Status `json:"status"`
	// Pending is the tool call waiting for approval when Status is
	// StatusWaiting; else nil.
	Pending *Approval `json:"pending,omitempty"`
	// Error is why the run failed or stopped, when it did.
	Error string `json:"error,omitempty"`
	// Answer is the run's answer, scrubbed of secrets, once it is done
	// (StatusDone); "" otherwise. A follow-up turn's task carries it
	// (planner.FollowUp).
	Answer string `json:"answer,omitempty"`
	// Parent is the thread this one was forked from, and ForkedAt the seq
	// of the parent's last entry it copied; "" and 0 otherwise.
	Parent   string `json:"parent,omitempty"`
	ForkedAt int64  `json:"forked_at,omitempty"`
	// Entries, Steps, ModelCalls and ToolCalls count the journal's
	// entries: all of them, node transitions, model calls and tool calls.
	// The store maintains them.
	Entries    int64 `json:"entries"`
	Steps      int64 `json:"steps"`
	ModelCalls int64 `json:"model_calls"`
	ToolCalls  int64 `json:"tool_calls"`
	// Created and Updated are set by the store.
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// Update changes a thread's status. Pending, Error and Answer replace the
// thread's (nil and "" clear them).
type Update struct {
	Status  Status
	Pending *Approval
	Error   string
	// Answer is the run's answer, set with StatusDone.
	Answer string
}

// Store keeps threads and their journals. Implementations must be safe for
// concurrent use by one process, and must let several processes share one
// store (each thread is then run by one process at a time: see Lock).
// journaltest.Run is the conformance suite.
type Store interface {
	// Create adds a thread with no entries. The store sets Created,
	// Updated and the counts. ErrExists when the name is taken;
	// ErrBadName when it is not a ValidName.
	Create(ctx context.Context, t Thread) error
	// Thread returns the named thread, or ErrNotFound.
	Thread(ctx context.Context, name string) (Thread, error)
	// Threads lists every thread, the most recently updated first.
	Threads(ctx context.Context) ([]Thread, error)
	// SetStatus applies u to the named thread and sets Updated; or
	// ErrNotFound.
	SetStatus(ctx context.Context, name string, u Update) error
	// Append adds e at the end of the named thread's journal, assigns and
	// returns its Seq, updates the thread's counts and Updated, and
	// returns only once the entry survives the process being killed. Or
	// ErrNotFound.
	Append(ctx context.Context, name string, e Entry) (int64, error)
	// Entries returns the named thread's journal in Seq order. A journal
	// that was damaged (a changed or missing entry) fails with an error
	// matching ErrCorrupt, never a partial list; a missing thread with
	// ErrNotFound.
	Entries(ctx context.Context, name string) ([]Entry, error)
	// Lock takes the named thread's exclusive lock, for the holder to run
	// it; unlock releases it (a second unlock does nothing). The lock is
	// released when the holding process dies, however it dies. ErrLocked
	// when it is held, by this process or another; ErrBadName for a name
	// that is not a ValidName. The thread need not exist yet.
	Lock(ctx context.Context, name string) (unlock func() error, err error)
}

// Sentinel errors of stores and runs.
var (
	// ErrNotFound: no thread has that name.
	ErrNotFound = errors.New("journal: no such thread")
	// ErrExists: a thread with that name exists.
	ErrExists = errors.New("journal: thread exists")
	// ErrBadName: a thread name that is not a ValidName.
	ErrBadName = errors.New("journal: bad thread name")
	// ErrLocked: another run holds the thread (in another process, or
	// this one).
	ErrLocked = errors.New("journal: the thread is being run by another process or run")
	// ErrCorrupt: the journal was damaged and cannot be replayed.
	ErrCorrupt = errors.New("journal: corrupt journal")
	// ErrDiverged: the resumed run asked for something other than what
	// the journal recorded at that point.
	ErrDiverged = errors.New("journal: the run diverged from its journal")
	// ErrWaiting: a tool call waits for a human's approval; the thread is
	// saved with StatusWaiting.
	ErrWaiting = errors.New("journal: waiting for approval")
	// ErrNoApprover: a tool call needs approval and nobody can give it.
	ErrNoApprover = errors.New("journal: the tool call needs approval and no approver is available")
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidName reports whether name can name a thread: 1 to 128 letters,
// digits, '.', '_' or '-', starting with a letter or digit.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// CheckName returns nil for a ValidName, else an error matching
// ErrBadName that says what a name may hold.
func CheckName(name string) error {
	if ValidName(name) {
		return nil
	}
	return fmt.Errorf("%w %q: use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", ErrBadName, name)
}

// ErrNoCheckpoint: a fork from a checkpoint the journal does not have.
var ErrNoCheckpoint = errors.New("journal: no such checkpoint")

// Fork creates thread to from the first upTo entries (checkpoints 1 to
// upTo) of thread from, leaving from untouched: the new thread has from's
// pipeline, task and meta, status interrupted, and Parent and ForkedAt
// set. Resuming it replays those entries and goes on live (time travel).
// upTo 0 forks the bare start. ErrNoCheckpoint when upTo is out of range;
// ErrExists when to is taken.
func Fork(ctx context.Context, s Store, from, to string, upTo int64) (Thread, error) {
	src, err := s.Thread(ctx, from)
	if err != nil {
		return Thread{}, err
	}
	entries, err := s.Entries(ctx, from)
	if err != nil {
		return Thread{}, err
	}
	if upTo < 0 || upTo > int64(len(entries)) {
		return Thread{}, fmt.Errorf("%w %d: thread %q has checkpoints 1 to %d (0 forks its start)", ErrNoCheckpoint, upTo, from, len(entries))
	}
	t := Thread{Name: to, Pipeline: src.Pipeline, Task: src.Task, Meta: src.Meta, Status: StatusInterrupted, Parent: from, ForkedAt: upTo}
	if err := s.Create(ctx, t); err != nil {
		return Thread{}, err
	}
	for _, e := range entries[:upTo] {
		e.Seq = 0
		if _, err := s.Append(ctx, to, e); err != nil {
			return Thread{}, fmt.Errorf("forking %q at checkpoint %d: %w", from, upTo, err)
		}
	}
	return s.Thread(ctx, to)
}
