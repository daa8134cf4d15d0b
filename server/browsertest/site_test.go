package browsertest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// The pipelines and the script of the test.
const (
	// approvalYAML is examples/pipelines/react_approval.yaml with the
	// calculator only: each calculator call waits for a human.
	approvalYAML = `name: approval
description: "ReAct whose calculator calls need a human's approval"
tools: [{name: calculator, approve: true}]
limits: {max_steps: 5}
nodes:
  - {id: act, type: react, mode: text, max_iterations: 8}
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`
	reactYAML = `name: react
description: "ReAct with a calculator"
tools: [calculator]
limits: {max_steps: 5}
nodes:
  - {id: act, type: react, mode: text, max_iterations: 8}
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`
	// spidersScript answers spiders in two calls, strictly in order.
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

// site is a test server with the page.
type site struct {
	url     string
	gate    *llmtest.Gate // holds every reply of the "held" models; Release(1) lets one go
	streams atomic.Int64  // event stream requests so far
}

// newSite starts a server over a temporary folder and store, with the
// "held" provider (held:FILE plays the script FILE of that folder, each
// reply held at the site's gate until the test releases it, so that the
// page can be seen while a node runs) besides the built-in ones.
func newSite(t *testing.T, token string, opts ...func(*server.Config)) *site {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "configs"), 0o755))
	for name, text := range map[string]string{"configs/approval.yaml": approvalYAML, "configs/react.yaml": reactYAML, "spiders.yaml": spidersScript,
		"spiders.jsonl": `{"id":"spiders","question":"` + spiders + `","answer":"24"}` + "\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	s := &site{gate: &llmtest.Gate{}}
	eng, err := planner.New(append(full.Options(), planner.WithOfflineProvider("held", "held: a scripted model whose replies wait for the test",
		func(ctx context.Context, cfg config.LLM, _ string) (llms.Model, error) {
			m, err := scripted.Build(ctx, config.LLM{Provider: "scripted", Script: filepath.Join(dir, filepath.Base(cfg.Model))}, "")
			if err != nil {
				return nil, err
			}
			return s.gate.Wrap(m), nil
		}, llm.AsKind(llm.KindScripted)))...)
	require.NoError(t, err)
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "threads.db"))
	require.NoError(t, err)
	cfg := server.Config{Engine: eng, Dir: filepath.Join(dir, "configs"), Root: dir, Store: store,
		CompareDir: filepath.Join(dir, "out"), Token: token, Heartbeat: 200 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.New(cfg)
	require.NoError(t, err)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/events") {
			s.streams.Add(1)
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		s.gate.Open() // a reply still held goes on, and the runs end
		ts.CloseClientConnections()
		ts.Close()
		assert.NoError(t, srv.Close())
		assert.NoError(t, store.Close())
		assert.NoError(t, eng.Close())
	})
	s.url = ts.URL
	return s
}

// The page and its files are served with a strict CSP; unknown paths stay
// JSON 404s. This one needs no browser.
func TestPageServed(t *testing.T) {
	s := newSite(t, "")
	get := func(method, path string) (*http.Response, string) {
		req, err := http.NewRequest(method, s.url+path, nil)
		require.NoError(t, err)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res, string(b)
	}
	for _, c := range []struct{ path, ctype, has string }{
		{"/", "text/html; charset=utf-8", `<script src="/assets/app.js" defer></script>`},
		{"/assets/app.js", "text/javascript; charset=utf-8", "EventSource"},
		{"/assets/app.css", "text/css; charset=utf-8", ".graph g.node.active"},
	} {
		res, body := get("GET", c.path)
		assert.Equal(t, http.StatusOK, res.StatusCode, c.path)
		assert.Equal(t, c.ctype, res.Header.Get("Content-Type"), c.path)
		assert.Contains(t, body, c.has, c.path)
		csp := res.Header.Get("Content-Security-Policy")
		assert.True(t, strings.HasPrefix(csp, "default-src 'self';"), "%s: CSP %q", c.path, csp)
		assert.Contains(t, csp, "frame-ancestors 'none'")
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	}
	res, body := get("GET", "/")
	assert.NotContains(t, body, "http://", "the page requests nothing outside")
	assert.NotContains(t, body, "https://")
	_ = res
	for _, p := range []string{"/nosuch", "/api/nosuch", "/assets/nosuch.js", "/assets/", "/web/index.html"} {
		res, body := get("GET", p)
		assert.Equal(t, http.StatusNotFound, res.StatusCode, p)
		assert.Equal(t, "application/json", res.Header.Get("Content-Type"), p)
		assert.Contains(t, body, `"code":"not_found"`, p)
	}
	res, _ = get("POST", "/")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	res, _ = get("HEAD", "/")
	assert.Equal(t, http.StatusOK, res.StatusCode)
}
