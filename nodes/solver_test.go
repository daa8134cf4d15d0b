package nodes_test

import (
	"testing"

	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSolverAnswersFromPlanAndEvidence(t *testing.T) {
	node, m := composeNode(t, nodes.NewSolver, nil, scripted.Reply{Role: "solve",
		Contains: "Plan: Find his birth year\n#E1 = search[Clyde Tombaugh born]\nEvidence: born on 4 February 1906\n" +
			"Plan: Find the discovery year\n#E2 = search[Pluto discovered]\nEvidence: discovered Pluto on 18 February 1930\n" +
			"Plan: Subtract\n#E3 = calculator[#E2 - #E1]\nEvidence: 24\n",
		Text: "1930 - 1906 = 24\nAnswer: 24"})
	st := planState()
	st.Plan[2].Status, st.Plan[2].Result, st.Plan[2].Error = plan.StatusDone, "24", ""
	rec := runCompose(t, node, st)
	assert.Equal(t, "24", st.Answer)
	assert.True(t, st.Complete)
	assert.Equal(t, 1, m.Calls())
	require.Len(t, rec.OfKind(trace.KindAnswer), 1)
}

func TestSolverMarksAnswersOnMissingEvidenceIncomplete(t *testing.T) {
	cases := []struct {
		name   string
		status string
		reason string
	}{
		{"failed step", plan.StatusFailed, "step 3 failed (tool error: bad input)"},
		{"skipped step", plan.StatusSkipped, "step 3 skipped (tool error: bad input)"},
		{"step that never ran", plan.StatusPending, "step 3 did not run"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node, _ := composeNode(t, nodes.NewSolver, nil, scripted.Reply{Contains: "Some evidence is missing: " + tc.reason, Text: "Answer: 24"})
			st := planState()
			st.Plan[2].Status = tc.status
			runCompose(t, node, st)
			assert.Equal(t, "24", st.Answer)
			assert.False(t, st.Complete)
			assert.Equal(t, state.FailureTool, st.Failure)
			assert.Equal(t, tc.reason, st.Reason)
		})
	}
}

func TestSolverPassesACompleteAnswerThrough(t *testing.T) {
	node, m := composeNode(t, nodes.NewSolver, nil)
	st := planState()
	st.SetAnswer("24")
	runCompose(t, node, st)
	assert.Equal(t, 0, m.Calls())
	assert.Equal(t, "24", st.Answer)
}
