package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A comparison runs in the background: its progress, then its report.
func TestCompare(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	suite := `{"id": "legs", "question": "How many legs do 3 spiders have?", "answer": "24"}
{"id": "capital", "question": "What is the capital of France?", "answer": "Paris"}
`
	script := `strict: false
replies:
  - {node: react, regex: 'Observation: \[calculator\] 24', text: "Thought: done.\nFinal Answer: 24", times: 10}
  - {node: react, contains: "3 spiders", text: "Thought: 8 legs each.\nAction: calculator\nAction Input: 3*8", times: 10}
  - {node: react, contains: "France", text: "Thought: I know it.\nFinal Answer: Paris", times: 10}
  - {node: direct, contains: "3 spiders", text: "24", times: 10}
  - {node: direct, contains: "France", text: "Lyon", times: 10}
`
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "suite.jsonl"), []byte(suite), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "both.yaml"), []byte(script), 0o644))

	r := e.do("POST", "/api/compares", server.CompareRequest{Suite: "suite.jsonl", Configs: []string{"react", "direct"}, LLM: "scripted:both.yaml", Concurrency: 2})
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var started struct {
		ID  string `json:"id"`
		Dir string `json:"dir"`
	}
	r.json(t, &started)
	require.NotEmpty(t, started.ID)
	assert.True(t, strings.HasPrefix(started.Dir, filepath.Join(e.dir, "out")), started.Dir)

	var v server.CompareView
	require.Eventually(t, func() bool {
		r := e.do("GET", "/api/compares/"+started.ID, nil)
		require.Equal(t, http.StatusOK, r.code)
		r.json(t, &v)
		return v.Status != "running"
	}, 15*time.Second, 20*time.Millisecond)
	require.Equal(t, "done", v.Status, "%+v", v)
	assert.Equal(t, 4, v.Total)
	assert.Equal(t, 4, v.Done)
	assert.Equal(t, []server.ConfigProgress{{Config: "react", Done: 2, Correct: 2}, {Config: "direct", Done: 2, Correct: 1, Failed: 1}}, v.PerConfig)

	r = e.do("GET", "/api/compares/"+started.ID+"/report", nil)
	require.Equal(t, http.StatusOK, r.code)
	rep := r.json2(t)
	assert.Equal(t, "suite.jsonl", rep["suite"])
	assert.Len(t, rep["configs"], 2)
	assert.Contains(t, rep, "banner")
	r = e.do("GET", "/api/compares/"+started.ID+"/report?format=md", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, string(r.body), "| react")
	md := string(r.body)
	// The table format is report.md's table: the same columns (failures
	// and recovered among them, figures per task) and the same cells.
	r = e.do("GET", "/api/compares/"+started.ID+"/report?format=table", nil)
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	var tab server.ReportTable
	r.json(t, &tab)
	var heads []string
	for _, c := range tab.Columns {
		heads = append(heads, c.Column)
		assert.NotEmpty(t, c.Meaning, c.Column)
	}
	assert.Subset(t, heads, []string{"config", "success", "EM", "failures", "recovered", "calls/task", "tools/task", "cost $/task", "p50 ms"})
	require.Len(t, tab.Rows, 2)
	for _, row := range tab.Rows {
		require.Len(t, row, len(heads))
		assert.Contains(t, md, "| "+strings.Join(row, " | ")+" |", "the row is report.md's")
	}
	at := func(row int, col string) string { return tab.Rows[row][slices.Index(heads, col)] }
	assert.Equal(t, "react", at(0, "config"))
	assert.Equal(t, "1.000", at(0, "success"), "a rate from 0 to 1, as in report.md")
	assert.Equal(t, "0.500", at(1, "success"))
	assert.NotEqual(t, "-", at(1, "failures"), "direct's wrong answer is counted by kind")
	assert.Equal(t, "-", at(0, "failures"))
	assert.Contains(t, tab.Notes, compare.PerTaskNote)
	assert.Equal(t, rep["banner"], tab.Banner)
	r = e.do("GET", "/api/compares/"+started.ID+"/report?format=html", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, string(r.body), "<html")
	assert.Equal(t, http.StatusBadRequest, e.do("GET", "/api/compares/"+started.ID+"/report?format=pdf", nil).code)
	_, err := os.Stat(filepath.Join(started.Dir, "report.json"))
	assert.NoError(t, err, "the report files are written as compare writes them")

	r = e.do("GET", "/api/compares", nil)
	assert.Contains(t, string(r.body), started.ID)
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/compares/nosuch", nil).code)
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/compares/nosuch/report", nil).code)

	for _, c := range []struct {
		body any
		code int
	}{
		{map[string]any{"configs": []string{"react"}}, http.StatusBadRequest},
		{map[string]any{"suite": "demo"}, http.StatusBadRequest},
		{map[string]any{"suite": "demo", "configs": "react"}, http.StatusBadRequest},
		{map[string]any{"suite": "demo", "configs": []string{"nosuch"}}, http.StatusNotFound},
		{map[string]any{"suite": "demo", "configs": []string{"react", "react"}}, http.StatusBadRequest},
		{map[string]any{"suite": "demo", "configs": []string{"react"}, "concurrency": 0.5}, http.StatusBadRequest},
		{map[string]any{"suite": "demo", "configs": []string{"react"}, "concurrency": 1000}, http.StatusBadRequest},
		{map[string]any{"suite": "demo", "configs": []string{"react"}, "limit": -1}, http.StatusBadRequest},
		{map[string]any{"suite": "demo", "configs": []string{"react"}, "timeout": "x"}, http.StatusBadRequest},
		{map[string]any{"suite": "../x.jsonl", "configs": []string{"react"}, "llm": "scripted:both.yaml"}, http.StatusBadRequest},
		{map[string]any{"suite": "missing.jsonl", "configs": []string{"react"}, "llm": "scripted:both.yaml"}, http.StatusBadRequest},
		{map[string]any{"suite": "demo", "configs": []string{"react"}, "llm": "nosuch:x"}, http.StatusBadRequest},
		{map[string]any{"suite": "demo", "configs": []string{"react"}, "extra": true}, http.StatusBadRequest},
	} {
		r := e.do("POST", "/api/compares", c.body)
		assert.Equal(t, c.code, r.code, "%v: %s", c.body, r.body)
		r.errCode(t)
	}
}
