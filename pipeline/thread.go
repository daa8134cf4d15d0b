package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
)

// Thread names a durable run: the store that keeps its journal and the
// thread's name, with what a new thread records.
type Thread struct {
	// Store keeps the thread. Required.
	Store journal.Store
	// Name is the thread's name (journal.ValidName). Required.
	Name string
	// Pipeline is recorded as the thread's pipeline when it is created
	// (a config path, say). Default: the pipeline's name.
	Pipeline string
	// Meta is recorded with a new thread: what its creator needs to run it
	// again. Optional.
	Meta json.RawMessage
	// Approver decides tool calls that need approval; a *journal.WaitingError
	// from it saves the thread as waiting. Default: none (such calls fail
	// the run with journal.ErrNoApprover).
	Approver journal.Approver
	// LiveCalls, when above 0, bounds the live model and tool calls of the
	// session (journal.LiveCalls): the run suspends at the next one with
	// an error matching journal.ErrSuspended. Default 0: no bound.
	LiveCalls int
	// KeepRequests journals each model call's whole request instead of its
	// digest (journal.KeepRequests): the journal grows with every prompt,
	// and a resume whose calls differ prints a line-by-line diff. Default
	// false: digests.
	KeepRequests bool
	// Scrub scrubs the answer a done thread records (journal.Thread.Answer).
	// Default: none (the answer is recorded as it is).
	Scrub func(string) string
}

// ThreadResult is what RunThread adds to a run's Result.
type ThreadResult struct {
	// Status is the thread's status after the run.
	Status journal.Status
	// Pending is the tool call that waits for approval, when Status is
	// journal.StatusWaiting.
	Pending *journal.Approval
	// Replayed counts the calls answered from the journal, Live the calls
	// made (and journaled) by this run, and Unused the journal's entries
	// the run did not replay.
	Replayed, Live, Unused int
}

// RunThread runs task as the thread th: it creates the thread when the
// store has none of that name, else resumes it, replaying its journal and
// going on live where the journal ends. It holds the thread's lock for the
// run (journal.ErrLocked when another run has it). The thread's status
// says how the run ended: done (an answer, complete or not), waiting (a
// tool call waits for approval: the error matches journal.ErrWaiting),
// interrupted (ctx was cancelled) or failed. A run that could not start
// (a bad name, a locked or corrupt thread) returns a nil Result.
func (p *Pipeline) RunThread(ctx context.Context, task state.Task, tracer *trace.Tracer, th Thread, opts ...RunOption) (_ *Result, _ ThreadResult, rerr error) {
	var tr ThreadResult
	if th.Store == nil {
		return nil, tr, errors.New("pipeline: Thread.Store is required")
	}
	if err := journal.CheckName(th.Name); err != nil {
		return nil, tr, err
	}
	// running is set once the store says "running" for this run (created
	// so, or set so under the lock); a run cancelled after that but
	// before it starts must not leave the thread saying so. A thread that
	// waits for approval and is cancelled before being set running keeps
	// its status and its pending call.
	running := false
	_, err := th.Store.Thread(ctx, th.Name)
	switch {
	case errors.Is(err, journal.ErrNotFound):
		taskJSON, err := json.Marshal(task)
		if err != nil {
			return nil, tr, fmt.Errorf("thread %q: encoding the task: %w", th.Name, err)
		}
		name := th.Pipeline
		if name == "" {
			name = p.Config.Name
		}
		err = th.Store.Create(ctx, journal.Thread{Name: th.Name, Pipeline: name, Task: taskJSON, Meta: th.Meta, Status: journal.StatusRunning})
		if err != nil {
			return nil, tr, fmt.Errorf("thread %q: %w", th.Name, err)
		}
		running = true
	case err != nil:
		return nil, tr, fmt.Errorf("thread %q: %w", th.Name, err)
	}
	unlock, err := th.Store.Lock(ctx, th.Name)
	if err != nil {
		if running && ctx.Err() != nil {
			err = errors.Join(err, interrupt(ctx, th))
		}
		return nil, tr, fmt.Errorf("thread %q: %w", th.Name, err)
	}
	defer func() { _ = unlock() }()
	started := false
	// Registered after the lock, so it runs before the unlock.
	defer func() {
		if running && !started && ctx.Err() != nil {
			if serr := interrupt(ctx, th); serr != nil {
				rerr = errors.Join(rerr, serr)
			}
		}
	}()
	var jopts []journal.OpenOption
	if th.LiveCalls > 0 {
		jopts = append(jopts, journal.LiveCalls(th.LiveCalls))
	}
	if th.KeepRequests {
		jopts = append(jopts, journal.KeepRequests())
	}
	run, err := journal.Open(ctx, th.Store, th.Name, jopts...)
	if err != nil {
		return nil, tr, fmt.Errorf("thread %q: %w", th.Name, err)
	}
	if err := th.Store.SetStatus(ctx, th.Name, journal.Update{Status: journal.StatusRunning}); err != nil {
		return nil, tr, fmt.Errorf("thread %q: %w", th.Name, err)
	}
	running = true
	started = true
	opts = append(opts, WithJournal(run))
	if th.Approver != nil {
		opts = append(opts, WithApprover(th.Approver))
	}
	res, runErr := p.Run(ctx, task, tracer, opts...)
	tr.Replayed, tr.Live, tr.Unused = run.Stats()
	u := journal.Update{Status: journal.StatusDone}
	var waiting *journal.WaitingError
	switch {
	case runErr == nil:
		if res != nil && res.State != nil {
			u.Answer = res.State.Answer
			if th.Scrub != nil {
				u.Answer = th.Scrub(u.Answer)
			}
		}
	case errors.As(runErr, &waiting):
		u.Status, u.Pending = journal.StatusWaiting, &waiting.Approval
	case ctx.Err() != nil:
		u.Status, u.Error = journal.StatusInterrupted, runErr.Error()
	default:
		u.Status, u.Error = journal.StatusFailed, runErr.Error()
	}
	tr.Status, tr.Pending = u.Status, u.Pending
	// The run may have been cancelled: saving its status must not be.
	if err := th.Store.SetStatus(context.WithoutCancel(ctx), th.Name, u); err != nil {
		return res, tr, errors.Join(runErr, fmt.Errorf("thread %q: saving its status: %w", th.Name, err))
	}
	return res, tr, runErr
}

// interrupt marks th interrupted by ctx's end (the save itself is not
// cancelled).
func interrupt(ctx context.Context, th Thread) error {
	err := th.Store.SetStatus(context.WithoutCancel(ctx), th.Name,
		journal.Update{Status: journal.StatusInterrupted, Error: context.Cause(ctx).Error()})
	if err != nil {
		return fmt.Errorf("thread %q: saving its status: %w", th.Name, err)
	}
	return nil
}
