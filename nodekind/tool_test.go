package nodekind_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// funcTool is a tool without a schema that runs fn.
type funcTool struct {
	name string
	fn   func(ctx context.Context, input string) (string, error)
}

func (f funcTool) Name() string                                        { return f.name }
func (f funcTool) Description() string                                 { return "test tool " + f.name }
func (f funcTool) Call(ctx context.Context, in string) (string, error) { return f.fn(ctx, in) }

// schemaTool is a funcTool that declares a JSON schema.
type schemaTool struct{ funcTool }

func (schemaTool) Schema() map[string]any { return map[string]any{"type": "object"} }

func echo(name string) funcTool {
	return funcTool{name: name, fn: func(_ context.Context, in string) (string, error) { return "got " + in, nil }}
}

var meta = llm.CallMeta{Node: "act", Kind: "react"}

func testRegistry(t *testing.T, ts ...tools.Tool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(ts, tools.WithTimeout(time.Second))
	require.NoError(t, err)
	return reg
}

func traced() (context.Context, *trace.Recorder) {
	rec := &trace.Recorder{}
	return trace.WithTracer(context.Background(), trace.New("run", rec)), rec
}

func TestCallToolRunsTheToolCountsItAndTracesIt(t *testing.T) {
	reg := testRegistry(t, echo("web_search"))
	st := state.NewState(state.Task{Question: "q"})
	ctx, rec := traced()
	res, err := callTool(ctx, st, meta, reg, "Web-Search", "Kyoto", nodekind.ToolOptions{Trace: map[string]any{"step": 2}})
	require.NoError(t, err)
	assert.Equal(t, "got Kyoto", res.Observation)
	assert.Equal(t, "got Kyoto", res.Output)
	assert.NoError(t, res.Err)

	u := st.Usage.Snapshot()
	assert.Equal(t, 1, u.ToolCalls)
	assert.Equal(t, 1, u.PerNode["act"].ToolCalls, "the call counts for the calling node")

	events := rec.Events()
	require.Len(t, events, 2)
	assert.Equal(t, trace.KindAction, events[0].Kind)
	assert.Equal(t, "act", events[0].Node)
	assert.Equal(t, "web_search: Kyoto", events[0].Text, "the registered name")
	assert.Equal(t, map[string]any{"tool": "web_search", "input": "Kyoto", "step": 2}, events[0].Data)
	assert.Equal(t, trace.KindObservation, events[1].Kind)
	assert.Equal(t, "got Kyoto", events[1].Text)
	assert.Equal(t, map[string]any{"tool": "web_search", "step": 2}, events[1].Data)
}

func TestCallToolTurnsFailuresIntoObservations(t *testing.T) {
	boom := funcTool{name: "boom", fn: func(context.Context, string) (string, error) { panic("index out of range [3]") }}
	fail := funcTool{name: "fail", fn: func(context.Context, string) (string, error) { return "", errors.New("quota exceeded") }}
	slow := funcTool{name: "slow", fn: func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}
	mute := funcTool{name: "mute", fn: func(context.Context, string) (string, error) { return " \n", nil }}
	cases := []struct {
		name       string
		tool, in   string
		opts       nodekind.ToolOptions
		obs        string // the exact observation, or
		obsPrefix  string // its start
		is         error
		guard      string
		countsCall bool
	}{
		{name: "tool error", tool: "fail", obs: "Error: quota exceeded", guard: nodekind.GuardToolError, countsCall: true},
		{name: "panic", tool: "boom", obs: `Error: tool "boom": tool panicked: index out of range [3]`, is: tools.ErrToolPanic, guard: nodekind.GuardToolError, countsCall: true},
		{name: "timeout of the call", tool: "slow", opts: nodekind.ToolOptions{Timeout: 20 * time.Millisecond},
			obs: `Error: tool "slow": tool timed out after 20ms`, is: tools.ErrToolTimeout, guard: nodekind.GuardToolError, countsCall: true},
		{name: "unknown tool", tool: "lookup", obs: `Error: there is no tool named "lookup". Use one of: boom, fail, mute, slow.`,
			is: tools.ErrUnknownTool, guard: nodekind.GuardUnknownTool},
		{name: "empty output", tool: "mute", obs: "[the tool returned no output]", countsCall: true},
		{name: "own messages", tool: "fail", opts: nodekind.ToolOptions{Messages: nodekind.ToolMessages{Error: "错误："}}, obs: "错误：quota exceeded",
			guard: nodekind.GuardToolError, countsCall: true},
		{name: "own unknown-tool message", tool: "x", opts: nodekind.ToolOptions{Messages: nodekind.ToolMessages{UnknownTool: "no %q; try %s"}},
			obs: `no "x"; try boom, fail, mute, slow`, is: tools.ErrUnknownTool, guard: nodekind.GuardUnknownTool},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := testRegistry(t, boom, fail, slow, mute)
			st := state.NewState(state.Task{Question: "q"})
			ctx, rec := traced()
			res, err := callTool(ctx, st, meta, reg, tc.tool, "x", tc.opts)
			require.NoError(t, err, "a failing tool is an observation, not an error")
			assert.Equal(t, tc.obs, res.Observation)
			assert.NotContains(t, res.Observation, "goroutine", "never a stack in the observation")
			if tc.is != nil {
				assert.ErrorIs(t, res.Err, tc.is)
			}
			if tc.guard != "" {
				require.Error(t, res.Err)
				assert.NotContains(t, res.Err.Error(), "\n", "the error is one line")
				guards := rec.OfKind(trace.KindGuard)
				require.Len(t, guards, 1)
				assert.Equal(t, tc.guard, guards[0].Data["guard"])
			}
			want := 0
			if tc.countsCall {
				want = 1
			}
			assert.Equal(t, want, st.Usage.Snapshot().ToolCalls)
			if tc.guard == nodekind.GuardUnknownTool {
				assert.Empty(t, rec.OfKind(trace.KindAction), "an unknown tool is not announced")
				assert.Empty(t, rec.OfKind(trace.KindObservation))
				assert.True(t, res.Unknown())
			} else {
				obs := rec.OfKind(trace.KindObservation)
				require.Len(t, obs, 1)
				assert.Equal(t, res.Observation, obs[0].Text)
			}
		})
	}
}

func TestCallToolKeepsAPanicsStackForTheTraceOnly(t *testing.T) {
	boom := funcTool{name: "boom", fn: func(context.Context, string) (string, error) { panic("kaput") }}
	ctx, rec := traced()
	res, err := callTool(ctx, nil, meta, testRegistry(t, boom), "boom", "x", nodekind.ToolOptions{})
	require.NoError(t, err)
	assert.Equal(t, `tool "boom": tool panicked: kaput`, res.Err.Error())
	guards := rec.OfKind(trace.KindGuard)
	require.Len(t, guards, 1)
	assert.Equal(t, res.Err.Error(), guards[0].Text)
	detail, _ := guards[0].Data["detail"].(string)
	assert.Contains(t, detail, "goroutine", "the trace carries the stack frames")
}

func TestCallToolReturnsTheContextsCauseInsteadOfAnObservation(t *testing.T) {
	cause := errors.New("the run was stopped")
	t.Run("ended before the call", func(t *testing.T) {
		called := false
		tool := funcTool{name: "t", fn: func(context.Context, string) (string, error) { called = true; return "", nil }}
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		st := state.NewState(state.Task{})
		_, err := callTool(ctx, st, meta, testRegistry(t, tool), "t", "x", nodekind.ToolOptions{})
		require.ErrorIs(t, err, cause)
		assert.False(t, called)
		assert.Zero(t, st.Usage.Snapshot().ToolCalls)
	})
	t.Run("ended during the call", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		tool := funcTool{name: "t", fn: func(ctx context.Context, _ string) (string, error) {
			cancel(cause)
			<-ctx.Done()
			return "", ctx.Err()
		}}
		tctx, rec := traced()
		ctx = trace.WithTracer(ctx, trace.From(tctx))
		st := state.NewState(state.Task{})
		_, err := callTool(ctx, st, meta, testRegistry(t, tool), "t", "x", nodekind.ToolOptions{Timeout: time.Minute})
		require.ErrorIs(t, err, cause)
		assert.NotErrorIs(t, err, tools.ErrToolTimeout)
		assert.Equal(t, 1, st.Usage.Snapshot().ToolCalls, "the tool ran")
		assert.Empty(t, rec.OfKind(trace.KindObservation), "nothing to observe")
	})
}

func TestCallToolCutsLongObservations(t *testing.T) {
	long := funcTool{name: "long", fn: func(context.Context, string) (string, error) { return strings.Repeat("é", 5000), nil }}
	ctx, rec := traced()
	res, err := callTool(ctx, nil, meta, testRegistry(t, long), "long", "x", nodekind.ToolOptions{Limit: 100})
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("é", 100)+"…[truncated 4,900 chars]", res.Observation)
	assert.Equal(t, 4900, res.Dropped)
	assert.Len(t, []rune(res.Output), 5000, "the output stays whole")
	guards := rec.OfKind(trace.KindGuard)
	require.Len(t, guards, 1)
	assert.Equal(t, nodekind.GuardTruncated, guards[0].Data["guard"])
	assert.Equal(t, 4900, guards[0].Data["dropped"])
}

func TestUnwrapToolInput(t *testing.T) {
	plain, schema := echo("plain"), schemaTool{echo("schema")}
	cases := []struct {
		name, in, plain, schema string
	}{
		{"unchanged", "  capital of France ", "  capital of France ", "  capital of France "},
		{"double quotes", `"capital of France"`, "capital of France", "capital of France"},
		{"single quotes", `'Kyoto'`, "Kyoto", "Kyoto"},
		{"backticks", "`3 * 7`", "3 * 7", "3 * 7"},
		{"nested wrapping", "\"'x'\"", "x", "x"},
		{"quotes that belong to the input stay", `"a" and "b"`, `"a" and "b"`, `"a" and "b"`},
		{"code fence with a tag", "```json\n{\"input\": \"q\"}\n```", "q", `{"input": "q"}`},
		{"code fence without a tag", "```\n2 + 2\n```", "2 + 2", "2 + 2"},
		{"json input object", `{"input": "Kyoto"}`, "Kyoto", `{"input": "Kyoto"}`},
		{"json with other keys", `{"input": "a", "k": 1}`, `{"input": "a", "k": 1}`, `{"input": "a", "k": 1}`},
		{"json input not a string", `{"input": 3}`, `{"input": 3}`, `{"input": 3}`},
		{"json in quotes", `'{"input": "x"}'`, "x", `{"input": "x"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.plain, nodekind.UnwrapToolInput(plain, tc.in), "tool without a schema")
			assert.Equal(t, tc.schema, nodekind.UnwrapToolInput(schema, tc.in), "tool with a schema")
		})
	}
	res, err := callTool(context.Background(), nil, meta, testRegistry(t, plain), "plain", "```\n\"Kyoto\"\n```", nodekind.ToolOptions{})
	require.NoError(t, err)
	assert.Equal(t, "got Kyoto", res.Observation, "CallTool unwraps the input")
}

func TestVerbatimInputIsOnlyTrimmed(t *testing.T) {
	reg := testRegistry(t, echo("plain"), schemaTool{echo("schema")})
	for _, in := range []string{`"Love the Way You Lie"`, "`x`", `{"input": "Kyoto"}`, "```\n2 + 2\n```", `'a'`} {
		for _, name := range []string{"plain", "Schema"} {
			c := nodekind.PrepareTool(reg, meta, name, "  "+in+"\n", nodekind.ToolOptions{Verbatim: true})
			assert.Equal(t, in, c.Input, "%s(%s)", name, in)
			res, err := c.Call(context.Background(), nil)
			require.NoError(t, err)
			assert.Equal(t, "got "+in, res.Observation)
		}
	}
	c := nodekind.PrepareTool(reg, meta, "nope", "  \"q\" ", nodekind.ToolOptions{Verbatim: true})
	assert.Nil(t, c.Tool)
	assert.Equal(t, `"q"`, c.Input, "an unknown tool's input is trimmed too")
	c = nodekind.PrepareTool(reg, meta, "plain", `"q"`, nodekind.ToolOptions{})
	assert.Equal(t, "q", c.Input, "without Verbatim the quotes go")
}

func TestAToolCallsPhasesTraceInTheCallersOrder(t *testing.T) {
	reg := testRegistry(t, echo("a"), echo("b"))
	ctx, rec := traced()
	calls := []nodekind.ToolCall{
		nodekind.PrepareTool(reg, meta, "a", "1", nodekind.ToolOptions{Trace: map[string]any{"tool_call_id": "c1"}}),
		nodekind.PrepareTool(reg, meta, "b", `{"input": "2"}`, nodekind.ToolOptions{Trace: map[string]any{"tool_call_id": "c2"}}),
	}
	assert.Equal(t, "2", calls[1].Input, "prepared calls hold the unwrapped input")
	for _, c := range calls {
		c.Announce(ctx)
	}
	results := make([]nodekind.ToolResult, len(calls))
	for i := len(calls) - 1; i >= 0; i-- { // run in reverse: Run emits nothing
		var err error
		results[i], err = calls[i].Run(ctx, nil)
		require.NoError(t, err)
	}
	for i, c := range calls {
		c.Report(ctx, results[i])
	}
	var got []string
	for _, e := range rec.Events() {
		got = append(got, string(e.Kind)+" "+e.Data["tool_call_id"].(string))
	}
	assert.Equal(t, []string{"action c1", "action c2", "observation c1", "observation c2"}, got)
}
