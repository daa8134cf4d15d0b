package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/temporal"
)

// scriptedReAct writes a ReAct pipeline that may take n model calls and a
// strict script of n replies for it: n-1 calculator steps, each with its
// own input, then the final answer 7. It returns the pipeline's and the
// script's paths.
func scriptedReAct(t testing.TB, n int) (cfg, script string) {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile("../configs/react.yaml")
	require.NoError(t, err)
	yaml := strings.Replace(string(b), "max_iterations: 8", fmt.Sprintf("max_iterations: %d", n+2), 1)
	require.NotEqual(t, string(b), yaml, "configs/react.yaml sets max_iterations: 8")
	cfg = filepath.Join(dir, "react.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(yaml), 0o600))
	var s strings.Builder
	s.WriteString("strict: true\nreplies:\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&s, "  - text: \"Thought: step %d.\\nAction: calculator\\nAction Input: %d+1\"\n", i, i)
	}
	s.WriteString("  - text: \"Thought: done.\\nFinal Answer: 7\"\n")
	script = filepath.Join(dir, "script.yaml")
	require.NoError(t, os.WriteFile(script, []byte(s.String()), 0o600))
	return cfg, script
}

// scriptedTask is the task the scripted ReAct runs answer.
var scriptedTask = state.Task{ID: "seven", Question: "What is 3 + 4?", Answer: "7"}

// fullEngine is an engine with every provider (scripted:FILE among them).
func fullEngine(t testing.TB) *planner.Engine {
	t.Helper()
	eng, err := planner.New(full.Options()...)
	require.NoError(t, err)
	return eng
}

// chain is what runChain saw: the run's executions, and each Advance's
// input and result as JSON bytes (what travels in the history).
type chain struct {
	executions int
	mu         sync.Mutex
	inputs     []int
	outputs    []int
	behind     int
}

func (c *chain) sizes() (in, out []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.inputs...), append([]int(nil), c.outputs...)
}

// runChain runs in as workflow id to its end in test environments, one per
// workflow execution (the test environment does not follow
// continue-as-new), with advance as the Advance activity (acts.Advance
// when nil).
func runChain(t *testing.T, acts *temporal.Activities, advance any, id string, in temporal.RunInput) (temporal.Outcome, *chain) {
	t.Helper()
	c := &chain{}
	for c.executions < 100 {
		e, _ := env(t, acts, advance)
		e.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
		e.SetOnActivityStartedListener(func(_ *activity.Info, _ context.Context, args converter.EncodedValues) {
			var ai temporal.AdvanceInput
			if args.Get(&ai) == nil {
				b, _ := json.Marshal(ai)
				c.mu.Lock()
				c.inputs = append(c.inputs, len(b))
				c.mu.Unlock()
			}
		})
		e.SetOnActivityCompletedListener(func(_ *activity.Info, result converter.EncodedValue, err error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			var app *sdktemporal.ApplicationError
			if errors.As(err, &app) && app.Type() == temporal.BehindError {
				c.behind++
			}
			var out temporal.AdvanceOutput
			if err == nil && result != nil && result.Get(&out) == nil {
				b, _ := json.Marshal(out)
				c.outputs = append(c.outputs, len(b))
			}
		})
		e.ExecuteWorkflow(temporal.WorkflowName, in)
		require.True(t, e.IsWorkflowCompleted())
		c.executions++
		err := e.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		if errors.As(err, &can) {
			in = temporal.RunInput{}
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
			require.NotNil(t, in.Continued)
			continue
		}
		require.NoError(t, err)
		var got temporal.Outcome
		require.NoError(t, e.GetWorkflowResult(&got))
		return got, c
	}
	t.Fatalf("the run did not end in %d executions", c.executions)
	return temporal.Outcome{}, c
}

// TestAdvancesCarryOnlyWhatIsNew: a scripted ReAct run of 1,000 model calls
// (1,999 Advances, in 4 workflow executions). No Advance's input or
// result grows with the run: the inputs carry counts and a digest, the
// results the new entries and events, and the payloads of the whole run
// stay far under 20 MB. (Before, every input carried the whole journal
// and every result every event so far: the history grew with the square
// of the calls, and passed Temporal's 50 MB limit at about 180 calls.)
func TestAdvancesCarryOnlyWhatIsNew(t *testing.T) {
	const n = 1000
	cfg, script := scriptedReAct(t, n)
	got, c := runChain(t, newActivities(t, fullEngine(t)), nil, "flat", temporal.RunInput{Config: cfg, LLM: "scripted:" + script, Task: scriptedTask})
	require.Equal(t, temporal.StatusDone, got.Status, got.Error)
	assert.Equal(t, "7", got.Answer)
	assert.EqualValues(t, n, got.Usage.Counters.ModelCalls)
	assert.Equal(t, 2*n-1, got.Advances, "one Advance per model or tool call")
	ins, outs := c.sizes()
	require.Len(t, outs, got.Advances)
	maxIn, maxOut, total := 0, 0, 0
	for i, b := range ins {
		if i > 0 {
			maxIn = max(maxIn, b)
		}
		total += b
	}
	for _, b := range outs {
		maxOut = max(maxOut, b)
		total += b
	}
	t.Logf("%d calls: %d Advances, inputs up to %d bytes, results up to %d bytes, %d bytes in all", n, got.Advances, maxIn, maxOut, total)
	assert.Less(t, maxIn, 1024, "an input after the first carries no journal")
	assert.Less(t, maxOut, 6*1024, "a result carries only its new entries and events")
	assert.Less(t, total, 20<<20, "the Advances' payloads, the bulk of the history")
	assert.Equal(t, (got.Advances+temporal.DefaultContinueAfter-1)/temporal.DefaultContinueAfter, c.executions, "an execution per DefaultContinueAfter Advances")
}

// TestLongRunContinuesAsNew: with ContinueAfter 5, demo-21's ReAct run
// (7 Advances) continues as new twice, carrying its journal and events:
// the outcome, the usage and the trace are the in-process run's, each
// model call made once, although the second execution starts on a worker
// that never saw the run.
func TestLongRunContinuesAsNew(t *testing.T) {
	eng, modelCalls, tasks := simEngine(t)
	task := tasks["demo-21"]
	want := inProcess(t, eng, "../configs/react.yaml", task)
	inProcessCalls := modelCalls.Load()
	modelCalls.Store(0)

	first, second := newActivities(t, eng), newActivities(t, eng)
	var executions atomic.Int64 // the second worker takes over from the second execution on
	advance := func(ctx context.Context, in temporal.AdvanceInput) (*temporal.AdvanceOutput, error) {
		if in.Seq > 5 {
			executions.Store(2)
			return second.Advance(ctx, in)
		}
		return first.Advance(ctx, in)
	}
	got, c := runChain(t, nil, advance, "continues", temporal.RunInput{Config: "../configs/react.yaml", LLM: "sim", Task: task.Task, ContinueAfter: 3})
	assert.Equal(t, temporal.StatusDone, got.Status)
	assert.Equal(t, want.Answer, got.Answer)
	assert.Equal(t, want.Steps, got.Steps)
	assert.Equal(t, want.Usage.Counters, got.Usage.Counters)
	assert.Equal(t, inProcessCalls, modelCalls.Load(), "each model call made once")
	live := int(want.Usage.Counters.ModelCalls + want.Usage.Counters.ToolCalls)
	assert.Equal(t, live, got.Advances)
	assert.Equal(t, (live+2)/3, c.executions)
	assert.Equal(t, c.executions, got.Executions)
	assert.Equal(t, 1, c.behind, "the second worker asked for the journal once")
	assert.EqualValues(t, 2, executions.Load())
}

// TestRunMovesBetweenWorkers: Advances that alternate between two workers
// (as Temporal hands them to whichever polls first) each find a worker
// that lacks the other's last entries; it says what it holds, gets the
// rest and rebuilds the run, and no model call is made twice.
func TestRunMovesBetweenWorkers(t *testing.T) {
	for _, name := range []string{"react", "plan_execute", "llmcompiler", "cot_sc"} {
		t.Run(name, func(t *testing.T) {
			eng, modelCalls, tasks := simEngine(t)
			task := tasks["demo-21"]
			path := "../configs/" + name + ".yaml"
			want := inProcess(t, eng, path, task)
			inProcessCalls := modelCalls.Load()
			modelCalls.Store(0)
			workers := []*temporal.Activities{newActivities(t, eng), newActivities(t, eng)}
			advance := func(ctx context.Context, in temporal.AdvanceInput) (*temporal.AdvanceOutput, error) {
				return workers[in.Seq%2].Advance(ctx, in)
			}
			got, c := runChain(t, nil, advance, "moves-"+name, temporal.RunInput{Config: path, LLM: "sim", Task: task.Task})
			assert.Equal(t, want.Answer, got.Answer)
			assert.Equal(t, want.Steps, got.Steps)
			assert.Equal(t, want.Usage.Counters, got.Usage.Counters)
			assert.Equal(t, inProcessCalls, modelCalls.Load(), "each model call made once")
			assert.Positive(t, c.behind)
			t.Logf("%s: %d Advances, %d times behind", name, got.Advances, c.behind)
		})
	}
}

// TestScriptedModelStartsEachRunAtItsBeginning: two runs of a
// scripted:FILE model on one worker each play the whole script. (Before,
// the worker's one model kept its place across runs, and the second run
// found the script used up.)
func TestScriptedModelStartsEachRunAtItsBeginning(t *testing.T) {
	cfg, script := scriptedReAct(t, 3)
	acts := newActivities(t, fullEngine(t))
	for _, id := range []string{"first", "second"} {
		got, _ := runChain(t, acts, nil, id, temporal.RunInput{Config: cfg, LLM: "scripted:" + script, Task: scriptedTask})
		assert.Equal(t, temporal.StatusDone, got.Status, "%s: %s", id, got.Error)
		assert.True(t, got.Complete, "%s: %s", id, got.Reason)
		assert.Equal(t, "7", got.Answer, id)
	}
}

// TestTaskRepliesPlayOnWorkers: --llm scripted (no file: each task's own
// replies, as in-process) runs on a worker whose suite has the tasks.
// (Before, the worker refused the spec "scripted".)
func TestTaskRepliesPlayOnWorkers(t *testing.T) {
	replies, err := scripted.ParseReplies([]json.RawMessage{
		json.RawMessage(`"Thought: add them.\nAction: calculator\nAction Input: 3+4"`),
		json.RawMessage(`"Thought: done.\nFinal Answer: 7"`),
	})
	require.NoError(t, err)
	a, err := app.New(app.WithTasks([]suite.Task{{Task: scriptedTask, Replies: replies}}))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, a.Close()) })
	acts := newActivities(t, a.Engine)
	for _, id := range []string{"first", "second"} {
		got, _ := runChain(t, acts, nil, id, temporal.RunInput{Config: "../configs/react.yaml", LLM: "scripted", Task: scriptedTask})
		require.Equal(t, temporal.StatusDone, got.Status, got.Error)
		assert.True(t, got.Complete, got.Reason)
		assert.Equal(t, "7", got.Answer)
		assert.EqualValues(t, 2, got.Usage.Counters.ModelCalls)
		assert.EqualValues(t, 1, got.Usage.Counters.ToolCalls)
	}
}

// TestAdvancesHeartbeat: the Advances have a heartbeat timeout (the
// RunInput's, else DefaultHeartbeat) and heartbeat while a call is slow,
// so a lost Advance is retried after seconds, not the run's timeout.
func TestAdvancesHeartbeat(t *testing.T) {
	eng, _, tasks := simEngine(t, 150*time.Millisecond)
	var timeouts sync.Map
	acts := newActivities(t, eng)
	advance := func(ctx context.Context, in temporal.AdvanceInput) (*temporal.AdvanceOutput, error) {
		timeouts.Store(activity.GetInfo(ctx).HeartbeatTimeout, true)
		return acts.Advance(ctx, in)
	}
	for _, hb := range []time.Duration{0, 200 * time.Millisecond} {
		var beats atomic.Int64
		e, _ := env(t, nil, advance)
		e.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: fmt.Sprint("hb-", hb)})
		e.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { beats.Add(1) })
		e.ExecuteWorkflow(temporal.WorkflowName, temporal.RunInput{Config: "../configs/cot.yaml", LLM: "sim", Task: tasks["demo-21"].Task,
			Heartbeat: hb, Timeout: time.Hour})
		require.NoError(t, e.GetWorkflowError())
		if hb > 0 {
			assert.Positive(t, beats.Load(), "a 150 ms call heartbeats every 50 ms")
		}
	}
	_, def := timeouts.Load(temporal.DefaultHeartbeat)
	_, set := timeouts.Load(200 * time.Millisecond)
	assert.True(t, def, "the default heartbeat timeout")
	assert.True(t, set, "the run's heartbeat timeout")
}
