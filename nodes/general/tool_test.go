package general_test

import (
	"context"
	"strings"
	"testing"

	"github.com/planner-engine/planner/nodes/general"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolOutputGoesToAVarNamedAfterTheNode(t *testing.T) {
	e := env(t, nil, echoTool("lookup"), failingTool("other"))
	built, err := general.NewTool(e, nodeSpec("found", map[string]any{"tool": "Lookup", "input": "{{.Vars.city}} population"}))
	require.NoError(t, err)
	assert.Empty(t, built.Routes)
	st := hookedState(state.Task{Question: "q"})
	require.NoError(t, st.Vars.Set("city", "Paris"))
	ctx, tr := traced()
	route, err := built.Node.Run(ctx, st)
	require.NoError(t, err)
	assert.Empty(t, route)
	got, ok := st.Vars.Get("found")
	require.True(t, ok)
	assert.Equal(t, "got Paris population", got)
	assert.Empty(t, st.Answer)
	actions := tr.OfKind(trace.KindAction)
	require.Len(t, actions, 1, "the call is traced as any tool call is")
	assert.Equal(t, "lookup", actions[0].Data["tool"], "the registered name, matched tolerantly")
	assert.Equal(t, "Paris population", actions[0].Data["input"])
	require.Len(t, tr.OfKind(trace.KindObservation), 1)
	assert.Equal(t, 1, st.Usage.ToolCalls, "the call is counted in the run's usage")
}

func TestToolOutputToTheAnswerOrANote(t *testing.T) {
	_, st, _, err := run(t, general.NewTool, env(t, nil, echoTool("lookup")), map[string]any{"output": "answer"}, "Paris")
	require.NoError(t, err)
	assert.Equal(t, "got Paris", st.Answer, "input defaults to the question; the only tool is the default")
	assert.True(t, st.Complete)

	built, err := general.NewTool(env(t, nil, echoTool("lookup")), nodeSpec("n", map[string]any{"output": "note:facts"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"facts"}, built.Notes)
}

func TestToolUnknownAtConstruction(t *testing.T) {
	_, err := general.NewTool(env(t, nil, echoTool("lookup"), echoTool("calculator")), nodeSpec("n", map[string]any{"tool": "search"}))
	requireSettingError(t, err, "tool")
	assert.ErrorContains(t, err, `no tool "search" (its tools: calculator, lookup)`)

	_, err = general.NewTool(env(t, nil), nodeSpec("n", map[string]any{"tool": "search"}))
	requireSettingError(t, err, "tool")
	assert.ErrorContains(t, err, "list tools under the pipeline's tools:")

	_, err = general.NewTool(env(t, nil, echoTool("lookup"), echoTool("calculator")), nodeSpec("n", nil))
	requireSettingError(t, err, "tool")
	assert.ErrorContains(t, err, "name the tool to call (the pipeline's tools: calculator, lookup)")
}

func TestToolSettingErrors(t *testing.T) {
	e := env(t, nil, echoTool("lookup"))
	for _, tc := range []struct {
		id       string
		settings map[string]any
		key      string
	}{
		{"fetch-page", nil, "output"},
		{"n", map[string]any{"output": "var:a-b"}, "output"},
		{"n", map[string]any{"output": "vars:x"}, "output"},
		{"n", map[string]any{"on_failure": "ignore"}, "on_failure"},
		{"n", map[string]any{"timeout": "-1s"}, "timeout"},
		{"n", map[string]any{"input": "{{.Vars.a-b}}"}, "input"},
		{"n", map[string]any{"inputs": "x"}, "inputs"},
	} {
		_, err := general.NewTool(e, nodeSpec(tc.id, tc.settings))
		requireSettingError(t, err, tc.key)
	}
	_, err := general.NewTool(e, nodeSpec("fetch-page", map[string]any{"output": "var:page"}))
	require.NoError(t, err, "an id that is no var name is fine with an explicit output")
}

func TestToolErrorEndsTheRun(t *testing.T) {
	_, st, tr, err := run(t, general.NewTool, env(t, nil, failingTool("lookup")), nil, "q")
	require.ErrorIs(t, err, general.ErrTool)
	require.ErrorIs(t, err, errBroken)
	var te *general.ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "lookup", te.Tool)
	assert.Equal(t, 0, st.Vars.Len())
	guards := tr.OfKind(trace.KindGuard)
	require.Len(t, guards, 1)
	assert.Equal(t, "tool_error", guards[0].Data["guard"])
}

func TestToolErrorTakesTheFailedRoute(t *testing.T) {
	built, err := general.NewTool(env(t, nil, failingTool("lookup")), nodeSpec("n", map[string]any{"on_failure": "route"}))
	require.NoError(t, err)
	assert.Equal(t, []string{general.RouteFailed}, built.Routes)
	st := hookedState(state.Task{Question: "q"})
	ctx, tr := traced()
	route, err := built.Node.Run(ctx, st)
	require.NoError(t, err)
	assert.Equal(t, general.RouteFailed, route)
	assert.Equal(t, []string{state.FailureTool}, st.Incidents)
	assert.Equal(t, 0, st.Vars.Len(), "a failed call stores nothing")
	errs := tr.OfKind(trace.KindError)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Text, errBroken.Error())
}

func TestToolPanicIsAToolError(t *testing.T) {
	boom := funcTool{name: "boom", fn: func(context.Context, string) (string, error) { panic("kaboom") }}
	_, _, _, err := run(t, general.NewTool, env(t, nil, boom), nil, "q")
	require.ErrorIs(t, err, general.ErrTool)
	assert.ErrorIs(t, err, tools.ErrToolPanic)
	assert.False(t, strings.Contains(err.Error(), "\n"), "one line, no stack")
}

func TestToolInputIsUnwrappedUnlessVerbatim(t *testing.T) {
	e := env(t, nil, echoTool("lookup"))
	_, st, _, err := run(t, general.NewTool, e, map[string]any{"input": "`{{.Question}}`", "output": "var:out"}, "x")
	require.NoError(t, err)
	got, _ := st.Vars.Get("out")
	assert.Equal(t, "got x", got)
	_, st, _, err = run(t, general.NewTool, e, map[string]any{"input": "`{{.Question}}`", "output": "var:out", "verbatim": true}, "x")
	require.NoError(t, err)
	got, _ = st.Vars.Get("out")
	assert.Equal(t, "got `x`", got)
}
