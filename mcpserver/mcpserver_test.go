package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/mcpserver"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

const (
	reactYAML = `name: react
description: "ReAct with a calculator"
tools: [calculator]
limits: {max_steps: 5}
nodes:
  - {id: act, type: react, mode: text, max_iterations: 12}
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`
	approvalYAML = `name: approval
description: "ReAct whose calculator calls need approval"
tools: [{name: calculator, approve: true}]
limits: {max_steps: 5}
nodes:
  - {id: act, type: react, mode: text, max_iterations: 12}
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`
	spidersScript = `strict: true
replies:
  - node: react
    contains: "3 spiders"
    text: |
      Thought: Each spider has 8 legs.
      Action: calculator
      Action Input: 3*8
  - node: react
    regex: '\b24\b'
    text: |
      Thought: 3 spiders have 24 legs.
      Final Answer: 24
`
	spiders = "How many legs do 3 spiders have?"
)

var (
	sharedEngine *planner.Engine
	gates        sync.Map // id -> *llmtest.Gate
	gateIDs      atomic.Int64
)

func TestMain(m *testing.M) {
	var err error
	sharedEngine, err = planner.New(append(full.Options(), planner.WithOfflineProvider("gated", "gated: a test model", func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		g, ok := gates.Load(cfg.Model)
		if !ok {
			return nil, fmt.Errorf("no gated model %q", cfg.Model)
		}
		return g.(*llmtest.Gate), nil
	}))...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = sharedEngine.Close()
	os.Exit(code)
}

// env is a planner server over a temp folder of two pipelines.
type env struct {
	srv   *server.Server
	gate  *llmtest.Gate
	gated string // model spec of gate
}

func newEnv(t *testing.T, llm string, edit ...func(*server.Config)) *env {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "configs"), 0o755))
	for name, text := range map[string]string{"configs/react.yaml": reactYAML, "configs/approval.yaml": approvalYAML, "spiders.yaml": spidersScript} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	e := &env{gate: &llmtest.Gate{Model: llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Thought: done.\nFinal Answer: 7", StopReason: "stop"}}}, nil
	})}}
	e.gate.Open()
	id := strconv.FormatInt(gateIDs.Add(1), 10)
	gates.Store(id, e.gate)
	e.gated = "gated:" + id
	if llm == "gated" {
		llm = e.gated
	} else {
		llm = "scripted:" + filepath.Join(dir, "spiders.yaml")
	}
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "threads.db"))
	require.NoError(t, err)
	cfg := server.Config{Engine: sharedEngine, Dir: filepath.Join(dir, "configs"), Root: dir, Store: store, CompareDir: filepath.Join(dir, "out"), LLM: llm}
	for _, f := range edit {
		f(&cfg)
	}
	e.srv, err = server.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, e.srv.Close())
		require.NoError(t, store.Close())
		gates.Delete(id)
	})
	return e
}

// connect connects a client with opts to mcpserver.New(e.srv) in memory.
func (e *env) connect(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(e.srv).Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

func structured(t *testing.T, res *mcp.CallToolResult) mcpserver.Output {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var out mcpserver.Output
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestToolsArePipelines(t *testing.T) {
	e := newEnv(t, "scripted")
	cs := e.connect(t, nil)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if tl.Name == "react" {
			assert.Contains(t, tl.Description, "ReAct with a calculator")
			assert.Contains(t, tl.Description, "paradigm: react")
			schema, err := json.Marshal(tl.InputSchema)
			require.NoError(t, err)
			assert.Contains(t, string(schema), `"question"`)
			assert.Contains(t, string(schema), `"required":["question"]`)
		}
	}
	assert.ElementsMatch(t, e.srv.Pipelines(), names)
	assert.ElementsMatch(t, []string{"react", "approval"}, names)
}

func TestCallReturnsTheAnswerAndReportsProgress(t *testing.T) {
	e := newEnv(t, "scripted")
	var mu sync.Mutex
	var progress []*mcp.ProgressNotificationParams
	cs := e.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, r.Params)
	}})
	params := &mcp.CallToolParams{Name: "react", Arguments: map[string]any{"question": spiders, "thread": "legs"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "24", text(res))
	out := structured(t, res)
	assert.Equal(t, "24", out.Answer)
	assert.True(t, out.Complete)
	assert.Equal(t, "done", out.Status)
	assert.Equal(t, "legs", out.Thread)
	assert.NotEmpty(t, out.RunID)
	assert.Equal(t, 2, out.Usage.ModelCalls)
	assert.Equal(t, 1, out.Usage.ToolCalls)

	// Notifications arrive asynchronously: wait for the last (run_end).
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(progress) > 0 && progress[len(progress)-1].Message == "run_end"
	}, 5*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	var msgs []string
	last := 0.0
	for _, p := range progress {
		assert.Equal(t, "tok-1", p.ProgressToken)
		assert.Greater(t, p.Progress, last, "progress increases")
		last = p.Progress
		msgs = append(msgs, p.Message)
	}
	joined := strings.Join(msgs, "\n")
	assert.Contains(t, joined, "action act")
	assert.Contains(t, joined, "run_end")
	assert.NotContains(t, joined, "token")
}

func TestFailedRunIsAnErrorResult(t *testing.T) {
	e := newEnv(t, "scripted")
	cs := e.connect(t, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "react", Arguments: map[string]any{"question": "What is the capital of Peru?"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.NotEmpty(t, text(res))
	assert.Equal(t, "failed", structured(t, res).Status)

	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "react", Arguments: map[string]any{"question": "  "}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "question is empty")
}

func TestApprovalWithoutElicitationReturnsTheWaitingThread(t *testing.T) {
	e := newEnv(t, "scripted")
	cs := e.connect(t, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "approval", Arguments: map[string]any{"question": spiders, "thread": "wait-1"}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	out := structured(t, res)
	assert.Equal(t, "waiting", out.Status)
	assert.Equal(t, "wait-1", out.Thread)
	assert.Contains(t, text(res), "waits for approval")
	assert.Contains(t, text(res), "planner resume wait-1 --approve")
	assert.Contains(t, text(res), "/api/approvals/wait-1")
	assert.Contains(t, text(res), "calculator")
}

func TestApprovalThroughElicitation(t *testing.T) {
	for _, tt := range []struct {
		name    string
		answer  *mcp.ElicitResult
		wantAns string
	}{
		{"approved", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, "24"},
		{"declined", &mcp.ElicitResult{Action: "decline"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "scripted")
			var asked atomic.Value
			cs := e.connect(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Store(r.Params.Message)
				return tt.answer, nil
			}})
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "approval", Arguments: map[string]any{"question": spiders}})
			require.NoError(t, err)
			msg, _ := asked.Load().(string)
			assert.Contains(t, msg, "calculator")
			assert.Contains(t, msg, "3*8")
			out := structured(t, res)
			assert.NotEqual(t, "waiting", out.Status, text(res))
			if tt.wantAns != "" {
				require.False(t, res.IsError, text(res))
				assert.Equal(t, tt.wantAns, out.Answer)
				assert.Equal(t, "done", out.Status)
			}
		})
	}
}

func TestCancellationStopsTheRun(t *testing.T) {
	e := newEnv(t, "gated")
	e.gate.Hold()
	cs := e.connect(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "react", Arguments: map[string]any{"question": "add", "thread": "stopped"}})
		done <- err
	}()
	require.Eventually(t, func() bool { return e.gate.Waiting() > 0 }, 10*time.Second, 10*time.Millisecond)
	cancel()
	require.Error(t, <-done)
	require.Eventually(t, func() bool {
		for _, r := range e.srv.Runs() {
			if r.Thread == "stopped" {
				return r.Status == "interrupted"
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "the run of a cancelled call is interrupted")
}

func TestStreamableHTTPBehindTheToken(t *testing.T) {
	const token = "s3cret-token-for-mcp"
	e := newEnv(t, "scripted", func(c *server.Config) { c.Token = token })
	e.srv.Handle("/mcp", mcpserver.Handler(e.srv))
	ts := httptest.NewServer(e.srv)
	t.Cleanup(ts.Close)

	resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	hc := &http.Client{Transport: bearer{token: token}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "react", Arguments: map[string]any{"question": spiders}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "24", structured(t, res).Answer)
}

// bearer adds the token to each request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestRetryWithAnUnknownRequestStateIsAnError(t *testing.T) {
	e := newEnv(t, "scripted")
	cs := e.connect(t, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	}})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "approval", Arguments: map[string]any{"question": spiders},
		RequestState: "not-a-state", InputResponses: mcp.InputResponseMap{"approval": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "unknown request state")
	assert.Contains(t, text(res), "planner resume")
}

// A call that names an existing thread asks a follow-up on its
// conversation: it runs as the thread's next turn.
func TestACallOnAnExistingThreadIsAFollowUp(t *testing.T) {
	e := newEnv(t, "gated")
	cs := e.connect(t, nil)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "react", Arguments: map[string]any{"question": "How many?", "thread": "conv"}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "conv", structured(t, res).Thread)

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "react", Arguments: map[string]any{"question": "And then?", "thread": "conv"}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	out := structured(t, res)
	assert.Equal(t, "conv.turn2", out.Thread)
	assert.Equal(t, "done", out.Status)
	assert.Equal(t, "7", out.Answer)
}
