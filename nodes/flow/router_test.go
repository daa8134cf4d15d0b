package flow_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/planner-engine/planner/nodes/flow"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func exprRouter() map[string]any {
	return map[string]any{
		"routes": []any{
			map[string]any{"route": "math", "when": `vars.kind == "math"`},
			map[string]any{"route": "costly", "when": "usage.model_calls >= 3 || usage.tokens > 1000 || usage.cost > 0.5"},
			map[string]any{"route": "planned", "when": "steps > 1 && replans == 0 && trials == 0 && candidates == 0"},
			map[string]any{"route": "failed", "when": `done && !complete && failure == "budget" && reason != ""`},
			map[string]any{"route": "asked", "when": `question contains "capital" && answer == ""`},
			map[string]any{"route": "math", "when": `int(vars.n) > 10`},
		},
		"default": "other",
	}
}

func TestRouterFollowsTheFirstConditionThatHolds(t *testing.T) {
	b := mustBuild(t, flow.NewRouter, "router", exprRouter(), nil)
	assert.Equal(t, []string{"math", "costly", "planned", "failed", "asked", "other"}, b.Routes, "declared routes, each once, the default last")

	cases := []struct {
		name  string
		setup func(st *state.State)
		want  string
	}{
		{"var", func(st *state.State) { require.NoError(t, st.Vars.Set("kind", "math")) }, "math"},
		{"usage", func(st *state.State) {
			for range 3 {
				st.Usage.AddModelCall("x", 10, 5, false, 0)
			}
		}, "costly"},
		{"tokens", func(st *state.State) { st.Usage.AddModelCall("x", 900, 200, false, 0) }, "costly"},
		{"cost", func(st *state.State) { st.Usage.AddModelCall("x", 1, 1, false, 0.75) }, "costly"},
		{"plan", func(st *state.State) { st.Plan = []plan.Step{{ID: "1"}, {ID: "2"}} }, "planned"},
		{"failure", func(st *state.State) { st.SetPartial("x", "out of budget", state.FailureBudget) }, "failed"},
		{"question", func(st *state.State) { st.Task.Question = "What is the capital of France?" }, "asked"},
		{"later route of the same name", func(st *state.State) { require.NoError(t, st.Vars.Set("n", "12")) }, "math"},
		{"first of several that hold", func(st *state.State) {
			require.NoError(t, st.Vars.Set("kind", "math"))
			st.Task.Question = "capital"
		}, "math"},
		{"default", func(st *state.State) { require.NoError(t, st.Vars.Set("n", "3")) }, "other"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := state.NewState(state.Task{Question: "q"})
			require.NoError(t, st.Vars.Set("n", "0"))
			tc.setup(st)
			route, rec, err := run(t, b.Node, st)
			require.NoError(t, err)
			assert.Equal(t, tc.want, route)
			d := eventData(rec, trace.KindDecision)
			require.Len(t, d, 1)
			assert.Equal(t, tc.want, d[0]["route"])
		})
	}
}

func TestRouterDefaultEvent(t *testing.T) {
	b := mustBuild(t, flow.NewRouter, "router", exprRouter(), nil)
	st := state.NewState(state.Task{Question: "q"})
	require.NoError(t, st.Vars.Set("n", "1"))
	route, rec, err := run(t, b.Node, st)
	require.NoError(t, err)
	assert.Equal(t, "other", route)
	assert.Equal(t, []map[string]any{{"route": "other", "by": "default"}}, eventData(rec, trace.KindDecision))
}

func TestRouterWithoutRoutesFollowsItsDefaultOrPlainEdge(t *testing.T) {
	b := mustBuild(t, flow.NewRouter, "router", nil, nil)
	assert.Empty(t, b.Routes)
	route, _, err := run(t, b.Node, state.NewState(state.Task{}))
	require.NoError(t, err)
	assert.Empty(t, route, "the plain edge")

	b = mustBuild(t, flow.NewRouter, "router", map[string]any{"default": "next"}, nil)
	assert.Equal(t, []string{"next"}, b.Routes)
	route, _, err = run(t, b.Node, state.NewState(state.Task{}))
	require.NoError(t, err)
	assert.Equal(t, "next", route)
}

func TestRouterRejectsBadExpressionsAtConstruction(t *testing.T) {
	cases := []struct {
		name, when, key string
		contains        []string
	}{
		{"unknown field", "questoin == 'x'", "routes[0].when", []string{`"questoin == 'x'"`, "unknown name questoin", "line 1, column 1"}},
		{"unknown usage field", "usage.calls > 1", "routes[0].when", []string{"usage.calls", "has no field calls"}},
		{"not a boolean", "usage.model_calls + 1", "routes[0].when", []string{`"usage.model_calls + 1"`, "expected bool, but got int"}},
		{"string result", "vars.kind", "routes[0].when", []string{"expected bool, but got string"}},
		{"type mismatch", "vars.n > 3", "routes[0].when", []string{"invalid operation: > (mismatched types string and int)"}},
		{"syntax", "steps >", "routes[0].when", []string{"unexpected token EOF"}},
		{"empty", "  ", "routes[0].when", []string{"the expression is empty"}},
		{"bad var name", `vars["no such"] == ""`, "routes[0].when", []string{"vars.no such: no var can have this name"}},
		{"now is disabled", "now().Year() > 2000", "routes[0].when", []string{"unknown name now"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(flow.NewRouter, "router", map[string]any{
				"routes":  []any{map[string]any{"route": "a", "when": tc.when}},
				"default": "b",
			}, nil)
			msg := requireSettingError(t, err, tc.key)
			require.ErrorIs(t, err, flow.ErrExpr)
			var ee *flow.ExprError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, tc.when, ee.Expr)
			assert.Equal(t, tc.key, ee.Setting)
			assert.NotContains(t, msg, "\n", "one line")
			for _, s := range tc.contains {
				assert.Contains(t, msg, s)
			}
		})
	}
}

func TestRouterRejectsBadRoutes(t *testing.T) {
	when := func(name string) map[string]any { return map[string]any{"route": name, "when": "true"} }
	cases := []struct {
		name     string
		settings map[string]any
		key      string
		contains string
	}{
		{"no default", map[string]any{"routes": []any{when("a")}}, "default", "name the route to follow when no condition holds"},
		{"no name", map[string]any{"routes": []any{when("")}, "default": "b"}, "routes[0].route", "a route needs a name"},
		{"capitals", map[string]any{"routes": []any{when("Math")}, "default": "b"}, "routes[0].route", `write "math"`},
		{"spaces", map[string]any{"routes": []any{when("a b")}, "default": "c"}, "routes[0].route", "no spaces"},
		{"capital default", map[string]any{"routes": []any{when("a")}, "default": "Other"}, "default", "lower case"},
		{"unknown key", map[string]any{"routes": []any{map[string]any{"route": "a", "whne": "true"}}, "default": "b"}, "routes[0].whne", "unknown setting"},
		{"both ways", map[string]any{"routes": []any{when("a")}, "default": "b", "classify": map[string]any{"labels": []any{"x"}}}, "classify.labels", "not both"},
		{"duplicate label", map[string]any{"default": "b", "classify": map[string]any{"labels": []any{"math", "MATH"}}}, "classify.labels[1]", "lower case"},
		{"same label", map[string]any{"default": "b", "classify": map[string]any{"labels": []any{"needs_tool", "needs-tool"}}}, "classify.labels[1]", `the same as label "needs_tool"`},
		{"label without letters", map[string]any{"default": "b", "classify": map[string]any{"labels": []any{"--"}}}, "classify.labels[0]", "needs a letter or a digit"},
		{"classify without default", map[string]any{"classify": map[string]any{"labels": []any{"x"}}}, "default", "name the route"},
		{"bad template", map[string]any{"default": "b", "classify": map[string]any{"labels": []any{"x"}, "prompt": "{{.Questoin}}"}}, "classify.prompt", "did you mean .Question"},
		{"negative max tokens", map[string]any{"default": "b", "classify": map[string]any{"labels": []any{"x"}, "max_tokens": -1}}, "classify.max_tokens", "must not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(flow.NewRouter, "router", tc.settings, nil)
			msg := requireSettingError(t, err, tc.key)
			assert.Contains(t, msg, tc.contains)
		})
	}
}

func TestRouterRuntimeExpressionErrorNamesNodeAndExpression(t *testing.T) {
	b := mustBuild(t, flow.NewRouter, "router", map[string]any{
		"routes":  []any{map[string]any{"route": "big", "when": "int(vars.n) > 3"}},
		"default": "small",
	}, nil)
	st := state.NewState(state.Task{})
	require.NoError(t, st.Vars.Set("n", "many"))
	_, _, err := run(t, b.Node, st)
	require.ErrorIs(t, err, flow.ErrExpr)
	assert.Contains(t, err.Error(), `router n: routes[0].when: bad expression "int(vars.n) > 3"`)

	// A var not set reads as "".
	st = state.NewState(state.Task{})
	b = mustBuild(t, flow.NewRouter, "router", map[string]any{
		"routes":  []any{map[string]any{"route": "unset", "when": `vars.missing == ""`}},
		"default": "set",
	}, nil)
	route, _, err := run(t, b.Node, st)
	require.NoError(t, err)
	assert.Equal(t, "unset", route)
}

func TestRouterReads(t *testing.T) {
	b := mustBuild(t, flow.NewRouter, "router", map[string]any{
		"routes": []any{
			map[string]any{"route": "a", "when": `vars.kind == "x" || vars["E1"] != ""`},
			map[string]any{"route": "b", "when": `vars.kind == "y" && "z" in vars`},
		},
		"default": "c",
	}, nil)
	assert.Equal(t, []string{"E1", "kind"}, b.Node.(*flow.Router).ReadsVars())
	assert.Equal(t, []string{"a", "b", "c"}, b.Node.(*flow.Router).Routes())
}

// A built router and set node hold nothing a run changes: runs on several
// states at once (parallel branches, concurrent runs of one pipeline) are
// safe.
func TestNodesRunConcurrently(t *testing.T) {
	r := mustBuild(t, flow.NewRouter, "router", exprRouter(), nil).Node
	s := mustBuild(t, flow.NewSet, "set", map[string]any{"assign": map[string]any{"kind": `int(vars.n) % 2 == 0 ? "math" : "other"`}}, nil).Node
	const n = 16
	routes := make([]string, n)
	errs := make(chan error, 2*n)
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			st := state.NewState(state.Task{Question: "q"})
			if err := st.Vars.Set("n", fmt.Sprint(i)); err != nil {
				errs <- err
				return
			}
			ctx := context.Background()
			if _, err := s.Run(ctx, st); err != nil {
				errs <- err
				return
			}
			route, err := r.Run(ctx, st)
			if err != nil {
				errs <- err
			}
			routes[i] = route
		}()
	}
	for range n {
		<-done
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for i, route := range routes {
		want := "math"
		if i%2 == 1 {
			want = "other"
		}
		if i > 10 && i%2 == 1 {
			want = "math" // int(vars.n) > 10
		}
		assert.Equal(t, want, route, "n=%d", i)
	}
}
