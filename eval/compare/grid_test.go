package compare_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A comparison's report files include the per-task viewer, holding every
// run with its trace, and report.html links to it.
func TestReportFilesIncludeTheTaskViewer(t *testing.T) {
	tasks := demoTasks(t)[:3]
	dir := t.TempDir()
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks,
		compare.Options{Configs: configPaths("cot", "react"), LLM: config.LLM{Provider: "sim"}, OutDir: dir, Repeats: 2})
	require.NoError(t, err)
	html, err := rep.WriteFiles(dir)
	require.NoError(t, err)
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.Contains(t, string(page), `<a href="tasks.html">`)
	viewer, err := os.ReadFile(filepath.Join(dir, "tasks.html"))
	require.NoError(t, err)
	body := string(viewer)
	for _, task := range tasks {
		assert.Contains(t, body, task.ID)
	}
	// Every run's trace reference and its events (react's tool calls are
	// action events) are in the page's data.
	assert.Contains(t, body, `"trace":"traces/sim/react.jsonl:`)
	assert.Contains(t, body, `"kind":"action"`)
	assert.Contains(t, body, `"repeat":1`)

	// A report built from records alone has no viewer to write.
	plain := compare.Summarize(nil, []string{"cot"})
	other := t.TempDir()
	_, err = plain.WriteFiles(other)
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(other, "tasks.html"))
}

// With the tasks' gold solutions, each run's tool calls and plan are
// scored against the gold steps: the perfect simulator follows them
// exactly, and a config that calls no tool recalls none.
func TestTrajectoriesAreScoredAgainstGoldSteps(t *testing.T) {
	tasks := demoSuite(t)[:6]
	gold := map[string]*suite.Gold{}
	for _, task := range tasks {
		gold[task.ID] = task.Gold
	}
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), suite.AgentTasks(tasks),
		compare.Options{Configs: configPaths("react", "rewoo", "cot"), LLM: config.LLM{Provider: "sim"}, OutDir: t.TempDir(), NoTraces: true, Gold: gold})
	require.NoError(t, err)
	react, rewoo, cot := rep.Configs[0].Trajectory, rep.Configs[1].Trajectory, rep.Configs[2].Trajectory
	require.NotNil(t, react)
	require.NotNil(t, rewoo)
	require.NotNil(t, cot)
	assert.Equal(t, 6, react.Scored)
	assert.InDelta(t, 1, react.ToolRecall, 1e-12)
	assert.InDelta(t, 1, react.OrderLCS, 1e-12)
	assert.Zero(t, react.Planned, "react makes no plan")
	assert.Equal(t, 6, rewoo.Planned)
	assert.InDelta(t, 1, rewoo.PlanRecall, 1e-12)
	assert.Zero(t, cot.ToolRecall, "cot calls no tool")
	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	assert.Contains(t, table.String(), "tool R/P")
}
