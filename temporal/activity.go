package temporal

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm/scripted"
)

// threadName is the thread a session's run keeps in its in-memory store.
const threadName = "run"

// How long a worker keeps the runs it advances (sessions): a run idle
// longer, or ended, is dropped (a later Advance rebuilds it from its
// journal), and at most maxSessions are kept, the least recently used
// dropped first.
const (
	sessionIdle  = 30 * time.Minute
	endedIdle    = time.Minute
	maxSessions  = 512
	sweepEvery   = 5 * time.Second
	closeTimeout = 5 * time.Second
)

// Activities holds the Advance activity, the pipelines it built (one per
// config, llm and limits, shared by every run of the worker) and the runs
// it advances (one session per run, see Advance). Close closes them.
type Activities struct {
	engine *planner.Engine

	mu        sync.Mutex
	pipelines map[pipelineKey]*loaded
	sessions  map[string]*session
	swept     time.Time
	closed    bool
}

type pipelineKey struct {
	config, llm string
	maxSteps    int
	timeout     time.Duration
}

// loaded is a built pipeline and the Policy of its Advances.
type loaded struct {
	p   *planner.Pipeline
	pol Policy
}

// NewActivities returns the activities of a worker whose pipelines eng
// loads (its providers, tools and scrubber).
func NewActivities(eng *planner.Engine) (*Activities, error) {
	if eng == nil {
		return nil, ErrNoEngine
	}
	return &Activities{engine: eng, pipelines: map[pipelineKey]*loaded{}, sessions: map[string]*session{}}, nil
}

// ErrClosed: an Advance ran on Activities that were closed.
var ErrClosed = errors.New("temporal: the worker's activities are closed")

// pipelineLocked returns the built pipeline of in, loading it the first
// time. Its runs have no time limit of their own: a run's timeout bounds
// each of its Advances (the Policy), as a run waits between them. a.mu is
// held.
func (a *Activities) pipelineLocked(ctx context.Context, in RunInput) (*loaded, error) {
	key := pipelineKey{config: in.Config, llm: in.LLM, maxSteps: in.MaxSteps, timeout: in.Timeout}
	if l, ok := a.pipelines[key]; ok {
		return l, nil
	}
	cfg, err := config.Load(in.Config)
	if err != nil {
		return nil, fmt.Errorf("temporal: loading %s: %w", in.Config, err)
	}
	limit := cfg.Limits.Timeout
	if in.Timeout != 0 {
		limit = in.Timeout
	}
	opts := []planner.LoadOption{planner.WithTimeout(-1)}
	if in.LLM != "" {
		opts = append(opts, llmOption(in.LLM))
	}
	if in.MaxSteps != 0 {
		opts = append(opts, planner.WithMaxSteps(in.MaxSteps))
	}
	p, err := a.engine.LoadConfig(ctx, cfg, opts...)
	if err != nil {
		return nil, fmt.Errorf("temporal: loading %s: %w", in.Config, err)
	}
	l := &loaded{p: p, pol: policyOf(p, limit)}
	a.pipelines[key] = l
	return l, nil
}

// llmOption is the load option of a RunInput's LLM: "scripted" alone (the
// command line's --llm scripted) is the scripted model playing each
// task's own replies, which the worker's engine has (planner worker
// --suite); anything else a provider:model spec (planner.WithLLM).
func llmOption(spec string) planner.LoadOption {
	if strings.EqualFold(strings.TrimSpace(spec), scripted.Provider) {
		return planner.WithLLMConfig(config.LLM{Provider: scripted.Provider})
	}
	return planner.WithLLM(spec)
}

// Close stops the runs the activities keep and closes the pipelines they
// built (their MCP servers and the like), once the runs returned or
// after a few seconds; later Advances fail with ErrClosed.
func (a *Activities) Close() error {
	a.mu.Lock()
	a.closed = true
	sessions, pipelines := a.sessions, a.pipelines
	a.sessions, a.pipelines = map[string]*session{}, map[pipelineKey]*loaded{}
	a.mu.Unlock()
	for _, s := range sessions {
		s.halt(ErrClosed, 0)
	}
	deadline := time.After(closeTimeout)
	for _, s := range sessions {
		if s.stop == nil {
			continue
		}
		select {
		case <-s.exited:
		case <-deadline:
		}
	}
	var errs []error
	for k, l := range pipelines {
		if err := l.p.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", k.config, err))
		}
	}
	return errors.Join(errs...)
}

// policyOf is the Policy of p: its llm block's retries, and limit (its
// limits.timeout or the run's override) bounding each Advance.
func policyOf(p *planner.Pipeline, limit time.Duration) Policy {
	pol := defaultPolicy(limit)
	r := p.Config().LLM.Retry
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

// noLimit bounds the Advances of a pipeline whose timeout is negative (no
// limit): heartbeats find a lost one long before.
const noLimit = 24 * time.Hour

// defaultPolicy is the Policy of a pipeline with the default retries and
// timeout (limits.timeout: 0 for the default 10 minutes, negative for no
// limit).
func defaultPolicy(timeout time.Duration) Policy {
	switch {
	case timeout == 0:
		timeout = config.DefaultTimeout
	case timeout < 0:
		timeout = noLimit
	}
	return Policy{MaxAttempts: 3, InitialInterval: 500 * time.Millisecond, MaxInterval: 20 * time.Second, Timeout: timeout}
}

// Advance makes the run's next live model or tool call and runs it up to
// the one after (StatusSuspended, with that call's Kind), to a tool call
// that waits for approval (StatusWaiting), or to its end (StatusDone,
// StatusFailed). It returns the journal entries and trace events the
// workflow does not have yet.
//
// The worker keeps each run it advances (a session: the pipeline's run,
// paused before its next live call) under in.Thread, so an Advance costs
// one call, not a replay of the run so far. A worker that lacks the run,
// or holds another journal than in.Base and in.Digest say, rebuilds it
// from what in.Resent brings, or fails with an application error of type
// BehindError (ErrBehind) saying what it holds, for the workflow to send
// the rest. Other errors (the pipeline does not load, the live call
// failed, the Advance's time ran out) fail the activity, for Temporal to
// retry it; a journal the run diverged from fails it for good.
//
// The Advance heartbeats while it waits (the activity's HeartbeatTimeout),
// so a worker that dies, or never got the task, is found out in seconds.
func (a *Activities) Advance(ctx context.Context, in AdvanceInput) (*AdvanceOutput, error) {
	chain := legacy(ctx, &in)
	s, err := a.session(ctx, in, chain)
	if err != nil {
		return nil, err
	}
	return s.advance(ctx, in)
}

// legacy turns the input of a workflow of an earlier version (no Thread:
// the whole journal in Entries) into a resend of that journal, kept under
// the activity's workflow execution, and returns the chain digests of its
// first 0, 1, ... entries (nil for the input of a workflow of this
// version).
func legacy(ctx context.Context, in *AdvanceInput) []string {
	if in.Thread != "" {
		return nil
	}
	in.Thread = "legacy"
	if activity.IsActivity(ctx) {
		we := activity.GetInfo(ctx).WorkflowExecution
		in.Thread += "/" + we.ID + "/" + we.RunID
	}
	chain := extendChain([]string{""}, in.Entries)
	in.Base, in.Digest, in.From = len(in.Entries), chain[len(in.Entries)], 0
	return chain
}

// session returns the session that advances the run of in: the worker's
// own when its journal is the workflow's, else one rebuilt from the
// journal (the worker's, completed by in.Resent). It fails with a
// BehindError when the worker lacks entries or the run's input. legacy
// is the chain of in.Entries that legacy returned, if any.
func (a *Activities) session(ctx context.Context, in AdvanceInput, legacy []string) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, ErrClosed
	}
	a.sweepLocked(time.Now())
	old := a.sessions[in.Thread]
	if old != nil && old.usable(in.Base, in.Digest) {
		return old, nil
	}
	run := in.Run
	if run == nil && old != nil {
		run = &old.run
	}
	if run == nil {
		return nil, behindError(Behind{})
	}
	entries, chain, err := rebuildJournal(old, in, legacy)
	if err != nil {
		return nil, err
	}
	l, err := a.pipelineLocked(ctx, *run)
	if err != nil {
		return nil, err
	}
	r := *run
	r.Continued = nil
	s := newSession(in.Thread, r, l.pol, entries, chain, in.Events)
	var approver journal.Approver = s
	if in.Decision != nil && in.Pending != nil {
		approver = journal.Decide(*in.Pending, *in.Decision, approver)
	}
	runID := ""
	if activity.IsActivity(ctx) {
		runID = activity.GetInfo(ctx).WorkflowExecution.ID
	}
	if err := s.start(ctx, l.p, approver, runID); err != nil {
		return nil, err
	}
	if old != nil {
		old.halt(errSuperseded, 0)
	}
	a.sessions[in.Thread] = s
	return s, nil
}

// rebuildJournal returns the journal of in's run, the workflow's Base
// entries, and the chain digests of its first 0 to Base entries: the
// first ones from old (the worker's stale session, if any) and the rest
// from in.Resent (or in.Entries, from a workflow of an earlier version,
// whose chain legacy holds when legacy made it). It fails with a
// BehindError when they are not at hand.
func rebuildJournal(old *session, in AdvanceInput, legacy []string) ([]journal.Entry, []string, error) {
	var resent []journal.Entry
	switch {
	case len(in.Resent) > 0:
		if err := unpack(in.Resent, &resent); err != nil {
			return nil, nil, sdktemporal.NewNonRetryableApplicationError(err.Error(), "journal", err)
		}
	case in.Entries != nil && legacy != nil:
		return in.Entries, legacy, nil // legacy made in.Base and in.Digest of them
	case in.Entries != nil:
		resent = in.Entries
	case in.Base == 0:
		return nil, []string{""}, nil
	default:
		if old != nil {
			if entries, chain, ok := old.prefix(in.Base); ok && chain[in.Base] == in.Digest {
				return entries, chain, nil
			}
			return nil, nil, behindError(old.held(in.Base))
		}
		return nil, nil, behindError(Behind{})
	}
	entries, chain := []journal.Entry(nil), []string{""}
	if in.From > 0 {
		ok := false
		if old != nil {
			entries, chain, ok = old.prefix(in.From)
		}
		if !ok {
			return nil, nil, behindError(Behind{})
		}
	}
	entries = append(entries, resent...)
	if len(entries) == in.Base {
		if chain = extendChain(chain, resent); chain[in.Base] == in.Digest {
			return entries, chain, nil
		}
	}
	if in.From > 0 {
		return nil, nil, behindError(Behind{})
	}
	err := fmt.Errorf("%w: the workflow sent %d journal entries whose digest is not the one it holds for %d", journal.ErrCorrupt, len(entries), in.Base)
	return nil, nil, sdktemporal.NewNonRetryableApplicationError(err.Error(), "journal", err)
}

// behindError is the Advance's error for a worker that lacks the run's
// journal: what it holds is in b.
func behindError(b Behind) error {
	return sdktemporal.NewNonRetryableApplicationError(fmt.Sprintf("%v: it holds %d entries", ErrBehind, b.Have), BehindError, ErrBehind, b)
}

// sweepLocked drops the sessions of runs that ended or stayed idle, and
// the least recently used ones past maxSessions. a.mu is held.
func (a *Activities) sweepLocked(now time.Time) {
	if now.Sub(a.swept) < sweepEvery && len(a.sessions) <= maxSessions {
		return
	}
	a.swept = now
	type aged struct {
		key  string
		idle time.Duration
	}
	var live []aged
	for k, s := range a.sessions {
		idle, ended := s.idle(now)
		switch {
		case ended && idle > endedIdle, idle > sessionIdle:
			s.halt(errSuperseded, 0)
			delete(a.sessions, k)
		default:
			live = append(live, aged{k, idle})
		}
	}
	if extra := len(live) - maxSessions; extra > 0 {
		sort.Slice(live, func(i, j int) bool { return live[i].idle > live[j].idle })
		for _, o := range live[:extra] {
			a.sessions[o.key].halt(errSuperseded, 0)
			delete(a.sessions, o.key)
		}
	}
}
