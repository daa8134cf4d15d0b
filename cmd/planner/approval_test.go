package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// approvalConfig is the approval pipeline, by absolute path: tests in this
// process run in the package directory.
var approvalConfig = filepath.Join(repoRoot, "examples", "pipelines", "react_approval.yaml")

// tombaugh runs demo task 21 on the simulator, which answers from the
// prompt alone, as a real model would: a thread resumed in a new process
// gets the replies the first process would have got. (So does a scripted
// model, which finds its place in the script from the journal: see
// TestScriptedThreadResumesWhereTheScriptLeftOff.)
var tombaugh = []string{"--llm", "sim", "--suite", "demo", "--task", "demo-21"}

// waitingRun starts demo task 21 as thread name in store; the model
// calls the calculator, which needs approval, so the thread waits.
func waitingRun(t *testing.T, store, name string) {
	t.Helper()
	r := execPlanner(t, invocation{args: append([]string{"run", "--config", approvalConfig,
		"--thread", name, "--store", store, "--json", "-q"}, tombaugh...)})
	require.Equal(t, exitWaiting, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	var w struct {
		Status  string `json:"status"`
		Thread  string `json:"thread"`
		Pending struct {
			Tool  string `json:"tool"`
			Input string `json:"input"`
		} `json:"pending"`
	}
	r.lastJSON(t, &w)
	assert.Equal(t, "waiting", w.Status)
	assert.Equal(t, name, w.Thread)
	assert.Equal(t, "calculator", w.Pending.Tool)
	assert.Equal(t, "1930 - 1906", w.Pending.Input)
}

func history(t *testing.T, store, name string) []server.Checkpoint {
	t.Helper()
	r := cli(t, "history", name, "--store", store, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var cps []server.Checkpoint
	r.lastJSON(t, &cps)
	return cps
}

func TestApproveResumesTheWaitingCall(t *testing.T) {
	store := filepath.Join(t.TempDir(), "threads.db")
	waitingRun(t, store, "jup")

	r := cli(t, "threads", "--store", store)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `jup\s+\S+react_approval.yaml\s+waiting \(calculator\)\s+0\s+3\s+2`, r.stdout)

	r = cli(t, "resume", "jup", "--store", store, "--approve", "--json", "-q")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	var out runOutput
	r.lastJSON(t, &out)
	assert.Equal(t, "24", out.Answer)
	assert.Equal(t, "done", out.Status)
	assert.Equal(t, 4, out.Usage.ModelCalls, "the run's usage counts the replayed calls too")

	cps := history(t, store, "jup")
	var kinds []string
	for _, cp := range cps {
		kinds = append(kinds, cp.Kind)
	}
	assert.Equal(t, []string{"model", "tool", "model", "tool", "model", "approval", "tool", "model", "node"}, kinds)
	assert.Equal(t, "calculator approved by resume --approve", cps[5].Summary)
	assert.Equal(t, "calculator(1930 - 1906) -> 24", cps[6].Summary)

	r = cli(t, "resume", "jup", "--store", store, "--approve")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `thread "jup" is done, not waiting for an approval`)
}

func TestDenyTellsTheModelWhy(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "threads.db")
	trace := filepath.Join(dir, "trace.jsonl")

	r := execPlanner(t, invocation{args: append([]string{"run", "--config", approvalConfig,
		"--thread", "tombaugh", "--store", store, "--no-input", "-q"}, tombaugh...)})
	require.Equal(t, exitWaiting, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "Thread tombaugh waits for approval of calculator (node act) with input:\n  1930 - 1906")
	assert.Contains(t, r.stdout, "planner resume tombaugh --store "+store+" --approve")

	r = cli(t, "resume", "tombaugh", "--store", store, "--deny", "do it in your head", "--trace", trace, "-q")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "Answer: 24")
	events, err := os.ReadFile(trace)
	require.NoError(t, err)
	assert.Contains(t, string(events), `Error: tool call not approved: a human denied this call of calculator (resume --deny): do it in your head`)
	cps := history(t, store, "tombaugh")
	require.Len(t, cps, 8)
	assert.Equal(t, "calculator denied by resume --deny: do it in your head", cps[5].Summary)
	assert.Equal(t, "model", cps[6].Kind, "no tool call follows a denial")
}

// A thread that waits is decided by another process, as it would be days
// later.
func TestWaitingThreadIsApprovedInAnotherProcess(t *testing.T) {
	store := filepath.Join(t.TempDir(), "threads.db")
	waitingRun(t, store, "later")
	out, err := mainCommand(t.Context(), t, []string{"NO_COLOR=1", "HOME=" + t.TempDir()}, "resume", "later", "--store", store, "--approve", "--json", "-q").Output()
	require.NoError(t, err, "%s", out)
	var res runOutput
	require.NoError(t, json.Unmarshal(lastLine(out), &res))
	assert.Equal(t, "24", res.Answer)
	assert.True(t, res.Complete)
}

func TestForkFromCheckpointKeepsTheFirstStepsAndTheOriginal(t *testing.T) {
	store := filepath.Join(t.TempDir(), "threads.db")
	waitingRun(t, store, "orig")
	require.Equal(t, 0, cli(t, "resume", "orig", "--store", store, "--approve", "-q").code)
	before := history(t, store, "orig")

	r := cli(t, "resume", "orig", "--store", store, "--from", "4", "--as", "fork", "--json", "-q")
	require.Equal(t, exitWaiting, r.code, "the fork reaches the calculator again: %s %s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "forked thread fork from orig at checkpoint 4")
	forked := history(t, store, "fork")
	require.GreaterOrEqual(t, len(forked), 5)
	for i := range 4 {
		assert.Equal(t, before[i].Kind, forked[i].Kind)
		assert.Equal(t, before[i].Summary, forked[i].Summary)
		assert.Equal(t, before[i].Scope, forked[i].Scope)
	}
	assert.Equal(t, before, history(t, store, "orig"), "the original is untouched")

	r = cli(t, "resume", "orig", "--store", store, "--from", "99", "--as", "other")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "no such checkpoint 99: thread \"orig\" has checkpoints 1 to 9")
	r = cli(t, "resume", "orig", "--store", store, "--from", "2", "--as", "fork")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "thread exists")
}

func TestThreadErrors(t *testing.T) {
	store := filepath.Join(t.TempDir(), "threads.db")
	waitingRun(t, store, "busy")

	// A thread name is taken once.
	r := execPlanner(t, invocation{args: append([]string{"run", "--config", approvalConfig, "--thread", "busy", "--store", store}, tombaugh...)})
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `thread "busy" exists (waiting); continue it with planner resume busy --store `+store)

	r = execPlanner(t, invocation{args: append([]string{"run", "--config", approvalConfig, "--thread", "../x", "--store", store}, tombaugh...)})
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "bad thread name")

	r = cli(t, "resume", "nobody", "--store", store)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `no thread named "nobody"`)

	// Another process holds the thread: resume is refused, not interleaved.
	s, err := sqlitestore.Open(context.Background(), store)
	require.NoError(t, err)
	unlock, err := s.Lock(context.Background(), "busy")
	require.NoError(t, err)
	r = cli(t, "resume", "busy", "--store", store, "--approve")
	assert.Equal(t, exitFail, r.code)
	assert.Contains(t, r.stderr, "the thread is being run by another process or run: thread \"busy\" is locked")
	assert.Contains(t, r.stderr, "wait for that run to end")
	require.NoError(t, unlock())
	require.NoError(t, s.Close())

	// A damaged journal is reported, never replayed.
	db, err := sql.Open("sqlite", store)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE entries SET response = CAST('{"output":"1"}' AS BLOB) WHERE thread = 'busy' AND seq = 2`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	r = cli(t, "resume", "busy", "--store", store, "--approve")
	assert.Equal(t, exitFail, r.code)
	assert.Contains(t, r.stderr, "corrupt journal")

	// Without a thread and a terminal, nobody can approve: the run fails
	// and says how to wait instead.
	r = execPlanner(t, invocation{args: append([]string{"run", "--config", approvalConfig}, tombaugh...)})
	assert.Equal(t, exitFail, r.code)
	assert.Contains(t, r.stdout+r.stderr, "calculator needs a human's approval and there is no terminal to ask (or --no-input is set); run with --thread NAME")
}

// Ctrl-C saves the thread, exits 130 and prints the resume command.
func TestSIGINTSavesTheThread(t *testing.T) {
	fake := &stepsFake{n: 3, arrived: make(chan int64, 16)}
	fake.delay.Store(int64(300 * time.Millisecond))
	srv := newServer(t, fake)
	config := tenStepConfig(t)
	store := filepath.Join(t.TempDir(), "threads.db")
	cmd := mainCommand(t.Context(), t, fakeEnv(srv), "run", "--config", config, "--llm", "openai:fake-model", "--thread", "c", "--store", store, "-q", "What is the sum?")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	for n := range fake.arrived {
		if n == 2 {
			break
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	require.Error(t, err)
	assert.Equal(t, exitSIGINT, cmd.ProcessState.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "planner: thread c: interrupted")
	assert.Contains(t, stderr.String(), "resume with: planner resume c --store "+store)

	r := cli(t, "threads", "--store", store, "--json")
	require.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, `"status":"interrupted"`)
	fake.delay.Store(0)
	out, err := mainCommand(t.Context(), t, fakeEnv(srv), "resume", "c", "--store", store, "--json", "-q").Output()
	require.NoError(t, err, "%s", out)
	var res runOutput
	require.NoError(t, json.Unmarshal(lastLine(out), &res))
	assert.Equal(t, "3003", res.Answer)
	assert.LessOrEqual(t, fake.requests.Load(), int64(5), "4 calls, and at most the interrupted one again")
}

// A thread resumed after its pipeline changed stops at the first call that
// differs, naming the message, and is not classified as a provider failure.
func TestResumeAfterAConfigChangeReportsTheDivergence(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "react.yaml")
	b, err := os.ReadFile(filepath.Join(repoRoot, "configs", "react.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(config, b, 0o600))
	store := filepath.Join(dir, "threads.db")
	r := execPlanner(t, invocation{args: append([]string{"run", "--config", config, "--thread", "d", "--store", store, "-q"}, tombaugh...)})
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.WriteFile(config, []byte(strings.Replace(string(b), "observation_limit: 2000", "observation_limit: 100", 1)), 0o600))

	r = cli(t, "resume", "d", "--store", store, "--json", "-q")
	assert.Equal(t, exitFail, r.code)
	var out runOutput
	r.lastJSON(t, &out)
	assert.Equal(t, "failed", out.Status)
	assert.Equal(t, "error", out.Failure, "not a provider failure")
	assert.Contains(t, out.Error, `journal: the run diverged from its journal: thread "d", scope 1:act, model call: the journal expected checkpoint 3`)
	assert.Contains(t, out.Error, "message 4 (human) differs", "the first message that differs")
	assert.Contains(t, out.Error, "--keep-requests", "and how to see a diff")
	assert.Contains(t, out.Error, "[truncated")
	assert.Contains(t, r.stderr, "resume with: planner resume d --store "+store)
}

// With --keep-requests the journal holds whole prompts, and the divergence
// report is a line diff of the journaled call and the actual one.
func TestResumeWithKeptRequestsDiffsTheDivergence(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "react.yaml")
	b, err := os.ReadFile(filepath.Join(repoRoot, "configs", "react.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(config, b, 0o600))
	store := filepath.Join(dir, "threads.db")
	r := execPlanner(t, invocation{args: append([]string{"run", "--config", config, "--thread", "k", "--store", store, "--keep-requests", "-q"}, tombaugh...)})
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.WriteFile(config, []byte(strings.Replace(string(b), "observation_limit: 2000", "observation_limit: 100", 1)), 0o600))

	r = cli(t, "resume", "k", "--store", store, "--json", "-q")
	assert.Equal(t, exitFail, r.code)
	var out runOutput
	r.lastJSON(t, &out)
	assert.Contains(t, out.Error, "the journal expected checkpoint 3")
	assert.Contains(t, out.Error, "+++ actual call")
	assert.NotContains(t, out.Error, "--keep-requests", "no advice to do what was done")
}

// The human node waits like an approval: for text (resume --input), then
// for a decision on the draft (resume --deny sends it to the rewrite).
func TestHumanNodeWaitsForTextThenForAnApproval(t *testing.T) {
	store := filepath.Join(t.TempDir(), "threads.db")
	config := filepath.Join(repoRoot, "examples", "pipelines", "human_review.yaml")
	script := "scripted:" + filepath.Join(repoRoot, "examples", "scripts", "human_review_demo.yaml")
	r := cli(t, "run", "--config", config, "--llm", script, "--thread", "rev", "--store", store, "--no-input", "-q", "a short city report")
	require.Equal(t, exitWaiting, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "waits for a person's answer (node ask)")
	assert.Contains(t, r.stdout, "Which city should this cover? (a short city report)")
	assert.Contains(t, r.stdout, `--input "TEXT"`)

	r = cli(t, "resume", "rev", "--store", store, "--approve")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "waits for text from a person (node ask): answer with --input TEXT")

	r = cli(t, "resume", "rev", "--store", store, "--input", "Pisa", "--no-input", "-q")
	require.Equal(t, exitWaiting, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "waits for a person's approval (node review)")
	assert.Contains(t, r.stdout, "Answer so far: Pisa has a leaning tower.")

	r = cli(t, "resume", "rev", "--store", store, "--input", "x")
	assert.Equal(t, exitUsage, r.code, "text is no answer to an approval")

	r = cli(t, "resume", "rev", "--store", store, "--deny", "it is too short", "--json", "-q")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	var out runOutput
	r.lastJSON(t, &out)
	assert.Equal(t, "Pisa's bell tower has leaned since the twelfth century.", out.Answer)
	assert.Equal(t, 2, out.Usage.ModelCalls, "the draft is replayed, the rewrite made")
}
