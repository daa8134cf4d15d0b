package flow_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/planner-engine/planner/nodes/flow"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetAssignsAMappingInNameOrder(t *testing.T) {
	b := mustBuild(t, flow.NewSet, "set", map[string]any{"assign": map[string]any{
		"total":  "int(vars.a) + int(vars.b)",
		"half":   "float(vars.a) / 2",
		"big":    "int(vars.a) > 100",
		"words":  `split(question, " ")`,
		"calls":  "usage.model_calls",
		"answer": "answer",
		"none":   "nil",
		"count":  3,
	}}, nil)
	assert.Empty(t, b.Routes)
	set := b.Node.(*flow.Set)
	assert.Equal(t, []string{"answer", "big", "calls", "count", "half", "none", "total", "words"}, set.WritesVars())
	assert.Equal(t, []string{"a", "b"}, set.ReadsVars())

	st := state.NewState(state.Task{Question: "two words"})
	require.NoError(t, st.Vars.Set("a", "3"))
	require.NoError(t, st.Vars.Set("b", "4"))
	st.Usage.AddModelCall("x", 1, 1, false, 0)
	route, rec, err := run(t, b.Node, st)
	require.NoError(t, err)
	assert.Empty(t, route)
	assert.Equal(t, map[string]string{
		"a": "3", "b": "4", "answer": "", "big": "false", "calls": "1", "count": "3",
		"half": "1.5", "none": "", "total": "7", "words": `["two","words"]`,
	}, st.Vars.All())
	var order []string
	for _, d := range eventData(rec, trace.KindInfo) {
		order = append(order, d["var"].(string))
	}
	assert.Equal(t, set.WritesVars(), order)
}

func TestSetListFormKeepsItsOrderAndCapitalsAndSeesEarlierAssignments(t *testing.T) {
	b := mustBuild(t, flow.NewSet, "set", map[string]any{"assign": []any{
		map[string]any{"var": "E1", "expr": "trim(vars.E1)"},
		map[string]any{"var": "kind", "expr": `vars.E1 == "" ? "none" : "some"`},
		map[string]any{"var": "n", "expr": 1},
		map[string]any{"var": "n2", "expr": "int(vars.n) * 2"},
	}}, nil)
	assert.Equal(t, []string{"E1", "kind", "n", "n2"}, b.Node.(*flow.Set).WritesVars())
	st := state.NewState(state.Task{})
	require.NoError(t, st.Vars.Set("E1", "  x  "))
	_, _, err := run(t, b.Node, st)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"E1": "x", "kind": "some", "n": "1", "n2": "2"}, st.Vars.All())
}

func TestSetRejectsBadAssignmentsAtConstruction(t *testing.T) {
	many := map[string]any{}
	for i := range state.MaxVars + 1 {
		many[fmt.Sprintf("v%d", i)] = "1"
	}
	cases := []struct {
		name   string
		assign any
		key    string
		is     error
		substr string
	}{
		{"bad name", map[string]any{"1st": "1"}, "assign.1st", state.ErrVarName, `invalid var name "1st"`},
		{"bad name in a list", []any{map[string]any{"var": "a-b", "expr": "1"}}, "assign[0].var", state.ErrVarName, `invalid var name "a-b"`},
		{"no name in a list", []any{map[string]any{"expr": "1"}}, "assign[0].var", state.ErrVarName, "invalid var name"},
		{"twice", []any{map[string]any{"var": "a", "expr": "1"}, map[string]any{"var": "a", "expr": "2"}}, "assign[1].var", flow.ErrAssign, "assigned twice"},
		{"too many", many, "assign", state.ErrTooManyVars, "65 assignments, and a run holds at most 64 vars"},
		{"unknown field", map[string]any{"x": "usage.tokenz"}, "assign.x", flow.ErrExpr, `bad expression "usage.tokenz": type flow.ExprUsage has no field tokenz`},
		{"type error", []any{map[string]any{"var": "x", "expr": "question * 2"}}, "assign[0].expr", flow.ErrExpr, "invalid operation"},
		{"empty", map[string]any{"x": ""}, "assign.x", flow.ErrExpr, "the expression is empty"},
		{"not an expression", map[string]any{"x": []any{"a"}}, "assign.x", flow.ErrAssign, "want an expression"},
		{"unknown list key", []any{map[string]any{"var": "x", "exp": "1"}}, "assign[0].exp", nil, "unknown setting"},
		{"list item not a mapping", []any{"x = 1"}, "assign[0]", flow.ErrAssign, "want {var: NAME, expr: EXPRESSION}"},
		{"not a mapping", "x = 1", "assign", flow.ErrAssign, "want a mapping"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(flow.NewSet, "set", map[string]any{"assign": tc.assign}, nil)
			msg := requireSettingError(t, err, tc.key)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			assert.Contains(t, msg, tc.substr)
		})
	}
}

func TestSetHonoursTheVarLimitsAtRunTime(t *testing.T) {
	t.Run("too long", func(t *testing.T) {
		b := mustBuild(t, flow.NewSet, "set", map[string]any{"assign": map[string]any{"a": "'ok'", "long": `repeat("x", 4001)`, "z": "'never'"}}, nil)
		st := state.NewState(state.Task{})
		_, _, err := run(t, b.Node, st)
		require.ErrorIs(t, err, state.ErrVarTooLong)
		assert.Contains(t, err.Error(), "set n: var long:")
		assert.Equal(t, map[string]string{"a": "ok"}, st.Vars.All(), "the assignments before it stay made, those after are not")
	})
	t.Run("at the limit", func(t *testing.T) {
		b := mustBuild(t, flow.NewSet, "set", map[string]any{"assign": map[string]any{"long": `repeat("é", 4000)`}}, nil)
		st := state.NewState(state.Task{})
		_, _, err := run(t, b.Node, st)
		require.NoError(t, err)
		v, _ := st.Vars.Get("long")
		assert.Equal(t, strings.Repeat("é", state.MaxVarValue), v)
	})
	t.Run("too many", func(t *testing.T) {
		b := mustBuild(t, flow.NewSet, "set", map[string]any{"assign": map[string]any{"new": "'x'"}}, nil)
		st := state.NewState(state.Task{})
		for i := range state.MaxVars {
			require.NoError(t, st.Vars.Set(fmt.Sprintf("v%d", i), "1"))
		}
		_, _, err := run(t, b.Node, st)
		require.ErrorIs(t, err, state.ErrTooManyVars)
		assert.Contains(t, err.Error(), "set n: var new:")
		// Overwriting a var that is set needs no new slot.
		b = mustBuild(t, flow.NewSet, "set", map[string]any{"assign": map[string]any{"v1": "'2'"}}, nil)
		_, _, err = run(t, b.Node, st)
		require.NoError(t, err)
	})
	t.Run("evaluation error", func(t *testing.T) {
		b := mustBuild(t, flow.NewSet, "set", map[string]any{"assign": map[string]any{"n": "int(vars.x) + 1"}}, nil)
		st := state.NewState(state.Task{})
		require.NoError(t, st.Vars.Set("x", "many"))
		_, _, err := run(t, b.Node, st)
		require.ErrorIs(t, err, flow.ErrExpr)
		assert.Contains(t, err.Error(), `set n: assign.n: bad expression "int(vars.x) + 1"`)
	})
}

func TestSetWithNothingToAssignDoesNothing(t *testing.T) {
	b := mustBuild(t, flow.NewSet, "set", nil, nil)
	st := state.NewState(state.Task{})
	_, rec, err := run(t, b.Node, st)
	require.NoError(t, err)
	assert.Zero(t, st.Vars.Len())
	assert.Empty(t, rec.Events())
}
