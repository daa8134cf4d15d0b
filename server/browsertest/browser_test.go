//go:build integration

package browsertest_test

import (
	"context"
	"fmt"
	"github.com/planner-engine/planner/internal/integrationlog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium finds the browser: $PLANNER_CHROMIUM, else chromium,
// chromium-browser, google-chrome or google-chrome-stable on PATH. Without
// one it fails the test, saying how to get one; with one, it notes the run
// in $PLANNER_INTEGRATION_LOG (see integrationlog.Note).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PLANNER_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("PLANNER_CHROMIUM=%s: %v", p, err)
		}
		integrationlog.Note(t, "chromium", p)
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			integrationlog.Note(t, "chromium", p)
			return p
		}
	}
	t.Fatal("no Chromium, which the browser tests need: install Debian's chromium (apt-get install chromium; .ci/run does) " +
		"or set PLANNER_CHROMIUM to a Chrome or Chromium binary")
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

	s.gate.Release(1) // the first reply: a Thought and a calculator call
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
	s.gate.Release(1) // the second reply: the final answer
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
	s.gate.Release(1)
	s.gate.Release(1)
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
			rows[0].children[0].textContent === 'react' && (rows[0].querySelector('td[data-field="success_rate"]') || {}).textContent === '1.000'; })()`)
	b.until("report.md's columns, explained", `(() => { const heads = [...document.querySelectorAll('#compare-table thead th')].map((th) => th.textContent);
		return ['failures', 'recovered', 'calls/task', 'cost $/task'].every((h) => heads.includes(h)) &&
			(document.querySelector('#compare-table th[data-field="failures"]') || {title: ''}).title.includes('failure kind') &&
			(document.querySelector('#compare-table td[data-field="failures"]') || {}).textContent === '-'; })()`)
	b.until("the charts", `document.querySelectorAll('#compare-chart svg').length === 2 && document.querySelector('#compare-chart rect.bar[data-config="react"]') !== null`)
	b.until("the list of comparisons", `document.querySelectorAll('#compares li').length === 1 && document.querySelector('#compares li').textContent.includes('done')`)
	b.screenshot("compare")
	assert.Empty(t, b.messages())
}
