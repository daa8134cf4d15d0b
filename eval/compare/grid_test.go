package compare_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
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
