package steps_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/internal/par"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lookupTool answers from a fixed table, optionally after a delay, and
// records its calls.
type lookupTool struct {
	name    string
	answers map[string]string
	delay   map[string]time.Duration
	mu      sync.Mutex
	calls   []string
}

func (l *lookupTool) Name() string        { return l.name }
func (l *lookupTool) Description() string { return "looks a fact up" }
func (l *lookupTool) Call(ctx context.Context, in string) (string, error) {
	l.mu.Lock()
	l.calls = append(l.calls, in)
	l.mu.Unlock()
	if d := l.delay[in]; d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if out, ok := l.answers[in]; ok {
		return out, nil
	}
	return "", fmt.Errorf("%w: nothing known about %q", tools.ErrBadInput, in)
}

func (l *lookupTool) Calls() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

type panicTool struct{}

func (panicTool) Name() string                                 { return "explode" }
func (panicTool) Description() string                          { return "panics" }
func (panicTool) Call(context.Context, string) (string, error) { panic("boom") }

func years() *lookupTool {
	return &lookupTool{name: "lookup", answers: map[string]string{
		"Clyde Tombaugh born": "1906", "Pluto discovered": "1930", "Uranus discovered": "1781", "Neptune discovered": "1846",
	}}
}

func newRegistry(t *testing.T, ts ...tools.Tool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(append([]tools.Tool{calc.New()}, ts...))
	require.NoError(t, err)
	return reg
}

func newExecute(t *testing.T, env nodekind.Env, settings map[string]any) nodekind.Node {
	t.Helper()
	built, err := steps.NewExecute(env, nodekind.Spec{ID: "execute", Type: "execute", Settings: settings})
	require.NoError(t, err)
	assert.Empty(t, built.Routes, "execute only takes its default edge")
	return built.Node
}

func pending(ss ...plan.Step) []plan.Step {
	for i := range ss {
		if ss[i].Status == "" {
			ss[i].Status = plan.StatusPending
		}
	}
	return ss
}

func run(t *testing.T, node nodekind.Node, st *state.State) *trace.Recorder {
	t.Helper()
	rec := &trace.Recorder{}
	_, err := node.Run(trace.WithTracer(context.Background(), trace.New("r", rec)), st)
	require.NoError(t, err)
	return rec
}

type stepOutcome struct{ ID, Status, Result string }

func outcomes(steps []plan.Step) []stepOutcome {
	out := make([]stepOutcome, len(steps))
	for i, s := range steps {
		out[i] = stepOutcome{s.ID, s.Status, s.Result}
	}
	return out
}

func TestReWOOSubstitutesEarlierResultsIntoInputs(t *testing.T) {
	for _, strategy := range []string{steps.StrategyReWOO, steps.StrategyParallel} {
		t.Run(strategy, func(t *testing.T) {
			look := years()
			node := newExecute(t, nodekind.Env{Tools: newRegistry(t, look)}, map[string]any{"strategy": strategy})
			st := hookedState(state.Task{Question: "How old was Clyde Tombaugh when he discovered Pluto?"})
			st.Plan = pending(
				plan.Step{ID: "1", Description: "birth", Tool: "lookup", Input: "Clyde Tombaugh born"},
				plan.Step{ID: "2", Description: "discovery", Tool: "lookup", Input: "Pluto discovered"},
				plan.Step{ID: "3", Description: "age", Tool: "Calculator", Input: "#E2 - #E1", DependsOn: []string{"1", "2"}},
			)
			rec := run(t, node, st)
			assert.Equal(t, []stepOutcome{{"1", "done", "1906"}, {"2", "done", "1930"}, {"3", "done", "24"}}, outcomes(st.Plan))
			assert.Equal(t, "#E2 - #E1", st.Plan[2].Input, "the plan keeps the references as written")
			events := rec.OfKind(trace.KindStep)
			require.Len(t, events, 3)
			assert.Equal(t, "1930 - 1906", events[2].Data["input"], "the step event shows the substituted input")
			assert.Equal(t, "done", events[2].Data["status"])
			assert.Equal(t, "24", events[2].Data["result"])
			u := st.Usage.Snapshot()
			assert.Equal(t, 3, u.ToolCalls)
			assert.Equal(t, 0, u.ModelCalls, "no model call per step")
		})
	}
}

func TestFailedStepsSkipTheirDependantsWithTheReason(t *testing.T) {
	for _, strategy := range []string{steps.StrategyReWOO, steps.StrategyParallel} {
		t.Run(strategy, func(t *testing.T) {
			look := years()
			node := newExecute(t, nodekind.Env{Tools: newRegistry(t, look)}, map[string]any{"strategy": strategy})
			st := hookedState(state.Task{Question: "q"})
			st.Plan = pending(
				plan.Step{ID: "1", Description: "unknown fact", Tool: "lookup", Input: "Vulcan discovered"},
				plan.Step{ID: "2", Description: "uses 1", Tool: "calculator", Input: "#E1 + 1"},
				plan.Step{ID: "3", Description: "after 2", Tool: "lookup", Input: "Uranus discovered", DependsOn: []string{"2"}},
				plan.Step{ID: "4", Description: "independent", Tool: "lookup", Input: "Neptune discovered"},
			)
			rec := run(t, node, st)
			assert.Equal(t, []stepOutcome{{"1", "failed", ""}, {"2", "skipped", ""}, {"3", "skipped", ""}, {"4", "done", "1846"}}, outcomes(st.Plan))
			assert.Contains(t, st.Plan[0].Error, "nothing known about")
			assert.Equal(t, `references #E1 of step 1, which failed: tool error: bad tool input: nothing known about "Vulcan discovered"`, st.Plan[1].Error)
			assert.Contains(t, st.Plan[2].Error, "depends on step 2, which skipped")
			assert.ElementsMatch(t, []string{"Vulcan discovered", "Neptune discovered"}, look.Calls(), "skipped steps never call their tool")
			var ids []any
			for _, e := range rec.OfKind(trace.KindStep) {
				ids = append(ids, e.Data["id"])
			}
			assert.Equal(t, []any{"1", "2", "3", "4"}, ids)
		})
	}
}

func TestStepsThatCannotRunFailWithoutStoppingThePlan(t *testing.T) {
	node := newExecute(t, nodekind.Env{Tools: newRegistry(t, panicTool{}, years())}, map[string]any{"strategy": "rewoo"})
	st := hookedState(state.Task{Question: "q"})
	st.Plan = pending(
		plan.Step{ID: "1", Description: "no tool"},
		plan.Step{ID: "2", Description: "panics", Tool: "explode", Input: "x"},
		plan.Step{ID: "3", Description: "fine", Tool: "lookup", Input: "Uranus discovered"},
	)
	run(t, node, st)
	assert.Equal(t, plan.StatusFailed, st.Plan[0].Status)
	assert.Contains(t, st.Plan[0].Error, "has no tool")
	assert.Equal(t, plan.StatusFailed, st.Plan[1].Status)
	assert.Contains(t, st.Plan[1].Error, "tool panicked")
	assert.Equal(t, plan.StatusDone, st.Plan[2].Status)
}

func TestFinishedStepsAreNotRunAgain(t *testing.T) {
	look := years()
	node := newExecute(t, nodekind.Env{Tools: newRegistry(t, look)}, map[string]any{"strategy": "parallel"})
	st := hookedState(state.Task{Question: "q"})
	st.Plan = []plan.Step{
		{ID: "1", Description: "done before", Tool: "lookup", Input: "Uranus discovered", Status: plan.StatusDone, Result: "1781"},
		{ID: "2", Description: "failed before", Tool: "lookup", Input: "x", Status: plan.StatusFailed, Error: "gone"},
		{ID: "3", Description: "new", Tool: "calculator", Input: "#E1 + 65", Status: plan.StatusPending},
	}
	rec := run(t, node, st)
	assert.Empty(t, look.Calls())
	assert.Equal(t, []stepOutcome{{"1", "done", "1781"}, {"2", "failed", ""}, {"3", "done", "1846"}}, outcomes(st.Plan))
	require.Len(t, rec.OfKind(trace.KindStep), 1, "only the step run in this visit is reported")
}

func TestParallelResultsAndEventsFollowPlanOrderWhateverFinishesFirst(t *testing.T) {
	look := &lookupTool{name: "lookup", answers: map[string]string{}, delay: map[string]time.Duration{}}
	var pl []plan.Step
	for i := 1; i <= 6; i++ {
		in := fmt.Sprintf("q%d", i)
		look.answers[in] = fmt.Sprintf("a%d", i)
		look.delay[in] = time.Duration(7-i) * 5 * time.Millisecond // later steps finish first
		pl = append(pl, plan.Step{ID: fmt.Sprint(i), Description: in, Tool: "lookup", Input: in})
	}
	pl = append(pl, plan.Step{ID: "7", Description: "join", Tool: "calculator", Input: "1", DependsOn: []string{"1", "6"}})
	for round := 0; round < 3; round++ {
		node := newExecute(t, nodekind.Env{Tools: newRegistry(t, look)}, map[string]any{"strategy": "parallel"})
		st := hookedState(state.Task{Question: "q"})
		st.Plan = pending(append([]plan.Step(nil), pl...)...)
		rec := run(t, node, st)
		var ids, results []any
		for _, e := range rec.OfKind(trace.KindStep) {
			ids = append(ids, e.Data["id"])
			results = append(results, e.Data["result"])
		}
		assert.Equal(t, []any{"1", "2", "3", "4", "5", "6", "7"}, ids)
		assert.Equal(t, []any{"a1", "a2", "a3", "a4", "a5", "a6", "1"}, results)
	}
}

// gateTool blocks each call until `want` calls are in flight together (or a
// second has passed), and records the most it saw at once.
type gateTool struct {
	want     int32
	inFlight atomic.Int32
	most     atomic.Int32
}

func (g *gateTool) Name() string        { return "gate" }
func (g *gateTool) Description() string { return "waits for company" }
func (g *gateTool) Call(ctx context.Context, in string) (string, error) {
	n := g.inFlight.Add(1)
	defer g.inFlight.Add(-1)
	for {
		if m := g.most.Load(); n <= m || g.most.CompareAndSwap(m, n) {
			break
		}
	}
	deadline := time.Now().Add(time.Second)
	for g.inFlight.Load() < g.want && g.most.Load() < g.want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return in, nil
}

func TestParallelRespectsMaxConcurrency(t *testing.T) {
	cases := []struct{ steps, limit, want int }{{10, 3, 3}, {4, 8, 4}, {5, 1, 1}}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d steps limit %d", tc.steps, tc.limit), func(t *testing.T) {
			gate := &gateTool{want: int32(tc.want)}
			node := newExecute(t, nodekind.Env{Tools: newRegistry(t, gate)}, map[string]any{"strategy": "parallel", "max_concurrency": tc.limit})
			st := hookedState(state.Task{Question: "q"})
			for i := 1; i <= tc.steps; i++ {
				st.Plan = append(st.Plan, plan.Step{ID: fmt.Sprint(i), Description: "wait", Tool: "gate", Input: fmt.Sprint(i), Status: plan.StatusPending})
			}
			run(t, node, st)
			assert.Equal(t, int32(tc.want), gate.most.Load())
			for _, s := range st.Plan {
				assert.Equal(t, plan.StatusDone, s.Status)
			}
		})
	}
}

func TestParallelRunsDependentChainsInOrder(t *testing.T) {
	look := &lookupTool{name: "lookup", answers: map[string]string{"start": "a", "a": "b", "b": "c", "side": "s"},
		delay: map[string]time.Duration{"side": 20 * time.Millisecond}}
	node := newExecute(t, nodekind.Env{Tools: newRegistry(t, look)}, map[string]any{"strategy": "parallel"})
	st := hookedState(state.Task{Question: "q"})
	st.Plan = pending(
		plan.Step{ID: "3", Description: "third", Tool: "lookup", Input: "#E2"},
		plan.Step{ID: "side", Description: "independent", Tool: "lookup", Input: "side"},
		plan.Step{ID: "2", Description: "second", Tool: "lookup", Input: "#E1"},
		plan.Step{ID: "1", Description: "first", Tool: "lookup", Input: "start"},
	)
	run(t, node, st)
	calls := look.Calls()
	var chain []string
	for _, c := range calls {
		if c != "side" {
			chain = append(chain, c)
		}
	}
	assert.Equal(t, []string{"start", "a", "b"}, chain)
	assert.Equal(t, "c", st.Plan[0].Result)
}

func TestModelWorkerAnswersLLMToolSteps(t *testing.T) {
	m, err := scripted.New(scripted.Script{Replies: []scripted.Reply{{Role: "worker", Contains: "born 1906; found 1930", Text: " 1930 - 1906 \n"}}})
	require.NoError(t, err)
	look := &lookupTool{name: "lookup", answers: map[string]string{"born": "born 1906", "found": "found 1930"}}
	// spy records the plan step id each model call carries.
	spy := &llmtest.Recorder{Model: m, Meta: func(ctx context.Context) any { return llm.CallMetaFrom(ctx).StepID }}
	node := newExecute(t, nodekind.Env{Model: llm.Model{LLM: spy}, Tools: newRegistry(t, look)}, map[string]any{"strategy": "rewoo", "llm_tool": "llm"})
	st := hookedState(state.Task{Question: "q"})
	st.Plan = pending(
		plan.Step{ID: "1", Description: "b", Tool: "lookup", Input: "born"},
		plan.Step{ID: "2", Description: "f", Tool: "lookup", Input: "found"},
		plan.Step{ID: "3", Description: "expression", Tool: "LLM", Input: "#E1; #E2"},
		plan.Step{ID: "4", Description: "age", Tool: "calculator", Input: "#E3"},
	)
	run(t, node, st)
	assert.Equal(t, "1930 - 1906", st.Plan[2].Result)
	assert.Equal(t, "24", st.Plan[3].Result)
	var ids []string
	for _, r := range spy.Requests() {
		ids = append(ids, r.Meta.(string))
	}
	assert.Equal(t, []string{"3"}, ids, "the model is told which step it works for")
	u := st.Usage.Snapshot()
	assert.Equal(t, 1, u.ModelCalls)
	assert.Equal(t, 3, u.ToolCalls)
}

func TestResultsAreTruncatedToTheLimit(t *testing.T) {
	look := &lookupTool{name: "lookup", answers: map[string]string{"long": strings.Repeat("x", 50)}}
	node := newExecute(t, nodekind.Env{Tools: newRegistry(t, look)}, map[string]any{"strategy": "rewoo", "result_limit": 10})
	st := hookedState(state.Task{Question: "q"})
	st.Plan = pending(plan.Step{ID: "1", Description: "d", Tool: "lookup", Input: "long"})
	run(t, node, st)
	assert.Equal(t, strings.Repeat("x", 10)+"…[truncated 40 chars]", st.Plan[0].Result)
}

func TestCancellationStopsTheNodeWithAnError(t *testing.T) {
	look := &lookupTool{name: "lookup", answers: map[string]string{"slow": "x"}, delay: map[string]time.Duration{"slow": time.Minute}}
	node := newExecute(t, nodekind.Env{Tools: newRegistry(t, look)}, map[string]any{"strategy": "parallel"})
	st := hookedState(state.Task{Question: "q"})
	st.Plan = pending(plan.Step{ID: "1", Description: "d", Tool: "lookup", Input: "slow"}, plan.Step{ID: "2", Description: "e", Tool: "lookup", Input: "#E1"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := node.Run(ctx, st)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, plan.StatusPending, st.Plan[1].Status, "nothing runs after cancellation")
}

// fakeAgent plays the per-step ReAct loop: it answers from a table keyed by
// the step task and records what it was given.
type fakeAgent struct {
	mu       sync.Mutex
	inputs   []executor.Input
	stepIDs  []string
	outcomes map[string]executor.Outcome
	err      error
}

func (f *fakeAgent) Run(ctx context.Context, _ *state.State, in executor.Input) (executor.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, in)
	f.stepIDs = append(f.stepIDs, llm.CallMetaFrom(ctx).StepID)
	if f.err != nil {
		return executor.Outcome{}, f.err
	}
	for key, out := range f.outcomes {
		if strings.Contains(in.Task, key) {
			return out, nil
		}
	}
	return executor.Outcome{Reason: "no scripted outcome", Failure: state.FailureBudget}, nil
}

func newReActExecute(t *testing.T, fa *fakeAgent) nodekind.Node {
	t.Helper()
	built, err := steps.NewExecuteWith(func(nodekind.Env, map[string]any) (steps.StepAgent, error) { return fa, nil })(
		nodekind.Env{Tools: newRegistry(t)}, nodekind.Spec{ID: "execute", Type: "execute"})
	require.NoError(t, err)
	return built.Node
}

func TestReActStepsSeeTheTaskTheirStepAndTheirDependenciesResults(t *testing.T) {
	fa := &fakeAgent{outcomes: map[string]executor.Outcome{
		"birth year":     {Answer: "1906", Complete: true},
		"discovery year": {Answer: " 1930\n", Complete: true},
		"Subtract":       {Answer: "24", Complete: true},
	}}
	node := newReActExecute(t, fa)
	st := hookedState(state.Task{Question: "How old was Clyde Tombaugh when he discovered Pluto?"})
	st.Reflections = []string{"check the dates"}
	st.Plan = pending(
		plan.Step{ID: "3", Description: "Subtract the years", Tool: "calculator", Input: "#E2 - #E1", DependsOn: []string{"1", "2"}},
		plan.Step{ID: "1", Description: "Find the birth year"},
		plan.Step{ID: "2", Description: "Find the discovery year", Tool: "search", Input: "Pluto discovered"},
	)
	rec := run(t, node, st)
	assert.Equal(t, []stepOutcome{{"3", "done", "24"}, {"1", "done", "1906"}, {"2", "done", "1930"}}, outcomes(st.Plan))
	require.Len(t, fa.inputs, 3)
	assert.Equal(t, "Find the birth year\nReply with the result of this step only.", fa.inputs[0].Task)
	assert.Equal(t, "Find the discovery year (suggested tool: search, input: Pluto discovered)\nReply with the result of this step only.", fa.inputs[1].Task)
	last := fa.inputs[2]
	assert.Equal(t, "execute", last.NodeID)
	assert.Equal(t, steps.SubRunKind, last.Kind)
	assert.Equal(t, []string{"1", "2", "3"}, fa.stepIDs, "the model is told which step a sub-run executes")
	assert.Contains(t, last.Task, "input: 1930 - 1906", "references are filled in the hint")
	assert.Equal(t, "This is step 3 of a plan for the overall task: How old was Clyde Tombaugh when he discovered Pluto?\n"+
		"Results of the steps it depends on:\n- Step 1 (Find the birth year): 1906\n- Step 2 (Find the discovery year): 1930", last.Context)
	assert.Equal(t, []string{"check the dates"}, last.Reflections)
	assert.False(t, st.Done, "a step's answer is not the run's answer")
	assert.Len(t, rec.OfKind(trace.KindStep), 3)
	var started []string
	for _, e := range rec.OfKind(trace.KindInfo) {
		started = append(started, e.Text)
	}
	assert.Equal(t, []string{"step 1 started: Find the birth year", "step 2 started: Find the discovery year", "step 3 started: Subtract the years"}, started)
}

func TestReActStepThatRunsOutOfBudgetFailsWithItsPartialAnswer(t *testing.T) {
	fa := &fakeAgent{outcomes: map[string]executor.Outcome{
		"hard": {Answer: "maybe 7", Reason: "the iteration budget (8) ran out", Failure: state.FailureBudget},
	}}
	node := newReActExecute(t, fa)
	st := hookedState(state.Task{Question: "q"})
	st.Plan = pending(plan.Step{ID: "1", Description: "hard"}, plan.Step{ID: "2", Description: "next", DependsOn: []string{"1"}})
	run(t, node, st)
	assert.Equal(t, plan.StatusFailed, st.Plan[0].Status)
	assert.Equal(t, "maybe 7", st.Plan[0].Result)
	assert.Equal(t, "the iteration budget (8) ran out (budget)", st.Plan[0].Error)
	assert.Equal(t, plan.StatusSkipped, st.Plan[1].Status)
	assert.Len(t, fa.inputs, 1)
}

func TestReActAgentErrorEndsTheNode(t *testing.T) {
	fa := &fakeAgent{err: fmt.Errorf("%w: HTTP 500", llm.ErrModel)}
	node := newReActExecute(t, fa)
	st := hookedState(state.Task{Question: "q"})
	st.Plan = pending(plan.Step{ID: "1", Description: "a"}, plan.Step{ID: "2", Description: "b"})
	_, err := node.Run(context.Background(), st)
	require.Error(t, err)
	assert.ErrorIs(t, err, llm.ErrModel)
	assert.Len(t, fa.inputs, 1, "no further step starts after an error")
}

func TestExecuteRejectsBadSettings(t *testing.T) {
	reg := newRegistry(t, years())
	cases := []struct {
		name     string
		settings map[string]any
		key      string
	}{
		{"unknown strategy", map[string]any{"strategy": "swarm"}, "strategy"},
		{"negative concurrency", map[string]any{"strategy": "parallel", "max_concurrency": -2}, "max_concurrency"},
		{"bad result limit", map[string]any{"strategy": "rewoo", "result_limit": -5}, "result_limit"},
		{"llm tool with react", map[string]any{"llm_tool": "llm"}, "llm_tool"},
		{"llm tool clashing with a tool", map[string]any{"strategy": "rewoo", "llm_tool": "Lookup"}, "llm_tool"},
		{"react settings with rewoo", map[string]any{"strategy": "rewoo", "react": map[string]any{"max_iterations": 3}}, "react"},
		{"bad react setting", map[string]any{"react": map[string]any{"max_iterations": -1}}, "react.max_iterations"},
		{"unknown react setting", map[string]any{"react": map[string]any{"max_iteration": 3}}, "react.max_iteration"},
		{"unknown setting", map[string]any{"strategi": "react"}, "strategi"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := steps.NewExecute(nodekind.Env{Tools: reg}, nodekind.Spec{ID: "x", Type: "execute", Settings: tc.settings})
			require.Error(t, err)
			var se *config.SettingError
			require.True(t, errors.As(err, &se), "error %v", err)
			assert.Equal(t, tc.key, se.Key)
			assert.ErrorIs(t, err, config.ErrSettings)
		})
	}
}

// panicAgent is a step agent with a bug.
type panicAgent struct{}

func (panicAgent) Run(context.Context, *state.State, executor.Input) (executor.Outcome, error) {
	panic("nil map in the step agent")
}

func TestAPanickingStepEndsTheNodeWithAnError(t *testing.T) {
	built, err := steps.NewExecuteWith(func(nodekind.Env, map[string]any) (steps.StepAgent, error) { return panicAgent{}, nil })(
		nodekind.Env{Tools: newRegistry(t)}, nodekind.Spec{ID: "execute", Type: "execute"})
	require.NoError(t, err)
	st := hookedState(state.Task{Question: "q"})
	st.Plan = pending(plan.Step{ID: "1", Description: "a"}, plan.Step{ID: "2", Description: "b", DependsOn: []string{"1"}})
	_, err = built.Node.Run(context.Background(), st)
	require.ErrorIs(t, err, par.ErrPanic)
	assert.Contains(t, err.Error(), "step 1: worker panicked: nil map in the step agent")
	assert.Equal(t, plan.StatusFailed, st.Plan[0].Status)
	assert.NotContains(t, st.Plan[0].Error, "goroutine", "no stack in the plan")
}

func TestDirectToolStepsCallToolsLikeEveryNode(t *testing.T) {
	look := years()
	node := newExecute(t, nodekind.Env{Tools: newRegistry(t, look)}, map[string]any{"strategy": "parallel"})
	st := hookedState(state.Task{Question: "q"})
	st.Plan = pending(
		plan.Step{ID: "1", Description: "quoted", Tool: "lookup", Input: `"Pluto discovered"`},
		plan.Step{ID: "2", Description: "wrapped", Tool: "LOOKUP", Input: `{"input": "Uranus discovered"}`},
		plan.Step{ID: "3", Description: "unknown", Tool: "almanac", Input: "x"},
	)
	rec := run(t, node, st)
	assert.Equal(t, []stepOutcome{{"1", "done", "1930"}, {"2", "done", "1781"}, {"3", "failed", ""}}, outcomes(st.Plan))
	assert.ElementsMatch(t, []string{"Pluto discovered", "Uranus discovered"}, look.Calls(), "inputs are unwrapped")
	assert.Contains(t, st.Plan[2].Error, `tool error: unknown tool "almanac"; available tools: calculator, lookup`)
	assert.Equal(t, 2, st.Usage.Snapshot().ToolCalls, "an unknown tool is not a call")
	assert.Empty(t, rec.OfKind(trace.KindAction), "the step events report direct calls, in plan order")
}
