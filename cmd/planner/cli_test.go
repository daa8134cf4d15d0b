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

// Almost every test here runs the command line in-process through execute,
// the function main calls, with buffers for the standard streams, so exit
// codes, stdout and stderr are what a user sees. Only the tests that need a
// separate process (signals, and one smoke test of main itself) run main in
// a process of its own (see mainCommand).

// repoRoot is the repository root; go test runs in the package folder.
// Tests pass absolute paths, so nothing depends on the working directory.
var repoRoot = func() string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(fmt.Sprintf("finding the repository root: %v", err))
	}
	return root
}()

// configPath returns the absolute path of a shipped pipeline file.
func configPath(name string) string { return filepath.Join(repoRoot, "configs", name) }

// runMainEnv, set to 1 in the environment of this package's test binary,
// makes the binary run the planner's main instead of the tests. The tests
// that need a separate process (signals, the exit code of main) re-run
// their own binary that way: it is main, compiled as the tests are (with
// the race detector under -race), without building a second binary. The
// real binary is built and run by make run and make demo.
const runMainEnv = "PLANNER_CLI_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// mainCommand returns a command that runs the planner's main in a separate
// process with args, in the repository root, with only the environment in
// env (plus what makes the test binary run main).
func mainCommand(ctx context.Context, t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = repoRoot
	cmd.Env = append(env, runMainEnv+"=1")
	return cmd
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
	args []string
	// env holds NAME=value entries, the only variables the command's own
	// lookups see (PLANNER_* flags, NO_COLOR). Model providers and the
	// secret scrubber read the process environment: set OPENAI_* with
	// useOpenAI, in a test that is not parallel.
	env   []string
	stdin string
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes, as the
// *os.File it stands in for is.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// execPlanner runs the command line in-process, as main does, and waits
// for it.
func execPlanner(t *testing.T, in invocation) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	env := map[string]string{"NO_COLOR": "1"}
	for _, kv := range in.env {
		name, value, ok := strings.Cut(kv, "=")
		require.True(t, ok, "env entry %q is not NAME=value", kv)
		env[name] = value
	}
	var stdout, stderr lockedBuffer
	code := execute(ctx, in.args, process{
		stdin:  strings.NewReader(in.stdin),
		stdout: &stdout,
		stderr: &stderr,
		lookupEnv: func(key string) (string, bool) {
			v, ok := env[key]
			return v, ok
		},
	})
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// cli runs the command line with arguments only.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	return execPlanner(t, invocation{args: args})
}

// useOpenAI points the openai provider at baseURL with key ("" leaves no
// key) for the rest of the test. Providers read the process environment,
// so the test cannot be parallel.
func useOpenAI(t *testing.T, baseURL, key string) {
	t.Helper()
	t.Setenv("OPENAI_BASE_URL", baseURL)
	// Empty counts as unset, so a key of the developer's shell is not sent.
	t.Setenv("OPENAI_API_KEY", key)
}

// isolatedEnv is the test process environment without any variable that
// could change what the planner binary does (keys, endpoints, PLANNER_*
// flags), for the tests that run it.
func isolatedEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, prefix := range []string{"PLANNER_", "OPENAI_", "ANTHROPIC_", "GOOGLE_", "GEMINI_", "MISTRAL_", "NO_COLOR", "GORACE", "OTEL_"} {
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
