package sim_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// sortingTasks returns the first n tasks of the built-in sorting suite.
func sortingTasks(t *testing.T, n int) []suite.Task {
	t.Helper()
	tasks, err := suite.Sorting(suite.DefaultSortingLength, n)
	require.NoError(t, err)
	return tasks
}

// llmCtx is the context of a call by an llm node playing role on task.
func llmCtx(task suite.Task, role string) context.Context {
	return llm.WithCallMeta(context.Background(), llm.CallMeta{Node: role + "_node", Kind: "llm", Role: role, TaskID: task.ID})
}

// chat sends a system message and then the user messages, with an
// assistant reply between two of them, as an llm node's schema retry does.
func chat(t *testing.T, m llms.Model, ctx context.Context, users ...string) string {
	t.Helper()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "Be careful. Example: [9, 8] becomes [8, 9].")}
	for i, u := range users {
		if i > 0 {
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, "[7, 7, 7]"))
		}
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, u))
	}
	resp, err := m.GenerateContent(ctx, msgs)
	require.NoError(t, err)
	return resp.Choices[0].Content
}

func TestSimSortsTheLastListOfTheLastUserMessage(t *testing.T) {
	task := sortingTasks(t, 1)[0]
	m := perfect(t, task)
	ctx := llmCtx(task, "sort")
	assert.Equal(t, task.Answer, chat(t, m, ctx, task.Question), "the task's own list, sorted")
	assert.Equal(t, "[1, 1, 5, 9]", chat(t, m, ctx, "Example: [3, 2] gives [2, 3].\nSort this list: [5, 1,\n 9, 1]\nReply with the list only."))
	assert.Equal(t, "[0, 2]", chat(t, m, ctx, "Sort [4, 4]", "Sort this one instead: [2, 0]"), "the last user message wins")
	assert.Equal(t, "[0, 2]", chat(t, m, ctx, "Sort [2, 0]", "Your reply does not match the JSON Schema: it must be an array. Reply again."),
		"a retry's feedback without a list leaves the request before it")
	assert.Equal(t, "[]", chat(t, m, ctx, "Sort []"))
	assert.Equal(t, "[]", chat(t, m, ctx, "Sort nothing"), "the system prompt's example is not the input")
	resp, err := m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "Sort [2, 1]")})
	require.NoError(t, err)
	assert.Equal(t, "[1, 2]", resp.Choices[0].Content, "a prompt without user messages is read whole")
}

func TestSimMergesTheLastTwoListsIntoOneSortedList(t *testing.T) {
	task := sortingTasks(t, 1)[0]
	m := perfect(t, task)
	ctx := llmCtx(task, "merge")
	assert.Equal(t, "[0, 1, 4, 4, 5, 9]", chat(t, m, ctx, "Merge these two sorted lists into one sorted list:\nList 1: [1, 4, 9]\nList 2: [0, 4, 5]"))
	assert.Equal(t, "[0, 3, 4, 5]", chat(t, m, ctx, "Ignore [8, 8]. Merge [3, 5] and [4, 0]."), "the last two, sorted even when unsorted")
	assert.Equal(t, "[2, 3]", chat(t, m, ctx, "Merge [3, 2] with nothing"), "one list alone is sorted")
	assert.Equal(t, "[]", chat(t, m, ctx, "Merge nothing"), "the system prompt's example is not the input")
}

// A sorting task's other roles follow its gold answer, the sorted list,
// which the sorting scorer accepts.
func TestSimAnswersSortingTasksInOtherRoles(t *testing.T) {
	task := sortingTasks(t, 1)[0]
	m := perfect(t, task)
	out := gen(t, m, roleCtx(task, "cot", ""), task.Question)
	r := verify.Sorting{}.Score(out, verify.Reference{Question: task.Question, Answer: task.Answer})
	assert.True(t, r.Correct, r.Detail)
}

// withProfile returns a simulator with the given fault rates, no latency,
// playing tasks.
func withProfile(t *testing.T, faults map[string]float64, seed uint64, tasks ...suite.Task) *sim.Model {
	t.Helper()
	m, err := sim.NewWithProfile(sim.Profile{Name: "t", Faults: faults}, sim.WithSeed(seed), sim.WithSleeper(noSleep), sim.WithTasks(tasks))
	require.NoError(t, err)
	return m
}

// Every sort error leaves exactly one error by the Graph of Thoughts
// count, and all three kinds (a drop, a duplicate, a swap) occur.
func TestSortErrorPutsOneErrorIntoTheList(t *testing.T) {
	tasks := sortingTasks(t, 100)
	m := withProfile(t, map[string]float64{sim.FaultSortError: 1}, 5, tasks...)
	kinds := map[string]int{}
	for _, task := range tasks {
		for _, role := range []string{"sort", "merge"} {
			out := chat(t, m, llmCtx(task, role), task.Question)
			got, ok := verify.LastIntList(out)
			require.True(t, ok, out)
			want, _ := verify.LastIntList(task.Answer)
			require.Equal(t, 1, verify.SortingErrors(got, want), "%s %s: %s vs %s", task.ID, role, out, task.Answer)
			assert.False(t, verify.Sorting{}.Score(out, verify.Reference{Answer: task.Answer}).Correct)
			switch len(got) - len(want) {
			case -1:
				kinds["drop"]++
			case 1:
				kinds["duplicate"]++
			default:
				kinds["swap"]++
			}
		}
	}
	assert.Equal(t, 200, m.Injected()[sim.FaultSortError])
	for _, k := range []string{"drop", "duplicate", "swap"} {
		assert.Greater(t, kinds[k], 30, "%s errors in %v", k, kinds)
	}
}

func TestSortErrorsAreTheSameForTheSameSeed(t *testing.T) {
	tasks := sortingTasks(t, 30)
	replies := func(seed uint64) []string {
		m := withProfile(t, map[string]float64{sim.FaultSortError: 0.5}, seed, tasks...)
		var out []string
		for _, task := range tasks {
			for range 3 { // the same request again draws again
				out = append(out, chat(t, m, llmCtx(task, "sort"), task.Question))
			}
		}
		return out
	}
	a := replies(3)
	assert.Equal(t, a, replies(3))
	assert.NotEqual(t, a, replies(4))
}

func TestSortErrorAppliesOnlyToSortAndMergeWithAList(t *testing.T) {
	task := sortingTasks(t, 1)[0]
	m := withProfile(t, map[string]float64{sim.FaultSortError: 1}, 1, task)
	assert.Contains(t, gen(t, m, roleCtx(task, "cot", ""), task.Question), "Answer: "+task.Answer)
	assert.Equal(t, "[]", gen(t, m, llmCtx(task, "sort"), "Sort []"), "nothing to get wrong in an empty list")
	assert.Equal(t, "[]", gen(t, m, llmCtx(task, "merge"), "Merge nothing"))
	assert.Zero(t, m.Injected()[sim.FaultSortError])
	for _, in := range []string{"[1]", "[2, 2, 2]"} { // a drop or a duplicate, never a swap of equal elements
		out := gen(t, m, llmCtx(task, "sort"), "Sort "+in)
		got, ok := verify.LastIntList(out)
		require.True(t, ok, out)
		want, _ := verify.LastIntList(in)
		assert.Equal(t, 1, verify.SortingErrors(got, want), "%s gave %s", in, out)
	}
	assert.Equal(t, 2, m.Injected()[sim.FaultSortError])
}

func TestEmptyReplyStillAppliesToSortAndMerge(t *testing.T) {
	task := sortingTasks(t, 1)[0]
	m := withProfile(t, map[string]float64{sim.FaultEmptyReply: 1}, 1, task)
	for _, role := range []string{"sort", "merge"} {
		assert.Empty(t, gen(t, m, llmCtx(task, role), task.Question), role)
	}
	assert.Equal(t, 2, m.Injected()[sim.FaultEmptyReply])
}

// Under sim:noisy one sort attempt is wrong about 16% of the time (sort
// errors and empty replies); keeping the best of three attempts by the
// error count, as a Graph of Thoughts pipeline does, is visibly better.
func TestNoisySortingRewardsKeepingTheBestOfSeveralAttempts(t *testing.T) {
	ps, err := sim.Profiles()
	require.NoError(t, err)
	noisy := ps["noisy"]
	assert.InDelta(t, 0.15, noisy.Faults[sim.FaultSortError], 1e-12)
	for name, p := range ps {
		if name != "noisy" {
			assert.Zero(t, p.Faults[sim.FaultSortError], name)
		}
	}
	noisy.Latency = sim.Latency{}
	tasks := sortingTasks(t, 100)
	m, err := sim.NewWithProfile(noisy, sim.WithSeed(1), sim.WithSleeper(noSleep), sim.WithTasks(tasks))
	require.NoError(t, err)
	one, best := 0, 0
	for _, task := range tasks {
		input, _ := verify.LastIntList(task.Question)
		bestErrs := -1
		for attempt := range 3 {
			out := chat(t, m, llmCtx(task, "sort"), task.Question)
			got, ok := verify.LastIntList(out)
			errs := verify.SortingErrors(got, input) // judged against the input: no reference needed
			if !ok {
				errs = len(input) + 1
			}
			if attempt == 0 && errs == 0 {
				one++
			}
			if bestErrs < 0 || errs < bestErrs {
				bestErrs = errs
			}
		}
		if bestErrs == 0 {
			best++
		}
	}
	t.Logf("one attempt: %d/100 sorted; best of three: %d/100", one, best)
	assert.InDelta(t, 84, one, 10, "one attempt")
	assert.GreaterOrEqual(t, best, 97, "best of three")
	assert.Greater(t, best, one+5)
	assert.Positive(t, m.Injected()[sim.FaultSortError])
	assert.Zero(t, m.Injected()[sim.FaultMalformedAction]+m.Injected()[sim.FaultEarlyWrongAnswer], "only faults that apply to sorting")
}
