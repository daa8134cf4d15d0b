//go:build integration

package browsertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/eval/viewer"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/server"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// hostileAnswer is model output that would run if the page wrote it as
// markup: it must show as text, and window.pwned stay unset.
const hostileAnswer = `</script><script>window.pwned=1;alert(1)</script>`

// tasksData has two columns that agree on "legs" and "sky" and disagree on
// "capital", where cot answers hostileAnswer.
func tasksData() viewer.Data {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	return viewer.Data{
		Title:  "demo: react vs cot",
		Banner: "SIMULATED: numbers of the browser test",
		Tasks: []viewer.Task{
			{ID: "legs", Question: "How many legs do 3 spiders have?", Reference: "24"},
			{ID: "capital", Question: `What is the capital of France? <img src=x onerror="window.pwned=2">`, Reference: "Paris"},
			{ID: "sky", Question: "What colour is the sky?", Reference: "blue"},
		},
		Columns: []viewer.Column{{Config: "react"}, {Config: "cot", Model: "sim", Label: "cot @ sim"}},
		Runs: []viewer.Run{
			{Task: 0, Column: 0, Answer: "24", Scored: true, Correct: true, CostUSD: 0.0012, LatencyMS: 1500, ModelCalls: 2, ToolCalls: 1},
			{Task: 0, Column: 1, Answer: "24", Scored: true, Correct: true},
			{Task: 1, Column: 0, Answer: "Paris", Scored: true, Correct: true, ModelCalls: 1, Events: []trace.Event{
				{Seq: 1, Time: at, Kind: trace.KindRunStart, Text: "What is the capital of France?"},
				{Seq: 2, Time: at.Add(5 * time.Millisecond), Kind: trace.KindLLMCall, Node: "act", ElapsedMS: 42, Usage: &trace.Usage{PromptTokens: 120, CompletionTokens: 9}},
				{Seq: 3, Time: at.Add(6 * time.Millisecond), Kind: trace.KindThought, Node: "act", Text: "I know the capital."},
				{Seq: 4, Time: at.Add(7 * time.Millisecond), Kind: trace.KindAnswer, Node: "act", Text: "Paris"},
			}},
			{Task: 1, Column: 1, Answer: hostileAnswer, Scored: true, Failure: "wrong", Events: []trace.Event{
				{Seq: 1, Time: at, Kind: trace.KindAnswer, Node: "think", Text: hostileAnswer},
			}},
			{Task: 2, Column: 0, Answer: "blue", Scored: true, Correct: true},
			{Task: 2, Column: 1, Answer: "blue", Scored: true, Correct: true},
		},
	}
}

// tasks.html: the grid with its marks and counts, the disagreement and
// text filters, a cell's timeline, and model output shown as text.
func TestTasksPage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	path, err := viewer.WriteFile(t.TempDir(), tasksData())
	require.NoError(t, err)
	b := newBrowser(t, ctx)

	b.do("open the page", chromedp.Navigate("file://"+filepath.ToSlash(path)))
	b.until("the grid", `document.querySelectorAll('#grid tbody tr').length === 3`)
	b.until("the banner and the column counts", `document.querySelector('#banner').textContent === 'SIMULATED: numbers of the browser test' &&
		document.querySelector('#grid th[data-col="0"]').textContent === 'react3/3 correct' &&
		document.querySelector('#grid th[data-col="1"]').textContent === 'cot @ sim2/3 correct'`)
	b.until("the cells", `(() => { const cell = (task, col) => document.querySelector('#grid tr[data-task="' + task + '"] td[data-col="' + col + '"]');
		return cell('legs', 0).dataset.outcome === '✓' && cell('capital', 0).dataset.outcome === '✓' && cell('capital', 1).dataset.outcome === '✗' &&
			cell('capital', 1).classList.contains('bad') && cell('legs', 0).querySelector('.meta').textContent === '$0.0012 · 1.5 s' &&
			cell('capital', 1).querySelector('.answer').textContent === `+jsString(hostileAnswer)+`; })()`)
	b.screenshot("grid")

	b.do("only the tasks where the columns disagree", chromedp.Click(css(`#only-disagree`)))
	b.until("only capital left", `(() => { const rows = [...document.querySelectorAll('#grid tbody tr')].filter((r) => !r.hidden);
		return rows.length === 1 && rows[0].dataset.task === 'capital' && document.querySelector('#shown').textContent === '1 of 3 tasks'; })()`)
	b.do("all tasks again, filtered by text", chromedp.Click(css(`#only-disagree`)), chromedp.SendKeys(css(`#filter`), "SKY"))
	b.until("only sky left", `(() => { const rows = [...document.querySelectorAll('#grid tbody tr')].filter((r) => !r.hidden);
		return rows.length === 1 && rows[0].dataset.task === 'sky'; })()`)
	b.eval("clear the filter", `(() => { const f = document.querySelector('#filter'); f.value = ''; f.dispatchEvent(new Event('input')); return true; })()`)
	b.until("every task", `[...document.querySelectorAll('#grid tbody tr')].every((r) => !r.hidden)`)

	b.do("open react's run of capital", chromedp.Click(css(`#grid tr[data-task="capital"] td[data-col="0"]`)))
	b.until("its timeline", `(() => { const lis = [...document.querySelectorAll('#detail ol.timeline li')];
		return !document.querySelector('#detail').hidden && lis.map((li) => li.dataset.kind).join(',') === 'run_start,llm_call,thought,answer' &&
			lis[1].querySelector('.ms').textContent === '42 ms' && lis[1].querySelector('.usage').textContent.startsWith('120 in + 9 out tokens') &&
			lis[1].querySelector('.node').textContent === 'act' && lis[2].querySelector('.text').textContent === 'I know the capital.' &&
			lis[3].querySelector('.at').textContent === '+7 ms'; })()`)
	b.screenshot("timeline")

	b.do("open cot's run of capital", chromedp.Click(css(`#grid tr[data-task="capital"] td[data-col="1"]`)))
	b.until("the hostile answer as text", `(() => { const a = document.querySelector('#detail .answer-text');
		const li = document.querySelector('#detail ol.timeline li .text');
		return a !== null && a.textContent === `+jsString(hostileAnswer)+` && li !== null && li.textContent === `+jsString(hostileAnswer)+` &&
			document.querySelector('#detail .question').textContent.includes('<img src=x'); })()`)
	b.until("no injected script or handler ran", `window.pwned === undefined && document.querySelectorAll('#viewer script, #viewer img').length === 0`)
	assert.Empty(t, b.messages(), "the page logged errors (a CSP violation, an exception)")
}

// eval runs a JavaScript expression that returns true, failing the test
// otherwise.
func (b *browser) eval(what, expr string) {
	b.t.Helper()
	ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](expr))
	require.NoError(b.t, err, "%s", what)
	require.True(b.t, ok, "%s", what)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The web page's compare view: a comparison started through the API on
// the demo suite with the simulator shows its per-task grid, and a click
// on a cell shows the run's timeline, fetched from the trace endpoint.
func TestPageCompareTasks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	demo, err := suite.Demo()
	require.NoError(t, err)
	eng, err := planner.New(append(full.Options(), planner.WithOfflineProvider("sim", sim.Label, func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		return sim.New(cfg.Profile, sim.WithSeed(max(cfg.Seed, 1)), sim.WithTasks(demo))
	}, llm.AsKind(llm.KindSimulated)))...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, eng.Close()) }) // after the site's cleanup: the server stops first
	s := newSite(t, "", func(c *server.Config) { c.Engine = eng })
	const tasks = 4
	body, err := json.Marshal(server.CompareRequest{Suite: "demo", Configs: []string{"react"}, LLM: "sim", Limit: tasks})
	require.NoError(t, err)
	res, err := http.Post(s.url+"/api/compares", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusAccepted, res.StatusCode, "%s", raw)
	b := newBrowser(t, ctx)

	b.do("open the page", chromedp.Navigate(s.url+"/"))
	b.until("the pipelines list", `document.querySelector('#compare-configs input[value="react"]') !== null`)
	b.do("open the compare view", chromedp.Click(css(`button[data-tab="compare"]`)))
	b.until("the comparison listed", `document.querySelectorAll('#compares li').length === 1`)
	b.do("open the comparison", chromedp.Click(css(`#compares li`)))
	b.until("the grid, done", `(() => { const rows = document.querySelectorAll('#compare-grid tbody tr');
		return document.querySelector('#compare-status').textContent === 'done' && !document.querySelector('#compare-tasks-card').hidden &&
			rows.length === `+strconv.Itoa(tasks)+` && document.querySelectorAll('#compare-grid tbody td.cell[data-outcome]').length === `+strconv.Itoa(tasks)+` &&
			document.querySelector('#compare-grid th[data-col="0"]').textContent.startsWith('react') &&
			document.querySelector('#compare-banner').textContent.startsWith('SIMULATED'); })()`)
	b.screenshot("grid")

	b.do("open the first cell", chromedp.Click(css(`#compare-grid tbody tr:first-child td.cell`)))
	b.until("its timeline", `(() => { const kinds = [...document.querySelectorAll('#compare-run ol.timeline li')].map((li) => li.dataset.kind);
		return !document.querySelector('#compare-run').hidden && kinds[0] === 'run_start' && kinds.includes('llm_call') && kinds[kinds.length - 1] === 'run_end' &&
			document.querySelector('#compare-grid tbody tr:first-child td.cell').classList.contains('selected'); })()`)
	b.screenshot("timeline")

	b.do("only disagreements", chromedp.Click(css(`#compare-disagree`)))
	b.until("no task left: one config never disagrees", `[...document.querySelectorAll('#compare-grid tbody tr')].every((r) => r.hidden) &&
		document.querySelector('#compare-tasks-count').textContent === '0 of `+strconv.Itoa(tasks)+` tasks'`)
	assert.Empty(t, b.messages())
}
