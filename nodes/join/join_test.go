package join_test

import (
	"context"
	"errors"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
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
		"merge": {"merge": "best"},
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
