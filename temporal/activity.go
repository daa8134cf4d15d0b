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
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
)

// threadName is the thread an Advance runs in its in-memory store.
const threadName = "run"

// Activities holds the Advance activity and the pipelines it built: one
// per (config, llm, limits), reused by every run of the worker. Close
// closes them.
type Activities struct {
	engine *planner.Engine

	mu        sync.Mutex
	pipelines map[pipelineKey]*planner.Pipeline
	closed    bool
}

type pipelineKey struct {
	config, llm string
	maxSteps    int
	timeout     time.Duration
}

// NewActivities returns the activities of a worker whose pipelines eng
// loads (its providers, tools and scrubber).
func NewActivities(eng *planner.Engine) (*Activities, error) {
	if eng == nil {
		return nil, ErrNoEngine
	}
	return &Activities{engine: eng, pipelines: map[pipelineKey]*planner.Pipeline{}}, nil
}

// ErrClosed: an Advance ran on Activities that were closed.
var ErrClosed = errors.New("temporal: the worker's activities are closed")

// pipeline returns the built pipeline of in, loading it the first time.
func (a *Activities) pipeline(ctx context.Context, in RunInput) (*planner.Pipeline, error) {
	key := pipelineKey{config: in.Config, llm: in.LLM, maxSteps: in.MaxSteps, timeout: in.Timeout}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, ErrClosed
	}
	if p, ok := a.pipelines[key]; ok {
		return p, nil
	}
	var opts []planner.LoadOption
	if in.LLM != "" {
		opts = append(opts, planner.WithLLM(in.LLM))
	}
	if in.MaxSteps != 0 {
		opts = append(opts, planner.WithMaxSteps(in.MaxSteps))
	}
	if in.Timeout != 0 {
		opts = append(opts, planner.WithTimeout(in.Timeout))
	}
	p, err := a.engine.Load(ctx, in.Config, opts...)
	if err != nil {
		return nil, fmt.Errorf("temporal: loading %s: %w", in.Config, err)
	}
	a.pipelines[key] = p
	return p, nil
}

// Close closes the pipelines the activities built (their MCP servers and
// the like); later Advances fail with ErrClosed.
func (a *Activities) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	var errs []error
	for k, p := range a.pipelines {
		if err := p.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", k.config, err))
		}
		delete(a.pipelines, k)
	}
	return errors.Join(errs...)
}

// policyOf is the Policy of p: its llm block's retries and its timeout.
func policyOf(p *planner.Pipeline) Policy {
	cfg := p.Config()
	pol := defaultPolicy(cfg.Limits.Timeout)
	r := cfg.LLM.Retry
	if r.MaxAttempts > 0 {
		pol.MaxAttempts = r.MaxAttempts
	}
	if r.BaseDelay > 0 {
		pol.InitialInterval = r.BaseDelay
	}
	if r.MaxDelay > 0 {
		pol.MaxInterval = r.MaxDelay
	}
	return pol
}

// defaultPolicy is the Policy of a pipeline with the default retries and
// timeout (limits.timeout; 0 or negative for the default 10 minutes).
func defaultPolicy(timeout time.Duration) Policy {
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	return Policy{MaxAttempts: 3, InitialInterval: 500 * time.Millisecond, MaxInterval: 20 * time.Second, Timeout: timeout}
}

// Advance runs the pipeline of in.Run from its journal (in.Entries): the
// journaled calls are replayed, the first live model or tool call is made,
// and the run stops at the next one (StatusSuspended), at a tool call
// that waits for approval (StatusWaiting), or at its end (StatusDone,
// StatusFailed). It returns the entries the run appended. An error (the
// pipeline does not load, the journal diverged, the live call failed and
// the run could not go on without it) fails the activity, for Temporal to
// retry it.
func (a *Activities) Advance(ctx context.Context, in AdvanceInput) (*AdvanceOutput, error) {
	p, err := a.pipeline(ctx, in.Run)
	if err != nil {
		return nil, err
	}
	store, err := memstore.Load(ctx, journal.Thread{Name: threadName, Pipeline: in.Run.Config, Status: journal.StatusInterrupted}, in.Entries)
	if err != nil {
		return nil, fmt.Errorf("temporal: loading the journal: %w", err)
	}
	approver := journal.Defer()
	if in.Decision != nil && in.Pending != nil {
		approver = journal.Decide(*in.Pending, *in.Decision, approver)
	}
	opts := []planner.RunOption{planner.WithTask(in.Run.Task), planner.WithThread(store, threadName), planner.WithApprover(approver)}
	if activity.IsActivity(ctx) {
		opts = append(opts, planner.WithRunID(activity.GetInfo(ctx).WorkflowExecution.ID))
	}
	res, runErr := p.Run(ctx, "", append(opts, planner.WithLiveCalls(1))...)
	out := &AdvanceOutput{Policy: policyOf(p)}
	all, err := store.Entries(context.WithoutCancel(ctx), threadName)
	if err != nil {
		return nil, fmt.Errorf("temporal: reading the journal back: %w", err)
	}
	if len(all) < len(in.Entries) {
		return nil, fmt.Errorf("temporal: the journal shrank from %d to %d entries", len(in.Entries), len(all))
	}
	out.Entries = all[len(in.Entries):]
	for i := range out.Entries {
		// The workflow carries every entry into every Advance: model
		// requests (whole prompts) are kept as digests, which is all
		// replay needs, so the history grows with the replies only.
		out.Entries[i] = journal.Compact(out.Entries[i])
		out.Entries[i].Seq = 0
	}
	if res != nil {
		out.Events = res.Trace
		if n := len(out.Events); n > MaxEvents {
			out.Events = out.Events[n-MaxEvents:]
		}
	}
	var (
		suspended *journal.SuspendedError
		waiting   *journal.WaitingError
	)
	switch {
	case errors.As(runErr, &suspended):
		if suspended.LiveErr != nil {
			return nil, fmt.Errorf("temporal: the run's live call failed: %w", suspended.LiveErr)
		}
		out.Status, out.Kind = StatusSuspended, suspended.Kind
	case errors.As(runErr, &waiting):
		out.Status, out.Pending = StatusWaiting, &waiting.Approval
	case errors.Is(runErr, journal.ErrDiverged), errors.Is(runErr, journal.ErrCorrupt):
		// The workers run another pipeline or model than the one the
		// history was made with: retrying gives the same answer.
		return nil, sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf("temporal: advancing the run: %v", runErr), "journal", runErr)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("temporal: advancing the run: %w", runErr)
	case res == nil:
		return nil, fmt.Errorf("temporal: advancing the run: %w", runErr)
	default:
		out.Status = StatusDone
		if runErr != nil {
			out.Status = StatusFailed
		}
		out.Result = &Summary{Answer: res.Answer, Complete: res.Complete, Reason: res.Reason, Failure: res.Failure,
			Usage: res.Usage, Steps: res.Steps}
		if runErr != nil {
			out.Result.Error = runErr.Error()
		}
	}
	return out, nil
}
