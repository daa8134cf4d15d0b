package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/internal/temporaltest"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/temporal"
	"github.com/planner-engine/planner/trace"
)

// simEngine is an engine with the offline simulator "sim" playing the
// demo suite, each reply after delay when one is given; calls counts the
// model calls it answers.
func simEngine(t *testing.T, delay ...time.Duration) (*planner.Engine, *atomic.Int64, map[string]suite.Task) {
	t.Helper()
	tasks, err := suite.Demo()
	require.NoError(t, err)
	byID := map[string]suite.Task{}
	for _, tk := range tasks {
		byID[tk.ID] = tk
	}
	calls := &atomic.Int64{}
	eng, err := planner.New(append(full.Options(), planner.WithOfflineProvider("sim", sim.Label, func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		m, err := sim.New(cfg.Profile, sim.WithSeed(1), sim.WithTasks(tasks))
		if err != nil {
			return nil, err
		}
		return llmtest.Func(func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
			calls.Add(1) // a call that reaches the model
			for _, d := range delay {
				time.Sleep(d)
			}
			return m.GenerateContent(ctx, msgs, opts...)
		}), nil
	}, llm.AsKind(llm.KindSimulated)))...)
	require.NoError(t, err)
	return eng, calls, byID
}

// advances records each Advance the test environment runs.
type advances struct {
	mu     sync.Mutex
	queues []string
}

func (a *advances) add(q string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.queues = append(a.queues, q)
}

func (a *advances) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.queues...)
}

// env returns a test workflow environment running the workflow with acts'
// Advance (or advance, when not nil) and recording the Advances.
func env(t *testing.T, acts *temporal.Activities, advance any) (*testsuite.TestWorkflowEnvironment, *advances) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(temporaltest.QuietLogger())
	e := s.NewTestWorkflowEnvironment()
	// The SDK fails a workflow task whose code runs over a second without
	// yielding, to catch blocking workflow code. Under the race detector on
	// a busy 2-core machine a task that yields at once can still take that
	// long (it failed a CI run with other builds beside it); the bound is
	// raised so the tests check the workflow, not the machine's load.
	e.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	e.RegisterWorkflowWithOptions(temporal.Workflow, workflow.RegisterOptions{Name: temporal.WorkflowName})
	if advance == nil {
		advance = acts.Advance
	}
	e.RegisterActivityWithOptions(advance, activity.RegisterOptions{Name: temporal.AdvanceName})
	rec := &advances{}
	e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		rec.add(info.TaskQueue)
	})
	return e, rec
}

func newActivities(t *testing.T, eng *planner.Engine) *temporal.Activities {
	t.Helper()
	acts, err := temporal.NewActivities(eng)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, acts.Close()) })
	return acts
}

// inProcess runs task with the pipeline at path in this process.
func inProcess(t *testing.T, eng *planner.Engine, path string, task suite.Task) *planner.Result {
	t.Helper()
	p, err := eng.Load(t.Context(), path, planner.WithLLM("sim"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	res, err := p.Run(t.Context(), "", planner.WithTask(task.Task))
	require.NoError(t, err)
	return res
}

func TestReActRunMatchesTheInProcessRunOneActivityPerCall(t *testing.T) {
	eng, modelCalls, tasks := simEngine(t)
	task := tasks["demo-21"]
	want := inProcess(t, eng, "../configs/react.yaml", task)
	require.True(t, want.Complete, want.Reason)
	inProcessCalls := modelCalls.Load()
	modelCalls.Store(0)

	e, rec := env(t, newActivities(t, eng), nil)
	e.ExecuteWorkflow(temporal.WorkflowName, temporal.RunInput{Config: "../configs/react.yaml", LLM: "sim", Task: task.Task})
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	var got temporal.Outcome
	require.NoError(t, e.GetWorkflowResult(&got))

	assert.Equal(t, temporal.StatusDone, got.Status)
	assert.Equal(t, want.Answer, got.Answer)
	assert.Equal(t, want.Complete, got.Complete)
	assert.Equal(t, want.Steps, got.Steps)
	assert.Equal(t, want.Usage.Counters, got.Usage.Counters, "usage")
	assert.Equal(t, inProcessCalls, modelCalls.Load(), "each model call made once")

	liveCalls := int(want.Usage.Counters.ModelCalls + want.Usage.Counters.ToolCalls)
	require.Positive(t, liveCalls)
	queues := rec.list()
	assert.Len(t, queues, liveCalls, "one Advance per model or tool call")
	assert.Equal(t, liveCalls, got.Advances)
	model := 0
	for _, q := range queues {
		if q == temporal.ModelQueue("default-test-taskqueue") {
			model++
		}
	}
	assert.Equal(t, int(want.Usage.Counters.ModelCalls), model, "model calls run on the model queue: %v", queues)

	v, err := e.QueryWorkflow(temporal.QueryEvents)
	require.NoError(t, err)
	var evs []trace.Event
	require.NoError(t, v.Get(&evs))
	require.NotEmpty(t, evs)
	assert.Equal(t, trace.KindRunEnd, evs[len(evs)-1].Kind)
	v, err = e.QueryWorkflow(temporal.QueryStatus)
	require.NoError(t, err)
	var pr temporal.Progress
	require.NoError(t, v.Get(&pr))
	assert.Equal(t, temporal.StatusDone, pr.Status)
}

func TestApprovalIsASignal(t *testing.T) {
	eng, _, tasks := simEngine(t)
	task := tasks["demo-21"]
	const cfg = "../examples/pipelines/react_approval.yaml"
	e, _ := env(t, newActivities(t, eng), nil)
	asked := 0
	var check func()
	check = func() {
		// The first callbacks may fire before the workflow has set its
		// query handlers; a query then fails and the check comes again.
		var pr temporal.Progress
		if v, err := e.QueryWorkflow(temporal.QueryStatus); err == nil {
			require.NoError(t, v.Get(&pr))
		}
		if pr.Status == temporal.StatusWaiting {
			asked++
			assert.Equal(t, "calculator", pr.Pending.Tool)
			e.SignalWorkflow(temporal.SignalApproval, journal.Decision{Approved: true, By: "test"})
		}
		if !e.IsWorkflowCompleted() && asked < 10 {
			e.RegisterDelayedCallback(check, 1)
		}
	}
	e.RegisterDelayedCallback(check, 1)
	e.ExecuteWorkflow(temporal.WorkflowName, temporal.RunInput{Config: cfg, LLM: "sim", Task: task.Task})
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	var got temporal.Outcome
	require.NoError(t, e.GetWorkflowResult(&got))
	assert.Positive(t, asked, "the run waited for approval")
	assert.True(t, got.Complete, got.Reason)
	assert.Equal(t, task.Answer, got.Answer)
}

func TestFailedActivityRepeatsOnlyItsCall(t *testing.T) {
	eng, modelCalls, tasks := simEngine(t)
	task := tasks["demo-21"]
	want := inProcess(t, eng, "../configs/react.yaml", task)
	inProcessCalls := modelCalls.Load()
	modelCalls.Store(0)

	acts := newActivities(t, eng)
	var n atomic.Int64
	// The second Advance makes its model call, then its worker "dies"
	// before reporting: Temporal retries it, which makes that call again.
	flaky := func(ctx context.Context, in temporal.AdvanceInput) (*temporal.AdvanceOutput, error) {
		out, err := acts.Advance(ctx, in)
		if n.Add(1) == 2 && err == nil && out.Kind != "" {
			return nil, errors.New("injected: the worker died before reporting")
		}
		return out, err
	}
	e, rec := env(t, acts, flaky)
	e.ExecuteWorkflow(temporal.WorkflowName, temporal.RunInput{Config: "../configs/react.yaml", LLM: "sim", Task: task.Task})
	require.NoError(t, e.GetWorkflowError())
	var got temporal.Outcome
	require.NoError(t, e.GetWorkflowResult(&got))
	assert.Equal(t, want.Answer, got.Answer)
	assert.Equal(t, want.Usage.Counters, got.Usage.Counters)
	live := int(want.Usage.Counters.ModelCalls + want.Usage.Counters.ToolCalls)
	assert.Len(t, rec.list(), live+1, "one Advance was tried twice")
	extra := modelCalls.Load() - inProcessCalls
	assert.LessOrEqual(t, extra, int64(1), "at most the failed Advance's one call was repeated")
}

func TestOutcomeRoundTripsAsJSON(t *testing.T) {
	o := temporal.Outcome{Status: temporal.StatusDone, Advances: 3, Summary: temporal.Summary{Answer: "42", Complete: true}}
	b, err := json.Marshal(o)
	require.NoError(t, err)
	var back temporal.Outcome
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, o, back)
}

func TestParadigmsMatchTheInProcessRun(t *testing.T) {
	for _, name := range []string{"cot", "cot_sc", "plan_execute", "rewoo", "llmcompiler", "tot", "lats", "reflexion", "least_to_most"} {
		t.Run(name, func(t *testing.T) {
			eng, modelCalls, tasks := simEngine(t)
			task := tasks["demo-21"]
			path := "../configs/" + name + ".yaml"
			want := inProcess(t, eng, path, task)
			inProcessCalls := modelCalls.Load()
			modelCalls.Store(0)
			e, rec := env(t, newActivities(t, eng), nil)
			e.ExecuteWorkflow(temporal.WorkflowName, temporal.RunInput{Config: path, LLM: "sim", Task: task.Task})
			require.NoError(t, e.GetWorkflowError())
			var got temporal.Outcome
			require.NoError(t, e.GetWorkflowResult(&got))
			assert.Equal(t, want.Answer, got.Answer)
			assert.Equal(t, want.Complete, got.Complete)
			assert.Equal(t, want.Steps, got.Steps)
			assert.Equal(t, want.Usage.Counters, got.Usage.Counters)
			assert.Equal(t, inProcessCalls, modelCalls.Load(), "each model call made once")
			t.Logf("%s: %d advances, %d model calls", name, len(rec.list()), inProcessCalls)
		})
	}
}
