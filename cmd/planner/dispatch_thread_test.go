package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAStreamedPlanWaitsForApprovalAndResumesFromTheJournal runs the
// LLMCompiler config (whose planner dispatches steps while the plan
// streams) with the calculator needing approval: the thread waits inside
// the planner node, and resuming it replays the planner's call from the
// journal, dispatches the same steps again (their finished calls answered
// from the journal) and runs the approved one.
func TestAStreamedPlanWaitsForApprovalAndResumesFromTheJournal(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(configPath("llmcompiler.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(src), "dispatch: true")
	cfg := strings.Replace(string(src), "  - calculator\n", "  - {name: calculator, approve: true}\n", 1)
	require.NotEqual(t, string(src), cfg)
	dir := t.TempDir()
	path := filepath.Join(dir, "llmcompiler.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	store := filepath.Join(dir, "threads.db")

	r := execPlanner(t, invocation{args: append([]string{"run", "--config", path, "--thread", "pluto", "--store", store, "--json", "-q"}, tombaugh...)})
	require.Equal(t, exitWaiting, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	var w struct {
		Status  string `json:"status"`
		Pending struct {
			Node string `json:"node"`
			Tool string `json:"tool"`
		} `json:"pending"`
	}
	r.lastJSON(t, &w)
	assert.Equal(t, "waiting", w.Status)
	assert.Equal(t, "calculator", w.Pending.Tool)
	assert.Equal(t, "plan", w.Pending.Node, "the call waits inside the planner, which runs the streamed steps")

	r = cli(t, "resume", "pluto", "--store", store, "--approve", "--json", "-q")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	var out runOutput
	r.lastJSON(t, &out)
	assert.Equal(t, "24", out.Answer)
	assert.Equal(t, "done", out.Status)
	assert.True(t, out.Complete)
}
