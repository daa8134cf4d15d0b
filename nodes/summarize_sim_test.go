package nodes_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shipped ReAct config with compaction "summarize" and a budget small
// enough to summarize after every step still solves the demo tasks with the
// sim oracle: the summaries keep the run's progress, and each is one model
// call of role "summarize".
func TestReActWithSummarizedMemorySolvesWithTheSimOracle(t *testing.T) {
	src, err := os.ReadFile("../configs/react.yaml")
	require.NoError(t, err)
	cfg := strings.Replace(string(src), "    keep_steps: 3", "    compaction: summarize\n    compaction_budget: 300\n    keep_steps: 1 #", 1)
	require.Contains(t, cfg, "compaction: summarize")
	path := filepath.Join(t.TempDir(), "react_summarize.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	for _, task := range demoTasks(t, "demo-01", "demo-21", "demo-29") {
		t.Run(task.ID, func(t *testing.T) {
			m, err := sim.New("perfect", sim.WithSleeper(noSleep), sim.WithTasks([]suite.Task{task}))
			require.NoError(t, err)
			st, rec := runTask(t, buildConfig(t, path, m), task.Task)
			assert.True(t, st.Complete, st.Reason)
			assert.Equal(t, task.Gold.Answer, st.Answer)
			summaries := 0
			for _, e := range rec.OfKind(trace.KindLLMCall) {
				if e.Data["role"] == "summarize" {
					summaries++
				}
			}
			assert.Equal(t, len(task.Gold.Steps)-1, summaries, "a summary after each step but the last kept in full")
			assert.Equal(t, len(task.Gold.Steps)+summaries+1, m.Calls())
		})
	}
}
