package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopScript is a scripted model that repeats one action forever; the
// ReAct repeat guard ends the loop and the finalizer answers from what is
// known, so the run ends with an incomplete best-effort answer.
const loopScript = `strict: false
fallback: "Final Answer: probably 330 metres"
replies:
  - node: act
    times: 100
    text: "Thought: look it up\nAction: search\nAction Input: Eiffel Tower height"
`

func TestIncompleteAnswersExitWithCode4(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "loop.yaml")
	require.NoError(t, os.WriteFile(script, []byte(loopScript), 0o600))
	for _, asJSON := range []bool{false, true} {
		name := "terminal"
		if asJSON {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := []string{"run", "--config", configPath("react.yaml"), "--llm", "scripted:" + script, "How tall is the Eiffel Tower?"}
			if asJSON {
				args = append(args, "--json")
			}
			res := cli(t, args...)
			require.Equal(t, exitIncomplete, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			if asJSON {
				var out runOutput
				res.lastJSON(t, &out)
				assert.False(t, out.Complete)
				assert.Equal(t, "loop", out.Failure)
				assert.NotEmpty(t, out.Answer, "a best-effort answer, not silence")
			} else {
				assert.Contains(t, res.stdout, "(incomplete: ")
			}
		})
	}
}

// TestTheBinaryMapsARunToItsExitCode is the smoke test of main itself: the
// planner, run as a process of its own, reads the task from stdin and PLANNER_LLM from its
// environment, prints the incomplete answer and exits with code 4.
func TestTheBinaryMapsARunToItsExitCode(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "loop.yaml")
	require.NoError(t, os.WriteFile(script, []byte(loopScript), 0o600))
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := mainCommand(ctx, t, append(isolatedEnv(), "PLANNER_LLM=scripted:"+script), "run", "--config", "configs/react.yaml", "-")
	cmd.Stdin = strings.NewReader("How tall is the Eiffel Tower?\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	assert.Equal(t, exitIncomplete, ee.ExitCode(), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	assert.Contains(t, stdout.String(), "How tall is the Eiffel Tower?", "the task came from stdin")
	assert.Contains(t, stdout.String(), "(incomplete: ")
}

// hangingServer accepts chat-completions requests and never answers them
// until the client goes away; started is closed at the first request.
func hangingServer(t *testing.T) (url string, started <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice when the client goes.
		_, _ = io.Copy(io.Discard, r.Body)
		once.Do(func() { close(ch) })
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute): // a safety net for a broken test
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", ch
}

func TestSignalsStopARunCleanlyWithShellExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		sig      syscall.Signal
		wantCode int
		name     string
	}{
		{syscall.SIGINT, exitSIGINT, "SIGINT"},
		{syscall.SIGTERM, exitSIGTERM, "SIGTERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, started := hangingServer(t)
			tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			cmd := mainCommand(ctx, t, append(isolatedEnv(), "OPENAI_BASE_URL="+url, "OPENAI_API_KEY=sk-test-signal-0000000000"),
				"run", "--config", "configs/cot.yaml", "--llm", "openai:gpt-4o-mini", "--trace", tracePath, "What is 2 + 2?")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			select {
			case <-started:
			case <-ctx.Done():
				t.Fatalf("the model call never reached the server; stderr: %s", stderr.String())
			}
			require.NoError(t, cmd.Process.Signal(tt.sig))
			err := cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
			assert.Equal(t, tt.wantCode, ee.ExitCode(), "stderr: %s", stderr.String())
			assert.Contains(t, stderr.String(), "interrupted by "+tt.name)
			assert.NotContains(t, stderr.String(), "exiting now", "the run stopped by itself, not by the watchdog")

			// The trace so far was saved: the run's start and its end.
			f, err := os.Open(tracePath)
			require.NoError(t, err)
			defer f.Close()
			var kinds []string
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				var ev struct {
					Kind string `json:"kind"`
				}
				require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
				kinds = append(kinds, ev.Kind)
			}
			require.NotEmpty(t, kinds)
			assert.Equal(t, "run_start", kinds[0])
			assert.Equal(t, "run_end", kinds[len(kinds)-1])
		})
	}
}

func TestSignalWatcherExitsOnASecondSignal(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var stderr bytes.Buffer
	exited := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		watchSignals(sigs, cancel, &stderr, func(code int) { exited <- code })
	}()
	sigs <- syscall.SIGTERM
	<-ctx.Done()
	var cause *interrupted
	require.ErrorAs(t, context.Cause(ctx), &cause)
	assert.Equal(t, exitSIGTERM, cause.exitCode())
	sigs <- os.Interrupt
	<-done
	assert.Equal(t, exitSIGTERM, <-exited, "the code of the first signal")
	assert.Contains(t, stderr.String(), "received again")
}

// Not parallel: the provider reads OPENAI_* from the process environment.
func TestAProviderErrorIsPrintedOnceAndEveryAttemptIsCounted(t *testing.T) {
	srv := newFakeOpenAI(t, func(int, chatRequest) reply {
		return reply{status: http.StatusServiceUnavailable, errMessage: "the upstream is overloaded"}
	})
	useOpenAI(t, srv.baseURL(), "sk-test-once-000000000000")
	res := cli(t, "run", "--config", configPath("cot.yaml"), "--llm", "openai:gpt-4o-mini", "--json", "What is 2 + 2?")
	require.Equal(t, exitFail, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	require.Len(t, srv.requests(), 3, "503 is retried up to retry.max_attempts")
	assert.Equal(t, 1, strings.Count(res.stderr, "the upstream is overloaded"), "stderr: %s", res.stderr)
	assert.Equal(t, 2, strings.Count(res.stderr, "↻ retrying in"), "each wait for a retry is printed: %s", res.stderr)
	var out runOutput
	res.lastJSON(t, &out)
	assert.Equal(t, "provider", out.Failure)
	assert.Equal(t, 0, out.Usage.ModelCalls)
	assert.Equal(t, 3, out.Usage.ModelAttempts, "failed attempts are counted")
	assert.Equal(t, 1, out.Usage.FailedCalls)
}

func TestRunHelpShowsTheDefaultLimits(t *testing.T) {
	t.Parallel()
	res := cli(t, "run", "--help")
	require.Equal(t, 0, res.code)
	assert.Contains(t, res.stdout, "defaults to 10m0s", "the whole-run timeout")
	assert.Contains(t, res.stdout, "default 2m0s for real providers", "the per-call timeout")
	assert.Contains(t, res.stdout, "4 the run ended with an\nincomplete best-effort answer")
}
