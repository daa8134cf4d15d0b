package sim_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func goldTask(id string) suite.Task {
	return suite.Task{Task: state.Task{ID: id, Question: "How much taller is A than B?", Answer: "30"}, Gold: &suite.Gold{
		Steps: []suite.GoldStep{
			{ID: "1", Tool: "search", Input: "height of A", Output: "130"},
			{ID: "2", Tool: "search", Input: "height of B", Output: "100"},
			{ID: "3", Tool: "calculator", Input: "#E1 - #E2", DependsOn: []string{"1", "2"}, Output: "30"},
		},
		Answer: "30",
	}}
}

// evidenceText holds every gold step's result of goldTask, as a prompt
// that shows the lookups and the calculation would.
const evidenceText = "A is 130 m tall and B is 100 m tall; 130 - 100 = 30."

// ctxFor is the context of a call by a node of the given kind (its id too)
// working on task.
func ctxFor(task suite.Task, kind string) context.Context {
	return llm.WithCallMeta(context.Background(), llm.CallMeta{Node: kind, Kind: kind, TaskID: task.ID})
}

func noSleep(context.Context, time.Duration) error { return nil }

// goldTasks returns n gold tasks with the ids t0, t1, ...
func goldTasks(n int) []suite.Task {
	out := make([]suite.Task, n)
	for i := range out {
		out[i] = goldTask(fmt.Sprintf("t%d", i))
	}
	return out
}

// oracle returns a simulator without faults or latency that knows every
// fact and never slips (sim.OracleCapabilities): for tests of a role's
// format rather than of what a paradigm can do.
func oracle(t *testing.T, tasks ...suite.Task) *sim.Model {
	t.Helper()
	m, err := sim.New("perfect", sim.WithSleeper(noSleep), sim.WithTasks(tasks), sim.WithCapabilities(sim.OracleCapabilities()))
	require.NoError(t, err)
	return m
}

// perfect returns a simulator without faults or latency playing tasks.
func perfect(t *testing.T, tasks ...suite.Task) *sim.Model {
	t.Helper()
	m, err := sim.New("perfect", sim.WithSleeper(noSleep), sim.WithTasks(tasks))
	require.NoError(t, err)
	return m
}

func gen(t *testing.T, m llms.Model, ctx context.Context, prompt string, opts ...llms.CallOption) string {
	t.Helper()
	resp, err := m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)}, opts...)
	require.NoError(t, err)
	return resp.Choices[0].Content
}

func TestPerfectSimFollowsTheGoldProgramInEachRole(t *testing.T) {
	task := goldTask("t1")
	m := perfect(t, task)
	q := task.Question

	out := gen(t, m, ctxFor(task, "react"), "Examples...\nObservation: [search] example\nQuestion: "+q+"\n")
	assert.Equal(t, "Thought: I should use search.\nAction: search\nAction Input: height of A", out)
	out = gen(t, m, ctxFor(task, "react"), "Question: "+q+"\nThought: x\nAction: search\nAction Input: height of A\nObservation: [search] 130\nThought: y\nAction: search\nAction Input: height of B\nObservation: [search] 100\n")
	assert.Contains(t, out, "Action Input: 130 - 100")
	out = gen(t, m, ctxFor(task, "react"), "Question: "+q+"\nObservation: [search] 130\nObservation: [search] 100\nObservation 3: [search] 30\n")
	assert.Contains(t, out, "Final Answer: 30")
	out = gen(t, m, ctxFor(task, "react"), "Question: "+q+"\nObservation: [search] 1\nObservation: [search] 2\nObservation 3: [search] 30\n")
	assert.NotContains(t, out, "Final Answer: 30", "observations that lack the looked-up facts do not support the answer")

	var plan struct {
		Steps []plan.Step `json:"steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(gen(t, m, ctxFor(task, "planner"), q)), &plan))
	require.Len(t, plan.Steps, 3)
	assert.Equal(t, "#E1 - #E2", plan.Steps[2].Input)
	assert.Equal(t, []string{"1", "2"}, plan.Steps[2].DependsOn)

	assert.JSONEq(t, `{"action":"finish","answer":"30"}`, gen(t, m, ctxFor(task, "replanner"), q+"\nstep 3 done: 30"))
	assert.JSONEq(t, `{"action":"finish","answer":"unknown"}`, gen(t, m, ctxFor(task, "replanner"), q+"\nstep 3 failed"),
		"evidence-bound roles do not recite the gold answer")
	assert.Contains(t, gen(t, m, ctxFor(task, "cot"), q+"\n"+evidenceText), "Answer: 30")
	assert.NotContains(t, gen(t, m, ctxFor(task, "cot"), q), "Answer: 30", "without the lookups' results it answers from memory, and knows nothing")

	stepCtx := llm.WithStep(ctxFor(task, "react"), "2")
	assert.Contains(t, gen(t, m, stepCtx, "Step: find B\n"), "Action Input: height of B")
	assert.Contains(t, gen(t, m, stepCtx, "Step: find B\nObservation: [search] 100\n"), "Final Answer: 100")
}

func TestSimUsesNativeToolCallsWhenToolsAreOffered(t *testing.T) {
	m := perfect(t, goldTask("t"))
	tool := llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: "search", Parameters: map[string]any{
		"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}, "required": []string{"query"}}}}
	resp, err := m.GenerateContent(ctxFor(goldTask("t"), "react"), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "q")}, llms.WithTools([]llms.Tool{tool}))
	require.NoError(t, err)
	require.Len(t, resp.Choices[0].ToolCalls, 1)
	assert.Equal(t, "search", resp.Choices[0].ToolCalls[0].FunctionCall.Name)
	assert.JSONEq(t, `{"query":"height of A"}`, resp.Choices[0].ToolCalls[0].FunctionCall.Arguments)
}

func TestFaultsAreInjectedAtTheirSeededRates(t *testing.T) {
	for _, fault := range sim.FaultKinds() {
		t.Run(fault, func(t *testing.T) {
			const n = 2000
			tasks := goldTasks(n)
			p := sim.Profile{Name: "t", Faults: map[string]float64{fault: 0.2}}
			m, err := sim.NewWithProfile(p, sim.WithSeed(7), sim.WithSleeper(noSleep), sim.WithTasks(tasks))
			require.NoError(t, err)
			httpErrs := 0
			for _, task := range tasks {
				ctx := ctxFor(task, "react")
				if fault == sim.FaultSortError { // only a sort or merge role sorts
					ctx = llm.WithCallMeta(context.Background(), llm.CallMeta{Node: "sort", Kind: "llm", Role: "sort", TaskID: task.ID})
				}
				_, err := m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Question: "+task.Question+"\nObservation: [search] 130\nSort [3, 1, 2]")})
				if err != nil {
					httpErrs++
					class, _ := middleware.Classify(err)
					assert.Equal(t, middleware.Retryable, class)
				}
			}
			got := float64(m.Injected()[fault]) / n
			assert.InDelta(t, 0.2, got, 0.03, "rate of %s", fault)
			if fault == sim.FaultHTTP429 || fault == sim.FaultHTTP500 {
				assert.Equal(t, m.Injected()[fault], httpErrs)
			}
		})
	}
}

func TestSameSeedSameFaults(t *testing.T) {
	tasks := goldTasks(500)
	run := func(seed uint64) map[string]int {
		m, err := sim.New("noisy", sim.WithSeed(seed), sim.WithSleeper(noSleep), sim.WithTasks(tasks))
		require.NoError(t, err)
		for _, task := range tasks {
			_, _ = m.GenerateContent(ctxFor(task, "react"), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, task.Question)})
		}
		return m.Injected()
	}
	assert.Equal(t, run(3), run(3))
	assert.NotEqual(t, run(3), run(4))
}

func TestSimRefusesTasksWithoutGold(t *testing.T) {
	plain := suite.Task{Task: state.Task{ID: "plain", Question: "q"}}
	m, err := sim.New("", sim.WithTasks([]suite.Task{plain, goldTask("gold")}))
	require.NoError(t, err)
	for _, ctx := range []context.Context{
		ctxFor(plain, "cot"),             // given, without a gold solution
		ctxFor(goldTask("other"), "cot"), // not given
		context.Background(),             // no call metadata
		llm.WithCallMeta(context.Background(), llm.CallMeta{Kind: "cot"}), // no task id
	} {
		_, err = m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "q")})
		assert.ErrorIs(t, err, sim.ErrNoGold)
	}
	assert.Contains(t, gen(t, m, ctxFor(goldTask("gold"), "cot"), "q\n"+evidenceText), "Answer: 30", "the task of the call's id is played")
	_, err = sim.New("nope")
	assert.ErrorIs(t, err, sim.ErrUnknownProfile)
}

func TestAnUnknownProfileSuggestsTheNearestFirst(t *testing.T) {
	_, err := sim.New("noisey")
	require.ErrorIs(t, err, sim.ErrUnknownProfile)
	assert.EqualError(t, err, `sim: unknown profile "noisey" (did you mean "noisy"? profiles: `+strings.Join(sim.ProfileNames(), ", ")+`)`)
	_, err = sim.New("nosuch")
	require.ErrorIs(t, err, sim.ErrUnknownProfile)
	assert.NotContains(t, err.Error(), "did you mean", "no suggestion when none is near")
}

func TestLatencyModelSleepsBasePlusTokens(t *testing.T) {
	var slept time.Duration
	p := sim.Profile{Name: "t", Latency: sim.Latency{Base: 50 * time.Millisecond, PerPromptToken: time.Millisecond}}
	m, err := sim.NewWithProfile(p, sim.WithTasks([]suite.Task{goldTask("t")}),
		sim.WithSleeper(func(_ context.Context, d time.Duration) error { slept = d; return nil }))
	require.NoError(t, err)
	gen(t, m, ctxFor(goldTask("t"), "cot"), string(make([]byte, 400)))
	assert.Equal(t, 50*time.Millisecond+100*time.Millisecond+0, slept.Truncate(time.Millisecond))
}

// builtinTools lists every built-in tool with its default settings, as a
// planning prompt does.
func builtinTools(t *testing.T) *tools.Registry {
	t.Helper()
	var all []tools.Tool
	for _, name := range builtin.Names() {
		ts, err := builtin.Factory{}.Tools(context.Background(), config.Tool{Name: name}, "")
		if errors.Is(err, builtin.ErrMissingSetting) {
			continue // files, sql, mcp: not in a planning prompt without a pipeline's settings
		}
		require.NoError(t, err, name)
		all = append(all, ts...)
	}
	reg, err := tools.NewRegistry(all)
	require.NoError(t, err)
	return reg
}

func TestSimPlansWorkerStepsWhenOfferedAModelWorker(t *testing.T) {
	task := goldTask("t1")
	m := perfect(t, task)
	reg := builtinTools(t)
	// The planner's tool list with the executor's real model worker.
	prompt := "Task: " + task.Question + "\n\nTools:\n" + tools.PromptList(reg, steps.LLMToolInfo("llm"))
	var plan struct {
		Steps []plan.Step `json:"steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(gen(t, m, ctxFor(task, "planner"), prompt)), &plan))
	ids := []string{}
	for _, s := range plan.Steps {
		ids = append(ids, s.ID)
	}
	assert.Equal(t, []string{"1", "1_v", "2", "2_v", "3"}, ids)
	assert.Equal(t, "llm", plan.Steps[1].Tool)
	assert.Equal(t, "#E1_v - #E2_v", plan.Steps[4].Input)
	assert.Equal(t, []string{"1_v", "2_v"}, plan.Steps[4].DependsOn)

	// Without the worker no real tool is taken for one.
	prompt = "Task: " + task.Question + "\n\nTools:\n" + tools.PromptList(reg)
	plan.Steps = nil
	require.NoError(t, json.Unmarshal([]byte(gen(t, m, ctxFor(task, "planner"), prompt)), &plan))
	require.Len(t, plan.Steps, 3)
	assert.Equal(t, "#E1 - #E2", plan.Steps[2].Input)

	worker := func(stepID, text string) string {
		ctx := llm.WithStep(llm.WithCallMeta(context.Background(), llm.CallMeta{Node: "work", Kind: "execute", Role: "worker", TaskID: task.ID}), stepID)
		return gen(t, m, ctx, text)
	}
	assert.Equal(t, "130", worker("1_v", "From this text: A is 130 m tall."))
	assert.Equal(t, "unknown", worker("1_v", "From this text: nothing useful."))
}

func TestAStreamedReplyIsWrittenAtThePerTokenRateWithinTheSameLatency(t *testing.T) {
	var sleeps []time.Duration
	p := sim.Profile{Name: "t", Latency: sim.Latency{Base: 50 * time.Millisecond, PerCompletionToken: 500 * time.Microsecond}}
	m, err := sim.NewWithProfile(p, sim.WithTasks([]suite.Task{goldTask("t")}),
		sim.WithSleeper(func(_ context.Context, d time.Duration) error { sleeps = append(sleeps, d); return nil }))
	require.NoError(t, err)
	plain := gen(t, m, ctxFor(goldTask("t"), "cot"), "Question: q\n"+evidenceText)
	var total time.Duration
	for _, d := range sleeps {
		total += d
	}
	sleeps = nil
	var chunks []string
	streamed := gen(t, m, ctxFor(goldTask("t"), "cot"), "Question: q\n"+evidenceText, llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
		chunks = append(chunks, string(c))
		return nil
	}))
	require.Equal(t, plain, streamed)
	require.Greater(t, len(chunks), 1, "the reply comes in parts")
	assert.Equal(t, streamed, strings.Join(chunks, ""), "the parts spell the reply, in order")
	var streamedTotal time.Duration
	for _, d := range sleeps {
		streamedTotal += d
	}
	assert.InDelta(t, float64(total), float64(streamedTotal), float64(len(sleeps)), "the same latency in all")
	assert.Len(t, sleeps, len(chunks)+1, "a wait before the first token, then one per group of tokens")
}

// The sim summarizes a block (compaction "summarize") into one line per
// tool result, merging the summary before, and counts those lines as
// progress once they stand in for the steps they replaced.
func TestSimSummarizesStepsAndCountsThemAsDone(t *testing.T) {
	task := goldTask("t1")
	m := perfect(t, task)
	q := task.Question
	ctx := llm.WithCallMeta(context.Background(), llm.CallMeta{Node: "act", Kind: "react", Role: "summarize", TaskID: task.ID})
	first := gen(t, m, ctx, "Task: "+q+"\n\nSteps to summarize:\n[step 1]\nThought: x\nAction: search\nAction Input: height of A\nObservation: [search] A is 130 m tall.\n[step 2]\nAction: nothing\nObservation: Error: there is no tool named nothing\n")
	assert.Equal(t, "- result 1 (search): A is 130 m tall.", first)
	second := gen(t, m, ctx, "Task: "+q+"\n\nSummary of the steps before these:\n"+first+"\n\nSteps to summarize:\n[step 3]\nThought: y\nAction: search\nAction Input: height of B\nObservation: [search] B is 100 m tall.\n")
	assert.Equal(t, "- result 1 (search): A is 130 m tall.\n- result 2 (search): B is 100 m tall.", second)

	// The ReAct prompt after the compaction shows the summary after the
	// task and no observation: the next step is the third.
	out := gen(t, m, ctxFor(task, "react"), "Task: "+q+"\n\nSummary of steps 1-3 (no longer shown in full):\n"+second+"\n")
	assert.Equal(t, "Thought: I should use calculator.\nAction: calculator\nAction Input: 130 - 100", out)
}
