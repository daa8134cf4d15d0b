package browsertest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm"
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

// heldModel is the scripted model with each reply held until the test
// releases it, so that the page can be seen while a node runs.
type heldModel struct {
	llms.Model
	release <-chan struct{}
}

func (m heldModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	select {
	case <-m.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

func (m heldModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// site is a test server with the page.
type site struct {
	url     string
	release chan struct{} // one value lets one held reply go
	streams atomic.Int64  // event stream requests so far
}

// newSite starts a server over a temporary folder and store, with the
// "held" provider (held:FILE plays the script FILE of that folder, each
// reply held until release gets a value) besides the built-in ones.
func newSite(t *testing.T, token string, opts ...func(*server.Config)) *site {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "configs"), 0o755))
	for name, text := range map[string]string{"configs/approval.yaml": approvalYAML, "configs/react.yaml": reactYAML, "spiders.yaml": spidersScript,
		"spiders.jsonl": `{"id":"spiders","question":"` + spiders + `","answer":"24"}` + "\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	s := &site{release: make(chan struct{}, 16)}
	eng, err := planner.New(planner.WithOfflineProvider("held", "held: a scripted model whose replies wait for the test",
		func(ctx context.Context, cfg config.LLM, _ string) (llms.Model, error) {
			m, err := scripted.Build(ctx, config.LLM{Provider: "scripted", Script: filepath.Join(dir, filepath.Base(cfg.Model))}, "")
			if err != nil {
				return nil, err
			}
			return heldModel{Model: m, release: s.release}, nil
		}, llm.AsKind(llm.KindScripted)))
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
		close(s.release) // a reply still held goes on, and the runs end
		ts.CloseClientConnections()
		ts.Close()
		assert.NoError(t, srv.Close())
		assert.NoError(t, store.Close())
		assert.NoError(t, eng.Close())
	})
	s.url = ts.URL
	return s
}

// chromium finds the browser: $PLANNER_CHROMIUM, else chromium,
// chromium-browser, google-chrome or google-chrome-stable on PATH.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PLANNER_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("PLANNER_CHROMIUM=%s: %v", p, err)
		}
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium: install Debian's chromium (apt-get install chromium; .ci/run does) or set PLANNER_CHROMIUM to a Chrome or Chromium binary")
	return ""
}

// browser is a headless browser tab, with what its console said.
type browser struct {
	t    *testing.T
	ctx  context.Context
	dir  string // where screenshots go
	shot int

	mu      sync.Mutex
	console []string // exceptions and errors the page logged
}

func newBrowser(t *testing.T, ctx context.Context) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 1000), chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	var ended atomic.Bool // no t.Logf once the test is over
	logf := func(format string, args ...any) {
		if !ended.Load() {
			t.Logf(format, args...)
		}
	}
	bctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(logf), chromedp.WithErrorf(logf))
	b := &browser{t: t, ctx: bctx, dir: os.Getenv("PLANNER_SCREENSHOTS")}
	if b.dir == "" {
		b.dir = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(b.dir, 0o755))
	began := time.Now()
	messages := chromedp.Console(bctx) // starts the browser; subscribes before the page loads
	t.Logf("chromium started in %s", time.Since(began).Round(time.Millisecond))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == "error" {
				b.mu.Lock()
				b.console = append(b.console, m.String())
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		began := time.Now()
		cancelTab()
		cancelAlloc()
		<-done
		t.Logf("chromium stopped in %s", time.Since(began).Round(time.Millisecond))
		ended.Store(true)
	})
	return b
}

// do runs actions, failing the test on an error.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	require.NoError(b.t, chromedp.Do(b.ctx, actions...), "%s", what)
}

// until waits for a JavaScript expression to be true.
func (b *browser) until(what, expr string) {
	b.t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		b.screenshot("failed")
		var body string
		body, _ = chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText`))
		b.t.Fatalf("waiting for %s: %v\npage text:\n%s\nconsole: %v", what, err, body, b.messages())
	}
}

// screenshot saves the whole page as NN-name.png and logs its path.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.shot++
	path := filepath.Join(b.dir, fmt.Sprintf("%s-%02d-%s.png", b.t.Name(), b.shot, name))
	require.NoError(b.t, os.WriteFile(path, png, 0o644))
	b.t.Logf("screenshot: %s", path)
}

func (b *browser) messages() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.console...)
}

// css quotes a CSS selector for chromedp.
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// The browser test: open the page, start a scripted ReAct run from
// the form, see its node highlighted and its Thought appear, approve the
// tool call it waits for, and see the answer.
func TestPageRunApproveAnswer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	s := newSite(t, "")
	b := newBrowser(t, ctx)
	start := time.Now()

	b.do("open the page", chromedp.Navigate(s.url+"/"))
	b.until("the pipelines list", `document.querySelector('#pipelines li[data-pipeline="approval"]') !== null`)
	b.do("pick the approval pipeline", chromedp.Click(css(`#pipelines li[data-pipeline="approval"]`)))
	b.until("its graph", `document.querySelector('#graph svg g.node[data-node="act"]') !== null && document.querySelector('#graph').dataset.pipeline === 'approval'`)
	b.screenshot("pipeline")

	b.do("fill in the form",
		chromedp.SetValue(css(`#run-config`), "approval"),
		chromedp.SetValue(css(`#run-question`), spiders),
		chromedp.SetValue(css(`#run-llm`), "held:spiders.yaml"),
		chromedp.SetValue(css(`#run-thread`), "web-spiders"),
		chromedp.Click(css(`#run-start`)))
	b.until("the react node highlighted while the model thinks",
		`document.querySelector('#graph g.node.active[data-node="act"]') !== null && document.querySelector('#run-status').textContent === 'running'`)
	b.screenshot("running")

	s.release <- struct{}{} // the first reply: a Thought and a calculator call
	b.until("the Thought in the stream",
		`[...document.querySelectorAll('#stream li.ev-thought')].some(li => li.textContent.includes('Each spider has 8 legs.'))`)
	b.until("the reply streamed as tokens", `[...document.querySelectorAll('#stream li.reply')].some(li => li.textContent.includes('Action Input: 3*8'))`)
	b.until("the approval", `(() => { const a = document.querySelector('#run-approval .approval[data-thread="web-spiders"]');
		return a !== null && a.textContent.includes('calculator') && a.textContent.includes('3*8') &&
			document.querySelector('#graph g.node.waiting[data-node="act"]') !== null &&
			document.querySelector('#run-status').textContent === 'waiting' &&
			document.querySelector('#approval-count').textContent === '1'; })()`)
	b.screenshot("waiting-for-approval")

	b.do("approve", chromedp.SetValue(css(`#run-approval input.reason`), "3*8 is fine"),
		chromedp.Click(css(`#run-approval .approval[data-thread="web-spiders"] button.approve`)))
	b.until("the resumed run on the node", `document.querySelector('#graph g.node.active[data-node="act"]') !== null`)
	s.release <- struct{}{} // the second reply: the final answer
	b.until("the answer", `(() => { const a = document.querySelector('#answer-text');
		return a !== null && a.textContent === '24' && document.querySelector('#run-status').textContent === 'done'; })()`)
	b.until("the observation and the decision", `document.querySelector('#stream li.ev-observation') !== null && document.querySelector('#stream li.ev-decision') !== null`)
	b.until("the usage of the node", `(() => { const r = document.querySelector('#usage tbody tr[data-node="act"]');
		return r !== null && r.children[1].textContent !== '0' && document.querySelector('#usage tfoot td') !== null; })()`)
	b.until("the node marked done", `document.querySelector('#graph g.node.visited[data-node="act"]') !== null && document.querySelector('#graph g.node.waiting') === null`)
	b.until("no approval left", `document.querySelector('#approval-count').hidden`)
	b.screenshot("answer")

	b.do("open the threads", chromedp.Click(css(`button[data-tab="threads"]`)))
	b.until("the thread, done", `(() => { const r = document.querySelector('#threads tr[data-thread="web-spiders"]');
		return r !== null && r.textContent.includes('done'); })()`)
	b.do("open its history", chromedp.Click(css(`#threads tr[data-thread="web-spiders"] a`)))
	b.until("its history", `[...document.querySelectorAll('#history td')].some(td => td.textContent.includes('calculator approved by web'))`)
	b.screenshot("threads")

	assert.Empty(t, b.messages(), "the page logged errors (a CSP violation, an exception)")
	t.Logf("browser flow took %s", time.Since(start).Round(time.Millisecond))
}

// With a token, the page asks for it once, sends it on every request and
// reads the event stream with fetch (EventSource cannot send it); when the
// server ends a stream, the page reconnects with Last-Event-ID and shows
// every event once.
func TestPageWithToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	s := newSite(t, "s3cret-token", func(c *server.Config) { c.MaxStreamDuration = 300 * time.Millisecond })
	b := newBrowser(t, ctx)

	b.do("open the page", chromedp.Navigate(s.url+"/"))
	b.until("the token box", `!document.querySelector('#token-box').hidden`)
	b.screenshot("token")
	b.do("give the token", chromedp.SetValue(css(`#token-input`), "s3cret-token"), chromedp.Click(css(`#token-form button`)))
	b.until("the pipelines list", `document.querySelector('#pipelines li[data-pipeline="react"]') !== null`)
	b.do("start a run", chromedp.Click(css(`#pipelines li[data-pipeline="react"]`)),
		chromedp.SetValue(css(`#run-config`), "react"),
		chromedp.SetValue(css(`#run-question`), spiders),
		chromedp.SetValue(css(`#run-llm`), "held:spiders.yaml"),
		chromedp.Click(css(`#run-start`)))
	b.until("the node running", `document.querySelector('#graph g.node.active[data-node="act"]') !== null`)
	for deadline := time.Now().Add(10 * time.Second); s.streams.Load() < 3; time.Sleep(20 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the page reconnected %d times", s.streams.Load()-1)
	}
	s.release <- struct{}{}
	s.release <- struct{}{}
	b.until("the Thought", `[...document.querySelectorAll('#stream li.ev-thought')].some(li => li.textContent.includes('Each spider has 8 legs.'))`)
	b.until("the answer", `(() => { const a = document.querySelector('#answer-text'); return a !== null && a.textContent === '24'; })()`)
	b.until("its tokens", `document.querySelector('#stream li.reply') !== null`)
	counts, err := chromedp.Run(b.ctx, chromedp.Evaluate[map[string]int](`(() => { const n = {};
		for (const li of document.querySelectorAll('#stream li')) { const k = li.className.split(' ')[0]; n[k] = (n[k] || 0) + 1; }
		return n; })()`))
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"ev-run_start": 1, "ev-node_start": 1, "reply": 2, "ev-thought": 2, "ev-action": 1, "ev-observation": 1,
		"ev-answer": 1, "ev-node_end": 1, "ev-route": 1, "ev-run_end": 1}, counts, "each event shown once across %d stream requests", s.streams.Load())
	b.screenshot("token-answer")
	var errs []string
	for _, m := range b.messages() {
		if !strings.Contains(m, "401 (Unauthorized)") { // the first request, before the token, is refused
			errs = append(errs, m)
		}
	}
	assert.Empty(t, errs)
}

// A comparison started from the page shows its progress, then the report
// as a table and bar charts.
func TestPageCompare(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	s := newSite(t, "")
	b := newBrowser(t, ctx)

	b.do("open the page", chromedp.Navigate(s.url+"/"))
	b.until("the pipelines list", `document.querySelector('#compare-configs input[value="react"]') !== null`)
	b.do("start a comparison", chromedp.Click(css(`button[data-tab="compare"]`)),
		chromedp.Click(css(`#compare-configs input[value="react"]`)),
		chromedp.SetValue(css(`#compare-suite`), "spiders.jsonl"),
		chromedp.SetValue(css(`#compare-llm`), "scripted:spiders.yaml"),
		chromedp.Click(css(`#compare-form button[type="submit"]`)))
	b.until("the report", `(() => { const rows = document.querySelectorAll('#compare-table tbody tr');
		return document.querySelector('#compare-status').textContent === 'done' && rows.length === 1 &&
			rows[0].children[0].textContent === 'react' && rows[0].children[3].textContent === '100.0%'; })()`)
	b.until("the charts", `document.querySelectorAll('#compare-chart svg').length === 2 && document.querySelector('#compare-chart rect.bar[data-config="react"]') !== null`)
	b.until("the list of comparisons", `document.querySelectorAll('#compares li').length === 1 && document.querySelector('#compares li').textContent.includes('done')`)
	b.screenshot("compare")
	assert.Empty(t, b.messages())
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
