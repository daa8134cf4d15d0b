package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simEnv is a test server whose engine has the sim model playing the demo
// suite, as `planner serve --llm sim` has.
func simEnv(t *testing.T) *env {
	t.Helper()
	demo, err := suite.Demo()
	require.NoError(t, err)
	a, err := app.New(app.WithTasks(demo))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, a.Close()) }) // after the server's cleanup
	return newEnv(t, func(c *server.Config) { c.Engine = a.Engine; c.LLM = "sim" })
}

// Every run says what model it uses as `planner run` does ("model:
// LABEL"), with the kind of an offline model in capitals: in the answer
// that starts it and in the run.
func TestRunSaysWhatModel(t *testing.T) {
	t.Parallel()
	t.Run("scripted", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		acc := e.start(server.RunRequest{Config: "react", Question: spiders, LLM: "scripted:spiders.yaml"})
		assert.Equal(t, "SCRIPTED", acc.Model.Mark)
		assert.Equal(t, "scripted", acc.Model.Kind)
		assert.True(t, acc.Model.Offline)
		assert.Equal(t, scripted.Label, acc.Model.Label)
		v := e.wait(acc.RunID)
		assert.Equal(t, "done", v.Status, v.Error)
		assert.Equal(t, acc.Model, v.Model)
	})
	t.Run("real", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		acc := e.start(server.RunRequest{Config: "react", Question: spiders, LLM: e.gated})
		assert.Empty(t, acc.Model.Mark, "a model registered as real has no mark")
		assert.Equal(t, "real", acc.Model.Kind)
		e.wait(acc.RunID)
	})
	t.Run("sim", func(t *testing.T) {
		t.Parallel()
		e := simEnv(t)
		acc := e.start(server.RunRequest{Config: "direct", Suite: "demo", Task: "demo-07"})
		assert.Equal(t, server.ModelInfo{Spec: "sim", Provider: "sim", Kind: "simulated", Offline: true, Mark: "SIMULATED", Label: sim.Label}, acc.Model,
			"the server's --llm sim, with the label planner run prints")
		v := e.wait(acc.RunID)
		assert.Equal(t, "SIMULATED", v.Model.Mark)

		// The page names the server's default model.
		var list struct {
			Model *server.ModelInfo `json:"model"`
		}
		r := e.do("GET", "/api/pipelines", nil)
		require.Equal(t, http.StatusOK, r.code)
		r.json(t, &list)
		require.NotNil(t, list.Model)
		assert.Equal(t, "sim", list.Model.Spec)
		assert.Equal(t, "SIMULATED", list.Model.Mark)
	})
	t.Run("no default", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		r := e.do("GET", "/api/pipelines", nil)
		require.Equal(t, http.StatusOK, r.code)
		assert.NotContains(t, r.json2(t), "model", "runs use each pipeline's own llm block")
	})
}

// The sim plays only tasks of a suite with a gold solution: a question
// that is none is refused before a thread is created, with a hint that
// fits a form; a question that is a demo task runs as that task.
func TestSimRefusesFreeQuestion(t *testing.T) {
	t.Parallel()
	e := simEnv(t)
	for _, c := range []struct {
		name string
		req  server.RunRequest
		has  []string
	}{
		{"free text", server.RunRequest{Config: "direct", Question: "free text"},
			[]string{"sim model plays only tasks of a suite", "no task of the demo suite", "pick a task of the suite", "demo-01 to demo-40", "another model"}},
		{"free text with a suite", server.RunRequest{Config: "direct", Suite: "demo", Question: "What is the meaning of life?"},
			[]string{"no task of the demo suite", "another model"}},
		{"no question, no task", server.RunRequest{Config: "direct", Suite: "demo"},
			[]string{"question is required", "a task of the demo suite", "demo-01 to demo-40"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/api/runs", c.req)
			require.Equal(t, http.StatusBadRequest, r.code, "%s", r.body)
			assert.Equal(t, "bad_request", r.errCode(t))
			var body server.ErrorBody
			r.json(t, &body)
			for _, h := range c.has {
				assert.Contains(t, body.Error.Message, h)
			}
			assert.NotContains(t, body.Error.Message, "--llm", "no command-line flags in a web form's hint")
		})
	}
	r := e.do("GET", "/api/threads", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Empty(t, r.json2(t)["threads"], "no refused run left a thread behind (nothing to resume)")

	demo, err := suite.Demo()
	require.NoError(t, err)
	acc := e.start(server.RunRequest{Config: "direct", Question: demo[6].Question + "  "})
	e.wait(acc.RunID)
	r = e.do("GET", "/api/threads/"+acc.Thread, nil)
	require.Equal(t, http.StatusOK, r.code)
	th := r.json2(t)["thread"].(map[string]any)
	assert.Equal(t, "demo-07", th["task_id"], "a demo question runs as its task, as planner run --llm sim does")
}

// A pipeline whose provider's API key is not set on the server is no
// invalid config: the server cannot build its model (503
// model_unavailable), and no thread is left behind.
func TestMissingKeyIsModelUnavailable(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"} {
		t.Setenv(k, "")
		require.NoError(t, os.Unsetenv(k))
	}
	e := newEnv(t)
	cfg := "name: openai\nllm: {provider: openai, model: gpt-4o-mini}\nnodes:\n  - {id: answer, type: direct}\nedges:\n  - {from: START, to: answer}\n  - {from: answer, to: END}\n"
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "configs", "openai.yaml"), []byte(cfg), 0o644))
	r := e.do("POST", "/api/runs", server.RunRequest{Config: "openai", Question: "q"})
	require.Equal(t, http.StatusServiceUnavailable, r.code, "%s", r.body)
	assert.Equal(t, "model_unavailable", r.errCode(t))
	var body server.ErrorBody
	r.json(t, &body)
	assert.Contains(t, body.Error.Message, "OPENAI_API_KEY")
	assert.Contains(t, body.Error.Message, "server configuration problem")
	r = e.do("GET", "/api/threads", nil)
	assert.Empty(t, r.json2(t)["threads"])
}
