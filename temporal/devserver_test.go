//go:build integration

package temporal_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/temporalproto"

	"github.com/planner-engine/planner/internal/temporaltest"
	"github.com/planner-engine/planner/temporal"
)

// TestRecordHistoryOnDevServer runs demo-21 with ReAct on the simulator
// through a real worker on a dev server, continuing as new every 3
// Advances, replays the histories of its executions, and with
// PLANNER_RECORD_HISTORY=1 saves the first one (which ends in a
// continue-as-new) to testdata/react_demo21_continued.json. It needs a
// Temporal CLI (see internal/temporaltest) and fails without one.
// testdata/react_demo21.json is a run of the workflow's first version (the
// whole journal in every Advance), kept to show that runs in flight
// across the upgrade still replay.
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
	in := temporal.RunInput{Config: "../configs/react.yaml", LLM: "sim", Task: task.Task, Timeout: time.Minute, ContinueAfter: 3}
	run, err := temporal.Start(ctx, c, temporal.StartOptions{ID: "replay-react-demo-21", Queue: queue, Input: in})
	require.NoError(t, err)
	first := run.GetRunID()
	got, err := temporal.Result(ctx, c, run.GetID())
	require.NoError(t, err)
	assert.Equal(t, task.Answer, got.Answer)
	exs := executions(t, c, run.GetID(), first)
	require.Len(t, exs, got.Executions)
	require.Greater(t, got.Executions, 1, "the run continued as new")

	// Starting the id again attaches to the finished run.
	again, err := temporal.Start(ctx, c, temporal.StartOptions{ID: run.GetID(), Queue: queue, Input: in})
	require.NoError(t, err)
	assert.Equal(t, exs[len(exs)-1].runID, again.GetRunID(), "the finished run is not started again")

	for _, ex := range exs {
		require.NoError(t, replayer(t).ReplayWorkflowHistory(nil, ex.history), "execution %s", ex.runID)
	}
	if os.Getenv(recordEnv) == "1" {
		b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(exs[0].history)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join("testdata", "react_demo21_continued.json"), b, 0o644))
	}
}
