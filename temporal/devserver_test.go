//go:build integration

package temporal_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"

	"github.com/planner-engine/planner/internal/temporaltest"
	"github.com/planner-engine/planner/temporal"
)

// TestRecordHistoryOnDevServer runs demo-21 with ReAct on the simulator
// through a real worker on a dev server, replays the history it leaves,
// and with PLANNER_RECORD_HISTORY=1 saves it to testdata. It needs a
// Temporal CLI (see internal/temporaltest) and fails without one.
func TestRecordHistoryOnDevServer(t *testing.T) {
	srv := temporaltest.Start(t)
	c := srv.Dial(t)
	eng, _, tasks := simEngine(t)
	task := tasks["demo-21"]
	const queue = "planner-replay"
	w, err := temporal.NewWorker(c, queue, temporal.Options{Engine: eng, ModelRate: 50})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	defer func() { assert.NoError(t, w.Stop()) }()

	ctx := t.Context()
	in := temporal.RunInput{Config: "../configs/react.yaml", LLM: "sim", Task: task.Task, Timeout: time.Minute}
	run, err := temporal.Start(ctx, c, temporal.StartOptions{ID: "replay-react-demo-21", Queue: queue, Input: in})
	require.NoError(t, err)
	got, err := temporal.Result(ctx, c, run.GetID())
	require.NoError(t, err)
	assert.Equal(t, task.Answer, got.Answer)

	// Starting the id again attaches to the finished run.
	again, err := temporal.Start(ctx, c, temporal.StartOptions{ID: run.GetID(), Queue: queue, Input: in})
	require.NoError(t, err)
	assert.Equal(t, run.GetRunID(), again.GetRunID(), "the finished run is not started again")

	var hist historypb.History
	it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, ev)
	}
	require.NoError(t, replayer(t).ReplayWorkflowHistory(nil, &hist))
	if os.Getenv(recordEnv) == "1" {
		b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(&hist)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join("testdata", "react_demo21.json"), b, 0o644))
	}
}
