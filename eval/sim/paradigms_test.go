package sim_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// roleCtx is the context of a call in role by a node of the given kind
// working on task.
func roleCtx(task suite.Task, kind, role string) context.Context {
	return llm.WithCallMeta(context.Background(), llm.CallMeta{Node: kind, Kind: kind, Role: role, TaskID: task.ID})
}

var itemRe = regexp.MustCompile(`(?m)^\d+\. (.+)$`)

func items(text string) []string {
	var out []string
	for _, m := range itemRe.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// proposePrompt and evaluatePrompt follow the layout of the tot node's
// default prompts.
func proposePrompt(question string, k int, path ...string) string {
	p := "Problem: " + question + "\n"
	if len(path) > 0 {
		p += "Steps so far:\n" + strings.Join(path, "\n") + "\n"
	}
	return p + "\nPropose up to " + string(rune('0'+k)) + " different possible next steps, one per numbered line."
}

func evaluatePrompt(question, candidate string, path ...string) string {
	return "Problem: " + question + "\nSteps so far:\n" + strings.Join(path, "\n") + "\nCandidate next step: " + candidate + "\n\nCan this still lead to a correct solution?"
}

// game24 is the Game of 24 task of nums with a Solve24 gold solution; its
// id names the numbers ("g-4-5-6-10").
func game24(t *testing.T, nums ...int) suite.Task {
	t.Helper()
	expr, steps, ok := verify.Solve24Steps(nums)
	require.True(t, ok)
	id := "g"
	for _, n := range nums {
		id += "-" + strconv.Itoa(n)
	}
	return suite.Task{Task: state.Task{ID: id, Question: suite.Game24Question(nums)}, Gold: &suite.Gold{Answer: expr, Reasoning: steps}}
}

var goldThoughts = []string{
	"From what I know, height of A: 130",
	"From what I know, height of B: 100",
	"130 - 100 = 30",
	"Answer: 30",
}

func TestSimProposesTheGoldNextStepAmongDistractors(t *testing.T) {
	task := goldTask("t1")
	m := oracle(t, task)
	for depth, next := range goldThoughts {
		out := gen(t, m, roleCtx(task, "tot", "propose"), proposePrompt(task.Question, 3, goldThoughts[:depth]...))
		got := items(out)
		assert.Len(t, got, 3, "k proposals at depth %d", depth)
		assert.Contains(t, got, next, "the gold next step at depth %d", depth)
		for _, it := range got {
			if it != next {
				assert.NotContains(t, goldThoughts, it, "distractors are off the gold path")
			}
		}
	}
	out := gen(t, m, roleCtx(task, "tot", "propose"), proposePrompt(task.Question, 3, "Answer: 31"))
	for _, it := range items(out) {
		assert.NotContains(t, goldThoughts, it, "an off-gold state gets no gold step")
	}
	assert.Len(t, items(gen(t, m, roleCtx(task, "tot", "propose"), proposePrompt(task.Question, 2))), 2, "k is read from the prompt")
}

func TestSimProposesLegalGame24Moves(t *testing.T) {
	task := game24(t, 4, 5, 6, 10)
	t2 := game24(t, 1, 2, 3, 4)
	m := perfect(t, task, t2)
	out := gen(t, m, roleCtx(task, "tot", "propose"), proposePrompt(task.Question, 8))
	got := items(out)
	require.Len(t, got, 8)
	assert.Contains(t, got, task.Gold.Reasoning[0])
	step := regexp.MustCompile(`^(\S+) [-+*/] (\S+) = \S+ \(left: ([^)]*)\)$`)
	for _, it := range got {
		mm := step.FindStringSubmatch(it)
		require.NotNil(t, mm, "move %q", it)
		assert.Len(t, strings.Fields(mm[3]), 3, "two of four numbers become one: %q", it)
	}
	out = gen(t, m, roleCtx(task, "tot", "propose"), proposePrompt(task.Question, 8, task.Gold.Reasoning...))
	assert.Equal(t, []string{"Answer: " + task.Gold.Answer}, items(out), "with one value left the only step is the answer")

	// An off-gold path that ends in 10 proposes the expression it built.
	out = gen(t, m, roleCtx(t2, "tot", "propose"), proposePrompt(t2.Question, 3, "1 + 2 = 3 (left: 3 3 4)", "3 + 3 = 6 (left: 4 6)", "4 + 6 = 10 (left: 10)"))
	got = items(out)
	require.Len(t, got, 1)
	expr, ok := strings.CutPrefix(got[0], "Answer: ")
	require.True(t, ok)
	assert.ErrorIs(t, verify.Verify24([]int{1, 2, 3, 4}, expr), verify.ErrNot24, "uses each number once but makes 10: %s", expr)
}

func TestSimValuesCandidatesByTheGoldSolution(t *testing.T) {
	task := goldTask("t1")
	g := game24(t, 4, 5, 6, 10)
	f := game24(t, 3, 3, 8, 8)
	m := perfect(t, task, g, f)
	verdict := func(task suite.Task, candidate string, path ...string) string {
		out := gen(t, m, roleCtx(task, "tot", "evaluate"), evaluatePrompt(task.Question, candidate, path...))
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	assert.Equal(t, "sure", verdict(task, goldThoughts[0]))
	assert.Equal(t, "sure", verdict(task, goldThoughts[2], goldThoughts[:2]...))
	assert.Equal(t, "impossible", verdict(task, "Answer: 31", goldThoughts[:3]...))
	assert.Equal(t, "impossible", verdict(task, "From what I know, height of A: unknown"))

	assert.Equal(t, "sure", verdict(g, g.Gold.Reasoning[0]))
	assert.Equal(t, "likely", verdict(g, "10 - 4 = 6 (left: 5 6 6)"), "off the gold path but 5 6 6 still make 24")
	assert.Equal(t, "impossible", verdict(g, "4 + 6 = 10 (left: 5 10 10)"), "5 10 10 cannot make 24")
	assert.Equal(t, "impossible", verdict(g, "4 * 5 = 20 (left: 6 10 20)", "5 + 6 = 11 (left: 4 10 11)"), "5 was used already")
	assert.Equal(t, "impossible", verdict(g, "4 * 5 = 21 (left: 6 10 21)"), "miscalculated")
	require.Equal(t, "8 / 3 = 8/3 (left: 8/3 3 8)", f.Gold.Reasoning[0])
	assert.Equal(t, "likely", verdict(f, "8 / 3 = 8/3 (left: 3 8 8/3)"), "the gold state written differently; fractions count")
	assert.Equal(t, "impossible", verdict(f, "8 - 8/3 = 16/3 (left: 3 16/3)", f.Gold.Reasoning[0]))
	assert.Equal(t, "impossible", verdict(g, "5 + 6 = 11 (left: 4 10 11)", "x"), "garbage path")
}

func TestSimDecomposesIntoSubquestionsAndSolvesThemWithEarlierAnswers(t *testing.T) {
	task := goldTask("t1")
	m := oracle(t, task)
	subs := items(gen(t, m, roleCtx(task, "least_to_most", "decompose"), "Question: "+task.Question))
	require.Len(t, subs, 4)
	assert.Equal(t, task.Question, subs[3], "the task itself comes last")
	assert.Equal(t, "What is (the answer to sub-question 1) - (the answer to sub-question 2)?", subs[2])

	solve := func(prompt string) string {
		return gen(t, m, roleCtx(task, "least_to_most", "solve"), "Problem: "+task.Question+"\n"+prompt)
	}
	assert.Contains(t, solve("Sub-question: "+subs[0]), "Answer: 130")
	withEarlier := "Sub-question: " + subs[0] + "\nAnswer: 130\nSub-question: " + subs[1] + "\nAnswer: 100\nSub-question: " + subs[2]
	assert.Contains(t, solve(withEarlier), "Answer: 30")
	assert.Contains(t, solve("Sub-question: "+subs[2]), "Answer: unknown", "without the earlier answers it cannot work it out")
	assert.Contains(t, solve(withEarlier+"\nAnswer: 30\nSub-question: "+task.Question), "Answer: 30")
}

func TestSimJudgesAgainstTheGoldWithoutRevealingIt(t *testing.T) {
	task := goldTask("t1")
	g := game24(t, 4, 5, 6, 10)
	m := perfect(t, task, g)
	judge := func(task suite.Task, proposed string) string {
		return gen(t, m, roleCtx(task, "evaluate", "judge"), "Question: "+task.Question+"\nProposed answer: "+proposed+"\n\nReply with PASS or FAIL.")
	}
	assert.True(t, strings.HasPrefix(judge(task, "30"), "PASS"))
	assert.True(t, strings.HasPrefix(judge(task, "30.0"), "PASS"), "numbers compare by value")
	fail := judge(task, "31")
	assert.True(t, strings.HasPrefix(fail, "FAIL"))
	assert.NotContains(t, fail, "30")
	assert.True(t, strings.HasPrefix(judge(g, "(10 - 6) * 5 + 4"), "PASS"), "any verified expression passes")
	assert.True(t, strings.HasPrefix(judge(g, "4 + 5 + 6 + 10"), "FAIL"))
}

func TestSimReflectsWithALessonFromTheGoldPlan(t *testing.T) {
	task := goldTask("t1")
	m := perfect(t, task)
	out := gen(t, m, roleCtx(task, "reflect", "reflect"), "Task: "+task.Question+"\nYour answer: 31\nEvaluation: wrong\nLesson:")
	assert.True(t, strings.HasPrefix(out, "Lesson: I answered 31"))
	assert.Contains(t, out, `search "height of A", then search "height of B", then calculator "#E1 - #E2"`)
	assert.NotContains(t, out, "30", "the lesson does not give the answer away")
}

func TestSimFaultsApplyToParadigmRolesWhereMeaningful(t *testing.T) {
	task := goldTask("t1")
	withFault := func(t *testing.T, fault string) *sim.Model {
		m, err := sim.NewWithProfile(sim.Profile{Name: "t", Faults: map[string]float64{fault: 1}}, sim.WithSleeper(noSleep), sim.WithTasks([]suite.Task{task}))
		require.NoError(t, err)
		return m
	}
	t.Run("early wrong answer", func(t *testing.T) {
		m := withFault(t, sim.FaultEarlyWrongAnswer)
		got := items(gen(t, m, roleCtx(task, "tot", "propose"), proposePrompt(task.Question, 3)))
		assert.NotContains(t, got, goldThoughts[0], "the proposer jumps to an answer instead")
		assert.Contains(t, got, "Answer: 31")
		assert.True(t, strings.HasSuffix(gen(t, m, roleCtx(task, "tot", "evaluate"), evaluatePrompt(task.Question, goldThoughts[0])), "impossible"), "the evaluator misjudges")
		assert.Contains(t, gen(t, m, roleCtx(task, "least_to_most", "solve"), "Sub-question: "+task.Question), "Answer: 31")
		assert.True(t, strings.HasPrefix(gen(t, m, roleCtx(task, "evaluate", "judge"), "Proposed answer: 30"), "FAIL"))
		before := m.Injected()[sim.FaultEarlyWrongAnswer]
		assert.Len(t, items(gen(t, m, roleCtx(task, "least_to_most", "decompose"), "Question: "+task.Question)), 4)
		assert.Contains(t, gen(t, m, roleCtx(task, "reflect", "reflect"), "Your answer: 31"), "Lesson:")
		assert.Equal(t, before, m.Injected()[sim.FaultEarlyWrongAnswer], "no answer to get wrong when decomposing or reflecting")
	})
	t.Run("empty reply", func(t *testing.T) {
		m := withFault(t, sim.FaultEmptyReply)
		for _, role := range []struct{ kind, role, prompt string }{
			{"tot", "propose", proposePrompt(task.Question, 3)},
			{"tot", "evaluate", evaluatePrompt(task.Question, goldThoughts[0])},
			{"least_to_most", "decompose", "Question: " + task.Question},
			{"least_to_most", "solve", "Sub-question: " + task.Question},
			{"evaluate", "judge", "Proposed answer: 30"},
			{"reflect", "reflect", "Your answer: 31"},
		} {
			resp, err := m.GenerateContent(roleCtx(task, role.kind, role.role), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, role.prompt)})
			require.NoError(t, err)
			assert.Empty(t, resp.Choices[0].Content, role.role)
		}
	})
}

func TestSimPlaysLATSExpansionAsReActAndValuesTrajectories(t *testing.T) {
	task := goldTask("t1")
	m := perfect(t, task)
	q := "Question: " + task.Question + "\n"
	assert.Contains(t, gen(t, m, roleCtx(task, "lats", "expand"), q), "Action: search\nAction Input: height of A")
	assert.Contains(t, gen(t, m, roleCtx(task, "lats", "expand"), q+"Action: search\nAction Input: height of A\nObservation: [search] 130\n"), "Action Input: height of B")

	value := func(trajectory string) string {
		return gen(t, m, roleCtx(task, "lats", "value"), q+trajectory+"\nHow likely is this trajectory to lead to the correct answer?")
	}
	assert.Equal(t, "Score: 5/10", value(""))
	assert.Equal(t, "Score: 6/10", value("Action: search\nAction Input: height of A\nObservation: [search] A is 130 cm\n"))
	assert.Equal(t, "Score: 7/10", value("Observation: [search] 130\nObservation: [search] 100\n"))
	assert.Equal(t, "Score: 2/10", value("Observation: [search] A is 999 cm\n"), "an observation off the gold results")
	assert.Equal(t, "Score: 10/10", value("Observation: [search] 130\nFinal Answer: 30\n"))
	assert.Equal(t, "Score: 1/10", value("Final Answer: 31\n"))

	flip, err := sim.NewWithProfile(sim.Profile{Name: "t", Faults: map[string]float64{sim.FaultEarlyWrongAnswer: 1}}, sim.WithSleeper(noSleep), sim.WithTasks([]suite.Task{task}))
	require.NoError(t, err)
	assert.Equal(t, "Score: 1/10", gen(t, flip, roleCtx(task, "lats", "value"), q+"Final Answer: 30\n"), "a misjudged right answer")
}
