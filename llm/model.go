package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"
)

// CallMeta is the call metadata of one model call: who makes it and for
// what. Model.Call puts it in the call's context, where any model may read
// it with CallMetaFrom: the scripted model matches replies on it, cassettes
// record it, traces attribute usage with it. It is the only per-call value
// the engine passes to models besides the messages and call options.
type CallMeta struct {
	// Node is the calling graph node's id.
	Node string `json:"node,omitempty"`
	// Kind is the node's type, for example "react" or "planner".
	Kind string `json:"kind,omitempty"`
	// Role is a finer role inside a node, for example "finalize" or
	// "evaluate"; empty for the node's main call.
	Role string `json:"role,omitempty"`
	// TaskID is the id of the task being run; empty for ad-hoc runs.
	TaskID string `json:"task_id,omitempty"`
	// StepID is the id of the plan step the call serves, when a plan-step
	// executor runs it (see WithStep); else empty.
	StepID string `json:"step_id,omitempty"`
	// Pipeline is the name of the pipeline whose run makes the call (its
	// config's name:, which a comparison calls the config), when the run
	// names one (see WithPipeline); else empty. The pipeline a nested run
	// (a subgraph) belongs to is the outer run's.
	Pipeline string `json:"pipeline,omitempty"`
}

type metaKey struct{}

// WithCallMeta returns ctx carrying m.
func WithCallMeta(ctx context.Context, m CallMeta) context.Context {
	return context.WithValue(ctx, metaKey{}, m)
}

// CallMetaFrom returns the call metadata in ctx, or the zero CallMeta.
func CallMetaFrom(ctx context.Context) CallMeta {
	m, _ := ctx.Value(metaKey{}).(CallMeta)
	return m
}

// WithStep returns ctx whose model calls serve plan step id: Model.Call
// copies it into CallMeta.StepID. The step is a branch of its own
// (hooks.Branch), since plan steps may run concurrently.
func WithStep(ctx context.Context, id string) context.Context {
	m := CallMetaFrom(ctx)
	m.StepID = id
	return hooks.Branch(WithCallMeta(ctx, m), "step."+id)
}

// WithPipeline returns ctx whose model calls are made by a run of the
// pipeline named name: Model.Call copies it into CallMeta.Pipeline. The
// pipeline sets it for each run, so that offline models that play recorded
// replies per config (the scripted model's per-task mode) know whose run
// calls them.
func WithPipeline(ctx context.Context, name string) context.Context {
	m := CallMetaFrom(ctx)
	m.Pipeline = name
	return WithCallMeta(ctx, m)
}

// Run is the run a model call serves, as Call needs it: its task's id and
// its hooks. *state.State is one. A nil Run (or a Run whose Hooks are nil)
// makes a bare call: metered, but counted, traced and journaled nowhere.
type Run interface {
	TaskID() string
	Hooks() *hooks.Set
}

// Meter measures the tokens of one model call. Implementations prefer the
// provider's reported usage and estimate with a tokenizer otherwise.
type Meter interface {
	Measure(msgs []llms.MessageContent, resp *llms.ContentResponse) (prompt, completion int, estimated bool)
}

// Pricer prices a call's tokens. known is false when the model has no price.
type Pricer interface {
	Cost(prompt, completion int) (usd float64, known bool)
}

// CacheMeter is a Meter that also reads how many of a reply's prompt
// tokens the provider served from its prompt cache (0 when it says
// nothing).
type CacheMeter interface {
	Cached(resp *llms.ContentResponse) int
}

// CachePricer is a Pricer that prices the cached part of the prompt at the
// model's cached rate; Model.Call uses it when the Meter is a CacheMeter.
type CachePricer interface {
	CostCached(prompt, cached, completion int) (usd float64, known bool)
}

// ErrModel marks a failed model call (provider error, timeout); reports
// classify it as a provider failure.
var ErrModel = errors.New("model call failed")

// ErrEmptyResponse means a model returned no choices.
var ErrEmptyResponse = errors.New("model returned no choices")

// Model bundles what a node needs to call a language model: the model, how
// to measure usage, and optionally how to price it.
type Model struct {
	LLM llms.Model
	// Meter measures usage; nil falls back to ApproxMeter.
	Meter Meter
	// Pricer prices usage; nil leaves cost at zero.
	Pricer Pricer
	// Provider and Name are the provider ("openai", "scripted") and model
	// ("gpt-4o-mini"; may be empty) the Factory built it for; telemetry
	// names the call's span after them.
	Provider, Name string
	// EmptyRetries is how many times Call asks again after an empty reply
	// (see EmptyReply), each time with EmptyNudge appended to the
	// messages. 0, the zero Model's, makes no retries; the Factory sets it
	// from the llm block's empty_retries (default
	// config.DefaultEmptyRetries, 2). A node that wants another number
	// for its calls (the ReAct loop's max_empty_retries) calls a copy of
	// the Model with its own EmptyRetries.
	EmptyRetries int
	// EmptyNudge is the user message appended to the messages of a call
	// retried after an empty reply. Empty means DefaultEmptyNudge. The
	// Factory sets it from the llm block's empty_nudge.
	EmptyNudge string
	// Embedder creates embeddings with the provider's embedding model
	// (the llm block's embedding_model, else the provider's default); nil
	// when the provider offers none (anthropic, the offline models). The
	// Factory sets it for the models that are an EmbeddingSource, its
	// requests going through the same HTTP client and key as the chat
	// calls and through the EmbeddingWrappers (the planner's: retries,
	// rate limit and per-attempt timeout of the llm block). The requests are not journaled
	// (the ReAct loop's tool retrieval journals the selections it makes
	// with them) and their usage is not counted.
	Embedder embeddings.Embedder
}

// DefaultEmptyNudge is the user message appended to a call retried after
// an empty reply, unless the llm block's empty_nudge (Model.EmptyNudge)
// says otherwise. It is a message of its own, after the
// call's messages: an empty assistant turn before it would be rejected by
// some providers (Anthropic, Gemini), and the providers that want turns to
// alternate merge consecutive user turns.
const DefaultEmptyNudge = "Your previous reply was empty. Reply again, following the instructions above."

// GuardEmptyReply is the guard name ("guard" in the event's Data) of the
// trace event announcing a retry after an empty reply (the pipeline's
// trace hook emits it for a call whose hooks.ModelCall.EmptyRetry is set).
const GuardEmptyReply = "empty_reply"

// emptyRetry returns how many times a call retries an empty reply and the
// nudge it appends.
func (m Model) emptyRetry() (int, string) {
	nudge := m.EmptyNudge
	if strings.TrimSpace(nudge) == "" {
		nudge = DefaultEmptyNudge
	}
	return max(m.EmptyRetries, 0), nudge
}

// EmptyReply reports whether resp says nothing: no choice has text other
// than white space, a tool call or a function call. A reply of native tool
// calls alone is not empty; a nil resp is.
func EmptyReply(resp *llms.ContentResponse) bool {
	if resp == nil {
		return true
	}
	for _, ch := range resp.Choices {
		if ch == nil {
			continue
		}
		if strings.TrimSpace(ch.Content) != "" || len(ch.ToolCalls) > 0 || ch.FuncCall != nil {
			return false
		}
	}
	return true
}

// Call makes one model call on behalf of caller (whose Node, Kind and Role
// it uses; the task id comes from run, the step id and the pipeline name
// from ctx, see WithStep and WithPipeline) through run's hooks, and
// returns the first choice's content as text; resp holds every choice
// (tool calls may be in any).
//
// The call passes run's ModelHooks (hooks.Set.WrapModel: budgets, usage,
// trace events, spans, the program's own), then the metering (attempts,
// tokens measured by Meter, cost priced by Pricer, wall time), then run's
// ProviderHooks (token streaming, the journal), then the provider. A call
// the journal answers is not measured: its usage is the one journaled
// with it. A
// provider's failure is returned wrapping ErrModel; a cancelled ctx's
// error as it is; a hook's error (a spent budget, a journal that stops
// the call) as the hook returned it.
//
// A reply that is empty (EmptyReply) is asked for again, up to
// EmptyRetries times, with the same messages and the nudge (EmptyNudge or
// DefaultEmptyNudge) appended as a user message. Each retry is a model
// call of its own through the same hooks, marked by
// hooks.ModelCall.EmptyRetry (the trace hook announces it with a guard
// event, GuardEmptyReply): budgets are checked before it, its usage is
// counted, a journaled run journals it, so a resumed run replays the
// retries as they happened. When the retries run out the last, empty,
// reply is returned without an error: the caller treats it as any
// unusable reply, most nodes as a failure of kind "parse", a ReAct loop
// as a format error fed back to the model.
func (m Model) Call(ctx context.Context, run Run, caller CallMeta, msgs []llms.MessageContent, opts ...llms.CallOption) (text string, resp *llms.ContentResponse, err error) {
	if m.LLM == nil {
		return "", nil, fmt.Errorf("%w: no model configured (set llm: in the pipeline or pass --llm)", ErrModel)
	}
	outer := CallMetaFrom(ctx)
	caller.StepID, caller.Pipeline = outer.StepID, outer.Pipeline
	caller.TaskID = ""
	var set *hooks.Set
	if run != nil {
		caller.TaskID, set = run.TaskID(), run.Hooks()
	}
	ctx = WithCallMeta(ctx, caller)
	fn := set.WrapModel(m.metered(set.WrapProvider(m.provider)))
	call := m.modelCall(caller, msgs, opts)
	res, err := fn(ctx, call)
	retries, nudge := m.emptyRetry()
	var nudged []llms.MessageContent
	for n := 1; err == nil && n <= retries && EmptyReply(res.Response); n++ {
		if nudged == nil {
			nudged = append(slices.Clip(msgs), llms.TextParts(llms.ChatMessageTypeHuman, nudge))
		}
		call = m.modelCall(caller, nudged, opts)
		call.EmptyRetry, call.EmptyRetries = n, retries
		res, err = fn(ctx, call)
	}
	if err != nil {
		return "", nil, err
	}
	return res.Response.Choices[0].Content, res.Response, nil
}

// modelCall is the hooks' view of one call.
func (m Model) modelCall(caller CallMeta, msgs []llms.MessageContent, opts []llms.CallOption) *hooks.ModelCall {
	return &hooks.ModelCall{Node: caller.Node, Kind: caller.Kind, Role: caller.Role, TaskID: caller.TaskID, StepID: caller.StepID,
		Provider: m.Provider, Model: m.Name, Messages: msgs, Options: slices.Clone(opts)}
}

// provider makes the provider request of a call: the innermost function of
// its chain.
func (m Model) provider(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
	resp, err := m.LLM.GenerateContent(ctx, call.Messages, call.Options...)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	return &hooks.ModelResult{Response: resp}, nil
}

// metered is the metering between a call's ModelHooks and its
// ProviderHooks: it counts the provider attempts, times the call, checks
// the reply has a choice, and measures and prices its tokens — unless a
// ProviderHook answered with the reply's usage (hooks.ModelResult.Measured:
// the journal replaying a call), which it keeps. It gives the
// ProviderHooks its measure as hooks.ModelCall.Measure. On error the
// result still carries Attempts and Elapsed.
func (m Model) metered(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		ctx, attempts := middleware.WithAttemptCounter(ctx)
		call.Measure = func(resp *llms.ContentResponse) hooks.Usage { return m.measure(call.Messages, resp) }
		began := time.Now()
		res, err := next(ctx, call)
		// A model without the retry middleware counts no attempts: its one
		// call is one attempt.
		meta := hooks.ModelResult{Attempts: max(attempts.Attempts(), 1), Elapsed: time.Since(began)}
		if err != nil {
			return &meta, err
		}
		if res == nil || res.Response == nil || len(res.Response.Choices) == 0 {
			if res != nil {
				meta.Response = res.Response
			}
			return &meta, fmt.Errorf("%w: %w", ErrModel, ErrEmptyResponse)
		}
		meta.Response = res.Response
		if res.Measured {
			meta.Usage = res.Usage
		} else {
			meta.Usage = m.measure(call.Messages, res.Response)
		}
		return &meta, nil
	}
}

// measure counts and prices a reply's tokens.
func (m Model) measure(msgs []llms.MessageContent, resp *llms.ContentResponse) hooks.Usage {
	meter := m.Meter
	if meter == nil {
		meter = ApproxMeter{}
	}
	p, c, est := meter.Measure(msgs, resp)
	cached := 0
	if cm, ok := meter.(CacheMeter); ok {
		cached = min(cm.Cached(resp), p)
	}
	var cost float64
	if cp, ok := m.Pricer.(CachePricer); ok && cached > 0 {
		cost, _ = cp.CostCached(p, cached, c)
	} else if m.Pricer != nil {
		cost, _ = m.Pricer.Cost(p, c)
	}
	return hooks.Usage{PromptTokens: p, CompletionTokens: c, CachedPromptTokens: cached, Estimated: est, CostUSD: cost}
}

// ApproxMeter estimates tokens as one per four bytes of text. It is the
// last-resort fallback when no tokenizer-backed meter is configured; its
// figures are marked estimated.
type ApproxMeter struct{}

// Measure implements Meter.
func (ApproxMeter) Measure(msgs []llms.MessageContent, resp *llms.ContentResponse) (int, int, bool) {
	p := 0
	for _, m := range msgs {
		for _, part := range m.Parts {
			if t, ok := part.(llms.TextContent); ok {
				p += len(t.Text)/4 + 1
			}
		}
		p += 4
	}
	c := 0
	for _, ch := range resp.Choices {
		c += len(ch.Content)/4 + 1
	}
	return p, c, true
}

// Text builds a single human message.
func Text(role llms.ChatMessageType, text string) llms.MessageContent {
	return llms.TextParts(role, text)
}

// Prompt builds a system + human message pair; an empty system is left out.
func Prompt(system, user string) []llms.MessageContent {
	var msgs []llms.MessageContent
	if strings.TrimSpace(system) != "" {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, system))
	}
	return append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, user))
}

// MessagesText is the text of msgs as a model reads it, for offline models
// that match or parse their prompt: each text part and each tool result,
// one per line, in order; a tool result is preceded by toolPrefix (such as
// "Observation: ", or ""). Other parts (tool calls, images) are left out.
func MessagesText(msgs []llms.MessageContent, toolPrefix string) string {
	n := 0
	for _, msg := range msgs {
		for _, p := range msg.Parts {
			switch v := p.(type) {
			case llms.TextContent:
				n += len(v.Text) + 1
			case llms.ToolCallResponse:
				n += len(toolPrefix) + len(v.Content) + 1
			}
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, msg := range msgs {
		for _, p := range msg.Parts {
			switch v := p.(type) {
			case llms.TextContent:
				b.WriteString(v.Text)
				b.WriteByte('\n')
			case llms.ToolCallResponse:
				b.WriteString(toolPrefix)
				b.WriteString(v.Content)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}
