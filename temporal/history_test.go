//go:build integration

package temporal_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/internal/temporaltest"
	"github.com/planner-engine/planner/temporal"
)

// execution is one workflow execution of a run, as its history says.
type execution struct {
	runID  string
	events int
	// bytes sums the history events' protobuf sizes; described is the
	// server's own count (DescribeWorkflowExecution's HistorySizeBytes).
	bytes, described int64
	history          *historypb.History
}

// executions reads the history of every execution of workflow id, from
// the one runID names, following continue-as-new.
func executions(t *testing.T, c client.Client, id, runID string) []execution {
	t.Helper()
	ctx := t.Context()
	var out []execution
	for runID != "" {
		ex := execution{runID: runID, history: &historypb.History{}}
		next := ""
		it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(t, err)
			ex.history.Events = append(ex.history.Events, ev)
			ex.events++
			ex.bytes += int64(proto.Size(ev))
			if a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				next = a.GetNewExecutionRunId()
			}
		}
		d, err := c.DescribeWorkflow(ctx, id, runID)
		require.NoError(t, err)
		ex.described = d.RawResponse.GetWorkflowExecutionInfo().GetHistorySizeBytes()
		out = append(out, ex)
		runID = next
	}
	return out
}

// callsEnv names the variable that sets the model calls of the runs
// TestHistoryGrowsWithTheCalls measures, separated by commas (default
// "10,100"). The run of 1,000 calls takes about two Advances of 50 to
// 120 ms each per call on a dev server (4 minutes on a loaded 2-core
// machine), too long for every `make test`:
//
//	PLANNER_TEMPORAL_CALLS=10,100,1000 go test -tags integration -run TestHistoryGrowsWithTheCalls -v ./temporal
const callsEnv = "PLANNER_TEMPORAL_CALLS"

// TestHistoryGrowsWithTheCalls runs scripted ReAct runs of 10 and 100
// model calls (and as many tool calls, less one; more with callsEnv) on
// one worker of a dev server and logs, beside the in-process run's wall
// time, the Temporal run's wall time and the size of its history in
// bytes, summed over its executions (it continues as new every
// DefaultContinueAfter Advances). Every run keeps its history under
// 20 MB, and no execution's passes MaxHistoryBytes by much. (Before, the
// history grew with the square of the calls: 16.4 MB for 100 calls, and
// a run of about 180 calls passed Temporal's 50 MB limit and was
// terminated.)
func TestHistoryGrowsWithTheCalls(t *testing.T) {
	sizes := []int{10, 100}
	if v := os.Getenv(callsEnv); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			require.NoError(t, err, "%s=%q", callsEnv, v)
			sizes = append(sizes, n)
		}
	}
	srv := temporaltest.Start(t)
	c := srv.Dial(t)
	eng := fullEngine(t)
	const queue = "planner-history"
	w, err := temporal.NewWorker(c, queue, temporal.Options{Engine: eng})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	defer func() { assert.NoError(t, w.Stop()) }()

	for _, n := range sizes {
		cfg, script := scriptedReAct(t, n)
		p, err := eng.Load(t.Context(), cfg, planner.WithLLM("scripted:"+script))
		require.NoError(t, err)
		began := time.Now()
		want, err := p.Run(t.Context(), "", planner.WithTask(scriptedTask))
		inProcess := time.Since(began)
		require.NoError(t, err)
		require.NoError(t, p.Close())
		require.Equal(t, "7", want.Answer)

		ctx, cancel := context.WithTimeout(t.Context(), time.Duration(n)*time.Second+time.Minute)
		began = time.Now()
		run, err := temporal.Start(ctx, c, temporal.StartOptions{ID: fmt.Sprintf("history-%d", n), Queue: queue,
			Input: temporal.RunInput{Config: cfg, LLM: "scripted:" + script, Task: scriptedTask}})
		require.NoError(t, err)
		first := run.GetRunID() // Get follows the executions: GetRunID then names the last
		var got temporal.Outcome
		require.NoError(t, run.Get(ctx, &got))
		onTemporal := time.Since(began)
		cancel()
		require.Equal(t, temporal.StatusDone, got.Status, got.Error)
		assert.Equal(t, "7", got.Answer)
		assert.EqualValues(t, n, got.Usage.Counters.ModelCalls)
		assert.Equal(t, want.Usage.Counters, got.Usage.Counters)

		exs := executions(t, c, run.GetID(), first)
		var bytes, described int64
		events, largest := 0, int64(0)
		for _, ex := range exs {
			bytes += ex.bytes
			described += ex.described
			events += ex.events
			largest = max(largest, ex.described)
		}
		assert.Len(t, exs, got.Executions)
		t.Logf("%4d model calls (%d Advances): in-process %s; on Temporal %s (%.1fx); history %d bytes (%.0f per call; server's count %d) in %d events over %d executions, the largest %d bytes",
			n, got.Advances, inProcess.Round(time.Millisecond), onTemporal.Round(time.Millisecond), onTemporal.Seconds()/inProcess.Seconds(),
			bytes, float64(bytes)/float64(n), described, events, len(exs), largest)
		assert.Less(t, bytes, int64(20<<20), "the history of %d calls", n)
		assert.Less(t, largest, int64(temporal.MaxHistoryBytes+(1<<20)), "no execution's history passes MaxHistoryBytes by much")
	}
}

// TestLostAdvanceIsRetriedWithinSeconds: an Advance whose worker never
// answers (it died, or the task never reached it) is retried once its
// heartbeat timeout passes, although the run's timeout is an hour: the
// run ends in seconds. (Without a heartbeat timeout it waited the hour.)
func TestLostAdvanceIsRetriedWithinSeconds(t *testing.T) {
	srv := temporaltest.Start(t)
	c := srv.Dial(t)
	eng, _, tasks := simEngine(t)
	acts := newActivities(t, eng)
	lost := make(chan struct{})
	defer close(lost)
	var once sync.Once
	var lostAt time.Time
	advance := func(ctx context.Context, in temporal.AdvanceInput) (*temporal.AdvanceOutput, error) {
		first := false
		if in.Seq == 2 {
			once.Do(func() { first, lostAt = true, time.Now() })
		}
		if first {
			<-lost // never answers, never heartbeats
			return nil, ctx.Err()
		}
		return acts.Advance(ctx, in)
	}
	const queue = "planner-lost"
	for _, q := range []string{queue, temporal.ModelQueue(queue)} {
		w := worker.New(c, q, worker.Options{DisableWorkflowWorker: q != queue})
		if q == queue {
			w.RegisterWorkflowWithOptions(temporal.Workflow, workflow.RegisterOptions{Name: temporal.WorkflowName})
		}
		w.RegisterActivityWithOptions(advance, activity.RegisterOptions{Name: temporal.AdvanceName})
		require.NoError(t, w.Start())
		defer w.Stop()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	began := time.Now()
	run, err := temporal.Start(ctx, c, temporal.StartOptions{ID: "lost", Queue: queue,
		Input: temporal.RunInput{Config: "../configs/react.yaml", LLM: "sim", Task: tasks["demo-21"].Task, Timeout: time.Hour, Heartbeat: 2 * time.Second}})
	require.NoError(t, err)
	var got temporal.Outcome
	require.NoError(t, run.Get(ctx, &got), "the run did not end within a minute")
	took := time.Since(began)
	assert.Equal(t, tasks["demo-21"].Answer, got.Answer)
	require.False(t, lostAt.IsZero(), "the second Advance was lost")
	t.Logf("an Advance lost %s into the run; the run ended %s after it (heartbeat timeout 2 s, run timeout 1 h)",
		lostAt.Sub(began).Round(time.Millisecond), time.Since(lostAt).Round(time.Millisecond))
	assert.Less(t, took, 30*time.Second)
}
