package planner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
)

// Pipeline is a loaded, built pipeline, ready to run tasks. It is safe to
// run concurrently; runs share its models (and so a scripted model's
// replies or a rate limit).
type Pipeline struct {
	engine   *Engine
	built    *pipeline.Pipeline
	provider string // the model's provider; "" for a validated pipeline
}

// Name returns the pipeline's name (its `name:` field).
func (p *Pipeline) Name() string { return p.built.Config.Name }

// Config returns the pipeline's decoded settings. Treat them as read-only.
func (p *Pipeline) Config() *config.Pipeline { return p.built.Config }

// Model says what kind of model the pipeline's llm block (or the WithLLM
// override) names, as Engine.ModelLabel: "real: openai", "scripted: ...".
// It is "" for a pipeline built by Validate.
func (p *Pipeline) Model() string {
	if p.provider == "" {
		return ""
	}
	return p.engine.ModelLabel(p.provider)
}

// Close stops what the pipeline's tools started, such as MCP server
// processes. Call it once the pipeline's runs have ended; it is safe to
// call more than once.
func (p *Pipeline) Close() error { return p.built.Close() }

// Graph returns the pipeline's compiled graph: its nodes, edges, routes
// and cycles, for drawing and validation reports.
func (p *Pipeline) Graph() *graph.Compiled[*state.State] { return p.built.Graph() }

// Kinds maps each node id to its node type (`type:`). Treat it as
// read-only.
func (p *Pipeline) Kinds() map[string]string { return p.built.Kinds() }

// Nested returns the pipelines the pipeline's subgraph and map nodes run,
// for drawing: p.Graph().Mermaid(p.Kinds(), p.Nested()...).
func (p *Pipeline) Nested() []graph.Nested { return p.built.Nested() }

// Tools returns the registry of the pipeline's tools.
func (p *Pipeline) Tools() *tools.Registry { return p.built.Tools() }

// Notices are the pipeline's load-time notices (prompt templates that
// leave out what their node needs, ...), also emitted at the start of
// every run.
func (p *Pipeline) Notices() []pipeline.Notice { return p.built.Notices() }

// RunOption configures Pipeline.Run.
type RunOption func(*runOptions)

type runOptions struct {
	task         state.Task
	sinks        []trace.Sink
	traceFile    string
	runID        string
	store        journal.Store
	thread       string
	approver     journal.Approver
	decision     *journal.Decision
	tokens       bool
	audit        ToolAuditor
	meta         *ThreadMeta
	metaPipeline string
	shared       *llm.SharedBudget
	live         int // WithLiveCalls; 0: no bound
	keepRequests bool
	hooks        []any
}

// WithRunHooks adds hooks to this run, after the Engine's (WithHooks):
// values implementing any of hooks.NodeHook, hooks.ModelHook,
// hooks.ProviderHook and hooks.ToolHook (see package hooks and
// pipeline.HookOrder for where they sit among the engine's own). Options
// accumulate. Default: none.
func WithRunHooks(hs ...any) RunOption {
	return func(o *runOptions) { o.hooks = append(o.hooks, hs...) }
}

// ToolAuditor records the tool calls of a run (an *audit.Log of package
// audit, say); see WithAudit.
type ToolAuditor = pipeline.ToolAuditor

// WithThreadMeta records m in a WithThread thread that this run creates
// (journal.Thread.Meta), and pipeline as the thread's pipeline as listings
// show it (journal.Thread.Pipeline), so that `planner resume` and
// `planner serve` can load the same pipeline and model again. Default:
// none.
func WithThreadMeta(pipeline string, m ThreadMeta) RunOption {
	return func(o *runOptions) { o.meta, o.metaPipeline = &m, pipeline }
}

// WithSharedBudget makes the run's model calls count against s, a budget
// shared by several runs (a whole comparison's, say): once it is spent,
// model calls other than finalizers fail with an error matching
// llm.ErrSharedBudgetExceeded and the run's finalizer answers from what is
// known. Default: none.
func WithSharedBudget(s *llm.SharedBudget) RunOption {
	return func(o *runOptions) { o.shared = s }
}

// WithLiveCalls bounds the live model and tool calls of a WithThread run:
// every journaled call is replayed, the first n calls past the journal are
// made live and the run suspends at the next one with an error matching
// journal.ErrSuspended (Temporal's activities make one call each this
// way). n <= 0 means no bound, the default.
func WithLiveCalls(n int) RunOption {
	return func(o *runOptions) { o.live = n }
}

// WithKeptRequests makes a WithThread run journal each model call's whole
// request rather than its digest (journal.KeepRequests): the journal grows
// with every prompt, and a resume whose calls differ from the journal's
// reports a line-by-line diff. Default: digests.
func WithKeptRequests() RunOption {
	return func(o *runOptions) { o.keepRequests = true }
}

// WithThread makes the run durable: it is journaled as thread name in
// store (see package journal; journal/sqlitestore is the SQLite store).
// Every node step, model call, tool call and approval is saved before the
// run moves on. If the store has no such thread, Run creates it; if it
// has, Run resumes it: the journaled calls are answered from the journal,
// none is made again, and the run goes on live where it ends (Resume does
// the same with the task the thread recorded). A run that waits for
// approval returns an error matching journal.ErrWaiting (errors.As gives
// the *journal.WaitingError) and Result.Status journal.StatusWaiting.
// Default: no journal.
func WithThread(store journal.Store, name string) RunOption {
	return func(o *runOptions) { o.store, o.thread = store, name }
}

// WithApprover decides the tool calls that need approval (tools marked
// approve: true in the pipeline). Its *journal.WaitingError makes a
// thread wait. Default: for a WithThread run journal.Defer() (the thread
// waits for a decision, see Resume and WithDecision); for other runs
// none, so such a call fails the run with journal.ErrNoApprover.
func WithApprover(a journal.Approver) RunOption {
	return func(o *runOptions) { o.approver = a }
}

// WithDecision answers the tool call a WithThread thread waits for (its
// Thread.Pending) with d; later calls that need approval go to the
// WithApprover approver. Default: none.
func WithDecision(d journal.Decision) RunOption {
	return func(o *runOptions) { o.decision = &d }
}

// WithAudit records every tool call of the run in a (an *audit.Log of
// package audit, say): what ran, with what input, its output's digest and
// size, its duration, its error and the human decision on it; a WithThread
// run records only the calls it makes live, not those it replays from the
// journal. The caller opens and closes a. Default: no record.
func WithAudit(a ToolAuditor) RunOption {
	return func(o *runOptions) { o.audit = a }
}

// WithTask runs t rather than a bare question: its ID (in the trace), its
// reference Answer (used by evaluators such as Reflexion's exact match)
// and its Tags reach the nodes. A non-empty question argument of Run replaces
// t.Question. Default: a task holding only the question.
func WithTask(t state.Task) RunOption {
	return func(o *runOptions) { o.task = t }
}

// WithTraceSink adds sinks that receive every event of the run, after the
// Engine's scrubber removed secrets from it; for example
// trace.NewTerminal(os.Stderr) prints the command line's trace stream.
// Options accumulate. Default: none; the events are still collected in
// Result.Trace.
func WithTraceSink(sinks ...trace.Sink) RunOption {
	return func(o *runOptions) { o.sinks = append(o.sinks, sinks...) }
}

// WithTraceFile writes every event of the run, scrubbed, to the file at
// path as JSON Lines (the command line's --trace), creating or truncating
// it before the run starts. Default: no file.
func WithTraceFile(path string) RunOption {
	return func(o *runOptions) { o.traceFile = path }
}

// WithRunID sets the run id stamped on every trace event. Default: 12
// random hexadecimal digits.
func WithRunID(id string) RunOption {
	return func(o *runOptions) { o.runID = id }
}

// Result is the outcome of one run.
type Result struct {
	// RunID is the id stamped on the run's trace events.
	RunID string
	// Answer is the final answer, scrubbed of secrets; a best effort when
	// Complete is false.
	Answer string
	// Complete is true when the run ended normally with a final answer;
	// false when the answer is a best effort after a budget ran out or a
	// step failed, or when the run failed.
	Complete bool
	// Reason explains an incomplete answer, scrubbed of secrets.
	Reason string
	// Failure classifies an unsuccessful run: one of the state.Failure*
	// constants, or "" for a complete one.
	Failure string
	// Usage counts the run's model calls, attempts, tokens (measured by the
	// provider or estimated with the o200k tokenizer, see Estimated), cost
	// in US dollars from the price table, and tool calls, in total and per
	// nodekind.
	Usage state.UsageSnapshot
	// Steps are the ids of the nodes executed, in order.
	Steps []string
	// Duration is the run's wall time.
	Duration time.Duration
	// Trace holds every event of the run, scrubbed, in order, except
	// token events (see WithTokens).
	Trace []trace.Event
	// State is the run's final state (plan, scratchpad, candidates,
	// notes, ...). It is not scrubbed: scrub before writing it anywhere.
	State *state.State
	// Thread is the WithThread thread's name, and Status its status after
	// the run; Pending is the tool call it waits for when Status is
	// journal.StatusWaiting. Replayed counts the journaled calls the run
	// answered from the journal, Live those it made, and Unused the
	// journal's entries it did not replay (more than 0: the run took
	// another path than the journal).
	Thread   string
	Status   journal.Status
	Pending  *journal.Approval
	Replayed int
	Live     int
	Unused   int
}

// Resume continues thread name of store (see WithThread) with the task the
// thread recorded: WithDecision(d) answers the call it waits for. The
// pipeline should be the one the thread was started with; a run that
// asks for other calls than the journal holds fails with an error
// matching journal.ErrDiverged, with a diff.
func (p *Pipeline) Resume(ctx context.Context, store journal.Store, name string, opts ...RunOption) (*Result, error) {
	th, err := store.Thread(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	var task state.Task
	if err := json.Unmarshal(th.Task, &task); err != nil {
		return nil, fmt.Errorf("resume: thread %q: its task: %w", name, err)
	}
	return p.Run(ctx, "", append([]RunOption{WithTask(task)}, append(opts, WithThread(store, name))...)...)
}

// Run runs the pipeline on question with the command line's run defaults:
// a tracer whose events are scrubbed by the Engine's scrubber, the
// pipeline's limits (max_steps, timeout) and ctx's deadline and
// cancellation. Run fails with ErrEmptyQuestion when there is no question,
// and with the os error when the WithTraceFile file cannot be created;
// then no run happens and the Result is nil. A run that fails returns its
// Result so far (Complete false, Failure set) and an error wrapping ErrRun
// and the cause (context.Canceled for a cancelled ctx). A run that ends
// with an incomplete best-effort answer is not an error: check
// Result.Complete.
func (p *Pipeline) Run(ctx context.Context, question string, opts ...RunOption) (*Result, error) {
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
	task := o.task
	if question != "" {
		task.Question = question
	}
	if strings.TrimSpace(task.Question) == "" {
		return nil, ErrEmptyQuestion
	}
	if o.runID == "" {
		o.runID = newRunID()
	}
	rec := &trace.Recorder{}
	topts := []trace.Option{trace.WithScrubber(p.engine.scrub), trace.WithSinks(trace.DropKinds(rec, trace.KindToken)), trace.WithSinks(o.sinks...)}
	popts := []pipeline.RunOption{pipeline.WithHooks(p.engine.hooks...), pipeline.WithHooks(o.hooks...)}
	if o.tokens {
		popts = append(popts, pipeline.WithTokens())
	}
	var jsonl *trace.JSONL
	if o.traceFile != "" {
		f, err := os.Create(o.traceFile)
		if err != nil {
			return nil, fmt.Errorf("opening trace file: %w", err)
		}
		jsonl = trace.NewJSONL(f)
		topts = append(topts, trace.WithSinks(jsonl))
	}
	tracer := trace.NewWithOptions(o.runID, topts...)
	if p.engine.spans != nil {
		popts = append(popts, pipeline.WithTelemetry(p.engine.spans)) // WithTracerProvider (telemetry.go)
	}
	if o.shared != nil {
		popts = append(popts, pipeline.WithSharedBudget(o.shared))
	}
	if o.audit != nil {
		popts = append(popts, pipeline.WithAudit(o.audit))
	}
	var (
		out    *pipeline.Result
		runErr error
		tr     pipeline.ThreadResult
	)
	if o.store == nil {
		if o.approver != nil {
			popts = append(popts, pipeline.WithApprover(o.approver))
		}
		out, runErr = p.built.Run(ctx, task, tracer, popts...)
	} else {
		approver := o.approver
		if approver == nil {
			approver = journal.Defer()
		}
		if o.decision != nil {
			th, err := o.store.Thread(ctx, o.thread)
			if err != nil || th.Pending == nil {
				closeTrace(jsonl)
				return nil, fmt.Errorf("%w: WithDecision: thread %q waits for no approval", ErrRun, o.thread)
			}
			approver = journal.Decide(*th.Pending, *o.decision, approver)
		}
		th := pipeline.Thread{Store: o.store, Name: o.thread, Approver: approver, LiveCalls: o.live, KeepRequests: o.keepRequests, Scrub: p.scrub}
		if o.meta != nil {
			meta, err := json.Marshal(o.meta)
			if err != nil {
				closeTrace(jsonl)
				return nil, fmt.Errorf("%w: WithThreadMeta: %w", ErrRun, err)
			}
			th.Pipeline, th.Meta = o.metaPipeline, meta
		}
		out, tr, runErr = p.built.RunThread(ctx, task, tracer, th, popts...)
		if out == nil {
			closeTrace(jsonl)
			return nil, fmt.Errorf("%w: %w", ErrRun, runErr)
		}
	}
	if jsonl != nil {
		if cerr := jsonl.Close(); cerr != nil {
			runErr = errors.Join(runErr, fmt.Errorf("writing trace file: %w", cerr))
		}
	}
	st := out.State
	return &Result{
		RunID:    o.runID,
		Answer:   p.scrub(st.Answer),
		Complete: st.Complete && runErr == nil,
		Reason:   p.scrub(st.Reason),
		Failure:  st.Failure,
		Usage:    st.Usage.Snapshot(),
		Steps:    out.Steps,
		Duration: out.Duration,
		Trace:    rec.Events(),
		State:    st,
		Thread:   o.thread,
		Status:   tr.Status,
		Pending:  tr.Pending,
		Replayed: tr.Replayed,
		Live:     tr.Live,
		Unused:   tr.Unused,
	}, runErr
}

// closeTrace closes a trace file of a run that could not start.
func closeTrace(j *trace.JSONL) {
	if j != nil {
		_ = j.Close()
	}
}

// scrub removes secrets from s with the Engine's scrubber, if any.
func (p *Pipeline) scrub(s string) string {
	if p.engine.scrub == nil {
		return s
	}
	return p.engine.scrub.String(s)
}

// newRunID returns a random id for a run's trace events.
func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
