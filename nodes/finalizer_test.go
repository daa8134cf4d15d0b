package nodes_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func composeNode(t *testing.T, ctor nodekind.Constructor, settings map[string]any, replies ...scripted.Reply) (nodekind.Node, *scripted.Model) {
	t.Helper()
	m, err := scripted.New(scripted.Script{Replies: replies})
	require.NoError(t, err)
	built, err := ctor(nodekind.Env{Model: llm.Model{LLM: m}}, nodekind.Spec{ID: "final", Type: "finalizer", Settings: settings})
	require.NoError(t, err)
	assert.Empty(t, built.Routes)
	return built.Node, m
}

func runCompose(t *testing.T, node nodekind.Node, st *state.State) *trace.Recorder {
	t.Helper()
	rec := &trace.Recorder{}
	_, err := node.Run(traceCtx(rec), st)
	require.NoError(t, err)
	return rec
}

func planState() *state.State {
	st := hookedState(state.Task{Question: "How old was Clyde Tombaugh when he discovered Pluto?"})
	st.Plan = []plan.Step{
		{ID: "1", Description: "Find his birth year", Tool: "search", Input: "Clyde Tombaugh born", Status: plan.StatusDone, Result: "born on 4 February 1906"},
		{ID: "2", Description: "Find the discovery year", Tool: "search", Input: "Pluto discovered", Status: plan.StatusDone, Result: "discovered Pluto on 18 February 1930"},
		{ID: "3", Description: "Subtract", Tool: "calculator", Input: "#E2 - #E1", Status: plan.StatusFailed, Error: "tool error: bad input"},
	}
	return st
}

func TestFinalizerPassesACompleteAnswerThrough(t *testing.T) {
	node, m := composeNode(t, nodes.NewFinalizer, nil)
	st := planState()
	st.SetAnswer("24")
	rec := runCompose(t, node, st)
	assert.Equal(t, "24", st.Answer)
	assert.True(t, st.Complete)
	assert.Equal(t, 0, m.Calls())
	ans := rec.OfKind(trace.KindAnswer)
	require.Len(t, ans, 1)
	assert.Equal(t, true, ans[0].Data["passthrough"])
}

func TestFinalizerComposesFromStepResults(t *testing.T) {
	cases := []struct {
		name         string
		prepare      func(*state.State)
		promptHas    string
		wantComplete bool
		wantFailure  string
	}{
		{"plan finished without an answer", func(*state.State) {}, "Write the final answer", true, ""},
		{"re-plan budget spent", func(st *state.State) {
			st.Reason, st.Failure = "the re-planning budget is spent (3 re-plan(s))", state.FailureBudget
		}, "The work stopped before it was finished: the re-planning budget is spent", false, state.FailureBudget},
		{"planner gave up", func(st *state.State) {
			st.Plan = nil
			st.Reason, st.Failure = "no valid plan: invalid plan after 3 attempt(s)", state.FailurePlan
		}, "no valid plan", false, state.FailurePlan},
		{"an earlier partial answer", func(st *state.State) {
			st.SetPartial("maybe 20", "the iteration budget ran out", state.FailureBudget)
		}, "the iteration budget ran out", false, state.FailureBudget},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node, _ := composeNode(t, nodes.NewFinalizer, nil, scripted.Reply{Node: "final", Role: "finalize", Contains: tc.promptHas,
				Text: "He was born in 1906 and found Pluto in 1930.\nAnswer: 24"})
			st := planState()
			tc.prepare(st)
			rec := runCompose(t, node, st)
			assert.Equal(t, "24", st.Answer)
			assert.True(t, st.Done)
			assert.Equal(t, tc.wantComplete, st.Complete)
			assert.Equal(t, tc.wantFailure, st.Failure)
			if !tc.wantComplete {
				assert.NotEmpty(t, st.Reason)
			}
			ans := rec.OfKind(trace.KindAnswer)
			require.Len(t, ans, 1)
			assert.Equal(t, tc.wantComplete, ans[0].Data["complete"])
			assert.Len(t, rec.OfKind(trace.KindThought), 1, "the full reply is kept as a thought")
		})
	}
}

func TestFinalizerPromptShowsResultsAndFailures(t *testing.T) {
	node, _ := composeNode(t, nodes.NewFinalizer, nil, scripted.Reply{
		Regex: `(?s)1\. Find his birth year \[search: Clyde Tombaugh born\]\n   result: born on 4 February 1906.*3\. Subtract \[calculator: #E2 - #E1\]\n   failed: tool error: bad input`,
		Text:  "Answer: 24"})
	st := planState()
	runCompose(t, node, st)
	assert.Equal(t, "24", st.Answer)
}

func TestFinalizerComposesFromAScratchpad(t *testing.T) {
	node, _ := composeNode(t, nodes.NewFinalizer, map[string]any{"extract": false}, scripted.Reply{
		Contains: "Action 1: search[Pluto]\nObservation 1: found in 1930", Text: "1930"})
	st := hookedState(state.Task{Question: "When was Pluto found?"})
	st.Scratchpad = []state.Entry{{Thought: "look it up", Tool: "search", Input: "Pluto", Observation: "found in 1930"}}
	runCompose(t, node, st)
	assert.Equal(t, "1930", st.Answer)
	assert.True(t, st.Complete)
}

func TestFinalizerEmptyReplyIsAnIncompleteAnswer(t *testing.T) {
	node, _ := composeNode(t, nodes.NewFinalizer, nil, scripted.Reply{Text: "  \n"})
	st := planState()
	runCompose(t, node, st)
	assert.True(t, st.Done)
	assert.False(t, st.Complete)
	assert.Equal(t, state.FailureParse, st.Failure)
}

func TestFinalizerProviderErrorIsReturned(t *testing.T) {
	node, _ := composeNode(t, nodes.NewFinalizer, nil, scripted.Reply{Error: "HTTP 503"})
	_, err := node.Run(context.Background(), planState())
	assert.ErrorIs(t, err, llm.ErrModel)
}

func TestComposeNodesRejectBadSettings(t *testing.T) {
	for _, ctor := range []nodekind.Constructor{nodes.NewFinalizer, nodes.NewSolver} {
		_, err := ctor(nodekind.Env{}, nodekind.Spec{ID: "f", Type: "finalizer", Settings: map[string]any{"promt": "x"}})
		var se *config.SettingError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "promt", se.Key)
		_, err = ctor(nodekind.Env{}, nodekind.Spec{ID: "f", Type: "finalizer", Settings: map[string]any{"prompt": "{{.Nope"}})
		assert.ErrorIs(t, err, config.ErrSettings)
	}
}
