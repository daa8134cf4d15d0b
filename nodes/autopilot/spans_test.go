package autopilot_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/telemetry"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Every attempt is a span under the node's, with the candidate's nested
// run under it, and the plan is an event on the node's span.
func TestEachAttemptIsASpanAndThePlanAnEvent(t *testing.T) {
	m := newModel(map[string]reply{"cheap": says("41\nConfidence: 0.4"), "strong": says("42\nConfidence: high")})
	p, err := build(t, apYAML("check: {confidence: 0.7}"), m, buildOpts{})
	require.NoError(t, err)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	res, err := p.Run(context.Background(), state.Task{ID: "t1", Question: "What is 6 times 7?"}, trace.New("r", &trace.Recorder{}),
		pipeline.WithTelemetry(telemetry.New(tp)))
	require.NoError(t, err)
	require.Equal(t, "42", res.State.Answer)

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byName[s.Name()] = s
	}
	attrs := func(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
		out := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			out[kv.Key] = kv.Value
		}
		return out
	}
	cheap, strong := byName["autopilot.candidate cheap"], byName["autopilot.candidate strong"]
	require.NotNil(t, cheap, "spans: %v", keys(byName))
	require.NotNil(t, strong)
	a := attrs(cheap)
	assert.False(t, a["planner.autopilot.pass"].AsBool())
	assert.Equal(t, "strong", a["planner.autopilot.escalate_to"].AsString())
	assert.Equal(t, int64(1), a["planner.autopilot.attempt"].AsInt64())
	assert.Equal(t, []string{"complete", "confidence"}, a["planner.autopilot.checks"].AsStringSlice())
	assert.True(t, attrs(strong)["planner.autopilot.pass"].AsBool())
	assert.Equal(t, cheap.Parent().SpanID(), strong.Parent().SpanID(), "both under the node's span")

	var node sdktrace.ReadOnlySpan
	nested := 0
	for _, s := range spans.Ended() {
		if s.SpanContext().SpanID() == cheap.Parent().SpanID() {
			node = s
		}
		if s.Parent().SpanID() == strong.SpanContext().SpanID() {
			nested++
		}
	}
	require.NotNil(t, node, "the node's span ended")
	assert.Positive(t, nested, "the strong candidate's run sits under its attempt's span")
	require.Len(t, node.Events(), 1)
	ev := node.Events()[0]
	assert.Equal(t, "autopilot.plan", ev.Name)
	evAttrs := map[attribute.Key]attribute.Value{}
	for _, kv := range ev.Attributes {
		evAttrs[kv.Key] = kv.Value
	}
	assert.Equal(t, "cascade", evAttrs["planner.autopilot.policy"].AsString())
	assert.Equal(t, []string{"cheap", "strong"}, evAttrs["planner.autopilot.order"].AsStringSlice())
}

func keys(m map[string]sdktrace.ReadOnlySpan) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
