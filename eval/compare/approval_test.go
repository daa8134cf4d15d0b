package compare_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolCallsThatNeedApprovalEndTheSameWithThreads runs a pipeline
// whose calculator calls need approval, which no one gives in a
// comparison, with and without Threads: a journaled run does not wait for
// a decision (a thread's default), it fails for the missing approver as
// a run without a thread does, and both give the same records.
func TestToolCallsThatNeedApprovalEndTheSameWithThreads(t *testing.T) {
	t.Parallel()
	tasks := demoTasks(t)[18:24] // from demo-21 on, the sim calls the calculator
	records := func(threads bool) map[string]compare.Record {
		out := t.TempDir()
		_, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks, compare.Options{
			Configs: []string{filepath.Join("..", "..", "examples", "pipelines", "react_approval.yaml")}, LLM: config.LLM{Provider: "sim"},
			OutDir: out, NoTraces: true, Threads: threads})
		require.NoError(t, err)
		byID := map[string]compare.Record{}
		for _, r := range storedRecords(t, out, 1) {
			r.LatencyMS, r.Trace = 0, ""
			byID[r.TaskID] = r
		}
		return byID
	}
	plain, threaded := records(false), records(true)
	require.Len(t, threaded, len(tasks))
	refused := 0
	for id, r := range threaded {
		if strings.Contains(r.Error, journal.ErrNoApprover.Error()) {
			refused++
			assert.Contains(t, plain[id].Error, journal.ErrNoApprover.Error(), id)
		}
		r.Error = plain[id].Error // "approval of tool ...:" adds the approver's context
		assert.Equal(t, plain[id], r, id)
	}
	assert.Positive(t, refused, "some run called the calculator")
}
