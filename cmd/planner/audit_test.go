package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/audit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// auditJSON runs planner audit --json with args and decodes its lines.
func auditJSON(t *testing.T, args ...string) []audit.Record {
	t.Helper()
	r := cli(t, append([]string{"audit", "--json", "--limit", "0"}, args...)...)
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	var rs []audit.Record
	for line := range strings.SplitSeq(strings.TrimSpace(r.stdout), "\n") {
		if line == "" {
			continue
		}
		var rec audit.Record
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		rs = append(rs, rec)
	}
	return rs
}

// A thread's tool calls land in audit.db beside its store: the calls, the
// call that waited, and the approved one with the decider; resuming a
// done thread (all replayed) adds nothing.
func TestAuditRecordsAThreadsCallsAndItsApproval(t *testing.T) {
	store := filepath.Join(t.TempDir(), "threads.db")
	waitingRun(t, store, "jup")
	r := cli(t, "resume", "jup", "--store", store, "--approve", "--json", "-q")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)

	rs := auditJSON(t, "--store", store, "--thread", "jup")
	require.Len(t, rs, 4, "%+v", rs)
	for i, want := range []string{"search", "search", "calculator", "calculator"} {
		assert.Equal(t, want, rs[i].Tool)
		assert.Equal(t, "jup", rs[i].Thread)
		assert.Equal(t, "act", rs[i].Node)
	}
	assert.NotEmpty(t, rs[0].OutputSHA256)
	assert.Positive(t, rs[0].OutputBytes)
	assert.Equal(t, audit.DecisionPending, rs[2].Decision)
	assert.Equal(t, "1930 - 1906", rs[2].Input)
	assert.Empty(t, rs[2].OutputSHA256, "the waiting call did not run")
	assert.Equal(t, audit.DecisionApproved, rs[3].Decision)
	assert.Equal(t, "resume --approve", rs[3].DecidedBy)
	assert.Equal(t, audit.Digest("24"), rs[3].OutputSHA256)
	assert.Equal(t, rs[0].Run, rs[2].Run)
	assert.NotEqual(t, rs[2].Run, rs[3].Run, "the resume is another run of the thread")

	table := cli(t, "audit", "--store", store, "--thread", "jup")
	require.Equal(t, 0, table.code, table.stderr)
	lines := strings.Split(strings.TrimSpace(table.stdout), "\n")
	require.Len(t, lines, 5, table.stdout)
	assert.Regexp(t, `^TIME\s+THREAD/RUN\s+NODE\s+TOOL\s+INPUT\s+OUTPUT\s+MS\s+RESULT$`, lines[0])
	assert.Regexp(t, `jup\s+act\s+search\s+Clyde Tombaugh born\s+\d+ B\s+[\d.]+\s+ok$`, lines[1])
	assert.Regexp(t, `jup\s+act\s+calculator\s+1930 - 1906\s+-\s+-\s+pending approval$`, lines[3])
	assert.Regexp(t, `jup\s+act\s+calculator\s+1930 - 1906\s+2 B\s+[\d.]+\s+approved by resume --approve, ok$`, lines[4])

	r = cli(t, "resume", "jup", "--store", store, "--json", "-q")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Len(t, auditJSON(t, "--store", store), 4, "replayed calls are not recorded again")
	assert.Len(t, auditJSON(t, "--store", store, "--tool", "calculator"), 2)
	assert.Len(t, auditJSON(t, "--store", store, "--tool", "calculator", "--limit", "1"), 1)
}

// A denial is recorded with who denied and why.
func TestAuditRecordsADenial(t *testing.T) {
	store := filepath.Join(t.TempDir(), "threads.db")
	waitingRun(t, store, "sat")
	r := cli(t, "resume", "sat", "--store", store, "--deny", "no arithmetic today", "--json", "-q")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	rs := auditJSON(t, "--store", store, "--tool", "calculator")
	require.Len(t, rs, 2)
	assert.Equal(t, audit.DecisionDenied, rs[1].Decision)
	assert.Equal(t, "resume --deny", rs[1].DecidedBy)
	assert.Equal(t, "no arithmetic today", rs[1].Reason)
	assert.Contains(t, rs[1].Error, "denied")
	table := cli(t, "audit", "--store", store, "--tool", "calculator")
	assert.Contains(t, table.stdout, "denied by resume --deny: no arithmetic today")
}

// run --audit FILE records a plain run; planner audit says clearly when
// there is no log, and rejects a bad flag.
func TestAuditOfAPlainRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "runs.db")
	r := cli(t, "run", "--config", approvalConfig, "--llm", "sim", "--suite", "demo", "--task", "demo-07", "-q", "--json", "--audit", file)
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	rs := auditJSON(t, "--db", file)
	require.NotEmpty(t, rs)
	assert.Empty(t, rs[0].Thread)
	assert.NotEmpty(t, rs[0].Run)
	table := cli(t, "audit", "--db", file)
	require.Equal(t, 0, table.code, table.stderr)
	assert.Contains(t, table.stdout, "run "+rs[0].Run)

	empty := cli(t, "audit", "--db", file, "--thread", "nobody")
	require.Equal(t, 0, empty.code)
	assert.Contains(t, empty.stdout, "no tool calls recorded in")

	missing := cli(t, "audit", "--store", filepath.Join(dir, "none", "threads.db"))
	assert.Equal(t, 1, missing.code)
	assert.Contains(t, missing.stderr, "no audit log at")
	assert.Contains(t, missing.stderr, "--thread")
	assert.Equal(t, 2, cli(t, "audit", "--db", file, "--limit", "-1").code)
	assert.Equal(t, 2, cli(t, "audit", "--db", file, "--since", "yesterday").code)
}

// A thread started with --audit FILE keeps recording in FILE when resumed.
func TestAThreadsAuditFileIsKeptOnResume(t *testing.T) {
	dir := t.TempDir()
	store, file := filepath.Join(dir, "threads.db"), filepath.Join(dir, "mine.db")
	r := execPlanner(t, invocation{args: append([]string{"run", "--config", approvalConfig,
		"--thread", "own", "--store", store, "--audit", file, "--json", "-q"}, tombaugh...)})
	require.Equal(t, exitWaiting, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	r = cli(t, "resume", "own", "--store", store, "--approve", "--json", "-q")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	rs := auditJSON(t, "--db", file, "--thread", "own")
	require.Len(t, rs, 4)
	assert.Equal(t, audit.DecisionApproved, rs[3].Decision)
	_, err := os.Stat(filepath.Join(dir, audit.FileName))
	assert.True(t, os.IsNotExist(err), "nothing recorded beside the store")
}
