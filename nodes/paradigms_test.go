package nodes_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMajorityVoteCountsNormalisedAnswersAndBreaksTiesByFirstSample(t *testing.T) {
	cases := []struct {
		name    string
		answers []string
		want    string
		count   int
	}{
		{"clear majority", []string{"18", "17", "18.0", "$18"}, "18", 3},
		{"tie goes to the earliest", []string{"Paris", "London", "london", "paris"}, "Paris", 2},
		{"empty answers ignored", []string{"", "7", ""}, "7", 1},
		{"text normalised", []string{"The Eiffel Tower", "eiffel tower!", "Big Ben"}, "The Eiffel Tower", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			votes := nodes.MajorityVote(tc.answers)
			require.NotEmpty(t, votes)
			assert.Equal(t, tc.want, votes[0].Answer)
			assert.Equal(t, tc.count, votes[0].Count)
		})
	}
	assert.Empty(t, nodes.MajorityVote([]string{"", " "}))
}

func TestParseValueReadsWordsAndScores(t *testing.T) {
	assert.Equal(t, 20.0, nodes.ParseValue("Sure."))
	assert.Equal(t, 1.0, nodes.ParseValue("likely"))
	assert.Equal(t, 0.001, nodes.ParseValue("This is impossible, 3 is left"))
	assert.Equal(t, 1.6, nodes.ParseValue("Score: 8/10"))
	assert.Equal(t, 1.0, nodes.ParseValue("no idea"))
}

func TestToTPrunesImpossibleBranchesBeforeExpanding(t *testing.T) {
	f := false
	model, err := scripted.New(scripted.Script{Strict: &f, Replies: []scripted.Reply{
		{Role: "propose", Contains: "Steps so far", Regex: "dead end", Text: "1. should never be expanded", Times: 5},
		{Role: "propose", Regex: "(?s)Steps so far:\\s*\\ngood path", Text: "1. Answer: 42", Times: 5},
		{Role: "propose", Text: "1. good path\n2. dead end", Times: 5},
		{Role: "evaluate", Contains: "Candidate next step: dead end", Text: "impossible", Times: 5},
		{Role: "evaluate", Text: "sure", Times: 5},
	}})
	require.NoError(t, err)
	built, err := nodes.NewToT(agent.Env{Model: agent.Model{LLM: model}}, agent.NodeSpec{ID: "tot", Type: "tot", Settings: map[string]any{"beam": 2, "depth": 3}})
	require.NoError(t, err)
	st := agent.NewState(agent.Task{Question: "What is six times seven?"})
	rec := &trace.Recorder{}
	_, err = built.Node.Run(trace.WithTracer(context.Background(), trace.New("r", rec)), st)
	require.NoError(t, err)
	assert.Equal(t, "42", st.Answer)
	assert.True(t, st.Complete)
	for _, c := range st.Candidates {
		assert.NotEqual(t, "should never be expanded", c.Text, "a pruned branch was expanded")
	}
	pruned := 0
	for _, e := range rec.OfKind(trace.KindCandidate) {
		if e.Data["pruned"] == true {
			pruned++
			assert.Equal(t, "dead end", e.Text)
		}
	}
	assert.Equal(t, 1, pruned)
}
