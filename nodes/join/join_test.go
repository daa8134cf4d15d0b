package join_test

import (
	"context"
	"errors"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes/join"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func build(t *testing.T, settings map[string]any) (*join.Node, error) {
	t.Helper()
	b, err := join.New(nodekind.Env{}, nodekind.Spec{ID: "j", Type: "join", Settings: settings})
	if err != nil {
		return nil, err
	}
	return b.Node.(*join.Node), nil
}

func TestWaitSettings(t *testing.T) {
	for _, tc := range []struct {
		wait any
		need int
	}{{nil, 5}, {"all", 5}, {"first", 1}, {"any", 1}, {3, 3}, {"2", 2}, {7, 7}} {
		n, err := build(t, map[string]any{"wait": tc.wait})
		require.NoError(t, err, "%v", tc.wait)
		assert.Equal(t, tc.need, n.Needs(5), "wait %v", tc.wait)
	}
	for _, bad := range []any{0, -1, "most", 2.5} {
		_, err := build(t, map[string]any{"wait": bad})
		var se *config.SettingError
		require.ErrorAs(t, err, &se, "wait %v", bad)
		assert.Equal(t, "wait", se.Key)
	}
}

func TestSettingErrorsNameTheKey(t *testing.T) {
	for key, settings := range map[string]map[string]any{
		"merge": {"merge": "most"},
		"score": {"merge": "best"},
		"from":  {"from": "note:x"},
		"into":  {"into": "var:1bad"},
	} {
		_, err := build(t, settings)
		var se *config.SettingError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, key, se.Key)
		assert.ErrorIs(t, err, config.ErrSettings)
	}
	n, err := build(t, map[string]any{"from": "var:x"})
	require.NoError(t, err)
	assert.Equal(t, "x", n.TakesVar())
}

func TestVoteNormalisesAndBreaksTiesByTheEarliest(t *testing.T) {
	votes := join.Vote([]string{"", "Paris ", "4", "paris", "4.0", "  "})
	require.Len(t, votes, 2)
	assert.Equal(t, state.Vote{Answer: "Paris", Count: 2, First: 1}, votes[0], "a tie goes to the value given first")
	assert.Equal(t, state.Vote{Answer: "4", Count: 2, First: 2}, votes[1])
	assert.Empty(t, join.Vote(nil))
}

func branch(i int, answer string, rank int, err error) graph.Branch[*state.State] {
	st := state.NewState(state.Task{})
	st.Answer = answer
	return graph.Branch[*state.State]{Index: i, State: st, Rank: rank, Err: err}
}

func TestMergeSkipsFailedBranchesAndRecordsNoValueAsPartial(t *testing.T) {
	n, err := build(t, map[string]any{"merge": "first"})
	require.NoError(t, err)
	st := state.NewState(state.Task{})
	_, err = n.Merge(context.Background(), st, []graph.Branch[*state.State]{
		branch(0, "late", 2, nil), branch(1, "never", 0, errors.New("down")), branch(2, "early", 1, nil),
	})
	require.NoError(t, err)
	assert.Equal(t, "early", st.Answer, "first in completion order")

	st = state.NewState(state.Task{})
	_, err = n.Merge(context.Background(), st, []graph.Branch[*state.State]{branch(0, "", 1, nil)})
	require.NoError(t, err)
	assert.False(t, st.Complete)
	assert.Contains(t, st.Reason, join.ErrNoValue.Error())

	_, err = n.Run(context.Background(), st)
	assert.Error(t, err, "a join never runs as a plain node")
}

func TestMergeBestTakesTheHighestScore(t *testing.T) {
	n, err := build(t, map[string]any{"merge": "best", "score": "-abs(len(fromJSON(value)) - 3)"})
	require.NoError(t, err)
	st := state.NewState(state.Task{})
	_, err = n.Merge(context.Background(), st, []graph.Branch[*state.State]{
		branch(0, "[1, 2]", 1, nil), branch(1, "not json", 2, nil), branch(2, "[1, 2, 3]", 3, nil), branch(3, "[3, 2, 1]", 4, nil),
	})
	require.NoError(t, err)
	assert.Equal(t, "[1, 2, 3]", st.Answer, "the highest score; a tie goes to the earliest branch")

	for _, bad := range []map[string]any{
		{"merge": "best", "score": "value +"},
		{"merge": "best", "score": "value"}, // a string, not a number
		{"merge": "vote", "score": "1"},
	} {
		_, err := build(t, bad)
		var se *config.SettingError
		require.ErrorAs(t, err, &se, "%v", bad)
		assert.Equal(t, "score", se.Key)
	}
}

func TestMergeJudgeAsksTheModel(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Replies("the best is none", "2")}
	b, err := join.New(nodekind.Env{Model: llm.Model{LLM: rec}}, nodekind.Spec{ID: "j", Type: "join", Settings: map[string]any{"merge": "judge"}})
	require.NoError(t, err)
	n := b.Node.(*join.Node)
	st := state.NewState(state.Task{Question: "Capital of France?"})
	_, err = n.Merge(context.Background(), st, []graph.Branch[*state.State]{branch(0, "Lyon", 1, nil), branch(1, "Paris", 2, nil)})
	require.NoError(t, err)
	assert.Equal(t, "Paris", st.Answer)
	reqs := rec.Requests()
	require.Len(t, reqs, 2, "a reply without a candidate's number is sent back once")
	assert.Contains(t, reqs[0].Text(), "1. Lyon\n2. Paris")
	assert.Contains(t, llmtest.LastText(reqs[1].Messages), "one number from 1 to 2")
}
