//go:build integration

package browsertest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// On a server started with --llm sim, the page says what the command line
// says: the Model fields name the server's default model; a Start with
// the fields as shown says what is missing; a question the sim cannot play
// is refused before any thread exists (so no Resume is offered); and a
// run of a suite task says SIMULATED with planner run's label.
func TestPageSimRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	demo, err := suite.Demo()
	require.NoError(t, err)
	eng, err := planner.New(append(full.Options(), planner.WithOfflineProvider("sim", sim.Label, func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		return sim.New(cfg.Profile, sim.WithSeed(max(cfg.Seed, 1)), sim.WithTasks(demo))
	}, llm.AsKind(llm.KindSimulated)))...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, eng.Close()) }) // after the site's cleanup: the server stops first
	s := newSite(t, "", func(c *server.Config) { c.Engine = eng; c.LLM = "sim" })
	b := newBrowser(t, ctx)

	b.do("open the page", chromedp.Navigate(s.url+"/"))
	b.until("the pipelines list", `document.querySelector('#pipelines li[data-pipeline="react"]') !== null`)
	b.until("the model fields name the server's model", `document.querySelector('#run-llm').placeholder === 'server default: sim (SIMULATED)' &&
		document.querySelector('#compare-llm').placeholder === 'server default: sim (SIMULATED)'`)
	b.eval("the suite field holds a real value, the task field none", `document.querySelector('#run-suite').value === 'demo' &&
		document.querySelector('#run-task').value === '' && document.querySelector('#run-question').value === ''`)

	b.do("start with the fields as shown", chromedp.Click(css(`#pipelines li[data-pipeline="react"]`)), chromedp.Click(css(`#run-start`)))
	b.until("what is missing", `(() => { const e = document.querySelector('#error');
		return !e.hidden && e.textContent.includes('question is required') && e.textContent.includes('demo-01 to demo-40'); })()`)

	b.do("ask the sim a free question", chromedp.SetValue(css(`#run-question`), "Write me a poem about the sea"), chromedp.Click(css(`#run-start`)))
	b.until("the refusal with a hint for the form", `(() => { const e = document.querySelector('#error');
		return !e.hidden && e.textContent.includes('no task of the demo suite') && e.textContent.includes('pick a task of the suite') &&
			e.textContent.includes('another model') && document.querySelector('#run-id').textContent === ''; })()`)
	b.screenshot("refused")
	b.do("open the threads", chromedp.Click(css(`button[data-tab="threads"]`)))
	b.until("no thread, so nothing to resume", `document.querySelector('#threads tbody').textContent.includes('No threads yet.') &&
		document.querySelectorAll('#threads tbody button').length === 0`)

	b.do("back to the run view", chromedp.Click(css(`button[data-tab="run"]`)))
	b.eval("clear the question", `(() => { document.querySelector('#run-question').value = ''; return true; })()`)
	b.do("run a demo task", chromedp.SetValue(css(`#run-task`), "demo-07"), chromedp.Click(css(`#run-start`)))
	b.until("SIMULATED with planner run's label", `(() => { const m = document.querySelector('#run-model');
		return !m.hidden && m.querySelector('.model-mark').textContent === 'SIMULATED' && m.textContent.includes('model: ' + `+jsString(sim.Label)+`); })()`)
	b.until("the run ended", `['done', 'failed'].includes(document.querySelector('#run-status').textContent)`)
	b.eval("still SIMULATED once it ended", `document.querySelector('#run-model .model-mark').textContent === 'SIMULATED'`)
	b.screenshot("simulated")
	var errs []string
	for _, m := range b.messages() {
		if !strings.Contains(m, "400 (Bad Request)") { // the two refused starts
			errs = append(errs, m)
		}
	}
	assert.Empty(t, errs, "the page logged errors (a CSP violation, an exception)")
}

// A node that fails is drawn failed (red), with the failure in its
// tooltip, never done (green).
func TestPageFailedNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	s := newSite(t, "")
	b := newBrowser(t, ctx)

	b.do("open the page", chromedp.Navigate(s.url+"/"))
	b.until("the pipelines list", `document.querySelector('#pipelines li[data-pipeline="react"]') !== null`)
	b.do("pick react", chromedp.Click(css(`#pipelines li[data-pipeline="react"]`)))
	b.until("its graph", `document.querySelector('#graph svg g.node[data-node="act"]') !== null && document.querySelector('#graph').dataset.pipeline === 'react'`)
	// The strict script has no reply for this question: the node's model
	// call fails, and the run with it.
	b.do("start a run the script cannot play", chromedp.SetValue(css(`#run-config`), "react"),
		chromedp.SetValue(css(`#run-question`), "What is 2+2?"), chromedp.SetValue(css(`#run-llm`), "scripted:spiders.yaml"),
		chromedp.Click(css(`#run-start`)))
	b.until("the run failed", `document.querySelector('#run-status').textContent === 'failed'`)
	b.until("the node drawn failed, with why", `(() => { const g = document.querySelector('#graph g.node[data-node="act"]');
		const title = g.querySelector('title.failure');
		return g.classList.contains('failed') && !g.classList.contains('visited') && !g.classList.contains('active') &&
			title !== null && title.textContent.startsWith('failed: ') && title.textContent.includes('no reply'); })()`)
	b.until("red, not green", `getComputedStyle(document.querySelector('#graph g.node[data-node="act"] rect')).fill === 'rgb(242, 139, 130)'`)
	b.eval("SCRIPTED on the run", `document.querySelector('#run-model .model-mark').textContent === 'SCRIPTED'`)
	b.screenshot("failed-node")
	assert.Empty(t, b.messages(), "the page logged errors (a CSP violation, an exception)")
}
