package main

import (
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkerRefusesBadFlags checks planner worker's usage errors, which
// come before it connects anywhere.
func TestWorkerRefusesBadFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--temporal HOST:PORT is required"},
		{[]string{"--temporal", "127.0.0.1:1", "--model-rps", "-1"}, "--model-rps must be 0 (no cap) or more, got -1"},
		{[]string{"--temporal", "127.0.0.1:1", "--task-queue", ""}, "--namespace and --task-queue must not be empty"},
		{[]string{"--temporal", "127.0.0.1:1", "extra"}, "expected no arguments"},
	} {
		res := cli(t, append([]string{"worker"}, tc.args...)...)
		assert.Equal(t, exitUsage, res.code, "%v: %s", tc.args, res.stderr)
		assert.Contains(t, res.stderr, tc.want, tc.args)
	}
}

// TestCompareOnTemporalRefusesWhatItCannotDo checks the flags that do not
// combine with compare --temporal; they are refused before connecting.
func TestCompareOnTemporalRefusesWhatItCannotDo(t *testing.T) {
	t.Parallel()
	base := []string{"compare", "--suite", "demo", "--limit", "1", "--llm", "sim", "--config", configPath("cot.yaml"), "--out", t.TempDir(),
		"--temporal", "127.0.0.1:1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--threads"}, "--threads has no use with --temporal"},
		{[]string{"--max-model-calls", "5"}, "do not reach runs on Temporal workers"},
		{[]string{"--seed", "2"}, "--seed 2: the sim model on Temporal workers plays seed 1 only"},
	} {
		res := cli(t, append(append([]string(nil), base...), tc.args...)...)
		assert.Equal(t, exitUsage, res.code, "%v: %s", tc.args, res.stderr)
		assert.Contains(t, res.stderr, tc.want, tc.args)
	}
}

// TestWorkflowIDNamesTheRun checks that a run's workflow id is the same
// for the same run folder and run, readable, and different when the run
// folder, the config file or the task differs.
func TestWorkflowIDNamesTheRun(t *testing.T) {
	t.Parallel()
	run := compare.RunSpec{Config: "react", Task: state.Task{ID: "demo 07/x"}, Model: "sim", Seed: 1, Fingerprint: "0123456789abcdef", Timeout: time.Minute}
	run.RunID = compare.RunID(run.Config, run.Model, run.Task.ID, run.Seed, run.Fingerprint)
	id := workflowID("/out/a", run)
	require.Equal(t, id, workflowID("/out/a", run))
	assert.True(t, strings.HasPrefix(id, "planner-"), id)
	assert.True(t, strings.HasSuffix(id, "-react-demo_07_x"), id)
	assert.NotEqual(t, id, workflowID("/out/b", run))
	edited := run
	edited.RunID = compare.RunID(run.Config, run.Model, run.Task.ID, run.Seed, "fedcba9876543210")
	assert.NotEqual(t, id, workflowID("/out/a", edited))
	other := run
	other.Task.ID = "demo-08"
	other.RunID = compare.RunID(run.Config, run.Model, other.Task.ID, run.Seed, run.Fingerprint)
	assert.NotEqual(t, id, workflowID("/out/a", other))
}
