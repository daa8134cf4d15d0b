package sim_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func lookupTask(id string, memory *float64) suite.Task {
	return suite.Task{Task: state.Task{ID: id, Question: "Who found the comet?", Answer: "Edmond Halley"}, Gold: &suite.Gold{
		Steps:  []suite.GoldStep{{ID: "1", Tool: "search", Input: "comet found by", Output: "Edmond Halley"}},
		Answer: "Edmond Halley", Memory: memory,
	}}
}

// arithmeticTask is a word problem of n calculator steps, each adding 1.
func arithmeticTask(id string, n int) suite.Task {
	g := &suite.Gold{}
	prev := "10"
	for i := 1; i <= n; i++ {
		in := prev + " + 1"
		if i > 1 {
			in = fmt.Sprintf("#E%d + 1", i-1)
		}
		out := fmt.Sprint(10 + i)
		g.Steps = append(g.Steps, suite.GoldStep{ID: fmt.Sprint(i), Tool: "calculator", Input: in, Output: out})
		prev = out
	}
	g.Answer = prev
	return suite.Task{Task: state.Task{ID: id, Question: "Ten apples, and one more at each of the steps. How many?", Answer: prev}, Gold: g}
}

func answerLine(out string) string {
	i := strings.LastIndex(out, "Answer: ")
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(out[i+len("Answer: "):])
}

func TestCapabilitiesCoverEveryTaskType(t *testing.T) {
	caps, err := sim.Capabilities()
	require.NoError(t, err)
	for _, typ := range suite.GoldTypes() {
		c, ok := caps[typ]
		require.True(t, ok, typ)
		assert.Equal(t, typ, c.Type)
		assert.NotEmpty(t, c.Description, typ)
		for _, v := range []float64{c.Memory, c.Slip, c.ReasonedSlip} {
			assert.True(t, v >= 0 && v <= 1, "%s: %v", typ, v)
		}
	}
	assert.Zero(t, caps[suite.GoldLookup].Memory, "looked-up facts are not known by default")
	assert.Zero(t, caps[suite.GoldMultihop].Memory)
	assert.Less(t, caps[suite.GoldArithmetic].ReasonedSlip, caps[suite.GoldArithmetic].Slip, "reasoning step by step slips less")
}

func TestTaskTypeIsDeclaredOrInferredFromTheSteps(t *testing.T) {
	assert.Equal(t, suite.GoldLookup, sim.TaskType(lookupTask("l", nil).Gold))
	assert.Equal(t, suite.GoldArithmetic, sim.TaskType(arithmeticTask("a", 2).Gold))
	assert.Equal(t, suite.GoldMultihop, sim.TaskType(goldTask("m").Gold))
	assert.Equal(t, suite.GoldKnowledge, sim.TaskType(&suite.Gold{Answer: "Paris"}))
	assert.Equal(t, suite.GoldPuzzle, sim.TaskType(game24(t, 4, 5, 6, 10).Gold), "a Game of 24 derivation is a puzzle")
	assert.Equal(t, suite.GoldKnowledge, sim.TaskType(&suite.Gold{Answer: "x", Type: suite.GoldKnowledge, Steps: goldTask("m").Gold.Steps}), "a declared type wins")
}

// A lookup is answered right only from its evidence or from memory; a
// reply from no memory is a plausible wrong answer that varies between
// samples.
func TestALookupNeedsEvidenceOrMemory(t *testing.T) {
	unknown := lookupTask("unknown", nil)
	one := 1.0
	known := lookupTask("known", &one)
	m := perfect(t, unknown, known, goldTask("other"), arithmeticTask("other2", 1))
	q := unknown.Question

	seen := map[string]bool{}
	for range 10 {
		a := answerLine(gen(t, m, ctxFor(unknown, "cot"), "Question: "+q))
		assert.NotEqual(t, "Edmond Halley", a)
		assert.NotEmpty(t, a)
		seen[a] = true
	}
	assert.Greater(t, len(seen), 1, "wrong answers vary between samples: %v", seen)
	assert.False(t, m.Knows(unknown))

	assert.Equal(t, "Edmond Halley", answerLine(gen(t, m, ctxFor(unknown, "cot"), "Question: "+q+"\nContext: the comet was found by EDMOND  halley.")),
		"the evidence in the prompt, whatever its case and spacing")
	assert.Equal(t, "Edmond Halley", answerLine(gen(t, m, ctxFor(known, "cot"), "Question: "+q)), "a memory prior of 1 knows it")
	assert.True(t, m.Knows(known))
	assert.Contains(t, gen(t, m, ctxFor(unknown, "react"), "Question: "+q+"\nObservation: [search] The comet was found by Edmond Halley.\n"),
		"Final Answer: Edmond Halley", "ReAct sees the observation")
}

// wrongRate is the share of n samples of the same request whose answer is
// not the gold one.
func wrongRate(t *testing.T, m *sim.Model, task suite.Task, prompt string, n int) float64 {
	t.Helper()
	wrong := 0
	for range n {
		if answerLine(gen(t, m, ctxFor(task, "cot"), prompt)) != task.Gold.Answer {
			wrong++
		}
	}
	return float64(wrong) / float64(n)
}

// Calculator steps done in the head slip at the profile's rate per step,
// drawn per call (so votes over samples help); less when the prompt asks
// to reason step by step; never when the prompt shows the results.
func TestMentalArithmeticSlipsAtTheProfileRate(t *testing.T) {
	caps, err := sim.Capabilities()
	require.NoError(t, err)
	c := caps[suite.GoldArithmetic]
	one, two := arithmeticTask("one", 1), arithmeticTask("two", 2)
	m := perfect(t, one, two)
	const n = 1500
	within := func(p, got float64, what string) {
		tol := 4 * math.Sqrt(p*(1-p)/n) // four standard deviations of a binomial share
		assert.InDelta(t, p, got, tol, what)
	}
	within(c.Slip, wrongRate(t, m, one, "Question: "+one.Question, n), "one step in the head")
	within(1-(1-c.Slip)*(1-c.Slip), wrongRate(t, m, two, "Question: "+two.Question, n), "two steps in the head")
	within(c.ReasonedSlip, wrongRate(t, m, one, "Question: "+one.Question+"\nLet's think step by step.", n), "one step, reasoned")
	assert.Zero(t, wrongRate(t, m, two, "Question: "+two.Question+"\n10 + 1 = 11 and 11 + 1 = 12", 200), "the results are shown")

	again := perfect(t, one, two)
	assert.Equal(t, wrongRate(t, m, one, "Question: "+one.Question+" (again)", 200), wrongRate(t, again, one, "Question: "+one.Question+" (again)", 200),
		"the same seed draws the same slips")
}

// A puzzle is solved in one reply with its memory prior, per call.
func TestAPuzzleIsSolvedInOneReplyOnlyByLuck(t *testing.T) {
	caps, err := sim.Capabilities()
	require.NoError(t, err)
	task := game24(t, 4, 5, 6, 10)
	m := perfect(t, task)
	const n = 800
	got := 1 - wrongRate(t, m, task, "Question: "+task.Question, n)
	p := caps[suite.GoldPuzzle].Memory
	assert.InDelta(t, p, got, 4*math.Sqrt(p*(1-p)/n))
	assert.Equal(t, task.Gold.Answer, answerLine(gen(t, m, ctxFor(task, "cot"), "Question: "+task.Question+"\n"+strings.Join(task.Gold.Reasoning, "\n"))),
		"with the derivation in the prompt the expression follows")
}

// Whether the model knows a task is drawn once per seed and task with the
// type's prior.
func TestKnowledgeIsKnownAtItsPriorOncePerSeedAndTask(t *testing.T) {
	caps, err := sim.Capabilities()
	require.NoError(t, err)
	var tasks []suite.Task
	for i := range 2000 {
		tasks = append(tasks, suite.Task{Task: state.Task{ID: fmt.Sprintf("k%d", i), Question: "What is the capital of France?"}, Gold: &suite.Gold{Answer: "Paris"}})
	}
	m := perfect(t, tasks...)
	again := perfect(t, tasks...)
	other, err := sim.New("perfect", sim.WithSleeper(noSleep), sim.WithTasks(tasks), sim.WithSeed(2))
	require.NoError(t, err)
	known, differ := 0, 0
	for _, task := range tasks {
		if m.Knows(task) {
			known++
		}
		assert.Equal(t, m.Knows(task), again.Knows(task))
		if m.Knows(task) != other.Knows(task) {
			differ++
		}
	}
	p := caps[suite.GoldKnowledge].Memory
	assert.InDelta(t, p, float64(known)/2000, 4*math.Sqrt(p*(1-p)/2000))
	assert.Positive(t, differ, "another seed draws again")
	first := tasks[0]
	want := "Paris"
	if !m.Knows(first) {
		want = answerLine(gen(t, m, ctxFor(first, "cot"), "q"))
		assert.NotEqual(t, "Paris", want)
		return
	}
	for range 5 {
		assert.Equal(t, want, answerLine(gen(t, m, ctxFor(first, "cot"), "q")), "a known task is answered alike by every sample")
	}
}

// The oracle profile knows everything and never slips.
func TestOracleCapabilitiesAnswerEverything(t *testing.T) {
	task := goldTask("t")
	m, err := sim.New("perfect", sim.WithSleeper(noSleep), sim.WithTasks([]suite.Task{task}), sim.WithCapabilities(sim.OracleCapabilities()))
	require.NoError(t, err)
	for range 20 {
		assert.Equal(t, "30", answerLine(gen(t, m, ctxFor(task, "cot"), "q")))
	}
}
