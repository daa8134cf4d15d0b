package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
)

// The tests in this file pin the messages of a run that stops: each names
// the real cause and the fix, and none repeats the misleading words the
// command printed before (a retry hint for a server that is not running,
// "context deadline exceeded" for a time limit, a network error for
// Ctrl-C, an error for a thread that waits for approval).

// closedAddr returns the host:port of a TCP listener that was closed: the
// port refuses connections.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// cotWithLLM writes the cot pipeline with extra YAML (an llm block, a
// limits block) in a temporary folder and returns its path.
func cotWithLLM(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cot.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: cot
nodes:
  - id: reason
    type: cot
edges:
  - {from: START, to: reason}
  - {from: reason, to: END}
`+extra), 0o600))
	return path
}

// assertNoneOf asserts that text contains none of words.
func assertNoneOf(t *testing.T, text string, words ...string) {
	t.Helper()
	for _, w := range words {
		assert.NotContains(t, text, w)
	}
}

func TestAnOllamaThatIsNotRunningFailsAtOnceSayingHowToStartIt(t *testing.T) {
	t.Parallel()
	addr := closedAddr(t)
	config := cotWithLLM(t, fmt.Sprintf("llm: {provider: ollama, model: llama3.1, base_url: \"http://%s\"}\n", addr))
	res := cli(t, "run", "--config", config, "What is 2 + 2?")
	out := res.stdout + res.stderr
	require.Equal(t, exitFail, res.code, out)
	assert.Contains(t, out, "ollama: no server answers at "+addr+" (connection refused): start Ollama (`ollama serve`) or set llm.base_url")
	assert.Equal(t, 1, strings.Count(out, "no server answers"), "printed once: %s", out)
	assertNoneOf(t, out, "retrying in", "raise retry.max_attempts", "gave up after", "retries exhausted")

	var o runOutput
	res = cli(t, "run", "--config", config, "--json", "-q", "What is 2 + 2?")
	require.Equal(t, exitFail, res.code, res.stderr)
	res.lastJSON(t, &o)
	assert.Equal(t, 1, o.Usage.ModelAttempts, "no pointless retries")
	assert.Contains(t, o.Error, "start Ollama (`ollama serve`)")
}

func TestAnOpenAICompatibleServerThatIsNotRunningIsNamedByHostAndPort(t *testing.T) {
	t.Parallel()
	addr := closedAddr(t)
	// A local base URL needs no key; its path is no part of the message.
	config := cotWithLLM(t, fmt.Sprintf("llm: {provider: openai, model: qwen, base_url: \"http://%s/v1\"}\n", addr))
	res := cli(t, "run", "--config", config, "What is 2 + 2?")
	out := res.stdout + res.stderr
	require.Equal(t, exitFail, res.code, out)
	assert.Contains(t, out, "openai: no server answers at "+addr+" (connection refused): start that server or fix llm.base_url")
	assertNoneOf(t, out, "retrying in", "raise retry.max_attempts", "network error", "failed to reach API server", addr+"/v1")
}

// Not parallel: the provider reads OPENAI_* from the process environment.
func TestAnUnreachableOPENAIBaseURLIsNamedWithoutTheKey(t *testing.T) {
	addr := closedAddr(t)
	key := uniqueSecret(t)
	useOpenAI(t, "http://"+addr+"/v1", key)
	res := cli(t, "run", "--config", configPath("cot.yaml"), "--llm", "openai:gpt-4o-mini", "What is 2 + 2?")
	out := res.stdout + res.stderr
	require.Equal(t, exitFail, res.code, out)
	assert.Contains(t, out, "openai: no server answers at "+addr+" (connection refused): start that server or fix $OPENAI_BASE_URL (or llm.base_url)")
	assertNoneOf(t, out, key, "retrying in", "raise retry.max_attempts")
}

func TestARunThatHitsItsTimeLimitSaysWhichAndHowToRaiseIt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, extra string
		flags       []string
		want        string
	}{
		{name: "flag", flags: []string{"--timeout", "300ms"},
			want: "the run hit its time limit of 300ms (--timeout) and was stopped; give it more time with a larger --timeout, e.g. --timeout 10m"},
		{name: "yaml", extra: "limits: {timeout: 300ms}\n",
			want: "the run hit its time limit of 300ms (limits.timeout in CONFIG) and was stopped; raise limits.timeout there or pass --timeout 10m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, _ := hangingServer(t)
			config := cotWithLLM(t, fmt.Sprintf("llm: {provider: openai, model: qwen, base_url: %q}\n%s", url, tt.extra))
			want := strings.ReplaceAll(tt.want, "CONFIG", config)
			for _, json := range []bool{false, true} {
				args := append([]string{"run", "--config", config}, tt.flags...)
				if json {
					args = append(args, "--json")
				}
				res := cli(t, append(args, "What is 2 + 2?")...)
				out := res.stdout + res.stderr
				require.Equal(t, exitFail, res.code, out)
				shown := out
				if json {
					shown = res.stderr // the trace stream; the --json line has it too
				}
				assert.Equal(t, 1, strings.Count(shown, want), "said once: %s", out)
				assertNoneOf(t, out, "context deadline exceeded", "deadline")
				if json {
					var o runOutput
					res.lastJSON(t, &o)
					assert.Equal(t, want, o.Error)
					assert.Equal(t, "timeout", o.Failure)
				}
			}
		})
	}
}

// runUntilInterrupted runs args in-process with a context that is
// cancelled as a SIGINT cancels main's, once the model call reached
// started.
func runUntilInterrupted(t *testing.T, started <-chan struct{}, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	go func() {
		select {
		case <-started:
			cancel(&interrupted{sig: syscall.SIGINT})
		case <-ctx.Done():
		}
	}()
	var stdout, stderr lockedBuffer
	code := execute(ctx, args, process{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		lookupEnv: func(key string) (string, bool) {
			if key == "NO_COLOR" {
				return "1", true
			}
			return "", false
		}})
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func TestCtrlCDuringAModelCallSaysOnlyThatTheRunWasInterrupted(t *testing.T) {
	t.Parallel()
	url, started := hangingServer(t)
	config := cotWithLLM(t, fmt.Sprintf("llm: {provider: openai, model: qwen, base_url: %q}\n", url))
	store := filepath.Join(t.TempDir(), "threads.db")
	res := runUntilInterrupted(t, started, "run", "--config", config, "--thread", "c", "--store", store, "What is 2 + 2?")
	out := res.stdout + res.stderr
	require.Equal(t, exitSIGINT, res.code, out)
	assert.Contains(t, res.stderr, "planner: thread c: interrupted")
	assert.Contains(t, res.stderr, "planner: resume with: planner resume c --store "+store)
	assertNoneOf(t, out, "Error:", "run failed", "network error", "failed to reach API server", "context canceled")

	url, started = hangingServer(t)
	config = cotWithLLM(t, fmt.Sprintf("llm: {provider: openai, model: qwen, base_url: %q}\n", url))
	res = runUntilInterrupted(t, started, "run", "--config", config, "--json", "What is 2 + 2?")
	out = res.stdout + res.stderr
	require.Equal(t, exitSIGINT, res.code, out)
	assert.Contains(t, res.stderr, "planner: interrupted by SIGINT; stopped cleanly")
	assertNoneOf(t, out, "Error:", "run failed", "network error", "context canceled")
	var o runOutput
	res.lastJSON(t, &o)
	assert.Equal(t, "interrupted by SIGINT", o.Error)
}

func TestAThreadThatWaitsForApprovalPrintsNoError(t *testing.T) {
	t.Parallel()
	store := filepath.Join(t.TempDir(), "threads.db")
	res := execPlanner(t, invocation{args: append([]string{"run", "--config", approvalConfig,
		"--thread", "w", "--store", store, "--no-input"}, tombaugh...)})
	require.Equal(t, exitWaiting, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	out := res.stdout + res.stderr
	assert.Contains(t, res.stdout, "[act] Action: calculator[1930 - 1906]")
	assert.Contains(t, res.stdout, "== run waits for approval after ")
	assert.Contains(t, res.stdout, "Thread w waits for approval of calculator (node act) with input:\n  1930 - 1906\nDecide with:  planner resume w --store "+store+" --approve")
	assertNoneOf(t, out, "Error:", "journal: waiting for approval", "run failed")
}

func TestARunOfASuiteTaskShowsTheReferenceAndTheVerdict(t *testing.T) {
	t.Parallel()
	demo07 := []string{"run", "--config", configPath("react.yaml"), "--llm", "sim", "--suite", "demo", "--task", "demo-07"}
	res := cli(t, demo07...)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "model: sim: SIMULATED oracle")
	assert.Contains(t, res.stdout, "\nAnswer: Pisa\nReference: Pisa (correct; scorer em)\n")

	res = cli(t, append(demo07, "--json", "-q")...)
	require.Equal(t, exitOK, res.code, res.stderr)
	var o runOutput
	res.lastJSON(t, &o)
	assert.Equal(t, "Pisa", o.Reference)
	assert.Equal(t, "em", o.Scorer)
	require.NotNil(t, o.Correct)
	assert.True(t, *o.Correct)

	// A reference the answer does not match is reported wrong.
	res = cli(t, append(demo07, "--reference", "Florence")...)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "\nAnswer: Pisa\nReference: Florence (wrong; scorer em)\n")
	res = cli(t, append(demo07, "--reference", "Florence", "--json", "-q")...)
	o = runOutput{}
	res.lastJSON(t, &o)
	require.NotNil(t, o.Correct)
	assert.False(t, *o.Correct)
	assert.Contains(t, res.stdout, `"correct":false`)

	// A question of one's own has no reference: no line, no fields.
	res = cli(t, "run", "--config", configPath("react.yaml"), "--llm", "scripted:"+filepath.Join(repoRoot, "examples", "scripts", "react_demo.yaml"),
		"--json", "-q", "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?")
	require.Contains(t, []int{exitOK, exitIncomplete}, res.code, res.stderr)
	assertNoneOf(t, res.stdout, `"reference"`, `"correct"`, `"scorer"`)
}

// fakeQueue answers DescribeTaskQueue with pollers pollers, and records
// what it was asked.
type fakeQueue struct {
	pollers int
	asked   []string
}

func (f *fakeQueue) DescribeTaskQueue(_ context.Context, queue string, kind enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	f.asked = append(f.asked, queue+" "+kind.String())
	resp := &workflowservice.DescribeTaskQueueResponse{}
	for i := range f.pollers {
		resp.Pollers = append(resp.Pollers, &taskqueuepb.PollerInfo{Identity: fmt.Sprint("worker-", i)})
	}
	return resp, nil
}

func TestCompareOnTemporalSaysWhenNoWorkerPollsItsQueue(t *testing.T) {
	t.Parallel()
	check := pollerCheck{queue: "planner-x", hostPort: "localhost:7233", namespace: "default"}
	var w strings.Builder
	q := &fakeQueue{}
	watchPollers(t.Context(), q, check, &w)
	assert.Equal(t, []string{"planner-x " + enumspb.TASK_QUEUE_TYPE_WORKFLOW.String()}, q.asked)
	assert.Equal(t, "compare: no worker polls task queue planner-x on localhost:7233, so the runs wait; start one: planner worker --temporal localhost:7233 --task-queue planner-x\n", w.String())

	// A queue with a worker: nothing to say.
	w.Reset()
	watchPollers(t.Context(), &fakeQueue{pollers: 1}, check, &w)
	assert.Empty(t, w.String())

	// A comparison over before the grace: no check at all.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	q = &fakeQueue{}
	check.grace = time.Hour
	watchPollers(ctx, q, check, &w)
	assert.Empty(t, q.asked)
	assert.Empty(t, w.String())
}

func TestAServerThatDropsEveryConnectionIsNamedAsWhatToCheck(t *testing.T) {
	t.Parallel()
	// The server accepts each request and closes the connection before
	// any response: something listens, so the call is retried, and the
	// message says the server is what to check.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	config := cotWithLLM(t, fmt.Sprintf("llm: {provider: openai, model: qwen, base_url: %q, retry: {max_attempts: 2, base_delay: 1ms}}\n", srv.URL+"/v1"))
	res := cli(t, "run", "--config", config, "What is 2 + 2?")
	out := res.stdout + res.stderr
	require.Equal(t, exitFail, res.code, out)
	assert.Contains(t, out, "gave up after 2 attempts (retries exhausted; no attempt got an HTTP response: check that the server at llm.base_url is up and speaks HTTP, or raise retry.max_attempts)")
	assert.NotContains(t, out, "check the provider's status")
}
