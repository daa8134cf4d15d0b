package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealthz(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("GET", "/healthz", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.JSONEq(t, `{"status":"ok","runs_active":0}`, string(r.body))
	assert.Empty(t, r.header.Get("Access-Control-Allow-Origin"), "CORS is off")
}

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("GET", "/openapi.json", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	doc := r.json2(t)
	assert.Equal(t, "3.1.0", doc["openapi"])
	assert.Contains(t, doc["paths"], "/api/runs/{id}/events")
}

func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("GET", "/api/nothing", nil)
	assert.Equal(t, http.StatusNotFound, r.code)
	assert.Equal(t, "not_found", r.errCode(t))
	r = e.do("DELETE", "/api/runs", nil)
	assert.Equal(t, http.StatusNotFound, r.code, "no DELETE route: answered as JSON, not plain text")
	assert.Equal(t, "not_found", r.errCode(t))
}

func TestListPipelines(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("GET", "/api/pipelines", nil)
	require.Equal(t, http.StatusOK, r.code)
	var out struct {
		Pipelines []server.PipelineInfo `json:"pipelines"`
	}
	r.json(t, &out)
	require.Len(t, out.Pipelines, 4)
	byName := map[string]server.PipelineInfo{}
	for _, p := range out.Pipelines {
		byName[p.File] = p
	}
	assert.Equal(t, "react", byName["react.yaml"].Name)
	assert.Equal(t, "react", byName["react.yaml"].Paradigm)
	assert.Equal(t, []server.NodeInfo{{ID: "act", Type: "react"}}, byName["react.yaml"].Nodes)
	assert.Equal(t, "ReAct with a calculator", byName["react.yaml"].Description)
	assert.Equal(t, "broken", byName["broken.yaml"].Name, "a config that loads but does not build is listed; validate says why")
}

func TestValidatePipeline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/api/pipelines/validate?file=mine.yaml", reactYAML, "Content-Type", "application/yaml")
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	var ok server.ValidateResult
	r.json(t, &ok)
	assert.True(t, ok.OK)
	assert.Equal(t, "react", ok.Name)

	bad := strings.Replace(reactYAML, "max_iterations: 12", "max_iterations: 12, colour: blue", 1)
	r = e.do("POST", "/api/pipelines/validate", map[string]string{"yaml": bad, "file": "mine.yaml"})
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	var res server.ValidateResult
	r.json(t, &res)
	assert.False(t, res.OK)
	require.NotEmpty(t, res.Errors)
	assert.Equal(t, "mine.yaml", res.Errors[0].File)
	assert.Equal(t, 6, res.Errors[0].Line, "%+v", res.Errors)
	assert.True(t, strings.HasPrefix(res.Errors[0].Message, "mine.yaml:6: "), res.Errors[0].Message)
	assert.NotContains(t, string(r.body), os.TempDir(), "the temporary path never shows")

	r = e.do("POST", "/api/pipelines/validate", "name: x\nnodes: [", "Content-Type", "application/yaml")
	require.Equal(t, http.StatusOK, r.code)
	r.json(t, &res)
	assert.False(t, res.OK)

	for _, c := range []struct {
		body  any
		ctype string
		code  int
	}{
		{"", "application/yaml", http.StatusBadRequest},
		{map[string]any{"yaml": 5}, "application/json", http.StatusBadRequest},
		{map[string]any{"yaml": "x", "extra": 1}, "application/json", http.StatusBadRequest},
		{map[string]any{"yaml": "x", "file": "../../etc/passwd"}, "application/json", http.StatusBadRequest},
		{strings.Repeat("#", 2<<20), "application/yaml", http.StatusRequestEntityTooLarge},
	} {
		r := e.do("POST", "/api/pipelines/validate", c.body, "Content-Type", c.ctype)
		assert.Equal(t, c.code, r.code, "%.200s", r.body)
		r.errCode(t)
	}
}

func TestPipelineGraph(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("GET", "/api/pipelines/react/graph", nil)
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	assert.Equal(t, "image/svg+xml", r.header.Get("Content-Type"))
	svg := string(r.body)
	assert.True(t, strings.HasPrefix(svg, "<svg "), svg)
	assert.Contains(t, svg, `data-node="act"`)
	assert.Contains(t, svg, `act (react)`)

	r = e.do("GET", "/api/pipelines/react.yaml/graph?format=mermaid", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, string(r.body), "flowchart")
	assert.Contains(t, string(r.body), "act")

	r = e.do("GET", "/api/pipelines/react/graph?format=json", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, string(r.body), `"edges":[{"from":"START","to":"act"}`)

	assert.Equal(t, http.StatusBadRequest, e.do("GET", "/api/pipelines/react/graph?format=png", nil).code)
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/pipelines/nosuch/graph", nil).code)
	assert.Equal(t, http.StatusBadRequest, e.do("GET", "/api/pipelines/..%2Fsecret/graph", nil).code)
	r = e.do("GET", "/api/pipelines/broken/graph", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, r.code)
	assert.Equal(t, "invalid_config", r.errCode(t))
	assert.Contains(t, string(r.body), "broken.yaml:3")
}

func TestRunLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	acc := e.start(server.RunRequest{Config: "react", Question: spiders, LLM: "scripted:spiders.yaml", Thread: "legs"})
	assert.Equal(t, "legs", acc.Thread)
	assert.Equal(t, "/api/runs/"+acc.RunID+"/events", acc.Events)
	v := e.wait(acc.RunID)
	assert.Equal(t, "done", v.Status)
	assert.Equal(t, "24", v.Answer)
	assert.True(t, v.Complete)
	assert.Equal(t, []string{"act"}, v.Steps)
	require.NotNil(t, v.Usage)
	assert.Equal(t, 2, v.Usage.PerNode["act"].ModelCalls)
	assert.Equal(t, 1, v.Usage.PerNode["act"].ToolCalls)
	assert.Positive(t, v.LastSeq)

	r := e.do("GET", "/api/runs", nil)
	require.Equal(t, http.StatusOK, r.code)
	var list struct {
		Runs []server.RunView `json:"runs"`
	}
	r.json(t, &list)
	require.Len(t, list.Runs, 1)
	assert.Equal(t, acc.RunID, list.Runs[0].ID)

	// The run is a thread of the store, listed from it.
	r = e.do("GET", "/api/threads", nil)
	require.Equal(t, http.StatusOK, r.code)
	var threads struct {
		Threads []server.ThreadView `json:"threads"`
	}
	r.json(t, &threads)
	require.Len(t, threads.Threads, 1)
	assert.Equal(t, "legs", threads.Threads[0].Name)
	assert.Equal(t, "done", string(threads.Threads[0].Status))
	assert.Equal(t, spiders, threads.Threads[0].Question)

	r = e.do("GET", "/api/threads/legs", nil)
	require.Equal(t, http.StatusOK, r.code)
	var th struct {
		Thread  server.ThreadView   `json:"thread"`
		History []server.Checkpoint `json:"history"`
	}
	r.json(t, &th)
	var kinds []string
	for _, cp := range th.History {
		kinds = append(kinds, cp.Kind)
	}
	assert.Equal(t, []string{"model", "tool", "model", "node"}, kinds)
	assert.Equal(t, "calculator(3*8) -> 24", th.History[1].Summary)

	// A thread name is taken once; a done thread resumes to its answer
	// from the journal.
	r = e.do("POST", "/api/runs", server.RunRequest{Config: "react", Question: spiders, LLM: "scripted:spiders.yaml", Thread: "legs"})
	assert.Equal(t, http.StatusConflict, r.code)
	r = e.do("POST", "/api/threads/legs/resume", nil)
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var again server.Accepted
	r.json(t, &again)
	v = e.wait(again.RunID)
	assert.Equal(t, "done", v.Status)
	assert.Equal(t, "24", v.Answer)
	assert.Equal(t, 4, v.Replayed)
	assert.Zero(t, v.Live)

	// Cancelling an ended run is a conflict; unknown runs are 404.
	assert.Equal(t, http.StatusConflict, e.do("POST", "/api/runs/"+acc.RunID+"/cancel", nil).code)
	assert.Equal(t, http.StatusNotFound, e.do("POST", "/api/runs/nosuch/cancel", nil).code)
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/runs/nosuch", nil).code)
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/runs/nosuch/events", nil).code)
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/threads/nosuch", nil).code)
	assert.Equal(t, http.StatusBadRequest, e.do("GET", "/api/threads/..bad", nil).code)
	assert.Equal(t, http.StatusNotFound, e.do("POST", "/api/threads/nosuch/resume", nil).code)
}

func TestRunFromSuiteTaskAndGeneratedThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	suite := `{"id": "legs", "question": "How many legs do 3 spiders have?", "answer": "24"}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "legs.jsonl"), []byte(suite), 0o644))
	acc := e.start(server.RunRequest{Config: "react", Suite: "legs.jsonl", Task: "legs", LLM: "scripted:" + e.script})
	assert.True(t, strings.HasPrefix(acc.Thread, "run-"), acc.Thread)
	v := e.wait(acc.RunID)
	assert.Equal(t, "24", v.Answer)
	assert.Equal(t, spiders, v.Question)
}

func TestStartRunBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		name  string
		body  any
		code  int
		ecode string
	}{
		{"not JSON", "{", http.StatusBadRequest, "bad_request"},
		{"empty", "", http.StatusBadRequest, "bad_request"},
		{"an array", "[]", http.StatusBadRequest, "bad_request"},
		{"two objects", `{"config":"react","question":"q"} {}`, http.StatusBadRequest, "bad_request"},
		{"wrong type", map[string]any{"config": 5, "question": "q"}, http.StatusBadRequest, "bad_request"},
		{"wrong type max_steps", map[string]any{"config": "react", "question": "q", "max_steps": "ten"}, http.StatusBadRequest, "bad_request"},
		{"unknown field", map[string]any{"config": "react", "question": "q", "qestion": "typo"}, http.StatusBadRequest, "bad_request"},
		{"no config", map[string]any{"question": "q"}, http.StatusBadRequest, "bad_request"},
		{"unknown config", map[string]any{"config": "nosuch", "question": "q", "llm": "scripted:spiders.yaml"}, http.StatusNotFound, "not_found"},
		{"config path", map[string]any{"config": "../configs/react.yaml", "question": "q"}, http.StatusBadRequest, "bad_request"},
		{"invalid config", map[string]any{"config": "broken", "question": "q", "llm": "scripted:spiders.yaml"}, http.StatusUnprocessableEntity, "invalid_config"},
		{"no question", map[string]any{"config": "react", "llm": "scripted:spiders.yaml"}, http.StatusBadRequest, "bad_request"},
		{"no model", map[string]any{"config": "react", "question": "q"}, http.StatusBadRequest, "bad_request"},
		{"bad model spec", map[string]any{"config": "react", "question": "q", "llm": "gpt-4o"}, http.StatusBadRequest, "bad_request"},
		{"unknown provider", map[string]any{"config": "react", "question": "q", "llm": "nosuch:model"}, http.StatusBadRequest, "bad_request"},
		{"script outside root", map[string]any{"config": "react", "question": "q", "llm": "scripted:/etc/passwd"}, http.StatusBadRequest, "bad_request"},
		{"script escaping root", map[string]any{"config": "react", "question": "q", "llm": "scripted:../x.yaml"}, http.StatusBadRequest, "bad_request"},
		{"bad thread", map[string]any{"config": "react", "question": "q", "llm": "scripted:spiders.yaml", "thread": "../x"}, http.StatusBadRequest, "bad_request"},
		{"bad timeout", map[string]any{"config": "react", "question": "q", "llm": "scripted:spiders.yaml", "timeout": "soon"}, http.StatusBadRequest, "bad_request"},
		{"negative steps", map[string]any{"config": "react", "question": "q", "llm": "scripted:spiders.yaml", "max_steps": -1}, http.StatusBadRequest, "bad_request"},
		{"unknown task", map[string]any{"config": "react", "task": "nosuch", "llm": "scripted:spiders.yaml"}, http.StatusBadRequest, "bad_request"},
		{"suite without task or question", map[string]any{"config": "react", "suite": "demo", "llm": "scripted:spiders.yaml"}, http.StatusBadRequest, "bad_request"},
		{"suite outside root", map[string]any{"config": "react", "suite": "/etc/passwd", "task": "x", "llm": "scripted:spiders.yaml"}, http.StatusBadRequest, "bad_request"},
		{"oversized", map[string]any{"config": "react", "question": strings.Repeat("x", 2<<20)}, http.StatusRequestEntityTooLarge, "too_large"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/api/runs", c.body)
			assert.Equal(t, c.code, r.code, "%.300s", r.body)
			assert.Equal(t, c.ecode, r.errCode(t))
			assert.Equal(t, "application/json", r.header.Get("Content-Type"))
		})
	}
	r := e.do("POST", "/api/runs", `{"config":"react","question":"q"}`, "Content-Type", "text/plain")
	assert.Equal(t, http.StatusBadRequest, r.code)
	r = e.do("GET", "/api/threads", nil)
	assert.JSONEq(t, `{"threads":[]}`, string(r.body), "no bad request left a thread behind")
}

func TestForkThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.wait(e.start(server.RunRequest{Config: "react", Question: "Add them, steps:3", LLM: e.gated, Thread: "orig"}).RunID)
	require.Equal(t, "3003", v.Answer)

	r := e.do("POST", "/api/threads/orig/fork", map[string]any{"from": 2, "as": "copy"})
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var acc server.Accepted
	r.json(t, &acc)
	assert.Equal(t, "copy", acc.Thread)
	v = e.wait(acc.RunID)
	assert.Equal(t, "done", v.Status)
	assert.Equal(t, "3003", v.Answer)
	assert.Equal(t, 2, v.Replayed, "the checkpoints before the fork come from the journal")

	r = e.do("POST", "/api/threads/orig/fork", map[string]any{"from": 0, "as": "bare", "resume": false})
	require.Equal(t, http.StatusCreated, r.code, "%s", r.body)
	assert.Contains(t, string(r.body), `"status":"interrupted"`)
	assert.Contains(t, string(r.body), `"parent":"orig"`)

	for _, c := range []struct {
		body any
		code int
	}{
		{map[string]any{"from": 2}, http.StatusBadRequest},
		{map[string]any{"as": "x"}, http.StatusBadRequest},
		{map[string]any{"from": "2", "as": "x"}, http.StatusBadRequest},
		{map[string]any{"from": 99, "as": "x"}, http.StatusBadRequest},
		{map[string]any{"from": 1, "as": "copy"}, http.StatusConflict},
		{map[string]any{"from": 1, "as": "a/b"}, http.StatusBadRequest},
		{map[string]any{"from": 1, "as": "x", "color": 1}, http.StatusBadRequest},
	} {
		r := e.do("POST", "/api/threads/orig/fork", c.body)
		assert.Equal(t, c.code, r.code, "%v: %s", c.body, r.body)
		r.errCode(t)
	}
	assert.Equal(t, http.StatusNotFound, e.do("POST", "/api/threads/nosuch/fork", map[string]any{"from": 0, "as": "y"}).code)
}

func TestCancelRunSavesAnInterruptedThreadThatResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gate.Hold()
	acc := e.start(server.RunRequest{Config: "react", Question: "Add them, steps:4", LLM: e.gated, Thread: "long"})
	e.gate.Release(1) // the first step runs; the second call waits
	require.Eventually(t, func() bool {
		return strings.Contains(string(e.do("GET", "/api/threads/long", nil).body), `"tool_calls":1`)
	}, 10*time.Second, 5*time.Millisecond)
	r := e.do("POST", "/api/runs/"+acc.RunID+"/cancel", nil)
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	v := e.wait(acc.RunID)
	assert.Equal(t, "interrupted", v.Status)

	r = e.do("GET", "/api/threads/long", nil)
	assert.Contains(t, string(r.body), `"status":"interrupted"`)
	e.gate.Open()
	r = e.do("POST", "/api/threads/long/resume", "{}")
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var again server.Accepted
	r.json(t, &again)
	v = e.wait(again.RunID)
	assert.Equal(t, "done", v.Status)
	assert.Equal(t, "4006", v.Answer)
	assert.Positive(t, v.Replayed)
}

func TestRestartLosesNoThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.wait(e.start(server.RunRequest{Config: "react", Question: "Add them, steps:2", LLM: e.gated, Thread: "kept"}).RunID)
	// A second server over the same store lists the thread and resumes it.
	e2 := newEnv(t, func(c *server.Config) { c.Store = e.srv.Store() })
	r := e2.do("GET", "/api/threads", nil)
	assert.Contains(t, string(r.body), `"name":"kept"`)
	r = e2.do("POST", "/api/threads/kept/resume", nil)
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var acc server.Accepted
	r.json(t, &acc)
	v := e2.wait(acc.RunID)
	assert.Equal(t, "2001", v.Answer)
	assert.Equal(t, "done", v.Status)
}

// Validating a posted pipeline never starts a process: its MCP servers are
// refused, at their line.
func TestValidateRefusesMCP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	marker := filepath.Join(e.dir, "started")
	yaml := strings.Replace(reactYAML, "tools: [calculator]", "tools:\n  - calculator\n  - mcp: {command: [touch, "+marker+"]}", 1)
	r := e.do("POST", "/api/pipelines/validate", map[string]string{"yaml": yaml})
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	var res server.ValidateResult
	r.json(t, &res)
	assert.False(t, res.OK)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, 5, res.Errors[0].Line, "%+v", res.Errors)
	assert.Contains(t, res.Errors[0].Message, "an mcp entry is not validated by the server")
	_, err := os.Stat(marker)
	assert.True(t, os.IsNotExist(err), "no command ran")
}

// Validating a posted pipeline never loads another file: a subgraph or a
// map naming a pipeline file, at any depth, is refused at its line.
func TestValidateRefusesNestedPipelineFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		yaml string
		line int
	}{
		{"name: x\nnodes:\n  - id: s\n    type: subgraph\n    pipeline: /etc/passwd\nedges:\n  - {from: START, to: s}\n  - {from: s, to: END}\n", 5},
		{"name: x\nnodes:\n  - id: s\n    type: subgraph\n    graph:\n      nodes:\n        - id: m\n          type: map\n          over: var:x\n          pipeline: ../../secret.yaml\n      edges: [{from: START, to: m}, {from: m, to: END}]\nedges:\n  - {from: START, to: s}\n  - {from: s, to: END}\n", 10},
	} {
		r := e.do("POST", "/api/pipelines/validate", map[string]string{"yaml": tc.yaml})
		require.Equal(t, http.StatusOK, r.code, "%s", r.body)
		var res server.ValidateResult
		r.json(t, &res)
		assert.False(t, res.OK)
		require.Len(t, res.Errors, 1)
		assert.Equal(t, tc.line, res.Errors[0].Line, "%+v", res.Errors)
		assert.Contains(t, res.Errors[0].Message, "a pipeline file run by a subgraph or map is not validated by the server")
		assert.NotContains(t, res.Errors[0].Message, "root:", "nothing of the file is shown")
	}
}
