package telemetry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/telemetry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// recorder returns a provider whose spans end up in the returned exporter,
// synchronously.
func recorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		out[kv.Key] = kv.Value
	}
	return out
}

func TestWithoutProviderEverythingIsANoOp(t *testing.T) {
	ctx := context.Background()
	none := telemetry.New(nil)
	assert.Nil(t, none)
	c2, span := none.StartChat(ctx, telemetry.Chat{Provider: "openai", Model: "gpt"})
	assert.Equal(t, ctx, c2)
	assert.False(t, span.Recording())
	assert.False(t, span.Content())
	span.SetUsage(telemetry.Usage{InputTokens: 3})
	span.Fail("x", errors.New("boom"))
	span.SetContent(telemetry.KeyToolResult, "x")
	span.End()
	span.EndRun(state.NewState(state.Task{Question: "q"}))
	span.EndNode("", "", nil)
}

func TestSpanNoProviderAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, spanCalls(ctx, nil))
	assert.Zero(t, allocs)
}

// spanCalls is what a model and a tool call do with telemetry through tp
// (nil: none, for the allocation test and the benchmark).
func spanCalls(ctx context.Context, tp *telemetry.Provider) func() {
	return func() {
		c, span := tp.StartChat(ctx, telemetry.Chat{Provider: "openai", Model: "gpt-4o-mini", Node: "react"})
		span.SetUsage(telemetry.Usage{InputTokens: 10, OutputTokens: 5})
		span.End()
		_, tool := tp.StartTool(c, telemetry.Tool{Name: "search", Input: "q"})
		tool.End()
	}
}

func BenchmarkSpanNoProvider(b *testing.B) {
	f := spanCalls(context.Background(), nil)
	b.ReportAllocs()
	for b.Loop() {
		f()
	}
}

func BenchmarkSpanWithProvider(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	f := spanCalls(context.Background(), telemetry.New(tp))
	b.ReportAllocs()
	for b.Loop() {
		f()
	}
}

func TestSpansNestAndCarryGenAIAttributes(t *testing.T) {
	tp, exp := recorder(t)
	sp := telemetry.New(tp)
	require.NotNil(t, sp)
	ctx, run := sp.StartRun(context.Background(), telemetry.Run{Agent: "react", RunID: "r1", TaskID: "demo-07", Question: "secret question"})
	nctx, nodeSpan := sp.StartNode(ctx, "think", "react", 1)
	_, chat := sp.StartChat(nctx, telemetry.Chat{Provider: "openai", Model: "gpt-4o-mini", Node: "think"})
	chat.SetUsage(telemetry.Usage{InputTokens: 12, OutputTokens: 7, CachedInputTokens: 4})
	chat.SetMessages(telemetry.KeyInputMessages, []telemetry.Message{{Role: "user", Parts: []telemetry.Part{{Type: "text", Content: "hi"}}}})
	chat.End()
	_, tool := sp.StartTool(nctx, telemetry.Tool{Name: "search", CallID: "call_1", Input: "Jupiter"})
	tool.Fail("timeout", errors.New("tool timed out"))
	tool.End()
	nodeSpan.EndNode("continue", "", nil)
	st := state.NewState(state.Task{Question: "q"})
	st.Failure = state.FailureTimeout
	run.Fail(st.Failure, errors.New("deadline"))
	run.EndRun(st)

	spans := exp.GetSpans()
	require.Len(t, spans, 4)
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	root, node, c, x := byName["invoke_agent react"], byName["node think"], byName["chat gpt-4o-mini"], byName["execute_tool search"]
	require.NotEmpty(t, root.Name)
	assert.False(t, root.Parent.IsValid())
	assert.Equal(t, root.SpanContext.SpanID(), node.Parent.SpanID())
	assert.Equal(t, node.SpanContext.SpanID(), c.Parent.SpanID())
	assert.Equal(t, node.SpanContext.SpanID(), x.Parent.SpanID())

	ra := attrs(root)
	assert.Equal(t, "invoke_agent", ra[telemetry.KeyOperationName].AsString())
	assert.Equal(t, "react", ra[telemetry.KeyAgentName].AsString())
	assert.Equal(t, "r1", ra[telemetry.KeyRunID].AsString())
	assert.Equal(t, "demo-07", ra[telemetry.KeyTaskID].AsString())
	assert.Equal(t, "timeout", ra[telemetry.KeyFailure].AsString())
	assert.Equal(t, "timeout", ra[telemetry.KeyErrorType].AsString())
	assert.Equal(t, codes.Error, root.Status.Code)
	assert.NotContains(t, ra, telemetry.KeyInputMessages, "content is off by default")

	na := attrs(node)
	assert.Equal(t, "think", na[telemetry.KeyNodeID].AsString())
	assert.Equal(t, "react", na[telemetry.KeyNodeType].AsString())
	assert.Equal(t, int64(1), na[telemetry.KeyStep].AsInt64())
	assert.Equal(t, "continue", na[telemetry.KeyRoute].AsString())

	ca := attrs(c)
	assert.Equal(t, "chat", ca[telemetry.KeyOperationName].AsString())
	assert.Equal(t, "openai", ca[telemetry.KeyProviderName].AsString())
	assert.Equal(t, "openai", ca[telemetry.KeySystem].AsString())
	assert.Equal(t, "gpt-4o-mini", ca[telemetry.KeyRequestModel].AsString())
	assert.Equal(t, int64(12), ca[telemetry.KeyInputTokens].AsInt64())
	assert.Equal(t, int64(7), ca[telemetry.KeyOutputTokens].AsInt64())
	assert.Equal(t, int64(4), ca[telemetry.KeyCachedTokens].AsInt64())
	assert.NotContains(t, ca, telemetry.KeyInputMessages, "content is off by default")

	xa := attrs(x)
	assert.Equal(t, "execute_tool", xa[telemetry.KeyOperationName].AsString())
	assert.Equal(t, "search", xa[telemetry.KeyToolName].AsString())
	assert.Equal(t, "call_1", xa[telemetry.KeyToolCallID].AsString())
	assert.Equal(t, "timeout", xa[telemetry.KeyErrorType].AsString())
	assert.NotContains(t, xa, telemetry.KeyToolArguments)
}

func TestContentIsRecordedScrubbedOnlyWhenOptedIn(t *testing.T) {
	const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
	tp, exp := recorder(t)
	sp := telemetry.New(tp, telemetry.WithContent(true), telemetry.WithScrubber(redact.New(redact.WithSecrets(key))))
	ctx, run := sp.StartRun(context.Background(), telemetry.Run{Agent: "a", Question: "use " + key})
	_, tool := sp.StartTool(ctx, telemetry.Tool{Name: "http", Input: "Authorization: Bearer " + key})
	tool.SetContent(telemetry.KeyToolResult, "got "+key)
	tool.Fail("tool_error", errors.New("401 for key "+key))
	tool.End()
	run.EndRun(&state.State{Answer: "the key is " + key})

	spans := exp.GetSpans()
	require.Len(t, spans, 2)
	for _, s := range spans {
		for _, kv := range s.Attributes {
			assert.NotContains(t, kv.Value.String(), key, "%s: %s", s.Name, kv.Key)
		}
		assert.NotContains(t, s.Status.Description, key)
		for _, ev := range s.Events {
			for _, kv := range ev.Attributes {
				assert.NotContains(t, kv.Value.String(), key)
			}
		}
	}
	x := attrs(spans[0])
	assert.Contains(t, x[telemetry.KeyToolArguments].AsString(), "Authorization")
	assert.Contains(t, x[telemetry.KeyToolResult].AsString(), "got ")
	r := attrs(spans[1])
	assert.Contains(t, r[telemetry.KeyInputMessages].AsString(), `"role":"user"`)
	assert.Contains(t, r[telemetry.KeyOutputMessages].AsString(), "the key is")
}

func TestContentFromEnv(t *testing.T) {
	t.Setenv(telemetry.EnvContent, "")
	t.Setenv(telemetry.EnvCaptureContent, "")
	assert.False(t, telemetry.ContentFromEnv())
	t.Setenv(telemetry.EnvContent, "1")
	assert.True(t, telemetry.ContentFromEnv())
	t.Setenv(telemetry.EnvContent, "")
	t.Setenv(telemetry.EnvCaptureContent, "true")
	assert.True(t, telemetry.ContentFromEnv())
}
