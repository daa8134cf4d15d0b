package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/sim"
	"github.com/planner-engine/planner/plan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func goldTask(id string) *agent.Task {
	return &agent.Task{ID: id, Question: "How much taller is A than B?", Answer: "30", Gold: &agent.Gold{
		Steps: []agent.GoldStep{
			{ID: "1", Tool: "search", Input: "height of A", Output: "130"},
			{ID: "2", Tool: "search", Input: "height of B", Output: "100"},
			{ID: "3", Tool: "calculator", Input: "#E1 - #E2", DependsOn: []string{"1", "2"}, Output: "30"},
		},
		Answer: "30",
	}}
}

func ctxFor(task *agent.Task, kind string) context.Context {
	ctx := agent.WithTask(context.Background(), task)
	return llm.WithCallMeta(ctx, llm.CallMeta{Node: kind, Kind: kind})
}

func noSleep(context.Context, time.Duration) error { return nil }

func gen(t *testing.T, m llms.Model, ctx context.Context, prompt string, opts ...llms.CallOption) string {
	t.Helper()
	resp, err := m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)}, opts...)
	require.NoError(t, err)
	return resp.Choices[0].Content
}

func TestPerfectSimFollowsTheGoldProgramInEachRole(t *testing.T) {
	m, err := sim.New("perfect", sim.WithSleeper(noSleep))
	require.NoError(t, err)
	task := goldTask("t1")
	q := task.Question

	out := gen(t, m, ctxFor(task, "react"), "Examples...\nObservation: [search] example\nQuestion: "+q+"\n")
	assert.Equal(t, "Thought: I should use search.\nAction: search\nAction Input: height of A", out)
	out = gen(t, m, ctxFor(task, "react"), "Question: "+q+"\nThought: x\nAction: search\nAction Input: height of A\nObservation: [search] 130\nThought: y\nAction: search\nAction Input: height of B\nObservation: [search] 100\n")
	assert.Contains(t, out, "Action Input: 130 - 100")
	out = gen(t, m, ctxFor(task, "react"), "Question: "+q+"\nObservation: [search] 1\nObservation: [search] 2\nObservation 3: [search] 30\n")
	assert.Contains(t, out, "Final Answer: 30")

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
	assert.Contains(t, gen(t, m, ctxFor(task, "cot"), q), "Answer: 30")

	stepCtx := llm.WithStep(ctxFor(task, "react"), "2")
	assert.Contains(t, gen(t, m, stepCtx, "Step: find B\n"), "Action Input: height of B")
	assert.Contains(t, gen(t, m, stepCtx, "Step: find B\nObservation: [search] 100\n"), "Final Answer: 100")
}

func TestSimUsesNativeToolCallsWhenToolsAreOffered(t *testing.T) {
	m, err := sim.New("perfect", sim.WithSleeper(noSleep))
	require.NoError(t, err)
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
			p := sim.Profile{Name: "t", Faults: map[string]float64{fault: 0.2}}
			m, err := sim.NewWithProfile(p, sim.WithSeed(7), sim.WithSleeper(noSleep))
			require.NoError(t, err)
			const n = 2000
			httpErrs := 0
			for i := 0; i < n; i++ {
				task := goldTask(fmt.Sprintf("t%d", i))
				_, err := m.GenerateContent(ctxFor(task, "react"), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Question: "+task.Question+"\nObservation: [search] 130\n")})
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
	run := func(seed uint64) map[string]int {
		m, err := sim.New("noisy", sim.WithSeed(seed), sim.WithSleeper(noSleep))
		require.NoError(t, err)
		for i := 0; i < 500; i++ {
			task := goldTask(fmt.Sprintf("t%d", i))
			_, _ = m.GenerateContent(ctxFor(task, "react"), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, task.Question)})
		}
		return m.Injected()
	}
	assert.Equal(t, run(3), run(3))
	assert.NotEqual(t, run(3), run(4))
}

func TestSimRefusesTasksWithoutGold(t *testing.T) {
	m, err := sim.New("")
	require.NoError(t, err)
	ctx := agent.WithTask(context.Background(), &agent.Task{Question: "q"})
	_, err = m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "q")})
	assert.ErrorIs(t, err, sim.ErrNoGold)
	_, err = sim.New("nope")
	assert.ErrorIs(t, err, sim.ErrUnknownProfile)
}

func TestLatencyModelSleepsBasePlusTokens(t *testing.T) {
	var slept time.Duration
	p := sim.Profile{Name: "t", Latency: sim.Latency{Base: 50 * time.Millisecond, PerPromptToken: time.Millisecond}}
	m, err := sim.NewWithProfile(p, sim.WithSleeper(func(_ context.Context, d time.Duration) error { slept = d; return nil }))
	require.NoError(t, err)
	gen(t, m, ctxFor(goldTask("t"), "cot"), string(make([]byte, 400)))
	assert.Equal(t, 50*time.Millisecond+100*time.Millisecond+0, slept.Truncate(time.Millisecond))
}

func TestSimPlansWorkerStepsWhenOfferedAModelWorker(t *testing.T) {
	m, err := sim.New("perfect", sim.WithSleeper(noSleep))
	require.NoError(t, err)
	task := goldTask("t1")
	prompt := "Tools:\n- search: finds pages\n- llm: " + steps.LLMToolDescription + "\n"
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

	worker := func(stepID, text string) string {
		ctx := llm.WithStep(llm.WithCallMeta(agent.WithTask(context.Background(), task), llm.CallMeta{Node: "work", Kind: "execute", Role: "worker"}), stepID)
		return gen(t, m, ctx, text)
	}
	assert.Equal(t, "130", worker("1_v", "From this text: A is 130 m tall."))
	assert.Equal(t, "unknown", worker("1_v", "From this text: nothing useful."))
}
