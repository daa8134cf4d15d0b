package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The tests in this package run the real planner binary, built once by
// TestMain, from the repository root, so exit codes, stdout and stderr are
// what a user sees.
var (
	// binary is the path of the built planner binary.
	binary string
	// repoRoot is the repository root, the working directory of every run.
	repoRoot string
)

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "planner-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating a temp folder:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if repoRoot, err = filepath.Abs(filepath.Join("..", "..")); err != nil {
		fmt.Fprintln(os.Stderr, "finding the repository root:", err)
		return 1
	}
	binary = filepath.Join(dir, "planner")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.CommandContext(ctx, "go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the planner binary:", err)
		return 1
	}
	return m.Run()
}

// result is one finished planner run.
type result struct {
	code           int
	stdout, stderr string
}

// lastJSON decodes the last non-empty stdout line into v.
func (r result) lastJSON(t *testing.T, v any) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), v), "last stdout line: %s\nstderr: %s", lines[len(lines)-1], r.stderr)
}

// invocation describes one planner run.
type invocation struct {
	args  []string
	env   []string // extra NAME=value entries
	stdin string
}

// isolatedEnv is the test process environment without any variable that
// could change what planner does (keys, endpoints, PLANNER_* flags).
func isolatedEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, prefix := range []string{"PLANNER_", "OPENAI_", "ANTHROPIC_", "GOOGLE_", "GEMINI_", "MISTRAL_", "NO_COLOR", "GORACE"} {
			if strings.HasPrefix(name, prefix) {
				drop = true
			}
		}
		if !drop {
			env = append(env, kv)
		}
	}
	// A race-enabled binary otherwise sleeps a second at exit; a race it
	// detects still makes it exit with status 66, failing the test.
	return append(env, "NO_COLOR=1", "GORACE=atexit_sleep_ms=0")
}

// execPlanner runs the binary in the repository root and waits for it.
func execPlanner(t *testing.T, in invocation) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, in.args...)
	cmd.Dir = repoRoot
	cmd.Env = append(isolatedEnv(), in.env...)
	cmd.Stdin = strings.NewReader(in.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "planner %v did not run: %v\nstderr: %s", in.args, err, stderr.String())
		code = ee.ExitCode()
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// cli runs the binary with arguments only.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	return execPlanner(t, invocation{args: args})
}

// chatMessage is one message of a chat-completions request.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatRequest is what the fake server reads from a chat-completions call.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stop     []string      `json:"stop"`
	// Authorization is the request's Authorization header.
	Authorization string `json:"-"`
}

// text is every message's content, joined.
func (r chatRequest) text() string {
	var parts []string
	for _, m := range r.Messages {
		parts = append(parts, m.Content)
	}
	return strings.Join(parts, "\n")
}

// reply is one answer of the fake server: a completion, or an HTTP error.
type reply struct {
	content                  string
	promptTokens, completion int
	// status, when not 0 or 200, makes the server answer with that status
	// and errMessage in OpenAI's error envelope.
	status     int
	errMessage string
}

// fakeOpenAI is an httptest server speaking OpenAI's chat-completions wire
// format (non-streaming JSON with usage). It answers each request with
// respond's reply and keeps every request for assertions.
type fakeOpenAI struct {
	srv     *httptest.Server
	respond func(n int, req chatRequest) reply

	mu   sync.Mutex
	reqs []chatRequest
}

func newFakeOpenAI(t *testing.T, respond func(n int, req chatRequest) reply) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{respond: respond}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// baseURL is the value for OPENAI_BASE_URL.
func (f *fakeOpenAI) baseURL() string { return f.srv.URL + "/v1" }

// requests returns the requests received so far.
func (f *fakeOpenAI) requests() []chatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]chatRequest(nil), f.reqs...)
}

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	req.Authorization = r.Header.Get("Authorization")
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()

	rep := f.respond(n, req)
	w.Header().Set("Content-Type", "application/json")
	if rep.status != 0 && rep.status != http.StatusOK {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(rep.status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": rep.errMessage, "type": "invalid_request_error", "code": fmt.Sprint(rep.status)}})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1700000000, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": rep.content}}},
		"usage": map[string]any{"prompt_tokens": rep.promptTokens, "completion_tokens": rep.completion,
			"total_tokens": rep.promptTokens + rep.completion},
	})
}

// errNoLine is returned by findLine when no line matches.
var errNoLine = errors.New("no matching line")

// findLine returns the first line of text that starts with prefix and
// contains sub.
func findLine(text, prefix, sub string) (string, error) {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) && strings.Contains(line, sub) {
			return line, nil
		}
	}
	return "", fmt.Errorf("%w: starting with %q and containing %q", errNoLine, prefix, sub)
}
