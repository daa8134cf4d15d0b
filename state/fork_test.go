package state_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// full returns a state with every field set.
func full(t *testing.T) *state.State {
	t.Helper()
	st := state.NewState(state.Task{ID: "t", Question: "q", Answer: "a", Tags: []string{"x"}})
	st.Plan = []plan.Step{{ID: "1", Description: "d", DependsOn: []string{"0"}}}
	st.Scratchpad = []state.Entry{{Thought: "t"}}
	st.Reflections = []string{"r"}
	st.Trials = []state.Trial{{Answer: "a"}}
	st.Candidates = []state.Candidate{{Text: "c"}}
	st.SelfConsistency = &state.Tally{Samples: 2, Votes: []state.Vote{{Answer: "a", Count: 2}}}
	st.SubQuestions = []state.SubQuestion{{Question: "s"}}
	st.ThoughtPath = []string{"p"}
	st.Note("k", "v")
	require.NoError(t, st.Vars.Set("x", "1"))
	st.Replans = 1
	st.SetPartial("ans", "why", state.FailureBudget)
	st.Incidents = []string{"tool"}
	st.SetHooks(hooks.NewSet())
	return st
}

func TestForkCopiesEverythingButUsage(t *testing.T) {
	st := full(t)
	st.Usage.AddModelCall("n", 10, 2, false, 0)
	c := st.Fork()

	// Every JSON field is copied, except the usage (counted into the
	// parent through the shared hooks).
	var orig, forked map[string]any
	b, err := json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &orig))
	b, err = json.Marshal(c)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &forked))
	delete(orig, "usage")
	delete(forked, "usage")
	assert.Equal(t, orig, forked)
	assert.Zero(t, c.Usage.Snapshot().ModelCalls)
	assert.Same(t, st.Hooks(), c.Hooks(), "the fork shares the run's hooks")

	// A field Fork does not know would be missed: keep the count in step.
	assert.Equal(t, 20, reflect.TypeFor[state.State]().NumField(), "a new State field: copy it in Fork, then update this count")
}

func TestAForkIsIndependent(t *testing.T) {
	st := full(t)
	c := st.Fork()
	c.Task.Tags[0] = "changed"
	c.Plan[0].DependsOn[0] = "changed"
	c.Plan[0].Status = "done"
	c.Scratchpad[0].Thought = "changed"
	c.SelfConsistency.Votes[0].Count = 9
	c.Note("k", "changed")
	require.NoError(t, c.Vars.Set("x", "changed"))
	require.NoError(t, c.Vars.Set("y", "new"))
	c.SetAnswer("changed")

	assert.Equal(t, "x", st.Task.Tags[0])
	assert.Equal(t, "0", st.Plan[0].DependsOn[0])
	assert.Empty(t, st.Plan[0].Status)
	assert.Equal(t, "t", st.Scratchpad[0].Thought)
	assert.Equal(t, 2, st.SelfConsistency.Votes[0].Count)
	assert.Equal(t, "v", st.Notes["k"])
	assert.Equal(t, map[string]string{"x": "1"}, st.Vars.All())
	assert.Equal(t, "ans", st.Answer)
	var nilState *state.State
	assert.Nil(t, nilState.Fork())
}
