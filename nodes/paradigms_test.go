package nodes_test

import (
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/state"
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
	built, err := nodes.NewToT(nodekind.Env{Model: llm.Model{LLM: model}}, nodekind.Spec{ID: "tot", Type: "tot", Settings: map[string]any{"beam": 2, "depth": 3}})
	require.NoError(t, err)
	st := hookedState(state.Task{Question: "What is six times seven?"})
	rec := &trace.Recorder{}
	_, err = built.Node.Run(traceCtx(rec), st)
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

func TestCoTAndSelfConsistencyExtractAnswersFromFreeText(t *testing.T) {
	cases := []struct{ name, reply string }{
		{"the answer is", "Three fives are 15 and 3 more make 18. The answer is 18."},
		{"gsm8k hashes", "3 * 5 = 15\n15 + 3 = 18\n#### 18"},
		{"chinese marker", "3 乘 5 得 15，再加 3。答案：18"},
		{"boxed", "So the total is $\\boxed{18}$."},
		{"answer line", "15 + 3 = 18\nAnswer: 18"},
	}
	for _, tc := range cases {
		t.Run("cot/"+tc.name, func(t *testing.T) {
			st, rec, err := runNode(t, nodes.NewCoT, "cot", nil, scripted.Texts(tc.reply), arithmeticTask)
			require.NoError(t, err)
			assert.Equal(t, "18", st.Answer)
			assert.True(t, st.Complete)
			require.Len(t, rec.OfKind(trace.KindThought), 1, "the rationale is traced")
		})
	}
	t.Run("self_consistency votes across formats", func(t *testing.T) {
		var replies []scripted.Reply
		for _, tc := range cases {
			replies = append(replies, scripted.Reply{Text: tc.reply})
		}
		replies = append(replies, scripted.Reply{Text: "I think it is 17.\nAnswer: 17"})
		f := false
		m, err := scripted.New(scripted.Script{Strict: &f, Replies: replies})
		require.NoError(t, err)
		st, rec, err := runNode(t, nodes.NewSelfConsistency, "self_consistency", map[string]any{"samples": len(replies)}, m, arithmeticTask)
		require.NoError(t, err)
		assert.Equal(t, "18", st.Answer)
		votes := rec.OfKind(trace.KindVote)
		require.Len(t, votes, 1)
		table, ok := votes[0].Data["votes"].([]state.Vote)
		require.True(t, ok)
		require.Len(t, table, 2)
		assert.Equal(t, state.Vote{Answer: "18", Count: len(cases), First: table[0].First}, table[0])
		assert.Equal(t, 1, table[1].Count)
		assert.Len(t, st.Candidates, len(replies), "every sample is kept as a candidate")
		u := st.Usage.Snapshot()
		assert.Equal(t, len(replies), u.ModelCalls, "every sample's usage is counted")
		assert.Equal(t, len(replies), u.PerNode["self_consistency"].ModelCalls)
		assert.Len(t, rec.OfKind(trace.KindLLMCall), len(replies))
	})
}

func TestSelfConsistencySurvivesSomeFailedSamples(t *testing.T) {
	f := false
	m, err := scripted.New(scripted.Script{Strict: &f, Replies: []scripted.Reply{
		{Text: "Answer: 18", Times: 2},
		{Error: "rate limited", Times: 1},
	}})
	require.NoError(t, err)
	st, _, err := runNode(t, nodes.NewSelfConsistency, "self_consistency", map[string]any{"samples": 3, "concurrency": 1}, m, arithmeticTask)
	require.NoError(t, err)
	assert.Equal(t, "18", st.Answer)
	require.NotNil(t, st.SelfConsistency)
	assert.Equal(t, 3, st.SelfConsistency.Samples)
	assert.Equal(t, 1, st.SelfConsistency.Failed)
	assert.Equal(t, 2, st.Usage.Snapshot().ModelCalls, "failed calls carry no usage")
}

func TestPlanSolvePromptCarriesThePSPlusInstructions(t *testing.T) {
	rec, _ := script(t, true, scripted.Reply{Text: "Variables: a = 3 * 5 = 15. Plan: add 3. 15 + 3 = 18.\nAnswer: 18"})
	st, _, err := runNode(t, nodes.NewPlanSolve, "plan_solve", nil, rec, arithmeticTask)
	require.NoError(t, err)
	assert.Equal(t, "18", st.Answer)
	reqs := requests(rec, "")
	require.Len(t, reqs, 1)
	p := reqs[0].prompt
	for _, want := range []string{arithmeticTask.Question, "devise a plan", "variables", "step by step", "calculation", "Answer: <answer>"} {
		assert.Contains(t, p, want)
	}
}

func TestLeastToMostSolvesSubquestionsInOrderShowingEarlierAnswers(t *testing.T) {
	task := state.Task{Question: "Ann has 3 bags of 5 apples and buys 3 more. How many apples does she have?"}
	rec, m := script(t, true,
		scripted.Reply{Role: "decompose", Text: "1. How many apples are in the bags?\n2. " + task.Question},
		scripted.Reply{Role: "solve", Contains: "Problem: " + task.Question + "\n\nSub-question: How many apples are in the bags?\n", Text: "3 * 5 = 15\nAnswer: 15"},
		scripted.Reply{Role: "solve", Contains: "Sub-question: How many apples are in the bags?\nAnswer: 15\n\nSub-question: " + task.Question, Text: "15 + 3 = 18\nAnswer: 18"},
	)
	st, tr, err := runNode(t, nodes.NewLeastToMost, "least_to_most", nil, rec, task)
	require.NoError(t, err)
	assert.Equal(t, 0, m.Remaining())
	assert.Equal(t, "18", st.Answer)
	assert.True(t, st.Complete)
	solves := requests(rec, "solve")
	require.Len(t, solves, 2)
	assert.NotContains(t, solves[0].prompt, "Answer: 15", "the first sub-question sees no answers")
	steps := tr.OfKind(trace.KindStep)
	require.Len(t, steps, 2)
	assert.Equal(t, "1. How many apples are in the bags? → 15", steps[0].Text)
	assert.Equal(t, "2. "+task.Question+" → 18", steps[1].Text)
	require.Len(t, tr.OfKind(trace.KindPlan), 1)
}

func TestLeastToMostAppendsTheTaskAndBoundsTheSubquestions(t *testing.T) {
	f := false
	m, err := scripted.New(scripted.Script{Strict: &f, Replies: []scripted.Reply{
		{Role: "decompose", Text: "1. first\n2. second\n3. third\n4. fourth"},
		{Role: "solve", Text: "Answer: x", Times: 10},
	}})
	require.NoError(t, err)
	rec := newRecorder(m)
	st, _, err := runNode(t, nodes.NewLeastToMost, "least_to_most", map[string]any{"max_subquestions": 3}, rec, arithmeticTask)
	require.NoError(t, err)
	questions := make([]string, len(st.SubQuestions))
	for i, q := range st.SubQuestions {
		questions[i] = q.Question
		assert.NotEmpty(t, q.Answer, "sub-question %d was solved", i+1)
	}
	assert.Equal(t, []string{"first", "second", arithmeticTask.Question}, questions, "the first sub-questions and the task are kept")
	assert.Len(t, requests(rec, "solve"), 3)
}

func TestLeastToMostUsesCustomPrompts(t *testing.T) {
	rec, _ := script(t, true,
		scripted.Reply{Role: "decompose", Contains: "SPLIT: " + arithmeticTask.Question, Text: "1. " + arithmeticTask.Question},
		scripted.Reply{Role: "solve", Contains: "SOLVE #1: " + arithmeticTask.Question, Text: "Answer: 18"},
	)
	st, _, err := runNode(t, nodes.NewLeastToMost, "least_to_most", map[string]any{
		"decompose_prompt": "SPLIT: {{.Question}}",
		"solve_prompt":     "SOLVE #{{.Extra.Index}}: {{.Extra.Current}}",
	}, rec, arithmeticTask)
	require.NoError(t, err)
	assert.Equal(t, "18", st.Answer)
}
