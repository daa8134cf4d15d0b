package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/telemetry"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// The engine's hooks, installed around every call of a run in this order,
// outermost first (HookOrder lists them for the docs):
//
//	model call:  budget → the program's hooks → span → trace → usage →
//	             [metering, in llm] → tokens → journal → provider
//	tool call:   span → audit → the program's hooks → approval → usage →
//	             journal → tool
//	node:        span → the program's hooks → journal → node
//
// The budget refuses a call before anything else sees it; the program's
// hooks see every call that is made, before spans and trace events record
// it (a filter of personal data in prompts acts before any record); the
// journal is innermost, around the provider or the tool itself, so a
// replayed call passes every other hook as a live one does.

// HookOrder names the engine's hooks of each chain in the order they wrap
// a call, outermost first; "program" marks where the hooks of
// WithHooks go.
func HookOrder() map[string][]string {
	return map[string][]string{
		"model": {"budget", "program", "span", "trace", "usage", "metering", "tokens", "journal"},
		"tool":  {"span", "audit", "program", "approval", "usage", "journal"},
		"node":  {"span", "program", "journal"},
	}
}

// RunOption configures one run of Pipeline.Run or RunThread.
type RunOption func(*runConfig)

// runConfig holds a run's services: what RunOptions give it explicitly,
// rather than through its context.
type runConfig struct {
	hooks     []any
	tokens    bool
	audit     ToolAuditor
	journal   *journal.Run
	approver  journal.Approver
	shared    *llm.SharedBudget
	telemetry *telemetry.Provider
}

// WithJournal journals the run in the session j (journal.Open): its node
// transitions, model and tool calls and approvals are recorded, or
// answered from j when it holds them. RunThread sets it. Default: none.
func WithJournal(j *journal.Run) RunOption {
	return func(c *runConfig) { c.journal = j }
}

// WithApprover makes a decide the run's calls of tools that need approval.
// Default: none; such a call then fails with journal.ErrNoApprover.
func WithApprover(a journal.Approver) RunOption {
	return func(c *runConfig) { c.approver = a }
}

// WithSharedBudget makes the run's model calls draw on s, a budget many
// runs share (a comparison's): each is admitted by s before it is made
// and counted in it after. A refused call fails with an error matching
// llm.ErrSharedBudgetExceeded and is reported by a guard event
// (llm.GuardSharedBudget). Default: none.
func WithSharedBudget(s *llm.SharedBudget) RunOption {
	return func(c *runConfig) { c.shared = s }
}

// WithTelemetry makes the run emit OpenTelemetry spans through tp: one for
// the run, one per node execution, model call and tool call. Default: none
// (a nil tp).
func WithTelemetry(tp *telemetry.Provider) RunOption {
	return func(c *runConfig) { c.telemetry = tp }
}

// WithHooks adds the program's hooks to the run, in order (see package
// hooks): each wraps the chains whose interfaces it implements, inside
// the budget and outside every other engine hook (HookOrder). Options
// accumulate. Default: none.
func WithHooks(hs ...any) RunOption {
	return func(c *runConfig) { c.hooks = append(c.hooks, hs...) }
}

// WithTokens makes the run's model calls stream their replies as token
// events (see tokenHook). Default: off.
func WithTokens() RunOption {
	return func(c *runConfig) { c.tokens = true }
}

// Hooks returns the hooks Run gives a run of p on st whose events go to
// tracer, with opts (the run's services: WithHooks, WithTokens,
// WithAudit, WithJournal, WithApprover, WithSharedBudget, WithTelemetry),
// for programs and tests that call nodes, models or tools outside Run:
// st.SetHooks(p.Hooks(st, tracer)) makes their calls pass the same hooks
// as a run's.
func (p *Pipeline) Hooks(st *state.State, tracer *trace.Tracer, opts ...RunOption) *hooks.Set {
	return p.runHooks(st, tracer, newRunConfig(opts))
}

func newRunConfig(opts []RunOption) runConfig {
	var cfg runConfig
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// ContextHooks returns the engine's hooks for st outside any Pipeline:
// usage and trace events (to the tracer of each call's context,
// trace.From), the journal session of each call's context (journal.From)
// and of opts the services WithApprover and WithSharedBudget give; no
// budget limits, no audit log, no spans. For programs and tests that call
// nodes, models or tools outside Run:
// st.SetHooks(pipeline.ContextHooks(st)).
func ContextHooks(st *state.State, opts ...RunOption) *hooks.Set {
	cfg := newRunConfig(opts)
	return hooks.NewSet(budgetHook{st: st, shared: cfg.shared}, traceHook{}, usageHook{st: st, shared: cfg.shared},
		approvalHook{approver: cfg.approver}, toolUsageHook{st: st}, ctxJournal{})
}

// ctxJournal is the journal session of each call's context, as a hook.
type ctxJournal struct{}

func (ctxJournal) WrapProvider(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		if j := journal.From(ctx); j != nil {
			return j.WrapProvider(next)(ctx, call)
		}
		return next(ctx, call)
	}
}

func (ctxJournal) WrapTool(next hooks.ToolFunc) hooks.ToolFunc {
	return func(ctx context.Context, call *hooks.ToolCall) (*hooks.ToolResult, error) {
		if j := journal.From(ctx); j != nil {
			return j.WrapTool(next)(ctx, call)
		}
		return next(ctx, call)
	}
}

func (ctxJournal) WrapNode(next hooks.NodeFunc) hooks.NodeFunc {
	return func(ctx context.Context, n hooks.Node) (string, error) {
		if j := journal.From(ctx); j != nil {
			return j.WrapNode(next)(ctx, n)
		}
		return next(ctx, n)
	}
}

// tracerOf is t, or the tracer of ctx when t is nil.
func tracerOf(ctx context.Context, t *trace.Tracer) *trace.Tracer {
	if t != nil {
		return t
	}
	return trace.From(ctx)
}

// runHooks returns the hooks of one run of p on st, in the engine's order
// (HookOrder). Each value joins the chains it implements, so the order of
// this list is the order of every chain.
func (p *Pipeline) runHooks(st *state.State, tracer *trace.Tracer, cfg runConfig) *hooks.Set {
	return hooks.NewSet(p.hookList(st, tracer, cfg)...)
}

// branchNodeHooks returns the node hooks of the executions on a parallel
// branch of a run of p on st: runHooks' node chain, except that the
// journal does not journal the branch's node transitions (the journal
// keeps them in one sequence, which concurrent branches would write in
// completion order); their model and tool calls are journaled in their
// branch's scope all the same, so a resumed run replays them to their
// branch. Only its node chain is used.
func (p *Pipeline) branchNodeHooks(st *state.State, tracer *trace.Tracer, cfg runConfig) *hooks.Set {
	hs := p.hookList(st, tracer, cfg)
	if cfg.journal != nil {
		hs[len(hs)-1] = branchJournal{r: cfg.journal}
	}
	return hooks.NewSet(hs...)
}

// branchJournal is the journal's node hook on a parallel branch: it gives
// the node's code the session (journal.WithRun), as the journal's own
// node hook does, without journaling the transition.
type branchJournal struct{ r *journal.Run }

func (b branchJournal) WrapNode(next hooks.NodeFunc) hooks.NodeFunc {
	return func(ctx context.Context, n hooks.Node) (string, error) {
		return next(journal.WithRun(ctx, b.r), n)
	}
}

// hookList is the hooks of runHooks, in order; the journal, when the run
// has one, is last.
func (p *Pipeline) hookList(st *state.State, tracer *trace.Tracer, cfg runConfig) []any {
	limits := llm.Budget{MaxModelCalls: p.Config.Limits.MaxModelCalls, MaxTokens: p.Config.Limits.MaxTokens, MaxCostUSD: p.Config.Limits.MaxCostUSD}
	j, tp := cfg.journal, cfg.telemetry
	var hs []any
	if tp != nil {
		// Node and tool spans open outside everything; a model call's span
		// opens once its budget admitted it, inside the program's hooks.
		hs = append(hs, nodeSpanHook{tp: tp}, toolSpanHook{tp: tp})
	}
	hs = append(hs, budgetHook{st: st, limits: limits, shared: cfg.shared, tracer: tracer})
	if cfg.audit != nil {
		a := auditHook{to: cfg.audit, runID: tracer.RunID(), tracer: tracer}
		if j != nil {
			a.thread = j.Thread()
			a.replaying = func() bool { _, _, unused := j.Stats(); return unused > 0 }
		}
		hs = append(hs, a)
	}
	hs = append(hs, cfg.hooks...)
	if tp != nil {
		hs = append(hs, modelSpanHook{tp: tp})
	}
	hs = append(hs, traceHook{tracer: tracer}, usageHook{st: st, shared: cfg.shared}, approvalHook{tracer: tracer, approver: cfg.approver, journal: j}, toolUsageHook{st: st})
	if cfg.tokens {
		hs = append(hs, tokenHook{tracer: tracer, calls: &atomic.Int64{}})
	}
	if j != nil {
		hs = append(hs, j)
	}
	return hs
}

// budgetHook refuses a model call, other than a finalizer's, once the
// run's limits (limits.max_model_calls, max_tokens, max_cost_usd) or its
// shared budget (WithSharedBudget) are spent. A refusal of the shared
// budget is reported by a guard event (llm.GuardSharedBudget).
type budgetHook struct {
	st     *state.State
	limits llm.Budget
	shared *llm.SharedBudget
	tracer *trace.Tracer
}

func (h budgetHook) WrapModel(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		if call.Role != "finalize" && !h.limits.IsZero() {
			u := h.st.Usage.Totals()
			if err := h.limits.Check(u.ModelCalls, u.PromptTokens+u.CompletionTokens, u.CostUSD); err != nil {
				return nil, err
			}
		}
		if err := h.shared.Admit(call.Role); err != nil {
			tracerOf(ctx, h.tracer).Emit(trace.Event{Node: call.Node, Kind: trace.KindGuard, Text: err.Error(),
				Data: map[string]any{"guard": llm.GuardSharedBudget, "budget": h.shared.Name()}})
			return nil, err
		}
		return next(ctx, call)
	}
}

// usageHook counts every model call's attempts, tokens and cost into the
// run state, and into its shared budget.
type usageHook struct {
	st     *state.State
	shared *llm.SharedBudget
}

func (h usageHook) WrapModel(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		res, err := next(ctx, call)
		if res != nil {
			h.st.Usage.AddAttempts(call.Node, max(res.Attempts, 1), err != nil)
		}
		if err != nil {
			return res, err
		}
		u := res.Usage
		h.shared.Add(u.PromptTokens, u.CompletionTokens, u.CostUSD)
		h.st.Usage.AddModelCall(call.Node, u.PromptTokens, u.CompletionTokens, u.Estimated, u.CostUSD)
		if u.CachedPromptTokens > 0 {
			h.st.Usage.AddCachedTokens(call.Node, u.CachedPromptTokens)
		}
		return res, nil
	}
}

// traceHook emits a model call's trace events (to its tracer, or to the
// tracer of the call's context when it has none): a guard event before a
// retry after an empty reply, then llm_call with its usage, or an error
// event for a failed provider call.
type traceHook struct{ tracer *trace.Tracer }

func (h traceHook) WrapModel(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		if n := call.EmptyRetry; n > 0 {
			data := map[string]any{"guard": llm.GuardEmptyReply, "retry": n, "of": call.EmptyRetries, "kind": call.Kind}
			if call.Role != "" {
				data["role"] = call.Role
			}
			tracerOf(ctx, h.tracer).Emit(trace.Event{Node: call.Node, Kind: trace.KindGuard, Data: data,
				Text: fmt.Sprintf("empty reply; asking again with a nudge (retry %d of %d)", n, call.EmptyRetries)})
		}
		res, err := next(ctx, call)
		if err != nil {
			// A provider's failure (not a budget's refusal, the journal's
			// stop, a cancelled run or a reply without choices) is reported
			// here, with its timing.
			if errors.Is(err, llm.ErrModel) && !errors.Is(err, llm.ErrEmptyResponse) {
				ev := trace.Event{Node: call.Node, Kind: trace.KindError, Text: err.Error()}
				if res != nil {
					ev.ElapsedMS = ms(res.Elapsed.Microseconds())
				}
				tracerOf(ctx, h.tracer).Emit(ev)
			}
			return res, err
		}
		data := map[string]any{"kind": call.Kind}
		if call.Role != "" {
			data["role"] = call.Role
		}
		u := res.Usage
		tracerOf(ctx, h.tracer).Emit(trace.Event{Node: call.Node, Kind: trace.KindLLMCall, Data: data, ElapsedMS: ms(res.Elapsed.Microseconds()),
			Usage: &trace.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedPromptTokens: u.CachedPromptTokens, Estimated: u.Estimated, CostUSD: u.CostUSD}})
		return res, nil
	}
}

func ms(us int64) float64 { return float64(us) / 1000 }

// tokenHook streams every reply: each chunk is emitted, as it arrives, as
// a trace event of kind trace.KindToken from the calling node. Its Text is
// the chunk, scrubbed of secrets across chunks (trace.Tracer.NewTextStream:
// a secret split between two chunks is scrubbed like a whole one, so an
// event may hold back the end of a chunk until the next one shows it is
// no secret, and the call's last event comes when it returns); its Data
// holds "call" (the call's number in the run, from 1, shared by the
// chunks of one call, so concurrent calls can be told apart), "attempt"
// (the attempt of the retry middleware that produced it, from 1: a
// retried call streams again from its start, and what an attempt held
// back is emitted, as its own, before the next attempt's first chunk)
// and, when set, "role" and "step". A caller's own streaming function
// still gets every chunk first, as the provider sent it. It sits inside
// the metering, so it sees the call's attempt counter, and outside the
// journal, so a replayed reply streams as one chunk.
type tokenHook struct {
	tracer *trace.Tracer
	calls  *atomic.Int64
}

func (h tokenHook) WrapProvider(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		n := h.calls.Add(1)
		attempts := middleware.AttemptCounterFrom(ctx)
		var own func(context.Context, []byte) error
		for _, o := range call.Options {
			var co llms.CallOptions
			o(&co)
			if co.StreamingFunc != nil {
				own = co.StreamingFunc
			}
		}
		send := func(text string, attempt int) {
			if text == "" {
				return
			}
			data := map[string]any{"call": n, "attempt": attempt}
			if call.Role != "" {
				data["role"] = call.Role
			}
			if call.StepID != "" {
				data["step"] = call.StepID
			}
			h.tracer.Emit(trace.Event{Node: call.Node, Kind: trace.KindToken, Text: text, Data: data})
		}
		// mu guards stream and streamed (the attempt whose text stream
		// holds): a provider may call emit from its own goroutine.
		var mu sync.Mutex
		stream, streamed := h.tracer.NewTextStream(), 0
		emit := func(ctx context.Context, chunk []byte) error {
			if own != nil {
				if err := own(ctx, chunk); err != nil {
					return err
				}
			}
			if len(chunk) == 0 {
				return nil
			}
			attempt := 1
			if attempts != nil {
				attempt = max(attempts.Attempts(), 1)
			}
			mu.Lock()
			defer mu.Unlock()
			if streamed != 0 && attempt != streamed {
				send(stream.Flush(), streamed) // the end of the failed attempt's reply
			}
			streamed = attempt
			send(stream.Write(string(chunk)), attempt)
			return nil
		}
		if own == nil {
			// Only token events see the stream: a call that fails half way
			// may be retried from its start.
			ctx = middleware.WithRestartableStream(ctx)
		}
		call.Options = append(call.Options, llms.WithStreamingFunc(emit))
		res, err := next(ctx, call)
		mu.Lock()
		if streamed != 0 {
			send(stream.Flush(), streamed)
		}
		mu.Unlock()
		return res, err
	}
}

// modelSpanHook opens an OpenTelemetry span per model call, after the
// GenAI semantic conventions.
type modelSpanHook struct{ tp *telemetry.Provider }

func (h modelSpanHook) WrapModel(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		ctx, span := h.tp.StartChat(ctx, telemetry.Chat{Provider: call.Provider, Model: call.Model, Node: call.Node, Role: call.Role, Step: call.StepID})
		if span.Content() {
			span.SetMessages(telemetry.KeyInputMessages, spanMessages(call.Messages))
		}
		res, err := next(ctx, call)
		endModelSpan(span, res, err)
		return res, err
	}
}
