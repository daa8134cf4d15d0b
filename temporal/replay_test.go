package temporal_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/planner-engine/planner/temporal"
)

// recordEnv, set to 1, makes TestRecordHistoryOnDevServer write the
// history it records to testdata, for TestReplayRecordedHistories.
const recordEnv = "PLANNER_RECORD_HISTORY"

func replayer(t *testing.T) worker.WorkflowReplayer {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(temporal.Workflow, workflow.RegisterOptions{Name: temporal.WorkflowName})
	return r
}

// TestReplayRecordedHistories replays every history in testdata (JSON, as
// `temporal workflow show --output json` writes it) against the current
// workflow code: a change that makes the workflow non-deterministic fails
// here before it breaks the runs in flight.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	if len(files) == 0 {
		// Record testdata/react_demo21_continued.json on a dev server:
		//   PLANNER_RECORD_HISTORY=1 go test -tags integration ./temporal -run TestRecordHistoryOnDevServer
		// (needs the Temporal CLI, see internal/temporaltest).
		t.Skipf("no recorded history in testdata: record one with %s=1 go test -tags integration -run TestRecordHistoryOnDevServer ./temporal (needs a Temporal CLI)", recordEnv)
	}
	r := replayer(t)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
}
