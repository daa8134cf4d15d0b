package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stdioConfig is the Config of the test server: this test binary,
// re-executed with serverEnv set.
func stdioConfig(t *testing.T) mcp.Config {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return mcp.Config{
		Name:           "test",
		Command:        []string{exe},
		Env:            map[string]string{serverEnv: "1"},
		StartupTimeout: 20 * time.Second,
		KillGrace:      time.Second,
	}
}

func connect(t *testing.T, cfg mcp.Config) *mcp.Client {
	t.Helper()
	c, err := mcp.Connect(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.Close()) })
	return c
}

func registry(t *testing.T, c *mcp.Client) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(c.PlannerTools())
	require.NoError(t, err)
	return reg
}

func toolNamed(t *testing.T, c *mcp.Client, name string) *mcp.Tool {
	t.Helper()
	for _, tl := range c.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

func names(c *mcp.Client) []string {
	var out []string
	for _, t := range c.Tools() {
		out = append(out, t.Name())
	}
	return out
}

// TestOneServer runs the tests that leave the server running against one
// shared server, since starting one takes a while under the race detector.
func TestOneServer(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioConfig(t))
	for name, test := range map[string]func(*testing.T, *mcp.Client){
		"ListsEveryToolWithSchemaAndMeta":         testListsEveryToolWithSchemaAndMeta,
		"PlainTextAndJSONInputs":                  testPlainTextAndJSONInputs,
		"ResultContentKinds":                      testResultContentKinds,
		"ToolErrorIsAnErrorObservation":           testToolErrorIsAnErrorObservation,
		"CancellationReturnsPromptlyWithTheCause": testCancellationReturnsPromptlyWithTheCause,
		"ConcurrentCalls":                         testConcurrentCalls,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, c)
		})
	}
}

func testListsEveryToolWithSchemaAndMeta(t *testing.T, c *mcp.Client) {
	// The server lists two tools a page: every page must be fetched.
	assert.ElementsMatch(t, testToolNames(true), names(c))
	assert.Equal(t, "test", c.Name())

	add := toolNamed(t, c, "add")
	assert.Equal(t, "Adds two numbers.", add.Description())
	sc := add.Schema()
	assert.Equal(t, "object", sc["type"])
	props := sc["properties"].(map[string]any)
	assert.Equal(t, "number", props["a"].(map[string]any)["type"])
	assert.Equal(t, "the first number", props["a"].(map[string]any)["description"])
	assert.ElementsMatch(t, []any{"a", "b"}, sc["required"])
	assert.NotContains(t, sc, "$schema")
	sc["type"] = "changed" // Schema returns a copy
	assert.Equal(t, "object", add.Schema()["type"])

	assert.Equal(t, tools.Meta{Timeout: mcp.DefaultCallTimeout}, add.Meta())
	peek := toolNamed(t, c, "peek")
	assert.True(t, peek.Meta().ReadOnly)
	assert.Equal(t, "Peek", peek.Description(), "a tool without description is described by its title")

	var tl tools.Tool = add
	assert.Implements(t, (*tools.Schemer)(nil), tl)
	assert.Implements(t, (*tools.MetaProvider)(nil), tl)
	assert.Implements(t, (*io.Closer)(nil), tl)

	// The registry and prompts see the schema.
	reg := registry(t, c)
	assert.Contains(t, tools.SchemaJSON(reg.Tools()[0]), `"properties"`)
	out, err := reg.Call(context.Background(), "add", `{"a": 2, "b": 40}`)
	require.NoError(t, err)
	assert.Equal(t, "42", out)
}

func TestIncludeExcludeAndPrefix(t *testing.T) {
	t.Parallel()
	cfg := stdioConfig(t)
	cfg.Include = []string{"echo", "add", "crash"}
	cfg.Exclude = []string{"crash"}
	cfg.Prefix = "t."
	c := connect(t, cfg)
	assert.ElementsMatch(t, []string{"t_echo", "t_add"}, names(c), "the prefix is added and made a valid tool name")
	assert.Equal(t, "echo", toolNamed(t, c, "t_echo").RemoteName())
	out, err := toolNamed(t, c, "t_echo").Call(context.Background(), "hi")
	require.NoError(t, err)
	assert.Equal(t, "hi", out)
}

func TestUnknownIncludeOrExcludeNamesTheServersTools(t *testing.T) {
	t.Parallel()
	for _, field := range []string{"include", "exclude"} {
		t.Run(field, func(t *testing.T) {
			t.Parallel()
			cfg := mcp.Config{URL: newHTTPServer(t).URL, Name: "test"}
			if field == "include" {
				cfg.Include = []string{"echo", "ecko"}
			} else {
				cfg.Exclude = []string{"write_file"}
			}
			_, err := mcp.Connect(context.Background(), cfg)
			require.ErrorIs(t, err, mcp.ErrConfig)
			require.ErrorIs(t, err, tools.ErrUnknownTool)
			var ce *mcp.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, field, ce.Field)
			assert.Contains(t, err.Error(), "echo, ")
			assert.Contains(t, err.Error(), "peek")
		})
	}
}

func testPlainTextAndJSONInputs(t *testing.T, c *mcp.Client) {
	ctx := context.Background()
	cases := []struct {
		tool, input, want string
	}{
		{"echo", "hello world", "hello world"},
		{"echo", `{"text": "from json"}`, "from json"},
		{"echo", "  {\"input\": \"renamed\"}  ", "renamed"},
		{"echo", `"quoted"`, "quoted"},
		{"echo", "{not json", "{not json"},
		{"echo", "```json\n{\"text\": \"fenced\"}\n```", "fenced"},
		{"add", `{"a": 1.5, "b": 2}`, "3.5"},
		{"slow", "0", "done"}, // the only argument, a number
		{"pid", "", ""},       // no arguments
		{"pid", "{}", ""},
		{"pid", "none", ""},
		{"pid", `{"input": "none"}`, ""},
	}
	for _, tc := range cases {
		out, err := toolNamed(t, c, tc.tool).Call(ctx, tc.input)
		require.NoError(t, err, "%s %q", tc.tool, tc.input)
		if tc.want != "" {
			assert.Equal(t, tc.want, out, "%s %q", tc.tool, tc.input)
		}
	}

	_, err := toolNamed(t, c, "add").Call(ctx, "2 and 3")
	require.ErrorIs(t, err, tools.ErrBadInput)
	assert.Contains(t, err.Error(), `"a": <number> (required)`)
	assert.Contains(t, err.Error(), `"b": <number> (required)`)
	assert.Contains(t, err.Error(), "plain text")

	_, err = toolNamed(t, c, "add").Call(ctx, `{"a": 1`)
	require.ErrorIs(t, err, tools.ErrBadInput)
	assert.Contains(t, err.Error(), "invalid JSON")

	// Arguments the server's schema refuses come back as an error the
	// model can read.
	_, err = toolNamed(t, c, "add").Call(ctx, `{"a": "one", "b": 2}`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "add: ")
}

func testResultContentKinds(t *testing.T, c *mcp.Client) {
	out, err := toolNamed(t, c, "media").Call(context.Background(), "{}")
	require.NoError(t, err)
	assert.Equal(t, strings.Join([]string{
		"caption",
		"[image image/png, 4 bytes]",
		"[audio audio/wav, 10 bytes]",
		"embedded notes",
		"[resource file:///blob.bin, application/octet-stream, 2 bytes]",
	}, "\n"), out)

	out, err = toolNamed(t, c, "structured").Call(context.Background(), "")
	require.NoError(t, err)
	assert.JSONEq(t, `{"answer": 42}`, out)
}

func testToolErrorIsAnErrorObservation(t *testing.T, c *mcp.Client) {
	_, err := registry(t, c).Call(context.Background(), "fail", "")
	require.ErrorIs(t, err, mcp.ErrToolError)
	assert.Contains(t, err.Error(), "the fail tool always fails")
	assert.True(t, strings.HasPrefix(err.Error(), "fail: "), err.Error())
}

func callPID(t *testing.T, c *mcp.Client) int {
	t.Helper()
	out, err := toolNamed(t, c, "pid").Call(context.Background(), "")
	require.NoError(t, err)
	pid, err := strconv.Atoi(out)
	require.NoError(t, err)
	return pid
}

func TestCrashFailsTheCallAndTheNextCallRestarts(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioConfig(t))
	first := callPID(t, c)

	_, err := toolNamed(t, c, "crash").Call(context.Background(), "")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	assert.Contains(t, err.Error(), "exit status 3")
	assert.Contains(t, err.Error(), "test server: crashing now")

	second := callPID(t, c)
	assert.NotEqual(t, first, second, "a new server process answers")
	assert.Equal(t, 1, c.Restarts())
	assert.Len(t, c.Tools(), len(testToolNames(true)))
}

func TestCallsInFlightDuringACrashAllFail(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioConfig(t))
	ctx := context.Background()
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := toolNamed(t, c, "slow").Call(ctx, `{"seconds": 30}`)
			errs <- err
		}()
	}
	require.Eventually(t, func() bool {
		out, err := toolNamed(t, c, "inflight").Call(ctx, "")
		return err == nil && out == strconv.Itoa(n)
	}, 10*time.Second, 10*time.Millisecond)

	start := time.Now()
	_, err := toolNamed(t, c, "crash").Call(ctx, "")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	for range n {
		require.ErrorIs(t, <-errs, mcp.ErrServerDown)
	}
	assert.Less(t, time.Since(start), 5*time.Second)
	callPID(t, c)
	assert.Equal(t, 1, c.Restarts(), "one restart serves every caller")
}

func TestRestartsAreBounded(t *testing.T) {
	t.Parallel()
	cfg := stdioConfig(t)
	cfg.MaxRestarts = 1
	c := connect(t, cfg)
	crash := toolNamed(t, c, "crash")
	_, err := crash.Call(context.Background(), "")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	callPID(t, c)
	_, err = crash.Call(context.Background(), "")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	_, err = toolNamed(t, c, "pid").Call(context.Background(), "")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	assert.Contains(t, err.Error(), "max_restarts")
	assert.Contains(t, err.Error(), "exit status 3")

	cfg.MaxRestarts = -1
	c = connect(t, cfg)
	_, err = toolNamed(t, c, "crash").Call(context.Background(), "")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	_, err = toolNamed(t, c, "pid").Call(context.Background(), "")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	assert.Equal(t, 0, c.Restarts())
}

func TestCallTimeout(t *testing.T) {
	t.Parallel()
	cfg := stdioConfig(t)
	cfg.CallTimeout = 500 * time.Millisecond
	c := connect(t, cfg)
	slow := toolNamed(t, c, "slow")
	assert.Equal(t, 500*time.Millisecond, slow.Meta().Timeout)
	start := time.Now()
	_, err := slow.Call(context.Background(), "30")
	require.ErrorIs(t, err, tools.ErrToolTimeout)
	assert.Contains(t, err.Error(), "call_timeout")
	assert.Less(t, time.Since(start), 3*time.Second)
	// The server is still up and answers.
	out, err := toolNamed(t, c, "echo").Call(context.Background(), "still here")
	require.NoError(t, err)
	assert.Equal(t, "still here", out)
	assert.Equal(t, 0, c.Restarts())
}

func testCancellationReturnsPromptlyWithTheCause(t *testing.T, c *mcp.Client) {
	cause := errors.New("the user gave up")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(cause) })
	start := time.Now()
	_, err := toolNamed(t, c, "slow").Call(ctx, "30")
	require.ErrorIs(t, err, cause)
	assert.Less(t, time.Since(start), 3*time.Second)
	callPID(t, c)
}

func TestStartupFailures(t *testing.T) {
	t.Parallel()
	t.Run("command not found", func(t *testing.T) {
		cfg := stdioConfig(t)
		cfg.Command = []string{"planner-no-such-mcp-server", "--flag"}
		_, err := mcp.Connect(context.Background(), cfg)
		require.ErrorIs(t, err, mcp.ErrStartup)
		require.ErrorIs(t, err, exec.ErrNotFound)
		assert.Contains(t, err.Error(), "planner-no-such-mcp-server --flag")
	})
	t.Run("server exits", func(t *testing.T) {
		cfg := stdioConfig(t)
		cfg.Env[serverEnv] = "exit"
		_, err := mcp.Connect(context.Background(), cfg)
		require.ErrorIs(t, err, mcp.ErrStartup)
		assert.Contains(t, err.Error(), "exit status 2")
		assert.Contains(t, err.Error(), "bad configuration: missing API token")
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := mcp.Connect(ctx, stdioConfig(t))
		require.ErrorIs(t, err, mcp.ErrStartup)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestCloseIsIdempotentAndEndsCallsInFlight(t *testing.T) {
	t.Parallel()
	c, err := mcp.Connect(context.Background(), stdioConfig(t))
	require.NoError(t, err)
	slow := toolNamed(t, c, "slow")
	done := make(chan error, 1)
	go func() {
		_, err := slow.Call(context.Background(), "30")
		done <- err
	}()
	require.Eventually(t, func() bool {
		out, err := toolNamed(t, c, "inflight").Call(context.Background(), "")
		return err == nil && out == "1"
	}, 10*time.Second, 10*time.Millisecond)

	start := time.Now()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { assert.NoError(t, slow.Close()) })
	}
	wg.Wait()
	require.ErrorIs(t, <-done, mcp.ErrClosed)
	assert.Less(t, time.Since(start), 3*time.Second)
	require.NoError(t, c.Close())
	_, err = slow.Call(context.Background(), "0")
	require.ErrorIs(t, err, mcp.ErrClosed)
}

func testConcurrentCalls(t *testing.T, c *mcp.Client) {
	reg := registry(t, c)
	var wg sync.WaitGroup
	for g := range 24 {
		wg.Go(func() {
			for i := range 5 {
				want := fmt.Sprintf("g%d-%d", g, i)
				out, err := reg.Call(context.Background(), "echo", want)
				if assert.NoError(t, err) {
					assert.Equal(t, want, out)
				}
				out, err = reg.Call(context.Background(), "add", fmt.Sprintf(`{"a": %d, "b": %d}`, g, i))
				if assert.NoError(t, err) {
					assert.Equal(t, strconv.Itoa(g+i), out)
				}
			}
		})
	}
	wg.Wait()
}

func TestStdioServerGetsAMinimalEnvironment(t *testing.T) {
	t.Setenv("PLANNER_TEST_SECRET", "s3cret")
	env := func(c *mcp.Client, name string) string {
		out, err := toolNamed(t, c, "env").Call(context.Background(), name)
		require.NoError(t, err)
		return out
	}

	c := connect(t, stdioConfig(t))
	assert.Empty(t, env(c, "PLANNER_TEST_SECRET"))
	assert.Equal(t, os.Getenv("PATH"), env(c, "PATH"))

	cfg := stdioConfig(t)
	cfg.InheritEnv = true
	assert.Equal(t, "s3cret", env(connect(t, cfg), "PLANNER_TEST_SECRET"))

	cfg = stdioConfig(t)
	cfg.Env["PLANNER_TEST_SECRET"] = "given"
	assert.Equal(t, "given", env(connect(t, cfg), "PLANNER_TEST_SECRET"))
}

func TestStdioServerRunsInDir(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cfg := stdioConfig(t)
	cfg.Dir = dir
	c := connect(t, cfg)
	out, err := toolNamed(t, c, "cwd").Call(context.Background(), "")
	require.NoError(t, err)
	assert.Equal(t, dir, out)
}

func TestStderrIsCopied(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	cfg := stdioConfig(t)
	cfg.Stderr = &buf
	c := connect(t, cfg)
	_, err := toolNamed(t, c, "crash").Call(context.Background(), "")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	assert.Contains(t, buf.String(), "crashing now")
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		cfg   mcp.Config
		field string
	}{
		{"neither", mcp.Config{}, "command"},
		{"both", mcp.Config{Command: []string{"x"}, URL: "http://localhost/mcp"}, "command"},
		{"empty program", mcp.Config{Command: []string{" "}}, "command"},
		{"bad url", mcp.Config{URL: "localhost:8080"}, "url"},
		{"env for url", mcp.Config{URL: "http://localhost/mcp", Env: map[string]string{"A": "b"}}, "env"},
		{"headers for command", mcp.Config{Command: []string{"x"}, Headers: map[string]string{"A": "b"}}, "headers"},
		{"missing dir", mcp.Config{Command: []string{"x"}, Dir: filepath.Join(t.TempDir(), "nope")}, "cwd"},
		{"negative timeout", mcp.Config{Command: []string{"x"}, CallTimeout: -time.Second}, "call_timeout"},
		{"unset header variable", mcp.Config{URL: "http://localhost/mcp", Headers: map[string]string{"Authorization": "Bearer ${PLANNER_TEST_UNSET_TOKEN}"}}, "headers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mcp.Connect(context.Background(), tc.cfg)
			require.ErrorIs(t, err, mcp.ErrConfig)
			var ce *mcp.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.field, ce.Field)
		})
	}
}
