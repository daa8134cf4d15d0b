package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestACompareBudgetStopsTheComparisonAndExits4: ReAct on eight demo
// tasks, one run at a time, with a budget of five model calls. The sim
// answers each of the first tasks in two calls, so the third run is cut
// short after its first call (its finalizer answers) and the five others
// are not started. The table and report.json count them, stderr says
// why, the exit code is 4, and the same command without the budget runs
// the rest.
func TestACompareBudgetStopsTheComparisonAndExits4(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"compare", "--suite", "demo", "--limit", "8", "--config", configPath("react.yaml"), "--llm", "sim",
		"--concurrency", "1", "--out", out}
	res := cli(t, append(args, "--max-model-calls", "5")...)
	require.Equal(t, exitIncomplete, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	assert.Contains(t, res.stderr, "planner: compare stopped by its budget: the compare budget is spent: 6 model calls made, "+
		"its limit is 5 (max model calls); 1 run cut short, 5 not started. The finished runs are saved in "+out+
		": run the same command again (raise the --max-* limit to go further) to run the rest.\n")
	assert.Contains(t, res.stdout, "Stopped by the compare budget: 6 model calls made, its limit is 5 (max model calls). "+
		"1 run cut short (failure budget, answered from the work so far), 5 not started")
	assert.Regexp(t, `(?m)^config +not run +success`, res.stdout)
	assert.Regexp(t, `(?m)^react +5 +`, res.stdout)
	assert.Contains(t, res.stdout, "reports: "+filepath.Join(out, "report.html"), "the reports are written")

	var rep struct {
		Ran    int `json:"ran"`
		Budget struct {
			MaxModelCalls int  `json:"max_model_calls"`
			ModelCalls    int  `json:"model_calls"`
			Spent         bool `json:"spent"`
			CutShort      int  `json:"cut_short"`
			NotRun        int  `json:"not_run"`
		} `json:"budget"`
		Configs []struct {
			Runs     int            `json:"runs"`
			NotRun   int            `json:"not_run"`
			Failures map[string]int `json:"failures"`
		} `json:"configs"`
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, 3, rep.Ran)
	assert.Equal(t, 5, rep.Budget.MaxModelCalls)
	assert.Equal(t, 6, rep.Budget.ModelCalls)
	assert.True(t, rep.Budget.Spent)
	assert.Equal(t, 1, rep.Budget.CutShort)
	assert.Equal(t, 5, rep.Budget.NotRun)
	require.Len(t, rep.Configs, 1)
	assert.Equal(t, 3, rep.Configs[0].Runs)
	assert.Equal(t, 5, rep.Configs[0].NotRun)
	assert.NotContains(t, rep.Configs[0].Failures, "wrong", "runs not started are not wrong answers")

	// --json prints the report and exits 4 too.
	js := cli(t, append(args, "--max-model-calls", "5", "--json", "--out", filepath.Join(t.TempDir(), "json"))...)
	assert.Equal(t, exitIncomplete, js.code, "stderr: %s", js.stderr)
	assert.Contains(t, js.stdout, `"not_run":5`)
	assert.Contains(t, js.stderr, "planner: compare stopped by its budget")

	// The same command without the budget runs the five, and exits 0.
	again := cli(t, args...)
	require.Equal(t, exitOK, again.code, "stderr: %s", again.stderr)
	assert.Contains(t, again.stdout, "8 runs (3 reused from an earlier run)")
	assert.NotContains(t, again.stdout, "not run")
}

func TestCompareRefusesANegativeBudget(t *testing.T) {
	t.Parallel()
	for flag, want := range map[string]string{
		"--max-cost-usd=-0.5":  "--max-cost-usd must be 0 (no bound) or more, in US dollars, e.g. 0.50, got -0.5",
		"--max-tokens=-1":      "--max-tokens must be 0 (no bound) or more, got -1",
		"--max-model-calls=-2": "--max-model-calls must be 0 (no bound) or more, got -2",
	} {
		out := filepath.Join(t.TempDir(), "out")
		res := cli(t, "compare", "--config", configPath("direct.yaml"), "--llm", "sim", "--out", out, flag)
		assert.Equal(t, exitUsage, res.code, flag)
		assert.Contains(t, res.stderr, "planner: "+want+"\n")
		assert.NoDirExists(t, out)
	}
}

// TestCompareOnAnthropicMarksThePromptCacheAndReportsCachedTokens runs a
// ReAct comparison against a fake Anthropic Messages API: the second call
// of the loop marks the conversation so far for the prompt cache, and the
// cache reads the replies report become the report's cached prompt tokens.
func TestCompareOnAnthropicMarksThePromptCacheAndReportsCachedTokens(t *testing.T) {
	// Providers read the key from the process environment: not parallel.
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, body)
		mu.Unlock()
		text, cached := "Thought: I need to multiply.\nAction: calculator\nAction Input: 6*7", 0
		if n > 0 {
			text, cached = "Thought: I have it.\nFinal Answer: 42", 1500
		}
		reply, _ := json.Marshal(map[string]any{
			"id": "msg", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-latest",
			"content": []map[string]any{{"type": "text", "text": text}}, "stop_reason": "end_turn",
			"usage": map[string]any{"input_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": cached, "output_tokens": 20},
		})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	defer srv.Close()

	dir := t.TempDir()
	pipe := filepath.Join(dir, "react_claude.yaml")
	require.NoError(t, os.WriteFile(pipe, []byte(`name: react_claude
llm: {provider: anthropic, model: claude-3-5-haiku-latest, base_url: "`+srv.URL+`/v1", retry: {max_attempts: 1}}
tools: [calculator]
nodes:
  - {id: act, type: react, mode: text}
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`), 0o600))
	// A long question: the prompt is past the cache's minimum.
	question := strings.Repeat("Some context that the model has to read before it answers. ", 80) + "What is 6*7?"
	task, _ := json.Marshal(map[string]string{"id": "q1", "question": question, "answer": "42"})
	suite := filepath.Join(dir, "suite.jsonl")
	require.NoError(t, os.WriteFile(suite, append(task, '\n'), 0o600))

	out := filepath.Join(dir, "out")
	res := cli(t, "compare", "--suite", suite, "--config", pipe, "--out", out, "--quiet")
	require.Equal(t, exitOK, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	require.Len(t, bodies, 2)
	assert.NotContains(t, string(bodies[0]), "cache_control", "the first call has no assistant turn and a short system prompt")
	var second struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(bodies[1], &second))
	require.Len(t, second.Messages, 3, "the question, the step, the observation")
	ephemeral := map[string]any{"type": "ephemeral"}
	assert.Equal(t, ephemeral, second.Messages[0].Content[0]["cache_control"], "the question: where the first request ended")
	assert.Nil(t, second.Messages[1].Content[0]["cache_control"])
	assert.Equal(t, ephemeral, second.Messages[2].Content[0]["cache_control"], "the observation: for the next step")

	assert.Regexp(t, `(?m)^config +success .*prompt tok/task +cached tok/task +compl tok/task`, res.stdout)
	assert.Regexp(t, `(?m)^react_claude +1\.000 .* 1700 +1500 +40 `, res.stdout)
	var rep struct {
		Configs []struct {
			Cached int `json:"cached_prompt_tokens"`
		} `json:"configs"`
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Configs, 1)
	assert.Equal(t, 1500, rep.Configs[0].Cached)
}
