package steps_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	root "github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/planner"
	"github.com/planner-engine/planner/replanner"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kinds returns the default node kinds plus the Plan-and-Execute family,
// whichever of them the default registry does not have yet.
func kinds(t *testing.T) *nodekind.Registry {
	t.Helper()
	reg := root.NodeKinds()
	for _, k := range []nodekind.Kind{
		{Name: "planner", Summary: "writes a validated plan", New: planner.New},
		{Name: "execute", Summary: "runs plan steps", New: steps.NewExecute},
		{Name: "replanner", Summary: "finishes or re-plans", New: replanner.New},
		{Name: "joiner", Summary: "LLMCompiler joiner", New: replanner.NewJoiner},
		{Name: "finalizer", Summary: "writes the final answer", New: nodes.NewFinalizer},
		{Name: "solver", Summary: "ReWOO solver", New: nodes.NewSolver},
		{Name: "react", Summary: "ReAct loop", New: executor.NewReAct},
	} {
		if _, err := reg.Lookup(k.Name); err != nil {
			require.NoError(t, reg.Register(k))
		}
	}
	return reg
}

func demoTask(t *testing.T, id string) state.Task {
	t.Helper()
	tasks, err := suite.Demo()
	require.NoError(t, err)
	for _, task := range tasks {
		if task.ID == id {
			return task.Task
		}
	}
	t.Fatalf("demo task %s not found", id)
	return state.Task{}
}

func runPipeline(t *testing.T, cfgPath, scriptPath string, task state.Task) (*pipeline.Result, *trace.Recorder, error) {
	t.Helper()
	cfg, err := config.Load(cfgPath)
	require.NoError(t, err)
	abs, err := filepath.Abs(scriptPath)
	require.NoError(t, err)
	p, err := pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: kinds(t), Models: llm.NewFactory(llm.WithProvider("scripted", scripted.Label, scripted.Build)),
		Tools: builtin.Factory{}, LLM: config.LLM{Provider: "scripted", Script: abs}})
	require.NoError(t, err)
	rec := &trace.Recorder{}
	res, err := p.Run(context.Background(), task, trace.New("run", rec))
	return res, rec, err
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func TestShippedConfigsSolveADemoTaskWithThreeToolSteps(t *testing.T) {
	t.Parallel()
	cases := []struct {
		config, script string
		decisions      int
	}{
		{"plan_execute", "plan_execute_demo", 1},
		{"rewoo", "rewoo_demo", 0},
		{"llmcompiler", "llmcompiler_demo", 2},
	}
	task := demoTask(t, "demo-21")
	for _, tc := range cases {
		t.Run(tc.config, func(t *testing.T) {
			t.Parallel()
			res, rec, err := runPipeline(t, "../../configs/"+tc.config+".yaml", "../../examples/scripts/"+tc.script+".yaml", task)
			require.NoError(t, err)
			st := res.State
			assert.Equal(t, task.Answer, st.Answer)
			assert.True(t, st.Complete, "reason: %s", st.Reason)
			assert.Empty(t, st.Failure)

			require.NotEmpty(t, rec.OfKind(trace.KindPlan), "the plan is traced")
			toolSteps := 0
			for _, e := range rec.OfKind(trace.KindStep) {
				assert.Equal(t, plan.StatusDone, e.Data["status"], "step %v: %v", e.Data["id"], e.Data["error"])
				if e.Data["tool"] != "llm" {
					toolSteps++
				}
			}
			assert.GreaterOrEqual(t, toolSteps, 3)
			assert.GreaterOrEqual(t, st.Usage.Snapshot().ToolCalls, 3)
			assert.Len(t, rec.OfKind(trace.KindDecision), tc.decisions)
			answers := rec.OfKind(trace.KindAnswer)
			require.NotEmpty(t, answers)
			assert.Equal(t, "24", answers[len(answers)-1].Text)
		})
	}
}

// answerOf reports the last answer event's text.
func answerOf(rec *trace.Recorder) string {
	a := rec.OfKind(trace.KindAnswer)
	if len(a) == 0 {
		return ""
	}
	return a[len(a)-1].Text
}

const miniPlanExecute = `name: pe
limits: {max_steps: 30}
tools: [calculator, {name: search, corpus: demo}]
nodes:
  - {id: plan, type: planner, on_failure: route, max_retries: 1}
  - {id: execute, type: execute, strategy: react, react: {max_iterations: 3}}
  - {id: replan, type: replanner, max_replans: %d}
  - {id: finalize, type: finalizer}
edges:
  - {from: START, to: plan}
  - from: plan
    to: {"": execute, failed: finalize}
  - {from: execute, to: replan}
  - from: replan
    to: {continue: execute, finish: finalize}
  - {from: finalize, to: END}
`

func TestPlanExecuteReplanChangesTheRemainingSteps(t *testing.T) {
	t.Parallel()
	script := `replies:
  - node: plan
    text: '{"steps":[{"id":"1","description":"Find the year Uranus was discovered","tool":"search","input":"Uranus discovered"}]}'
  - {node: execute, contains: "Task: Find the year Uranus was discovered", text: "Thought: search\nAction: search\nAction Input: Uranus discovered"}
  - {node: execute, contains: "13 March 1781", text: "Final Answer: 1781"}
  - node: replan
    contains: "result: 1781"
    text: '{"action":"replan","steps":[{"id":"2","description":"Find the year Neptune was discovered","tool":"search","input":"Neptune discovered"},{"id":"3","description":"Subtract 1781 from it","tool":"calculator","depends_on":["1","2"]}]}'
  - {node: execute, contains: "Task: Find the year Neptune was discovered", text: "Action: search\nAction Input: Neptune discovered"}
  - {node: execute, contains: "Observation:", text: "Final Answer: 1846"}
  - {node: execute, contains: "Step 2 (Find the year Neptune was discovered): 1846", text: "Action: calculator\nAction Input: 1846 - 1781"}
  - {node: execute, contains: "Observation: [calculator] 65", text: "Final Answer: 65"}
  - {node: replan, contains: "result: 65", text: '{"action":"finish","answer":"65"}'}
`
	cfg := writeFile(t, "pe.yaml", fmt.Sprintf(miniPlanExecute, 2))
	res, rec, err := runPipeline(t, cfg, writeFile(t, "s.yaml", script), demoTask(t, "demo-22"))
	require.NoError(t, err)
	st := res.State
	assert.Equal(t, "65", st.Answer)
	assert.True(t, st.Complete)
	assert.Equal(t, 1, st.Replans)
	require.Len(t, st.Plan, 3)
	assert.Equal(t, []string{"plan", "execute", "replan", "execute", "replan", "finalize"}, res.Steps)
	decisions := rec.OfKind(trace.KindDecision)
	require.Len(t, decisions, 2)
	assert.Equal(t, "replan", decisions[0].Data["action"])
	assert.Equal(t, "finish", decisions[1].Data["action"])
	assert.Len(t, rec.OfKind(trace.KindPlan), 2, "the first plan and the revised one")
}

func TestBudgetsEndInTheFinalizerWithAnIncompleteAnswer(t *testing.T) {
	t.Parallel()
	replanForever := `{"action":"replan","steps":[{"id":"%d","description":"Look again","tool":"search","input":"Neptune"}]}`
	cases := []struct {
		name        string
		script      string
		failure     string
		reason      string
		wantReplans int
	}{
		{
			name: "re-plan budget",
			script: `replies:
  - {node: plan, text: '{"steps":[{"id":"1","description":"Look","tool":"search","input":"Neptune"}]}'}
  - {node: execute, text: "Final Answer: something about Neptune"}
  - {node: replan, text: '` + fmt.Sprintf(replanForever, 2) + `'}
  - {node: execute, text: "Final Answer: still unsure"}
  - {node: replan, contains: "No more re-planning is possible", text: '` + fmt.Sprintf(replanForever, 3) + `'}
  - {node: finalize, role: finalize, contains: "re-planning budget is spent", text: "Answer: 1846"}
`,
			failure: state.FailureBudget, reason: "re-planning budget is spent (1 re-plan(s))", wantReplans: 1,
		},
		{
			name: "plan retry budget",
			script: `replies:
  - {node: plan, text: '{"steps":[{"id":"1","description":"Look","tool":"telescope"}]}'}
  - {node: plan, contains: "rejected", text: '{"steps":[{"id":"1","description":"Look","tool":"telescope"}]}'}
  - {node: finalize, contains: "no valid plan", text: "Answer: unknown"}
`,
			failure: state.FailurePlan, reason: "unknown tool",
		},
		{
			name: "step iteration budget and unusable re-planner",
			script: `replies:
  - {node: plan, text: '{"steps":[{"id":"1","description":"Look","tool":"search","input":"Neptune"}]}'}
  - {node: execute, text: "Action: search\nAction Input: Neptune"}
  - {node: execute, text: "Action: search\nAction Input: Neptune discovered"}
  - {node: execute, text: "Action: search\nAction Input: Neptune planet"}
  - {node: execute, role: finalize, text: "Final Answer: 1846?"}
  - {node: replan, contains: "failed: ", text: "hmm"}
  - {node: replan, text: "still hmm"}
  - {node: finalize, text: "Answer: 1846"}
`,
			failure: state.FailureParse, reason: "replanner's reply could not be used",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := writeFile(t, "pe.yaml", fmt.Sprintf(miniPlanExecute, 1))
			res, rec, err := runPipeline(t, cfg, writeFile(t, "s.yaml", tc.script), state.Task{Question: "When was Neptune discovered?"})
			require.NoError(t, err, "a spent budget is not a run error")
			st := res.State
			assert.Equal(t, "finalize", res.Steps[len(res.Steps)-1])
			assert.True(t, st.Done)
			assert.False(t, st.Complete)
			assert.NotEmpty(t, st.Answer)
			assert.Equal(t, tc.failure, st.Failure)
			assert.Contains(t, st.Reason, tc.reason)
			assert.Equal(t, tc.wantReplans, st.Replans)
			last := rec.OfKind(trace.KindAnswer)
			require.NotEmpty(t, last)
			assert.Equal(t, false, last[len(last)-1].Data["complete"])
		})
	}
}

func TestReWOOReferenceToAFailedStepIsSkippedAndTheAnswerFlagged(t *testing.T) {
	t.Parallel()
	script := `replies:
  - node: plan
    text: '{"steps":[{"id":"1","description":"Bad arithmetic","tool":"calculator","input":"1930 - - - "},{"id":"2","description":"Use it","tool":"calculator","input":"#E1 + 1"},{"id":"3","description":"Look up","tool":"search","input":"Pluto discovered"}]}'
  - {node: solve, role: solve, contains: "Evidence: none (skipped: references #E1 of step 1, which failed", text: "Answer: 1930"}
`
	res, rec, err := runPipeline(t, "../../configs/rewoo.yaml", writeFile(t, "s.yaml", script), state.Task{Question: "When was Pluto discovered?"})
	require.NoError(t, err)
	st := res.State
	assert.Equal(t, []string{plan.StatusFailed, plan.StatusSkipped, plan.StatusDone}, []string{st.Plan[0].Status, st.Plan[1].Status, st.Plan[2].Status})
	assert.Equal(t, "1930", st.Answer)
	assert.False(t, st.Complete)
	assert.Equal(t, state.FailureTool, st.Failure)
	assert.Equal(t, "1930", answerOf(rec))
	assert.Equal(t, 2, st.Usage.Snapshot().ToolCalls, "the skipped step never calls its tool")
}

func TestInvalidPlanEndsTheRunWithATypedErrorWithoutFailedRoute(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "p.yaml", `name: p
tools: [calculator]
nodes:
  - {id: plan, type: planner, max_retries: 1}
  - {id: work, type: execute, strategy: rewoo}
  - {id: solve, type: solver}
edges:
  - {from: START, to: plan}
  - {from: plan, to: work}
  - {from: work, to: solve}
  - {from: solve, to: END}
`)
	script := writeFile(t, "s.yaml", `replies:
  - {node: plan, text: '{"steps":[{"id":"1","description":"a","tool":"calculator","depends_on":["2"]},{"id":"2","description":"b","tool":"calculator","depends_on":["1"]}]}'}
  - {node: plan, contains: "cycle", text: '{"steps":[{"id":"1","description":"a","tool":"calculator","depends_on":["1"]}]}'}
`)
	res, _, err := runPipeline(t, cfg, script, state.Task{Question: "q"})
	require.Error(t, err)
	assert.ErrorIs(t, err, pipeline.ErrRun)
	assert.ErrorIs(t, err, planner.ErrInvalidPlan)
	assert.ErrorIs(t, err, plan.ErrPlanCycle)
	assert.Equal(t, []string{"plan"}, res.Steps)
}

// TestScriptedCostComparison runs the same demo task through ReAct and the
// three plan-based configs with scripted replies and logs their model calls
// and prompt tokens. The figures describe these scripts (and the approximate
// token meter), not any real model.
func TestScriptedCostComparison(t *testing.T) {
	t.Parallel()
	reactScript := writeFile(t, "react_script.yaml", `replies:
  - {node: act, text: "Thought: I need his birth year.\nAction: search\nAction Input: Clyde Tombaugh born"}
  - {node: act, contains: "born on 4 February 1906", text: "Thought: Born 1906. Now the discovery.\nAction: search\nAction Input: Pluto discovered Clyde Tombaugh"}
  - {node: act, contains: "18 February 1930", text: "Thought: Found 1930, after his birthday.\nAction: calculator\nAction Input: 1930 - 1906"}
  - {node: act, contains: "Observation: [calculator] 24", text: "Thought: He was 24.\nFinal Answer: 24"}
`)
	task := demoTask(t, "demo-21")
	runs := []struct{ name, cfg, script string }{
		{"react", "../../configs/react.yaml", reactScript},
		{"plan_execute", "../../configs/plan_execute.yaml", "../../examples/scripts/plan_execute_demo.yaml"},
		{"rewoo", "../../configs/rewoo.yaml", "../../examples/scripts/rewoo_demo.yaml"},
		{"llmcompiler", "../../configs/llmcompiler.yaml", "../../examples/scripts/llmcompiler_demo.yaml"},
	}
	calls := map[string]int{}
	var table strings.Builder
	fmt.Fprintf(&table, "%-13s %11s %13s %17s %10s\n", "config", "model_calls", "prompt_tokens", "completion_tokens", "tool_calls")
	for _, r := range runs {
		res, _, err := runPipeline(t, r.cfg, r.script, task)
		require.NoError(t, err, r.name)
		require.Equal(t, "24", res.State.Answer, r.name)
		u := res.State.Usage.Snapshot()
		calls[r.name] = u.ModelCalls
		fmt.Fprintf(&table, "%-13s %11d %13d %17d %10d\n", r.name, u.ModelCalls, u.PromptTokens, u.CompletionTokens, u.ToolCalls)
	}
	t.Logf("scripted replies, approximate token meter (demo-21):\n%s", table.String())
	assert.Less(t, calls["rewoo"], calls["plan_execute"], "ReWOO makes no model call per step")
	assert.Less(t, calls["llmcompiler"], calls["plan_execute"])
}
