package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planner-engine/planner/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// servingLine is serve's first stdout line; it names the address.
var servingLine = regexp.MustCompile(`planner: serving http://(\S+) `)

// startServe runs planner serve in-process, as main does, on a free
// loopback port, and returns its address, a function that stops it with
// SIGTERM's cancellation cause and returns its result, and its streams.
func startServe(t *testing.T, args ...string) (addr string, stop func() result) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(t.Context())
	t.Cleanup(func() { cancel(nil) })
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--dir", filepath.Join(repoRoot, "configs")}, args...), process{
			stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
			lookupEnv: func(string) (string, bool) { return "", false },
		})
	}()
	require.Eventually(t, func() bool { return servingLine.MatchString(stdout.String()) }, 30*time.Second, 10*time.Millisecond,
		"serve did not start; stderr: %s", stderr.String())
	addr = servingLine.FindStringSubmatch(stdout.String())[1]
	return addr, func() result {
		cancel(&interrupted{sig: syscall.SIGTERM})
		var code int
		select {
		case code = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not stop after SIGTERM")
		}
		return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	}
}

func TestServeSIGTERMWithNothingRunningExitsZero(t *testing.T) {
	store := filepath.Join(t.TempDir(), "threads.db")
	_, stop := startServe(t, "--store", store)
	res := stop()
	assert.Equal(t, exitOK, res.code, "a graceful SIGTERM is no failure; stderr: %s", res.stderr)
	assert.Contains(t, res.stderr, "planner: serve stopped by SIGTERM; nothing was running")
	assert.NotContains(t, res.stderr, "saved as interrupted", "nothing ran, so nothing was saved")
	assert.Contains(t, res.stdout, "threads in "+store)
}

func TestServeDeprecatedDBFlagStillWorks(t *testing.T) {
	store := filepath.Join(t.TempDir(), "old.db")
	_, stop := startServe(t, "--db", store)
	res := stop()
	assert.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "threads in "+store, "--db still names the thread store")
	assert.Contains(t, res.stderr, "--db (PLANNER_DB) is deprecated; use --store")

	bad := cli(t, "serve", "--store", "a.db", "--db", "b.db")
	assert.Equal(t, exitUsage, bad.code)
	assert.Contains(t, bad.stderr, `--store "a.db" and the deprecated --db "b.db" name different thread stores`)
}

// TestServeSIGTERMSavesRunningRuns: a run waiting on its model when
// SIGTERM comes is saved as an interrupted thread, and serve says so.
func TestServeSIGTERMSavesRunningRuns(t *testing.T) {
	asked, release := make(chan struct{}, 1), make(chan struct{})
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		select { // answers only when the run gives up (or the test ends)
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(model.Close)
	t.Cleanup(func() { close(release) })
	useOpenAI(t, model.URL+"/v1", "sk-test-serve-sigterm")
	store := filepath.Join(t.TempDir(), "threads.db")
	addr, stop := startServe(t, "--store", store)

	body, err := json.Marshal(map[string]string{"config": "cot.yaml", "question": "What is 17 * 23?", "llm": "openai:gpt-4o-mini", "thread": "slow-one"})
	require.NoError(t, err)
	resp, err := http.Post("http://"+addr+"/api/runs", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the run never called its model")
	}

	res := stop()
	assert.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stderr, "planner: serve stopped by SIGTERM; 1 running run saved as interrupted threads: slow-one")
	assert.NotContains(t, res.stderr, "nothing was running")

	s, err := openStore(t.Context(), process{lookupEnv: func(string) (string, bool) { return "", false }}, store)
	require.NoError(t, err)
	defer s.Close()
	th, err := s.Thread(t.Context(), "slow-one")
	require.NoError(t, err)
	assert.Equal(t, journal.StatusInterrupted, th.Status, "the thread resumes later")
}
