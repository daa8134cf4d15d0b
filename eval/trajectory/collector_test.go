package trajectory_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/eval/trajectory"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// funcTool is a tool that runs fn.
type funcTool struct {
	name string
	fn   func(ctx context.Context, input string) (string, error)
}

func (f funcTool) Name() string                                        { return f.name }
func (f funcTool) Description() string                                 { return "test tool " + f.name }
func (f funcTool) Call(ctx context.Context, in string) (string, error) { return f.fn(ctx, in) }

func registry(t *testing.T) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry([]tools.Tool{
		funcTool{name: "search", fn: func(_ context.Context, in string) (string, error) { return "found " + in, nil }},
		funcTool{name: "calculator", fn: func(context.Context, string) (string, error) { return "", errors.New("division by zero") }},
	}, tools.WithTimeout(time.Second))
	require.NoError(t, err)
	return reg
}

// TestCollectorReadsTheToolCallEvents makes calls through the one
// tool-call function every node uses (nodekind.CallTool), with a tracer
// whose sink is the Collector: a call that works, one whose tool fails,
// one of an unknown tool, a native call and a call from a nested node.
func TestCollectorReadsTheToolCallEvents(t *testing.T) {
	c := trajectory.NewCollector(trajectory.Options{})
	ctx := trace.WithTracer(context.Background(), trace.New("run", c))
	st := state.NewState(state.Task{Question: "q"})
	reg := registry(t)
	act := llm.CallMeta{Node: "act", Kind: "react"}
	nested := llm.CallMeta{Node: "each/item 2/act", Kind: "react"}

	for _, call := range []struct {
		meta        llm.CallMeta
		name, input string
		opts        nodekind.ToolOptions
	}{
		{act, "Search", "Pluto", nodekind.ToolOptions{Trace: map[string]any{"step": 1}}},
		{act, "calculator", "1/0", nodekind.ToolOptions{Trace: map[string]any{"step": 2}}},
		{act, "google_search", "Pluto", nodekind.ToolOptions{Trace: map[string]any{"step": 3}}},
		{act, "search", `{"query":"Pluto"}`, nodekind.ToolOptions{Trace: map[string]any{"step": 4, "tool_call_id": "call_4_0"}, Verbatim: true}},
		{nested, "search", "Charon", nodekind.ToolOptions{}},
	} {
		_, err := nodekind.CallTool(ctx, st, call.meta, reg, call.name, call.input, call.opts)
		require.NoError(t, err)
	}

	want := []trajectory.Call{
		{Node: "act", Tool: "search", Input: "Pluto", Via: trajectory.ViaAction},
		{Node: "act", Tool: "calculator", Input: "1/0", Via: trajectory.ViaAction},
		{Node: "act", Tool: "google_search", Via: trajectory.ViaUnknownTool},
		{Node: "act", Tool: "search", Input: `{"query":"Pluto"}`, Via: trajectory.ViaAction},
		{Node: "each/item 2/act", Tool: "search", Input: "Charon", Via: trajectory.ViaAction},
	}
	got := c.Trajectory()
	assert.Equal(t, want, got.Tools, "the tool_error guard and the observations add no call")
	assert.Empty(t, got.Plans)

	gold := []suite.GoldStep{{ID: "1", Tool: "search", Input: "pluto"}, {ID: "2", Tool: "search", Input: "Charon"}}
	m := trajectory.Score(got, gold)
	// names: gold search×2; calls search×3, calculator, google_search: 2 shared, 5 calls.
	assert.InDelta(t, 1.0, m.ToolRecall, 1e-12)
	assert.InDelta(t, 0.4, m.ToolPrecision, 1e-12)
	// inputs: "pluto" matches "Pluto" (and the JSON {"query":"Pluto"}), "Charon" the nested call: 2 of 2, 2 of 5.
	assert.InDelta(t, 1.0, m.InputRecall, 1e-12)
	assert.InDelta(t, 0.4, m.InputPrecision, 1e-12)
	assert.InDelta(t, 2.5, m.StepsRatio, 1e-12)
}

// TestCollectorIsSafeForConcurrentEmits makes calls from many goroutines
// at once, as a map's items and native parallel calls do.
func TestCollectorIsSafeForConcurrentEmits(t *testing.T) {
	c := trajectory.NewCollector(trajectory.Options{})
	ctx := trace.WithTracer(context.Background(), trace.New("run", c))
	st := state.NewState(state.Task{Question: "q"})
	reg := registry(t)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := nodekind.CallTool(ctx, st, llm.CallMeta{Node: fmt.Sprintf("item %d/act", i)}, reg, "search", fmt.Sprint(i), nodekind.ToolOptions{})
			assert.NoError(t, err)
		}()
		// Reading while others write must be safe too.
		_ = c.Trajectory()
	}
	wg.Wait()
	tr := c.Trajectory()
	require.Len(t, tr.Tools, 16)
	seen := map[string]bool{}
	for _, call := range tr.Tools {
		seen[call.Input] = true
	}
	assert.Len(t, seen, 16, "each call recorded once")

	var zero trajectory.Collector // the zero value is usable
	zero.Emit(trace.Event{Kind: trace.KindAction, Data: map[string]any{"tool": "search", "input": "x"}})
	assert.Len(t, zero.Trajectory().Tools, 1)
}

// stepEvent builds a step event as executor/steps' scheduler emits it.
func stepEvent(node, strategy string, p plan.Step) trace.Event {
	return trace.Event{Node: node, Kind: trace.KindStep, Text: "step " + p.ID + " " + p.Status,
		Data: map[string]any{"id": p.ID, "description": p.Description, "tool": p.Tool, "input": p.Input,
			"depends_on": p.DependsOn, "status": p.Status, "result": p.Result, "error": p.Error, "strategy": strategy}}
}

// TestCollectorReadsStepsPlansAndCompletionActions feeds the events whose
// emitters need a whole node to drive, built as those emitters build them.
func TestCollectorReadsStepsPlansAndCompletionActions(t *testing.T) {
	planned := []plan.Step{
		{ID: "1", Description: "find it", Tool: "search", Input: "Clyde Tombaugh born"},
		{ID: "1_v", Description: "read the value", Tool: "llm", Input: "value of #E1"},
		{ID: "2", Description: "find the other", Tool: "search", Input: "Pluto discovered Clyde Tombaugh"},
		{ID: "2_v", Description: "read the value", Tool: "llm", Input: "value of #E2"},
		{ID: "3", Description: "subtract", Tool: "calculator", Input: "#E2_v - #E1_v"},
		{ID: "4", Description: "never runs", Tool: "search", Input: "#E3 again", DependsOn: []string{"3"}},
	}
	events := []trace.Event{
		// planner.Planner: Data steps and attempts.
		{Node: "plan", Kind: trace.KindPlan, Text: plan.Format(planned, false), Data: map[string]any{"steps": planned, "attempts": 1}},
		stepEvent("work", "rewoo", plan.Step{ID: "1", Tool: "search", Input: "Clyde Tombaugh born", Status: plan.StatusDone, Result: "1906"}),
		stepEvent("work", "rewoo", plan.Step{ID: "1_v", Tool: "llm", Input: "value of 1906", Status: plan.StatusDone, Result: "1906"}),
		stepEvent("work", "rewoo", plan.Step{ID: "2", Tool: "search", Input: "Pluto discovered Clyde Tombaugh", Status: plan.StatusDone}),
		stepEvent("work", "rewoo", plan.Step{ID: "2_v", Tool: "LLM", Input: "value of 1930", Status: plan.StatusDone}),
		stepEvent("work", "rewoo", plan.Step{ID: "3", Tool: "calculator", Input: "1930 - 1906", Status: plan.StatusFailed, Error: "tool error: boom"}),
		stepEvent("work", "rewoo", plan.Step{ID: "4", Tool: "search", Input: "#E3 again", Status: plan.StatusSkipped, Error: "depends on step 3, which failed"}),
		// a react-strategy step: its sub-run's action events are the calls.
		stepEvent("execute", "react", plan.Step{ID: "1", Tool: "search", Input: "x", Status: plan.StatusDone}),
		// a step without a tool fails without a call.
		stepEvent("work", "parallel", plan.Step{ID: "5", Status: plan.StatusFailed, Error: "step 5 has no tool"}),
		// replanner.Replanner: the whole plan, with its number.
		{Node: "replan", Kind: trace.KindPlan, Data: map[string]any{"steps": []plan.Step{planned[0], {ID: "9", Tool: "search", Input: "#E1 died"}}, "replan": 1}},
		// least_to_most: a plan event of sub-questions, no steps.
		{Node: "decompose", Kind: trace.KindPlan, Text: "1. a\n2. b"},
		// a completion-style ReAct loop: an unknown tool, then a malformed action, each with its observation.
		{Node: "act", Kind: trace.KindGuard, Text: "Invalid action: lookup[Pluto]", Data: map[string]any{"guard": executor.GuardInvalidAction, "step": 3, "action": "Lookup[Pluto]"}},
		{Node: "act", Kind: trace.KindObservation, Text: "Invalid action: lookup[Pluto]", Data: map[string]any{"step": 3, "invalid_action": "Lookup[Pluto]"}},
		{Node: "act", Kind: trace.KindGuard, Text: "Invalid action: i think so", Data: map[string]any{"guard": executor.GuardInvalidAction, "step": 4, "action": "I think so"}},
		// the ReAct loop's repeat guard names a tool and input but is no call.
		{Node: "act", Kind: trace.KindGuard, Data: map[string]any{"guard": "repeat", "step": 5, "tool": "search", "input": "x", "repeats": 1, "first_step": 2}},
	}
	tr := trajectory.Collect(events, trajectory.Options{})
	assert.Equal(t, []trajectory.Call{
		{Node: "work", Tool: "search", Input: "Clyde Tombaugh born", Via: trajectory.ViaStep},
		{Node: "work", Tool: "search", Input: "Pluto discovered Clyde Tombaugh", Via: trajectory.ViaStep},
		{Node: "work", Tool: "calculator", Input: "1930 - 1906", Via: trajectory.ViaStep},
		{Node: "act", Tool: "Lookup", Input: "Pluto", Via: trajectory.ViaInvalidAction},
	}, tr.Tools)

	require.Len(t, tr.Plans, 2, "the decomposition is no plan")
	assert.Equal(t, trajectory.Plan{Node: "plan", Steps: []trajectory.PlanStep{
		{ID: "1", Tool: "search", Input: "Clyde Tombaugh born"},
		{ID: "1_v", Tool: "llm", Input: "value of #E1", DependsOn: []string{"1"}, Worker: true},
		{ID: "2", Tool: "search", Input: "Pluto discovered Clyde Tombaugh"},
		{ID: "2_v", Tool: "llm", Input: "value of #E2", DependsOn: []string{"2"}, Worker: true},
		{ID: "3", Tool: "calculator", Input: "#E2_v - #E1_v", DependsOn: []string{"2_v", "1_v"}},
		{ID: "4", Tool: "search", Input: "#E3 again", DependsOn: []string{"3"}},
	}}, tr.Plans[0], "dependencies are depends_on and #E references")
	assert.Equal(t, 1, tr.Plans[1].Replan)
	assert.Equal(t, "replan", tr.Plans[1].Node)

	// The steps as a JSONL trace holds them: maps, and the replan number a float.
	decoded := []trace.Event{{Node: "plan", Kind: trace.KindPlan, Data: map[string]any{"steps": []any{
		map[string]any{"id": "1", "tool": "search", "input": "a"},
		map[string]any{"id": "2", "tool": "calculator", "input": "#E1 * 2", "depends_on": []any{"1"}},
	}, "replan": float64(2)}}}
	got := trajectory.Collect(decoded, trajectory.Options{})
	require.Len(t, got.Plans, 1)
	assert.Equal(t, 2, got.Plans[0].Replan)
	assert.Equal(t, []string{"1"}, got.Plans[0].Steps[1].DependsOn)

	// Steps that cannot be read are no plan.
	bad := trajectory.Collect([]trace.Event{{Kind: trace.KindPlan, Data: map[string]any{"steps": "1. search"}}}, trajectory.Options{})
	assert.Empty(t, bad.Plans)
}

func TestCollectorWorkerTools(t *testing.T) {
	events := []trace.Event{
		stepEvent("work", "rewoo", plan.Step{ID: "1", Tool: "llm", Input: "x", Status: plan.StatusDone}),
		stepEvent("work", "rewoo", plan.Step{ID: "2", Tool: "reader", Input: "x", Status: plan.StatusDone}),
	}
	tools := func(o trajectory.Options) []string {
		var out []string
		for _, c := range trajectory.Collect(events, o).Tools {
			out = append(out, c.Tool)
		}
		return out
	}
	assert.Equal(t, []string{"reader"}, tools(trajectory.Options{}), "llm is the default worker")
	assert.Equal(t, []string{"llm"}, tools(trajectory.Options{WorkerTools: []string{"Reader"}}))
	assert.Equal(t, []string{"llm", "reader"}, tools(trajectory.Options{WorkerTools: []string{}}), "an empty list names no worker")
}

// TestTrajectoryIsACopy: what Trajectory returns does not change when the
// run goes on, nor when the caller edits it.
func TestTrajectoryIsACopy(t *testing.T) {
	c := trajectory.NewCollector(trajectory.Options{})
	c.Emit(trace.Event{Kind: trace.KindPlan, Data: map[string]any{"steps": []plan.Step{{ID: "1", Tool: "search"}}}})
	c.Emit(trace.Event{Kind: trace.KindAction, Data: map[string]any{"tool": "search", "input": "x"}})
	first := c.Trajectory()
	first.Tools[0].Tool = "edited"
	first.Plans[0].Steps[0].Tool = "edited"
	c.Emit(trace.Event{Kind: trace.KindAction, Text: "calculator: 1+1"})
	again := c.Trajectory()
	require.Len(t, again.Tools, 2)
	assert.Equal(t, "search", again.Tools[0].Tool)
	assert.Equal(t, "search", again.Plans[0].Steps[0].Tool)
	assert.Equal(t, trajectory.Call{Tool: "calculator", Input: "1+1", Via: trajectory.ViaAction}, again.Tools[1], "an action without Data falls back on its text")
}
