package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The example of examples/pipelines/react_approval.yaml's header, offline
// with its script: the run waits at the calculator; resume --approve, a
// new command with a new scripted model (as a new process would be),
// replays the three journaled model calls and carries on with the
// script's fourth reply, the answer, instead of starting the script over.
func TestScriptedThreadResumesWhereTheScriptLeftOff(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "threads.db")
	script := filepath.Join(repoRoot, "examples", "scripts", "react_demo.yaml")
	const question = "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?"

	r := cli(t, "run", "--config", approvalConfig, "--llm", "scripted:"+script, "--thread", "jupiter", "--store", store, "--no-input", "-q", question)
	require.Equal(t, exitWaiting, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "Thread jupiter waits for approval of calculator (node act) with input:\n  142984 - 120536")

	r = cli(t, "resume", "jupiter", "--store", store, "--approve", "--json", "-q")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	var out runOutput
	r.lastJSON(t, &out)
	assert.Equal(t, "done", out.Status)
	assert.Equal(t, "22448", out.Answer)
	assert.True(t, out.Complete)
	assert.Equal(t, 4, out.Usage.ModelCalls, "three replayed calls and one live")

	var kinds []string
	for _, cp := range history(t, store, "jupiter") {
		kinds = append(kinds, cp.Kind)
	}
	assert.Equal(t, []string{"model", "tool", "model", "tool", "model", "approval", "tool", "model", "node"}, kinds,
		"after the approval, the calculator and the answer: no search again, no second wait")

	// Each model call was served the next reply of the script, none twice.
	s, err := sqlitestore.Open(context.Background(), store)
	require.NoError(t, err)
	defer s.Close()
	run, err := journal.Open(context.Background(), s, "jupiter")
	require.NoError(t, err)
	var served []any
	for _, resp := range run.ModelResponses() {
		served = append(served, resp.Choices[0].GenerationInfo[scripted.InfoReply])
		assert.Equal(t, "react_demo.yaml", resp.Choices[0].GenerationInfo[scripted.InfoScript])
	}
	assert.Equal(t, []any{1, 2, 3, 4}, served)
}

// The per-task mode (--llm scripted without a file, playing a suite
// task's own replies) resumes the same way: the resumed run's first live
// call gets the task's fourth reply.
func TestTaskRepliesThreadResumesWhereTheRepliesLeftOff(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "threads.db")
	suitePath := writeSuite(t, recordedSuite)

	r := cli(t, "run", "--config", approvalConfig, "--llm", "scripted", "--suite", suitePath, "--task", "jupiter-saturn",
		"--thread", "js", "--store", store, "--no-input", "-q")
	require.Equal(t, exitWaiting, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)

	r = cli(t, "resume", "js", "--store", store, "--approve", "--json", "-q")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	var out runOutput
	r.lastJSON(t, &out)
	assert.Equal(t, "done", out.Status)
	assert.Equal(t, "22448", out.Answer)
	assert.Equal(t, 4, out.Usage.ModelCalls)

	s, err := sqlitestore.Open(context.Background(), store)
	require.NoError(t, err)
	defer s.Close()
	run, err := journal.Open(context.Background(), s, "js")
	require.NoError(t, err)
	var served []any
	for _, resp := range run.ModelResponses() {
		served = append(served, resp.Choices[0].GenerationInfo[scripted.InfoReply])
		assert.Equal(t, "jupiter-saturn", resp.Choices[0].GenerationInfo[scripted.InfoTask])
	}
	assert.Equal(t, []any{1, 2, 3, 4}, served)
}

// A comparison in the per-task mode may journal its runs (--threads): a
// stopped one resumes its unfinished runs where their replies left off.
func TestCompareJournalsTaskReplyRuns(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out")
	res := cli(t, "compare", "--llm", "scripted", "--suite", writeSuite(t, recordedSuite), "--config", configPath("react.yaml"), "--out", out, "--threads", "--json")
	require.Equal(t, exitOK, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	var rep struct {
		Configs []struct {
			Correct int `json:"correct"`
		} `json:"configs"`
	}
	res.lastJSON(t, &rep)
	require.Len(t, rep.Configs, 1)
	assert.Equal(t, 2, rep.Configs[0].Correct, "both recorded answers are reproduced")
	assert.FileExists(t, filepath.Join(out, "threads.db"))
}
