package server_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/eval/viewer"
	"github.com/planner-engine/planner/server"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCompare starts a comparison of react and direct on a two-task suite
// with a scripted model, in which direct gets the capital wrong, and
// waits for it to end. Each runs repeats times (0 for once).
func runCompare(t *testing.T, e *env, repeats int) (id, dir string) {
	t.Helper()
	suite := `{"id": "legs", "question": "How many legs do 3 spiders have?", "answer": "24"}
{"id": "capital", "question": "What is the capital of France?", "answer": "Paris"}
`
	script := `strict: false
replies:
  - {node: react, regex: 'Observation: \[calculator\] 24', text: "Thought: done.\nFinal Answer: 24", times: 10}
  - {node: react, contains: "3 spiders", text: "Thought: 8 legs each.\nAction: calculator\nAction Input: 3*8", times: 10}
  - {node: react, contains: "France", text: "Thought: I know it.\nFinal Answer: Paris", times: 10}
  - {node: direct, contains: "3 spiders", text: "24", times: 10}
  - {node: direct, contains: "France", text: "</script><script>alert(1)</script>", times: 10}
`
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "suite.jsonl"), []byte(suite), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "both.yaml"), []byte(script), 0o644))
	r := e.do("POST", "/api/compares", server.CompareRequest{Suite: "suite.jsonl", Configs: []string{"react", "direct"}, LLM: "scripted:both.yaml", Concurrency: 2, Repeats: repeats})
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var started struct{ ID, Dir string }
	r.json(t, &started)
	require.Eventually(t, func() bool {
		var v server.CompareView
		e.do("GET", "/api/compares/"+started.ID, nil).json(t, &v)
		return v.Status != "running"
	}, 15*time.Second, 20*time.Millisecond)
	return started.ID, started.Dir
}

// The grid of a finished comparison: the suite's tasks in order, a column
// per config, each run judged as the report judges it, with its trace
// reference and no events; a run's events come from the trace endpoint.
func TestCompareTasks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := runCompare(t, e, 0)

	r := e.do("GET", "/api/compares/"+id+"/tasks", nil)
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	assert.NotContains(t, string(r.body), "</script>", "the JSON escapes '<'")
	var d viewer.Data
	r.json(t, &d)
	assert.True(t, strings.HasPrefix(d.Banner, "SCRIPTED"), d.Banner)
	assert.Contains(t, d.Title, "react, direct on suite.jsonl (done)")
	assert.Equal(t, []viewer.Task{{ID: "legs", Question: "How many legs do 3 spiders have?", Reference: "24"},
		{ID: "capital", Question: "What is the capital of France?", Reference: "Paris"}}, d.Tasks)
	require.Len(t, d.Columns, 2)
	for i, name := range []string{"react", "direct"} {
		assert.Equal(t, name, d.Columns[i].Config)
		assert.Equal(t, name, d.Columns[i].Label)
		assert.True(t, strings.HasPrefix(d.Columns[i].Model, "scripted:") && strings.HasSuffix(d.Columns[i].Model, "both.yaml"), d.Columns[i].Model)
	}
	require.Len(t, d.Runs, 4)
	byCell := map[[2]int]viewer.Run{}
	for _, run := range d.Runs {
		byCell[[2]int{run.Task, run.Column}] = run
		assert.Empty(t, run.Events, "the grid leaves events out")
		assert.True(t, strings.HasPrefix(run.Trace, "traces/"), run.Trace)
		assert.True(t, run.Scored)
	}
	assert.True(t, byCell[[2]int{0, 0}].Correct)
	assert.Equal(t, 2, byCell[[2]int{0, 0}].ModelCalls)
	assert.Equal(t, 1, byCell[[2]int{0, 0}].ToolCalls)
	assert.True(t, byCell[[2]int{1, 0}].Correct)
	wrong := byCell[[2]int{1, 1}]
	assert.False(t, wrong.Correct)
	assert.Equal(t, "</script><script>alert(1)</script>", wrong.Answer)
	assert.Equal(t, "wrong", wrong.Failure)

	r = e.do("GET", "/api/compares/"+id+"/trace?ref="+url.QueryEscape(byCell[[2]int{0, 0}].Trace), nil)
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	var tr struct {
		Ref    string        `json:"ref"`
		Events []trace.Event `json:"events"`
	}
	r.json(t, &tr)
	assert.Equal(t, byCell[[2]int{0, 0}].Trace, tr.Ref)
	kinds := map[trace.Kind]int{}
	for _, ev := range tr.Events {
		kinds[ev.Kind]++
		assert.Equal(t, tr.Events[0].RunID, ev.RunID, "one run's events")
	}
	assert.Equal(t, 1, kinds[trace.KindRunStart])
	assert.Equal(t, 1, kinds[trace.KindAction], "the calculator call")
	assert.Equal(t, 2, kinds[trace.KindLLMCall])
	assert.Equal(t, "24", tr.Events[len(tr.Events)-1-indexFromEnd(tr.Events, trace.KindAnswer)].Text)

	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/compares/nosuch/tasks", nil).code)
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/compares/nosuch/trace?ref="+url.QueryEscape(tr.Ref), nil).code)
}

// indexFromEnd is how far from the end the last event of kind is.
func indexFromEnd(evs []trace.Event, kind trace.Kind) int {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == kind {
			return len(evs) - 1 - i
		}
	}
	return len(evs) // fails the index: no such event
}

// The trace endpoint reads only the comparison's own traces/: no "..",
// no absolute path, nothing outside traces/, no link out of the folder.
func TestCompareTraceConfined(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, dir := runCompare(t, e, 0)
	secret := filepath.Join(e.dir, "secret.jsonl")
	require.NoError(t, os.WriteFile(secret, []byte(`{"kind":"answer","text":"the secret"}`+"\n"), 0o644))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "traces", "link.jsonl")))
	for _, ref := range []string{
		"",
		"../secret.jsonl:1-1",
		"traces/../../secret.jsonl:1-1",
		secret + ":1-1",
		"/etc/passwd:1-1",
		"results.db:1-1",
		"report.json:1-1",
		"traces/link.jsonl:1-1",
		"traces/nosuch.jsonl:1-1",
		"traces/x.jsonl:1-100000",
	} {
		r := e.do("GET", "/api/compares/"+id+"/trace?ref="+url.QueryEscape(ref), nil)
		assert.Equal(t, http.StatusBadRequest, r.code, "%q: %s", ref, r.body)
		assert.Equal(t, "bad_request", r.errCode(t), ref)
		assert.NotContains(t, string(r.body), "the secret", ref)
	}
}

// A running comparison's grid holds its tasks and columns, and the runs
// stored so far.
func TestCompareTasksWhileRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gate.Hold()
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "sum.jsonl"), []byte(`{"id": "sum", "question": "Add up steps:2", "answer": "2001"}`+"\n"), 0o644))
	r := e.do("POST", "/api/compares", server.CompareRequest{Suite: "sum.jsonl", Configs: []string{"react"}, LLM: e.gated})
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var started struct{ ID string }
	r.json(t, &started)
	require.Eventually(t, func() bool { return e.gate.Waiting() > 0 }, 10*time.Second, 5*time.Millisecond)

	var d viewer.Data
	r = e.do("GET", "/api/compares/"+started.ID+"/tasks", nil)
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	r.json(t, &d)
	assert.Contains(t, d.Title, "(running)")
	assert.Equal(t, []viewer.Task{{ID: "sum", Question: "Add up steps:2", Reference: "2001"}}, d.Tasks)
	assert.Len(t, d.Columns, 1)
	assert.Empty(t, d.Runs, "nothing stored yet")
	assert.NotEmpty(t, d.Banner)

	e.gate.Open()
	require.Eventually(t, func() bool {
		r := e.do("GET", "/api/compares/"+started.ID+"/tasks", nil)
		r.json(t, &d)
		return len(d.Runs) == 1 && strings.Contains(d.Title, "(done)")
	}, 15*time.Second, 20*time.Millisecond)
	assert.Equal(t, 0, d.Runs[0].Task)
}

// With repeats, the grid holds every repeat of every cell, and the
// comparison counts them in its total.
func TestCompareTasksWithRepeats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := runCompare(t, e, 2)
	var v server.CompareView
	e.do("GET", "/api/compares/"+id, nil).json(t, &v)
	assert.Equal(t, 8, v.Total, "2 tasks x 2 configs x 2 repeats")
	var d viewer.Data
	r := e.do("GET", "/api/compares/"+id+"/tasks", nil)
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	r.json(t, &d)
	require.Len(t, d.Runs, 8)
	repeats := map[int]int{}
	for _, run := range d.Runs {
		repeats[run.Repeat]++
	}
	assert.Equal(t, map[int]int{0: 4, 1: 4}, repeats)

	r = e.do("POST", "/api/compares", server.CompareRequest{Suite: "suite.jsonl", Configs: []string{"react"}, LLM: "scripted:both.yaml", Repeats: 21})
	assert.Equal(t, http.StatusBadRequest, r.code)
	assert.Contains(t, string(r.body), "repeats must be 1 to 20")
}
