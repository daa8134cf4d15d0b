package planner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/telemetry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// spanRun runs config on the scripted model's script with a tracer
// provider, given to the Engine (engine) or carried by the run's context
// (as the command line does), and returns the spans of the run.
func spanRun(t *testing.T, config, script, question string, opts ...planner.Option) []tracetest.SpanStub {
	t.Helper()
	t.Setenv(telemetry.EnvContent, "") // content stays off
	t.Setenv(telemetry.EnvCaptureContent, "")
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx := context.Background()
	opts = append(opts, planner.WithTracerProvider(tp))
	eng, err := planner.New(append(full.Options(), opts...)...)
	require.NoError(t, err)
	defer eng.Close()
	p, err := eng.Load(ctx, config, planner.WithLLM("scripted:"+script))
	require.NoError(t, err)
	res, err := p.Run(ctx, question)
	require.NoError(t, err)
	require.True(t, res.Complete, res.Reason)
	return exp.GetSpans()
}

func spanAttrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		out[kv.Key] = kv.Value
	}
	return out
}

// TestTelemetrySpanTree checks the span tree of a ReAct, a native-tool
// ReAct and a Plan-and-Execute run on the scripted model: one invoke_agent
// span, the parent of one span per node execution, each the parent of its
// chat and execute_tool spans, with the GenAI attributes and no content.
func TestTelemetrySpanTree(t *testing.T) {
	const jupiter = "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?"
	cases := []struct {
		name, config, script, question string
		tools                          []string
		callIDs                        bool
	}{
		{"react", "configs/react.yaml", "examples/scripts/react_demo.yaml", jupiter, []string{"search", "calculator"}, false},
		{"react_tools", "configs/react_tools.yaml", "examples/scripts/react_tools_demo.yaml", jupiter, []string{"search", "calculator"}, true},
		{"plan_execute", "configs/plan_execute.yaml", "examples/scripts/plan_execute_demo.yaml", "How old was Clyde Tombaugh when he discovered Pluto?", []string{"search", "calculator"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spans := spanRun(t, tc.config, tc.script, tc.question)
			byID := map[string]tracetest.SpanStub{}
			var runs, nodes, chats, toolSpans []tracetest.SpanStub
			for _, s := range spans {
				byID[s.SpanContext.SpanID().String()] = s
				switch op := spanAttrs(s)[telemetry.KeyOperationName].AsString(); {
				case op == "invoke_agent":
					runs = append(runs, s)
				case op == "chat":
					chats = append(chats, s)
				case op == "execute_tool":
					toolSpans = append(toolSpans, s)
				case strings.HasPrefix(s.Name, "node "):
					nodes = append(nodes, s)
				default:
					t.Errorf("unexpected span %q", s.Name)
				}
			}
			require.Len(t, runs, 1)
			run := runs[0]
			assert.Equal(t, "invoke_agent "+tc.name, run.Name)
			assert.False(t, run.Parent.IsValid(), "the run's span is the root")
			ra := spanAttrs(run)
			assert.Equal(t, tc.name, ra[telemetry.KeyAgentName].AsString())
			assert.NotEmpty(t, ra[telemetry.KeyRunID].AsString())
			assert.True(t, ra[telemetry.KeyComplete].AsBool())
			assert.Positive(t, ra[telemetry.KeyInputTokens].AsInt64())

			require.NotEmpty(t, nodes)
			require.NotEmpty(t, chats)
			require.NotEmpty(t, toolSpans)
			for _, s := range spans {
				assert.Equal(t, run.SpanContext.TraceID(), s.SpanContext.TraceID(), s.Name)
				for _, kv := range s.Attributes {
					assert.NotContains(t, []attribute.Key{telemetry.KeyInputMessages, telemetry.KeyOutputMessages, telemetry.KeyToolArguments, telemetry.KeyToolResult}, kv.Key, "content is off by default: %s", s.Name)
				}
			}
			for _, n := range nodes {
				assert.Equal(t, run.SpanContext.SpanID(), n.Parent.SpanID(), "%s's parent is the run", n.Name)
				na := spanAttrs(n)
				assert.Equal(t, "node "+na[telemetry.KeyNodeID].AsString(), n.Name)
				assert.NotEmpty(t, na[telemetry.KeyNodeType].AsString())
				assert.Positive(t, na[telemetry.KeyStep].AsInt64())
			}
			for _, c := range chats {
				parent, ok := byID[c.Parent.SpanID().String()]
				require.True(t, ok, "%s has a parent", c.Name)
				assert.True(t, strings.HasPrefix(parent.Name, "node "), "%s's parent %s is a node", c.Name, parent.Name)
				ca := spanAttrs(c)
				assert.Equal(t, "chat scripted", c.Name)
				assert.Equal(t, "scripted", ca[telemetry.KeyRequestModel].AsString())
				assert.Equal(t, "scripted", ca[telemetry.KeyProviderName].AsString())
				assert.Equal(t, "scripted", ca[telemetry.KeySystem].AsString())
				assert.Positive(t, ca[telemetry.KeyInputTokens].AsInt64(), c.Name)
				assert.Positive(t, ca[telemetry.KeyOutputTokens].AsInt64(), c.Name)
				assert.Contains(t, ca, telemetry.KeyCachedTokens)
			}
			sawCallID := false
			for _, x := range toolSpans {
				parent, ok := byID[x.Parent.SpanID().String()]
				require.True(t, ok, "%s has a parent", x.Name)
				assert.True(t, strings.HasPrefix(parent.Name, "node "), "%s's parent %s is a node", x.Name, parent.Name)
				xa := spanAttrs(x)
				assert.Contains(t, tc.tools, xa[telemetry.KeyToolName].AsString())
				assert.Equal(t, "execute_tool "+xa[telemetry.KeyToolName].AsString(), x.Name)
				sawCallID = sawCallID || xa[telemetry.KeyToolCallID].AsString() != ""
			}
			assert.Equal(t, tc.callIDs, sawCallID, "gen_ai.tool.call.id on native tool calls")
		})
	}
}

// TestTelemetryContentIsOptInAndScrubbed records the content of a run
// whose question holds a "secret": it is on the spans, scrubbed by the
// Engine's scrubber.
func TestTelemetryContentIsOptInAndScrubbed(t *testing.T) {
	const secret = "Jupiter"
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	eng, err := planner.New(append(full.Options(), planner.WithTracerProvider(tp, telemetry.WithContent(true)), planner.WithScrubber(redact.New(redact.WithSecrets(secret))))...)
	require.NoError(t, err)
	defer eng.Close()
	ctx := context.Background()
	p, err := eng.Load(ctx, "configs/react.yaml", planner.WithLLM("scripted:examples/scripts/react_demo.yaml"))
	require.NoError(t, err)
	_, err = p.Run(ctx, "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?")
	require.NoError(t, err)

	seen := map[attribute.Key]bool{}
	for _, s := range exp.GetSpans() {
		for _, kv := range s.Attributes {
			switch kv.Key {
			case telemetry.KeyInputMessages, telemetry.KeyOutputMessages, telemetry.KeyToolArguments, telemetry.KeyToolResult:
				seen[kv.Key] = true
				assert.NotContains(t, kv.Value.AsString(), secret, "%s %s", s.Name, kv.Key)
				assert.NotEmpty(t, kv.Value.AsString())
			}
		}
	}
	for _, k := range []attribute.Key{telemetry.KeyInputMessages, telemetry.KeyOutputMessages, telemetry.KeyToolArguments, telemetry.KeyToolResult} {
		assert.True(t, seen[k], "content %s recorded", k)
	}
}

// TestTelemetryJournaledAndFailedRuns: a journaled run (the journal's node
// hook composed with the telemetry's) still journals every node and gets
// its node spans; a failed run's span has status error and the failure
// class, and the failed model call's span its error.type.
func TestTelemetryJournaledAndFailedRuns(t *testing.T) {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(ctx) }()
	eng, err := planner.New(append(full.Options(), planner.WithTracerProvider(tp))...)
	require.NoError(t, err)
	defer eng.Close()

	store, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "threads.db"))
	require.NoError(t, err)
	defer store.Close()
	p, err := eng.Load(ctx, "configs/react.yaml", planner.WithLLM("scripted:examples/scripts/react_demo.yaml"))
	require.NoError(t, err)
	res, err := p.Run(ctx, "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?", planner.WithThread(store, "jupiter"))
	require.NoError(t, err)
	require.Equal(t, journal.StatusDone, res.Status)
	nodes := 0
	for _, s := range exp.GetSpans() {
		if strings.HasPrefix(s.Name, "node ") {
			nodes++
		}
	}
	assert.Equal(t, len(res.Steps), nodes, "one span per node execution")
	entries, err := store.Entries(ctx, "jupiter")
	require.NoError(t, err)
	transitions := 0
	for _, e := range entries {
		if e.Kind == journal.KindNode {
			transitions++
		}
	}
	assert.Equal(t, len(res.Steps), transitions, "the journal hook still journals every node")

	exp.Reset()
	p, err = eng.Load(ctx, "configs/react.yaml", planner.WithLLM("scripted:examples/scripts/cot_demo.yaml"))
	require.NoError(t, err)
	res, err = p.Run(ctx, "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?")
	require.Error(t, err)
	require.Equal(t, "provider", res.Failure)
	var run, chat tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		switch {
		case strings.HasPrefix(s.Name, "invoke_agent "):
			run = s
		case strings.HasPrefix(s.Name, "chat "):
			chat = s
		}
	}
	assert.Equal(t, codes.Error, run.Status.Code)
	assert.Equal(t, "provider", spanAttrs(run)[telemetry.KeyErrorType].AsString())
	assert.Equal(t, "provider", spanAttrs(run)[telemetry.KeyFailure].AsString())
	assert.Equal(t, codes.Error, chat.Status.Code)
	assert.Equal(t, "provider_error", spanAttrs(chat)[telemetry.KeyErrorType].AsString())
}

// A fan-out's branch spans nest under a "parallel" span, and the nodes of
// a map's nested runs under the map node's span.
func TestTelemetryNestsBranchesAndNestedRuns(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "spans.yaml")
	require.NoError(t, os.WriteFile(config, []byte(`name: spans
nodes:
  - {id: items, type: set, assign: {qs: 'toJSON(["x", "y"])'}}
  - id: each
    type: map
    over: var:qs
    graph:
      nodes: [{id: say, type: direct}]
      edges: [{from: START, to: say}, {from: say, to: END}]
  - {id: a, type: direct, output: "var:v"}
  - {id: b, type: direct, output: "var:v"}
  - {id: j, type: join, from: "var:v", merge: concat}
edges:
  - {from: START, to: items}
  - {from: items, to: each}
  - {from: each, to: [a, b]}
  - {from: a, to: j}
  - {from: b, to: j}
  - {from: j, to: END}
`), 0o600))
	script := filepath.Join(dir, "script.yaml")
	require.NoError(t, os.WriteFile(script, []byte("strict: false\nreplies:\n  - {node: say, text: one}\n  - {node: say, text: two}\n  - {node: a, text: A}\n  - {node: b, text: B}\n"), 0o600))
	spans := spanRun(t, config, script, "q")
	byName := map[string][]tracetest.SpanStub{}
	byID := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		byID[s.SpanContext.SpanID().String()] = s
	}
	parentName := func(s tracetest.SpanStub) string { return byID[s.Parent.SpanID().String()].Name }
	require.Len(t, byName["parallel each"], 1)
	par := byName["parallel each"][0]
	assert.Equal(t, "invoke_agent spans", parentName(par))
	pa := spanAttrs(par)
	assert.Equal(t, []string{"a", "b"}, pa[telemetry.KeyBranches].AsStringSlice())
	assert.Equal(t, "j", pa[telemetry.KeyJoin].AsString())
	for _, n := range []string{"node a", "node b"} {
		require.Len(t, byName[n], 1, n)
		assert.Equal(t, "parallel each", parentName(byName[n][0]), n)
	}
	require.Len(t, byName["node say"], 2)
	for _, s := range byName["node say"] {
		assert.Equal(t, "node each", parentName(s), "a map item's node nests under the map node")
	}
	assert.Equal(t, "invoke_agent spans", parentName(byName["node j"][0]), "the join runs on the main line")
}
