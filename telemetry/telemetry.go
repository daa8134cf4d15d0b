// Package telemetry traces runs with OpenTelemetry, named and attributed
// after the OpenTelemetry semantic conventions for generative AI
// (https://opentelemetry.io/docs/specs/semconv/gen-ai/).
//
// A run's spans form one tree:
//
//	invoke_agent {pipeline}          one per run (pipeline.Pipeline.Run)
//	└── node {id}                    one per node execution
//	    ├── chat {model}             one per model call (llm.Model.Call)
//	    └── execute_tool {tool}      one per tool call (node.ToolCall.Run)
//
// The package keeps no global state: a Provider (New) wraps the
// TracerProvider and is handed to the run that uses it
// (pipeline.WithTelemetry); a nil *Provider makes every method a no-op
// that allocates nothing. Prompts, completions and tool inputs and
// outputs are recorded only when content capture is opted in
// (WithContent, ContentFromEnv), and always through a secret scrubber.
package telemetry

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.32.0"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every span the engine makes.
const ScopeName = "github.com/planner-engine/planner"

// Operation names (gen_ai.operation.name).
const (
	OperationInvokeAgent = "invoke_agent"
	OperationChat        = "chat"
	OperationExecuteTool = "execute_tool"
)

// Attribute keys. The gen_ai.* and error.type keys are the semantic
// conventions' (semconv v1.32.0 where it has them); planner.* are the
// engine's own.
var (
	KeyOperationName  = semconv.GenAIOperationNameKey
	KeyAgentName      = semconv.GenAIAgentNameKey
	KeySystem         = semconv.GenAISystemKey
	KeyProviderName   = attribute.Key("gen_ai.provider.name") // semconv v1.37; gen_ai.system before
	KeyRequestModel   = semconv.GenAIRequestModelKey
	KeyInputTokens    = semconv.GenAIUsageInputTokensKey
	KeyOutputTokens   = semconv.GenAIUsageOutputTokensKey
	KeyFinishReasons  = semconv.GenAIResponseFinishReasonsKey
	KeyToolName       = semconv.GenAIToolNameKey
	KeyToolCallID     = semconv.GenAIToolCallIDKey
	KeyErrorType      = semconv.ErrorTypeKey
	KeyInputMessages  = attribute.Key("gen_ai.input.messages")
	KeyOutputMessages = attribute.Key("gen_ai.output.messages")
	KeyToolArguments  = attribute.Key("gen_ai.tool.call.arguments")
	KeyToolResult     = attribute.Key("gen_ai.tool.call.result")
	KeyRunID          = attribute.Key("planner.run_id")
	KeyTaskID         = attribute.Key("planner.task_id")
	KeyNodeID         = attribute.Key("planner.node.id")
	KeyNodeType       = attribute.Key("planner.node.type")
	KeyStep           = attribute.Key("planner.step")
	// KeyBranches are a parallel span's branches (their first nodes) and
	// KeyJoin its join node.
	KeyBranches        = attribute.Key("planner.parallel.branches")
	KeyJoin            = attribute.Key("planner.parallel.join")
	KeyRoute           = attribute.Key("planner.route")
	KeyCachedTokens    = attribute.Key("planner.cached_input_tokens")
	KeyTokensEstimated = attribute.Key("planner.usage.estimated")
	KeyCostUSD         = attribute.Key("planner.cost_usd")
	KeyFailure         = attribute.Key("planner.failure")
	KeyComplete        = attribute.Key("planner.complete")
	KeyModelCalls      = attribute.Key("planner.model_calls")
	KeyToolCalls       = attribute.Key("planner.tool_calls")
	KeyCallRole        = attribute.Key("planner.call.role")
	KeyPlanStep        = attribute.Key("planner.plan_step")
)

// Option configures New.
type Option func(*Provider)

// WithContent records prompts, completions, tool inputs and outputs and the
// run's question and answer on the spans when on, scrubbed of secrets.
// Default off: spans then hold names, counts and classes only. See
// ContentFromEnv for the environment's choice.
func WithContent(on bool) Option { return func(s *Provider) { s.content = on } }

// WithScrubber sets what removes secrets from recorded content and error
// messages; the engine passes its own (planner.WithScrubber). Default, and
// when s is nil: redact.New(), built on first use, which scrubs the values of
// secret-named environment variables, bearer tokens and API key shapes.
func WithScrubber(s trace.Scrubber) Option { return func(st *Provider) { st.scrub = s } }

// Provider makes the spans of runs, nodes, model calls and tool calls
// through one TracerProvider. Build it once (New) and hand it to every run
// that should be traced. A nil *Provider traces nothing. Its methods are
// safe for concurrent use.
type Provider struct {
	tracer  oteltrace.Tracer
	content bool
	scrub   trace.Scrubber
	once    sync.Once
}

func (s *Provider) scrubber() trace.Scrubber {
	s.once.Do(func() {
		if s.scrub == nil {
			s.scrub = redact.New()
		}
	})
	return s.scrub
}

// New returns a Provider whose spans are made with tp; nil for a nil tp
// (no spans).
func New(tp oteltrace.TracerProvider, opts ...Option) *Provider {
	if tp == nil {
		return nil
	}
	s := &Provider{tracer: tp.Tracer(ScopeName)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Span is one span of a run. The zero Span, which every Start method of a
// nil *Provider returns, does nothing. Its methods are
// safe for concurrent use.
type Span struct {
	span oteltrace.Span
	st   *Provider
}

// Recording reports whether s records what is set on it: when false,
// callers can skip computing attributes.
func (s Span) Recording() bool { return s.span != nil && s.span.IsRecording() }

// Content reports whether s records content (WithContent): when false,
// callers skip building prompts and outputs for it.
func (s Span) Content() bool { return s.st != nil && s.st.content && s.Recording() }

// End ends s.
func (s Span) End() {
	if s.span != nil {
		s.span.End()
	}
}

// SetAttributes sets attributes on a recording s.
func (s Span) SetAttributes(kv ...attribute.KeyValue) {
	if s.Recording() {
		s.span.SetAttributes(kv...)
	}
}

// Fail marks s failed: status Error with err's message (scrubbed) as its
// description, error.type set to class (a low-cardinality name such as
// "timeout"; "_OTHER" when empty), and an exception event. A nil err
// changes nothing.
func (s Span) Fail(class string, err error) {
	if err == nil || !s.Recording() {
		return
	}
	if class == "" {
		class = "_OTHER"
	}
	msg := s.st.scrubber().String(err.Error())
	s.span.SetAttributes(KeyErrorType.String(class))
	s.span.SetStatus(codes.Error, msg)
	s.span.AddEvent("exception", oteltrace.WithAttributes(
		attribute.String("exception.type", class),
		attribute.String("exception.message", msg)))
}

// SetContent sets the content attribute key to text, scrubbed, when s
// records content.
func (s Span) SetContent(key attribute.Key, text string) {
	if s.Content() {
		s.span.SetAttributes(key.String(s.st.scrubber().String(text)))
	}
}

// Message is one message of a model call's input or output, in the shape
// of the semantic conventions' gen_ai.input.messages and
// gen_ai.output.messages.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role string `json:"role"`
	// Parts are the message's parts, in order.
	Parts []Part `json:"parts"`
	// FinishReason is why the model stopped, for output messages.
	FinishReason string `json:"finish_reason,omitempty"`
}

// Part is one part of a Message.
type Part struct {
	// Type is "text", "tool_call" or "tool_call_response".
	Type string `json:"type"`
	// Content is a text part's text.
	Content string `json:"content,omitempty"`
	// ID is a tool call's id, for tool_call and tool_call_response parts.
	ID string `json:"id,omitempty"`
	// Name is the called tool's name, for tool_call parts.
	Name string `json:"name,omitempty"`
	// Arguments are a tool call's arguments as the model wrote them.
	Arguments string `json:"arguments,omitempty"`
	// Response is a tool call's result, for tool_call_response parts.
	Response string `json:"response,omitempty"`
}

// SetMessages sets key (KeyInputMessages or KeyOutputMessages) to msgs as
// JSON, every text scrubbed, when s records content.
func (s Span) SetMessages(key attribute.Key, msgs []Message) {
	if !s.Content() {
		return
	}
	sc := s.st.scrubber()
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = Message{Role: m.Role, FinishReason: m.FinishReason, Parts: make([]Part, len(m.Parts))}
		for j, p := range m.Parts {
			p.Content, p.Arguments, p.Response = sc.String(p.Content), sc.String(p.Arguments), sc.String(p.Response)
			out[i].Parts[j] = p
		}
	}
	b, err := json.Marshal(out)
	if err != nil { // strings only: cannot happen
		return
	}
	s.span.SetAttributes(key.String(string(b)))
}

func (st *Provider) start(ctx context.Context, name string, kind oteltrace.SpanKind, attrs ...attribute.KeyValue) (context.Context, Span) {
	ctx, sp := st.tracer.Start(ctx, name, oteltrace.WithSpanKind(kind), oteltrace.WithAttributes(attrs...))
	return ctx, Span{span: sp, st: st}
}

// Run describes one run for StartRun.
type Run struct {
	// Agent is the pipeline's name (gen_ai.agent.name).
	Agent string
	// RunID is the run's trace id (planner.run_id).
	RunID string
	// TaskID is the task's id (planner.task_id), empty for ad-hoc runs.
	TaskID string
	// Question is the task's question, recorded as the run's input when
	// content is on.
	Question string
}

// StartRun starts the span of a run, "invoke_agent {agent}", the parent of
// every other span of the run. End it with EndRun.
func (st *Provider) StartRun(ctx context.Context, r Run) (context.Context, Span) {
	if st == nil {
		return ctx, Span{}
	}
	attrs := []attribute.KeyValue{KeyOperationName.String(OperationInvokeAgent), KeyAgentName.String(r.Agent), KeyRunID.String(r.RunID)}
	if r.TaskID != "" {
		attrs = append(attrs, KeyTaskID.String(r.TaskID))
	}
	ctx, sp := st.start(ctx, OperationInvokeAgent+" "+r.Agent, oteltrace.SpanKindInternal, attrs...)
	if sp.Content() && r.Question != "" {
		sp.SetMessages(KeyInputMessages, []Message{{Role: "user", Parts: []Part{{Type: "text", Content: r.Question}}}})
	}
	return ctx, sp
}

// EndRun records st's outcome on a run's span (its failure class, whether
// the answer is complete, the run's token and call counts, and with content
// on its answer) and ends it. A nil st only ends it.
func (s Span) EndRun(st *state.State) {
	if s.Recording() && st != nil {
		u := st.Usage.Totals()
		s.span.SetAttributes(KeyComplete.Bool(st.Complete),
			KeyInputTokens.Int(u.PromptTokens), KeyOutputTokens.Int(u.CompletionTokens),
			KeyModelCalls.Int(u.ModelCalls), KeyToolCalls.Int(u.ToolCalls))
		if st.Failure != "" {
			s.span.SetAttributes(KeyFailure.String(st.Failure))
		}
		if s.Content() && st.Answer != "" {
			s.SetMessages(KeyOutputMessages, []Message{{Role: "assistant", Parts: []Part{{Type: "text", Content: st.Answer}}}})
		}
	}
	s.End()
}

// StartNode starts the span of one node execution, "node {id}", with the
// node's type and the execution's 1-based step.
func (st *Provider) StartNode(ctx context.Context, id, kind string, step int) (context.Context, Span) {
	if st == nil {
		return ctx, Span{}
	}
	return st.start(ctx, "node "+id, oteltrace.SpanKindInternal,
		KeyNodeID.String(id), KeyNodeType.String(kind), KeyStep.Int(step))
}

// StartParallel starts the span of one fan-out, "parallel {from}" (from
// is the node whose route fans out, or START): the parent of its
// branches' node spans, ended once its join is satisfied or failed.
func (st *Provider) StartParallel(ctx context.Context, from string, branches []string, join string) (context.Context, Span) {
	if st == nil {
		return ctx, Span{}
	}
	return st.start(ctx, "parallel "+from, oteltrace.SpanKindInternal,
		KeyNodeID.String(from), KeyBranches.StringSlice(branches), KeyJoin.String(join))
}

// Chat describes one model call for StartChat.
type Chat struct {
	// Provider is the provider's name ("openai", "scripted", "sim").
	Provider string
	// Model is the requested model; empty for offline models without one.
	Model string
	// Node is the calling node's id, Role its finer role ("" for the
	// node's main call) and Step the plan step served, if any.
	Node, Role, Step string
}

// StartChat starts the span of one model call, "chat {model}" ("chat
// {provider}" when the model has no name), a client span.
func (st *Provider) StartChat(ctx context.Context, c Chat) (context.Context, Span) {
	if st == nil {
		return ctx, Span{}
	}
	name := c.Model
	if name == "" {
		name = c.Provider
	}
	attrs := []attribute.KeyValue{KeyOperationName.String(OperationChat),
		KeyProviderName.String(c.Provider), KeySystem.String(c.Provider), KeyRequestModel.String(name)}
	if c.Node != "" {
		attrs = append(attrs, KeyNodeID.String(c.Node))
	}
	if c.Role != "" {
		attrs = append(attrs, KeyCallRole.String(c.Role))
	}
	if c.Step != "" {
		attrs = append(attrs, KeyPlanStep.String(c.Step))
	}
	return st.start(ctx, OperationChat+" "+name, oteltrace.SpanKindClient, attrs...)
}

// Usage is a model call's usage, for SetUsage.
type Usage struct {
	InputTokens, OutputTokens, CachedInputTokens int
	// Estimated is true when a tokenizer counted the tokens, not the
	// provider.
	Estimated bool
	// CostUSD is the call's price; 0 when unknown.
	CostUSD float64
}

// SetUsage records a model call's token counts and cost on s.
func (s Span) SetUsage(u Usage) {
	if !s.Recording() {
		return
	}
	s.span.SetAttributes(KeyInputTokens.Int(u.InputTokens), KeyOutputTokens.Int(u.OutputTokens),
		KeyCachedTokens.Int(u.CachedInputTokens), KeyTokensEstimated.Bool(u.Estimated))
	if u.CostUSD > 0 {
		s.span.SetAttributes(KeyCostUSD.Float64(u.CostUSD))
	}
}

// Tool describes one tool call for StartTool.
type Tool struct {
	// Name is the tool's name; CallID the model's id for a native tool
	// call, if any.
	Name, CallID string
	// Node is the calling node's id.
	Node string
	// Input is the tool's input, recorded (scrubbed) when content is on.
	Input string
}

// StartTool starts the span of one tool call, "execute_tool {tool}".
func (st *Provider) StartTool(ctx context.Context, t Tool) (context.Context, Span) {
	if st == nil {
		return ctx, Span{}
	}
	attrs := []attribute.KeyValue{KeyOperationName.String(OperationExecuteTool), KeyToolName.String(t.Name)}
	if t.CallID != "" {
		attrs = append(attrs, KeyToolCallID.String(t.CallID))
	}
	if t.Node != "" {
		attrs = append(attrs, KeyNodeID.String(t.Node))
	}
	ctx, sp := st.start(ctx, OperationExecuteTool+" "+t.Name, oteltrace.SpanKindInternal, attrs...)
	sp.SetContent(KeyToolArguments, t.Input)
	return ctx, sp
}

// EndNode records the route and the error of the node execution whose span
// StartNode returned, and ends it. class names the error's kind
// (error.type).
func (s Span) EndNode(route, class string, err error) {
	if s.Recording() && err == nil {
		s.span.SetAttributes(KeyRoute.String(route))
	}
	s.Fail(class, err)
	s.End()
}

// StartChild starts a span named name under the recording span in ctx,
// in the engine's instrumentation scope, for a step a node takes inside
// its own span (the autopilot's candidates): spans started from the
// returned ctx, such as those of a nested run, sit under it. When ctx holds
// no recording span it returns ctx and a Span that records nothing. The
// span records no content: attributes only.
func StartChild(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, Span) {
	parent := oteltrace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, Span{}
	}
	ctx, sp := parent.TracerProvider().Tracer(ScopeName).Start(ctx, name, oteltrace.WithAttributes(attrs...))
	return ctx, Span{span: sp}
}

// AddEvent adds an event named name to the recording span in ctx, if any
// (a node's decision on its own span).
func AddEvent(ctx context.Context, name string, attrs ...attribute.KeyValue) {
	if sp := oteltrace.SpanFromContext(ctx); sp.IsRecording() {
		sp.AddEvent(name, oteltrace.WithAttributes(attrs...))
	}
}
