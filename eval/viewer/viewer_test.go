package viewer_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/eval/viewer"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// has asserts that page holds sub, without printing the whole page.
func has(t *testing.T, page, sub string) {
	t.Helper()
	assert.True(t, strings.Contains(page, sub), "the page holds %q", sub)
}

// hasNot asserts that page does not hold sub.
func hasNot(t *testing.T, page, sub string) {
	t.Helper()
	assert.False(t, strings.Contains(page, sub), "the page does not hold %q", sub)
}

const hostile = `</script><script>alert(1)</script><img src=x onerror="alert(2)">`

// pageJSON returns the data block of a rendered page, decoded.
func pageJSON(t *testing.T, page []byte) map[string]any {
	t.Helper()
	const open = `<script type="application/json" id="viewer-data">`
	s := string(page)
	i := strings.Index(s, open)
	require.GreaterOrEqual(t, i, 0, "the page has its data block")
	s = s[i+len(open):]
	j := strings.Index(s, "</script>")
	require.GreaterOrEqual(t, j, 0)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(s[:j]), &out))
	return out
}

func twoColumns() viewer.Data {
	return viewer.Data{
		Title:   "demo <b>suite</b>",
		Banner:  "SIMULATED: test numbers",
		Tasks:   []viewer.Task{{ID: "t1", Question: "What is 2+2? " + hostile, Reference: "4"}, {ID: "t2", Question: "Capital of France?", Reference: "Paris"}},
		Columns: []viewer.Column{{Config: "react"}, {Config: "cot", Model: "sim"}},
		Runs: []viewer.Run{
			{Task: 0, Column: 0, Answer: "4", Scored: true, Correct: true, Events: []trace.Event{{Seq: 1, Kind: trace.KindAnswer, Text: "4"}}},
			{Task: 0, Column: 1, Answer: hostile, Scored: true, Failure: "wrong"},
			{Task: 1, Column: 0, Answer: "Paris", Scored: true, Correct: true},
			{Task: 1, Column: 1, Answer: "Paris", Scored: true, Correct: true},
		},
	}
}

// Model output reaches the page only inside the JSON block, with '<'
// escaped, and comes back out of it unchanged; only the page's own
// script may run (its CSP hash matches it).
func TestRenderEscapes(t *testing.T) {
	page, err := viewer.Render(twoColumns())
	require.NoError(t, err)
	s := string(page)
	assert.Equal(t, 2, strings.Count(s, "<script"), "only the data block and the page's script")
	assert.Equal(t, 2, strings.Count(s, "</script"), "nothing closes a script early")
	hasNot(t, s, "alert(1)</script>")
	hasNot(t, s, "<img src=x")
	has(t, s, `\u003c/script\u003e\u003cscript\u003ealert(1)`)
	has(t, s, "<title>demo &lt;b&gt;suite&lt;/b&gt;</title>")

	data := pageJSON(t, page)
	runs := data["runs"].([]any)
	assert.Equal(t, hostile, runs[1].(map[string]any)["answer"], "the answer travels unchanged")
	assert.Equal(t, "cot @ sim", data["columns"].([]any)[1].(map[string]any)["label"], "the default label")
	assert.Equal(t, "SIMULATED: test numbers", data["banner"])

	const tag = "<script>"
	i := strings.LastIndex(s, tag)
	j := strings.LastIndex(s, "</script>")
	require.True(t, i >= 0 && j > i)
	sum := sha256.Sum256([]byte(s[i+len(tag) : j]))
	has(t, s, "script-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") // the page's own script runs, nothing else
	has(t, s, "default-src 'none'")
}

// The page is bounded: a run keeps its first MaxEventsPerRun events, an
// event's text and data are clipped, and the page says what it cut.
func TestRenderCaps(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var events []trace.Event
	for i := range viewer.MaxEventsPerRun + 100 {
		events = append(events, trace.Event{Seq: int64(i + 1), Kind: trace.KindThought, Node: "act", Text: "step", Time: start.Add(time.Duration(i) * time.Millisecond)})
	}
	events[0].Text = strings.Repeat("é", viewer.MaxEventText+500)
	events[1].Data = map[string]any{"input": strings.Repeat("x", viewer.MaxEventText*2)}
	events[2].Usage = &trace.Usage{PromptTokens: 10, CompletionTokens: 3, CostUSD: 0.01}
	d := viewer.Data{Tasks: []viewer.Task{{ID: "t", Question: "q"}}, Columns: []viewer.Column{{Config: "react"}},
		Runs: []viewer.Run{{Answer: strings.Repeat("a", viewer.MaxAnswer+1), Events: events}}}
	page, err := viewer.Render(d)
	require.NoError(t, err)
	data := pageJSON(t, page)
	assert.Equal(t, "Tasks", data["title"], "the default title")
	run := data["runs"].([]any)[0].(map[string]any)
	evs := run["events"].([]any)
	require.Len(t, evs, viewer.MaxEventsPerRun)
	assert.EqualValues(t, 100, run["events_cut"])
	assert.Contains(t, run["why"], "first 400 events")
	first := evs[0].(map[string]any)["text"].(string)
	assert.True(t, strings.HasPrefix(first, strings.Repeat("é", viewer.MaxEventText)+" … [500 more characters cut]"), "clipped by characters: %.40q", first[len(first)-40:])
	assert.Contains(t, evs[1].(map[string]any)["data"], "more characters cut")
	assert.EqualValues(t, 2, evs[2].(map[string]any)["at_ms"], "time since the run's first event")
	assert.EqualValues(t, 10, evs[2].(map[string]any)["usage"].(map[string]any)["prompt_tokens"])
	assert.Contains(t, run["answer"], "[1 more characters cut]")
	assert.EqualValues(t, 3, data["clipped"])
	assert.Less(t, len(page), 1<<20, "the page stays small")
	has(t, string(page), "events_per_run") // the page carries its bounds to say them
}

func TestRenderRefusesBadIndexes(t *testing.T) {
	for _, r := range []viewer.Run{{Task: 1}, {Column: 1}, {Task: -1}} {
		_, err := viewer.Render(viewer.Data{Tasks: []viewer.Task{{ID: "t"}}, Columns: []viewer.Column{{Config: "c"}}, Runs: []viewer.Run{r}})
		require.ErrorIs(t, err, viewer.ErrData)
		assert.Contains(t, err.Error(), "run 0 points at")
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path, err := viewer.WriteFile(dir, twoColumns())
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "tasks.html"), path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "<!doctype html>"))
	_, err = viewer.WriteFile(filepath.Join(dir, "nosuch"), twoColumns())
	assert.ErrorContains(t, err, "writing")
}

// The whole page's trace text is bounded too: once MaxPageTraceBytes are
// kept, later runs keep no events, and say why.
func TestRenderPageBudget(t *testing.T) {
	events := make([]trace.Event, viewer.MaxEventsPerRun)
	for i := range events {
		events[i] = trace.Event{Seq: int64(i + 1), Kind: trace.KindObservation, Text: strings.Repeat("o", viewer.MaxEventText)}
	}
	perRun := viewer.MaxEventsPerRun * viewer.MaxEventText
	n := viewer.MaxPageTraceBytes/perRun + 2
	d := viewer.Data{Columns: []viewer.Column{{Config: "react"}}}
	for i := range n {
		d.Tasks = append(d.Tasks, viewer.Task{ID: fmt.Sprint("t", i)})
		d.Runs = append(d.Runs, viewer.Run{Task: i, Events: events})
	}
	page, err := viewer.Render(d)
	require.NoError(t, err)
	assert.Less(t, len(page), viewer.MaxPageTraceBytes+viewer.MaxPageTraceBytes/4, "the page stays near its budget")
	runs := pageJSON(t, page)["runs"].([]any)
	first, last := runs[0].(map[string]any), runs[n-1].(map[string]any)
	assert.Len(t, first["events"], viewer.MaxEventsPerRun)
	assert.Nil(t, first["events_cut"])
	assert.Empty(t, last["events"])
	assert.EqualValues(t, viewer.MaxEventsPerRun, last["events_cut"])
	assert.Contains(t, last["why"], "at most 32 MiB of trace text")
}

// Numbers JSON cannot hold do not break the page.
func TestRenderNonFinite(t *testing.T) {
	nan := math.NaN()
	d := viewer.Data{Tasks: []viewer.Task{{ID: "t"}}, Columns: []viewer.Column{{Config: "c"}},
		Runs: []viewer.Run{{CostUSD: nan, LatencyMS: math.Inf(1), Scores: map[string]float64{"judge": nan, "f1": 0.5},
			Events: []trace.Event{{Kind: trace.KindLLMCall, ElapsedMS: nan, Usage: &trace.Usage{CostUSD: nan}, Data: map[string]any{"x": nan}}}}}}
	page, err := viewer.Render(d)
	require.NoError(t, err)
	run := pageJSON(t, page)["runs"].([]any)[0].(map[string]any)
	assert.EqualValues(t, 0, run["cost_usd"])
	assert.Equal(t, map[string]any{"f1": 0.5}, run["scores"])
	assert.Contains(t, run["events"].([]any)[0].(map[string]any)["data"], "data not shown")
}
