package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// Test pipelines, written into each test's configs folder.
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
	// spidersScript answers "How many legs do 3 spiders have?" in two
	// calls, strictly in order.
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

	directYAML = `name: direct
description: "One model call"
nodes:
  - {id: answer, type: direct}
edges:
  - {from: START, to: answer}
  - {from: answer, to: END}
`
	capitalScript = "strict: true\nreplies:\n  - {node: direct, contains: France, text: Paris}\n"
)

// env is one test server: its folder, store, URL and client.
type env struct {
	t      *testing.T
	dir    string // holds configs/, the scripts and the store
	srv    *server.Server
	ts     *httptest.Server
	gate   *llmtest.Gate
	gated  string // the model spec of gate: "gated:N"
	token  string
	script string // path of spidersScript
}

// sharedEngine serves every test (its tokenizer loads once); its "gated"
// provider plays the gatedModel of the env named by the model ("gated:N").
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

// option edits a test server's config.
type option func(*server.Config)

// newEnv starts a test server over a fresh folder and store. The engine
// has the "gated" provider (see gatedModel) besides the built-in ones.
func newEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "configs"), 0o755))
	for name, text := range map[string]string{"configs/react.yaml": reactYAML, "configs/approval.yaml": approvalYAML, "spiders.yaml": spidersScript,
		"configs/direct.yaml": directYAML, "capital.yaml": capitalScript,
		"configs/broken.yaml": "name: broken\nnodes:\n  - {id: a, type: nosuchtype}\nedges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	e := &env{t: t, dir: dir, gate: gatedModel(), script: filepath.Join(dir, "spiders.yaml")}
	id := strconv.FormatInt(gateIDs.Add(1), 10)
	gates.Store(id, e.gate)
	e.gated = "gated:" + id
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "threads.db"))
	require.NoError(t, err)
	cfg := server.Config{Engine: sharedEngine, Dir: filepath.Join(dir, "configs"), Root: dir, Store: store, CompareDir: filepath.Join(dir, "out"),
		Heartbeat: 50 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	e.token = cfg.Token
	e.srv, err = server.New(cfg)
	require.NoError(t, err)
	e.ts = httptest.NewServer(e.srv)
	t.Cleanup(func() {
		e.ts.CloseClientConnections()
		e.ts.Close()
		require.NoError(t, e.srv.Close())
		require.NoError(t, store.Close())
		gates.Delete(id)
	})
	return e
}

// response is an HTTP answer.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// json decodes the body into v.
func (r response) json(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "body: %s", r.body)
}

// json2 decodes the body as an object.
func (r response) json2(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	r.json(t, &m)
	return m
}

// errCode is the code of an error body.
func (r response) errCode(t *testing.T) string {
	t.Helper()
	var b server.ErrorBody
	r.json(t, &b)
	require.NotEmpty(t, b.Error.Message, "an error body has a message: %s", r.body)
	return b.Error.Code
}

// do sends a request; body is sent as JSON unless it is a string or
// []byte. hdr are header name, value pairs.
func (e *env) do(method, path string, body any, hdr ...string) response {
	e.t.Helper()
	var rd io.Reader
	ctype := "application/json"
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		require.NoError(e.t, err)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	require.NoError(e.t, err)
	if rd != nil {
		req.Header.Set("Content-Type", ctype)
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := e.ts.Client().Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return response{code: res.StatusCode, header: res.Header, body: b}
}

// start starts a run and returns its id and thread.
func (e *env) start(req server.RunRequest) server.Accepted {
	e.t.Helper()
	r := e.do("POST", "/api/runs", req)
	require.Equal(e.t, http.StatusAccepted, r.code, "%s", r.body)
	var acc server.Accepted
	r.json(e.t, &acc)
	return acc
}

// wait polls a run until its status is not queued or running.
func (e *env) wait(id string) server.RunView {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := e.do("GET", "/api/runs/"+id, nil)
		require.Equal(e.t, http.StatusOK, r.code, "%s", r.body)
		var v server.RunView
		r.json(e.t, &v)
		if v.Status != server.StatusQueued && v.Status != "running" {
			return v
		}
		require.True(e.t, time.Now().Before(deadline), "run %s still %s", id, v.Status)
		time.Sleep(5 * time.Millisecond)
	}
}

// sseEvent is one event of a stream.
type sseEvent struct {
	id    string
	event string
	data  string
}

// stream opens a run's event stream; lastID, when set, is sent as
// Last-Event-ID.
func (e *env) stream(ctx context.Context, id, lastID string) (*http.Response, <-chan sseEvent) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", e.ts.URL+"/api/runs/"+id+"/events", nil)
	require.NoError(e.t, err)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	res, err := e.ts.Client().Do(req)
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusOK, res.StatusCode)
	require.Equal(e.t, "text/event-stream", res.Header.Get("Content-Type"))
	ch := make(chan sseEvent, 1000)
	go func() {
		defer close(ch)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.event != "" || ev.data != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				ch <- sseEvent{event: "comment"}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	return res, ch
}

// gatedModel returns a test model that plays a ReAct run of n calculator
// steps (n is the number after "steps:" in the question) behind a gate
// that is open until a test holds it: then each reply waits for a
// release. Its reply depends only on the prompt, so a resumed run gets
// the same replies.
func gatedModel() *llmtest.Gate {
	g := &llmtest.Gate{Model: llmtest.Func(sumSteps)}
	g.Open()
	return g
}

var (
	stepRE  = regexp.MustCompile(`1000\+(\d+)`)
	countRE = regexp.MustCompile(`steps:(\d+)`)
)

// sumSteps answers a ReAct prompt with the next calculator step of the
// sum, or its final answer once the question's steps are done.
func sumSteps(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	prompt := llmtest.Text(msgs)
	n := 3
	if c := countRE.FindStringSubmatch(prompt); c != nil {
		n, _ = strconv.Atoi(c[1])
	}
	next := 0
	for _, s := range stepRE.FindAllStringSubmatch(prompt, -1) {
		if i, _ := strconv.Atoi(s[1]); i+1 > next {
			next = i + 1
		}
	}
	text := fmt.Sprintf("Thought: step %d of the sum.\nAction: calculator\nAction Input: 1000+%d", next, next)
	if next >= n {
		text = fmt.Sprintf("Thought: I added every step.\nFinal Answer: %d", 1000*n+n*(n-1)/2)
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text, StopReason: "stop"}}}, nil
}
