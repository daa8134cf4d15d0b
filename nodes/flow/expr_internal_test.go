package flow

import (
	"testing"
	"time"

	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExprString(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, ""},
		{"x", "x"},
		{true, "true"},
		{7, "7"},
		{int64(-3), "-3"},
		{uint8(9), "9"},
		{2.5, "2.5"},
		{5.0, "5"},
		{1e6, "1000000"},
		{1e21, "1e+21"},
		{float32(0.5), "0.5"},
		{[]any{"a", 1}, `["a",1]`},
		{map[string]any{"k": "v"}, `{"k":"v"}`},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "2024-01-02T03:04:05Z"},
		{90 * time.Second, "1m30s"},
	} {
		got, err := exprString(tc.in)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%#v", tc.in)
	}
	_, err := exprString(func() {})
	assert.ErrorContains(t, err, "cannot be stored in a var")
}

func TestNewExprEnvReadsTheState(t *testing.T) {
	st := state.NewState(state.Task{Question: "q"})
	st.Plan = []plan.Step{{ID: "1"}, {ID: "2"}, {ID: "3"}}
	st.Replans = 2
	st.Trials = []state.Trial{{}}
	st.Candidates = []state.Candidate{{}, {}}
	st.Usage.AddModelCall("a", 10, 5, false, 0.25)
	st.SetPartial("x", "why", state.FailureBudget)
	require.NoError(t, st.Vars.Set("k", "v"))
	st.SelfConsistency = &state.Tally{Samples: 5, Votes: []state.Vote{{Answer: "a", Count: 2}, {Answer: "b", Count: 3}}}
	assert.Equal(t, ExprEnv{
		Question: "q", Answer: "x", Done: true, Failure: "budget", Reason: "why",
		Steps: 3, Replans: 2, Trials: 1, Candidates: 2, Agreement: 0.6,
		Usage: ExprUsage{ModelCalls: 1, Tokens: 15, Cost: 0.25},
		Vars:  map[string]string{"k": "v"},
	}, NewExprEnv(st))
	assert.Equal(t, ExprEnv{Vars: map[string]string{}}, NewExprEnv(nil))
}

func TestVarRefsFollowConstantKeysOnly(t *testing.T) {
	p, err := compileExpr("x", `vars.a + vars["b"] + vars["c" + "d"] + (vars[question] ?? "")`, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "cd"}, p.vars)
}
