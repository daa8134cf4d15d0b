package steps_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDoneStepResultsAreKeptInVarsByStepID(t *testing.T) {
	for _, strategy := range []string{steps.StrategyReWOO, steps.StrategyParallel} {
		t.Run(strategy, func(t *testing.T) {
			node := newExecute(t, nodekind.Env{Tools: newRegistry(t, years())}, map[string]any{"strategy": strategy})
			st := hookedState(state.Task{Question: "How old was Clyde Tombaugh when he discovered Pluto?"})
			st.Plan = pending(
				plan.Step{ID: "1", Description: "birth", Tool: "lookup", Input: "Clyde Tombaugh born"},
				plan.Step{ID: "2", Description: "discovery", Tool: "lookup", Input: "Pluto discovered"},
				plan.Step{ID: "age", Description: "age", Tool: "Calculator", Input: "#E2 - #E1", DependsOn: []string{"1", "2"}},
				plan.Step{ID: "E10", Description: "Neptune", Tool: "lookup", Input: "Neptune discovered"},
				plan.Step{ID: "5", Description: "unknown", Tool: "lookup", Input: "Eris discovered"},
			)
			rec := run(t, node, st)
			require.Equal(t, plan.StatusFailed, st.Plan[4].Status)
			assert.Equal(t, map[string]string{"E1": "1906", "E2": "1930", "age": "24", "E10": "1846"}, st.Vars.All(), "done steps only; a failed step sets no var")
			assert.Equal(t, "E1 = 1906\nE2 = 1930\nE10 = 1846\nage = 24\n", st.Vars.Block(0))
			for _, e := range rec.OfKind(trace.KindGuard) {
				assert.NotEqual(t, steps.GuardStepVar, e.Data["guard"])
			}
		})
	}
}

func TestAStepResultTheVarsCannotHoldIsReported(t *testing.T) {
	node := newExecute(t, nodekind.Env{Tools: newRegistry(t, years())}, map[string]any{"strategy": steps.StrategyReWOO})
	st := hookedState(state.Task{Question: "q"})
	st.Plan = pending(plan.Step{ID: "-", Description: "birth", Tool: "lookup", Input: "Clyde Tombaugh born"})
	rec := run(t, node, st)
	assert.Equal(t, plan.StatusDone, st.Plan[0].Status, "the step still counts as done")
	assert.Zero(t, st.Vars.Len())
	var guards []string
	for _, e := range rec.OfKind(trace.KindGuard) {
		if e.Data["guard"] == steps.GuardStepVar {
			guards = append(guards, e.Text)
		}
	}
	assert.Equal(t, []string{`the result of step - is not kept in the vars: step id "-" gives no var name`}, guards)
}

// varsAgent answers each react step and records, for each, the vars it
// saw when it started.
type varsAgent struct {
	answers map[string]string
	seen    []map[string]string
}

func (a *varsAgent) Run(_ context.Context, st *state.State, in executor.Input) (executor.Outcome, error) {
	a.seen = append(a.seen, st.Vars.All())
	for key, answer := range a.answers {
		if len(in.Task) >= len(key) && in.Task[:len(key)] == key {
			return executor.Outcome{Answer: answer, Complete: true}, nil
		}
	}
	return executor.Outcome{Reason: "no answer", Failure: state.FailureBudget}, nil
}

func TestAReActStepSeesTheResultsOfTheStepsBeforeIt(t *testing.T) {
	a := &varsAgent{answers: map[string]string{"Find the birth year": "1906", "Find the discovery year": "1930"}}
	built, err := steps.NewExecuteWith(func(nodekind.Env, map[string]any) (steps.StepAgent, error) { return a, nil })(
		nodekind.Env{Tools: newRegistry(t)}, nodekind.Spec{ID: "execute", Type: "execute"})
	require.NoError(t, err)
	st := hookedState(state.Task{Question: "q"})
	st.Plan = pending(
		plan.Step{ID: "1", Description: "Find the birth year"},
		plan.Step{ID: "2", Description: "Find the discovery year", DependsOn: []string{"1"}},
	)
	run(t, built.Node, st)
	require.Len(t, a.seen, 2)
	assert.Empty(t, a.seen[0])
	assert.Equal(t, map[string]string{"E1": "1906"}, a.seen[1], "step 1's result is a var before step 2 starts")
	assert.Equal(t, map[string]string{"E1": "1906", "E2": "1930"}, st.Vars.All())
}

// A whole Plan-and-Execute pipeline with the scripted model: the planner
// writes three steps, the third step's ReAct sub-run lists the vars with
// the vars tool and sees the first two results, and a last node's prompt
// reads every step's result as {{.Vars.E1}} and so on.
func TestPipelineStepResultsReachToolsAndPromptsAsVars(t *testing.T) {
	cfg := writeFile(t, "p.yaml", `name: vars
tools: [calculator, vars]
nodes:
  - {id: plan, type: planner, output: json}
  - {id: execute, type: execute, strategy: react, react: {max_iterations: 4}}
  - id: answer
    type: direct
    prompt: "Born {{.Vars.E1}}, discovered Pluto {{.Vars.E2}}, aged {{.Vars.E3}}. {{.Question}}"
edges:
  - {from: START, to: plan}
  - {from: plan, to: execute}
  - {from: execute, to: answer}
  - {from: answer, to: END}
`)
	script := writeFile(t, "s.yaml", `strict: true
replies:
  - node: planner
    text: |
      {"steps": [
        {"id": "1", "description": "Recall the year Clyde Tombaugh was born", "depends_on": []},
        {"id": "2", "description": "Recall the year Pluto was discovered", "depends_on": []},
        {"id": "3", "description": "Subtract the birth year from the discovery year", "depends_on": ["1", "2"]}
      ]}
  - node: execute
    contains: "Task: Recall the year Clyde Tombaugh was born"
    text: "Thought: I know this.\nFinal Answer: 1906"
  - node: execute
    contains: "Task: Recall the year Pluto was discovered"
    text: "Thought: I know this.\nFinal Answer: 1930"
  - node: execute
    contains: "Task: Subtract the birth year"
    text: "Thought: The earlier results are in the vars.\nAction: vars\nAction Input: list"
  - node: execute
    contains: "E1 = 1906\nE2 = 1930"
    text: "Thought: Now subtract.\nAction: calculator\nAction Input: 1930 - 1906"
  - node: execute
    contains: "24"
    text: "Thought: Done.\nFinal Answer: 24"
  - node: answer
    contains: "Born 1906, discovered Pluto 1930, aged 24. How old"
    text: "24"
`)
	res, _, err := runPipeline(t, cfg, script, state.Task{Question: "How old was Clyde Tombaugh when he discovered Pluto?"})
	require.NoError(t, err)
	st := res.State
	assert.Equal(t, "24", st.Answer)
	assert.Equal(t, map[string]string{"E1": "1906", "E2": "1930", "E3": "24"}, st.Vars.All())
	for _, s := range st.Plan {
		v, ok := st.Vars.Get(state.StepVar(s.ID))
		assert.True(t, ok, s.ID)
		assert.Equal(t, s.Result, v, "step %s", s.ID)
	}
}
