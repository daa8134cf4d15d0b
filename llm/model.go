package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/telemetry"
	"github.com/planner-engine/planner/trace"
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
// copies it into CallMeta.StepID. In a journaled run the step is a branch
// of its own (journal.Branch), since plan steps may run concurrently.
func WithStep(ctx context.Context, id string) context.Context {
	m := CallMetaFrom(ctx)
	m.StepID = id
	return journal.Branch(WithCallMeta(ctx, m), "step."+id)
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
	// config.DefaultEmptyRetries, 2). WithEmptyRetries overrides it for
	// the calls made with a context.
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
	// rate limit and per-attempt timeout of the llm block). Each request
	// emits a trace event of kind info. The requests are not journaled
	// (the ReAct loop's tool retrieval journals the selections it makes
	// with them) and their usage is not counted.
	Embedder embeddings.Embedder
}

// DefaultEmptyNudge is the user message appended to a call retried after
// an empty reply, unless the llm block's empty_nudge (Model.EmptyNudge) or
// WithEmptyNudge says otherwise. It is a message of its own, after the
// call's messages: an empty assistant turn before it would be rejected by
// some providers (Anthropic, Gemini), and the providers that want turns to
// alternate merge consecutive user turns.
const DefaultEmptyNudge = "Your previous reply was empty. Reply again, following the instructions above."

// GuardEmptyReply is the guard name ("guard" in the event's Data) of the
// trace event Call emits before it retries an empty reply.
const GuardEmptyReply = "empty_reply"

type emptyRetriesKey struct{}

type emptyNudgeKey struct{}

// WithEmptyRetries returns ctx whose model calls (Model.Call) retry an
// empty reply n times instead of their Model's EmptyRetries; n <= 0 makes
// no retries. The ReAct loop sets it from its max_empty_retries for its
// turns.
func WithEmptyRetries(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, emptyRetriesKey{}, max(n, 0))
}

// WithEmptyNudge returns ctx whose model calls retried after an empty
// reply append nudge instead of their Model's EmptyNudge; a blank nudge
// leaves ctx as it is.
func WithEmptyNudge(ctx context.Context, nudge string) context.Context {
	if strings.TrimSpace(nudge) == "" {
		return ctx
	}
	return context.WithValue(ctx, emptyNudgeKey{}, nudge)
}

// emptyRetry returns how many times a call made with ctx retries an empty
// reply and the nudge it appends.
func (m Model) emptyRetry(ctx context.Context) (int, string) {
	n, ok := ctx.Value(emptyRetriesKey{}).(int)
	if !ok {
		n = max(m.EmptyRetries, 0)
	}
	nudge, _ := ctx.Value(emptyNudgeKey{}).(string)
	if nudge == "" {
		nudge = m.EmptyNudge
	}
	if strings.TrimSpace(nudge) == "" {
		nudge = DefaultEmptyNudge
	}
	return n, nudge
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
// it uses; the task id comes from st and the step id from ctx, see
// WithStep), records its usage in st, and emits an llm_call trace event.
// The returned text is the first choice's content; resp holds every
// choice (tool calls may be in any).
//
// A reply that is empty (EmptyReply) is asked for again, up to
// EmptyRetries times (or WithEmptyRetries'), with the same messages and
// the nudge (EmptyNudge, DefaultEmptyNudge or WithEmptyNudge's) appended
// as a user message; each retry is announced by a trace event of kind
// guard (Data: "guard" GuardEmptyReply, "retry" n, "of" the retries,
// "kind" and "role" of the caller). Each retry is a model call of its
// own: the budgets are checked before it (a spent budget ends the retries
// with its error; a "finalize" call, which budgets never refuse, retries
// regardless), its usage is counted, it emits its llm_call event and
// token events, and a journaled run journals it (its request, holding
// the nudge, is not the first call's), so a resumed run replays the
// retries as they happened. When the retries run out the last, empty,
// reply is returned without an error: the caller treats it as any
// unusable reply, most nodes as a failure of kind "parse" ("the model
// returned an empty answer"), a ReAct loop as a format error fed back to
// the model.
func (m Model) Call(ctx context.Context, st *state.State, caller CallMeta, msgs []llms.MessageContent, opts ...llms.CallOption) (text string, resp *llms.ContentResponse, err error) {
	if m.LLM == nil {
		return "", nil, fmt.Errorf("%w: no model configured (set llm: in the pipeline or pass --llm)", ErrModel)
	}
	caller.StepID = CallMetaFrom(ctx).StepID
	caller.TaskID = ""
	if st != nil {
		caller.TaskID = st.Task.ID
	}
	text, resp, err = m.call(ctx, st, caller, msgs, opts)
	retries, nudge := m.emptyRetry(ctx)
	var nudged []llms.MessageContent
	for n := 1; err == nil && n <= retries && EmptyReply(resp); n++ {
		data := map[string]any{"guard": GuardEmptyReply, "retry": n, "of": retries, "kind": caller.Kind}
		if caller.Role != "" {
			data["role"] = caller.Role
		}
		trace.From(ctx).Emit(trace.Event{Node: caller.Node, Kind: trace.KindGuard, Data: data,
			Text: fmt.Sprintf("empty reply; asking again with a nudge (retry %d of %d)", n, retries)})
		if nudged == nil {
			nudged = append(slices.Clip(msgs), llms.TextParts(llms.ChatMessageTypeHuman, nudge))
		}
		text, resp, err = m.call(ctx, st, caller, nudged, opts)
	}
	return text, resp, err
}

// call makes one attempt of Call: one model call, its budget checks,
// usage, span and events.
func (m Model) call(ctx context.Context, st *state.State, caller CallMeta, msgs []llms.MessageContent, opts []llms.CallOption) (text string, resp *llms.ContentResponse, err error) {
	if b := BudgetFrom(ctx); !b.IsZero() && st != nil && caller.Role != "finalize" {
		if err := b.check(st.Usage.Totals()); err != nil {
			return "", nil, err
		}
	}
	if err := checkShared(ctx, caller.Role); err != nil { // a whole comparison's budget (WithSharedBudget)
		return "", nil, err
	}
	ctx = WithCallMeta(ctx, caller)
	ctx, span := m.startSpan(ctx, caller, msgs)   // OpenTelemetry (llm/telemetry.go)
	defer func() { m.endSpan(span, resp, err) }() // named results: the call's outcome
	ctx, attempts := middleware.WithAttemptCounter(ctx)
	ctx, opts = withTokenStream(ctx, caller, attempts, opts)
	began := time.Now()
	if j := journal.From(ctx); j != nil {
		resp, err = j.Model(ctx, caller.Node, caller.Role, msgs, opts, func(ctx context.Context) (*llms.ContentResponse, error) {
			return m.LLM.GenerateContent(ctx, msgs, opts...)
		})
	} else {
		resp, err = m.LLM.GenerateContent(ctx, msgs, opts...)
	}
	elapsed := time.Since(began)
	if st != nil {
		// A model without the retry middleware counts no attempts: its
		// one call is one attempt.
		st.Usage.AddAttempts(caller.Node, max(attempts.Attempts(), 1), err != nil)
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return "", nil, err
		}
		if journal.Stopped(err) {
			// The resumed run's journal, not the model, stopped the call.
			return "", nil, err
		}
		trace.From(ctx).Emit(trace.Event{Node: caller.Node, Kind: trace.KindError, Text: ErrModel.Error() + ": " + err.Error(), ElapsedMS: ms(elapsed)})
		return "", nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	if resp == nil || len(resp.Choices) == 0 {
		return "", resp, fmt.Errorf("%w: %w", ErrModel, ErrEmptyResponse)
	}
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
	SharedBudgetFrom(ctx).Add(p, c, cost)
	span.SetUsage(telemetry.Usage{InputTokens: p, OutputTokens: c, CachedInputTokens: cached, Estimated: est, CostUSD: cost})
	if st != nil {
		st.Usage.AddModelCall(caller.Node, p, c, est, cost)
		if cached > 0 {
			st.Usage.AddCachedTokens(caller.Node, cached)
		}
	}
	text = resp.Choices[0].Content
	data := map[string]any{"kind": caller.Kind}
	if caller.Role != "" {
		data["role"] = caller.Role
	}
	trace.From(ctx).Emit(trace.Event{Node: caller.Node, Kind: trace.KindLLMCall, Data: data,
		Usage: &trace.Usage{PromptTokens: p, CompletionTokens: c, CachedPromptTokens: cached, Estimated: est, CostUSD: cost}, ElapsedMS: ms(elapsed)})
	return text, resp, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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
