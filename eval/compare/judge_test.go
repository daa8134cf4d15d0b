package compare_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/score"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms/openai"
)

// judgeServer is a loopback OpenAI-compatible chat-completions server
// whose every reply is the verdict pass, reporting 100 prompt and 20
// completion tokens; it counts the requests.
func judgeServer(t *testing.T, pass bool, requests *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.URL.Path != "/chat/completions" || !strings.Contains(string(body), "Answer") {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		n := requests.Add(1)
		verdict := fmt.Sprintf(`{"score": %d, "pass": %t, "reason": "graded by the fake"}`, map[bool]int{true: 1, false: 0}[pass], pass)
		b, _ := json.Marshal(map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1755695200, "model": "gpt-4o-mini-2024-07-18",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "Verdict:\n```json\n" + verdict + "\n```"}}},
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
		})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// judge returns a judge scorer calling srv, caching in cache, priced at
// one dollar per million prompt and completion tokens alike.
func judge(t *testing.T, srv *httptest.Server, cache string) score.Scorer {
	t.Helper()
	m, err := openai.New(openai.WithBaseURL(srv.URL), openai.WithToken("test-token"), openai.WithModel("gpt-4o-mini"))
	require.NoError(t, err)
	sc, err := score.Parse(context.Background(), "judge", score.Options{JudgeModel: m, JudgeModelName: "openai:gpt-4o-mini", JudgeCache: cache,
		Price: func(u usage.Usage) float64 { return float64(u.PromptTokens+u.CompletionTokens) / 1e6 }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = score.Close(sc) })
	return sc
}

// A judge scorer grades every run through a loopback OpenAI-compatible
// server: its column holds the verdicts, its calls are counted and costed
// apart from the runs' own, and a second report takes every verdict from
// its cache without a call.
func TestAJudgeGradesEveryRunWithItsCallsApart(t *testing.T) {
	ctx := context.Background()
	tasks := demoTasks(t)[:5]
	var requests atomic.Int64
	srv := judgeServer(t, true, &requests)
	cache := filepath.Join(t.TempDir(), "judge.db")
	// The oracle sim knows the facts, so cot answers like react.
	loader := newLoader(sim.Profile{Name: "perfect"}, withOracle())
	opts := compare.Options{Configs: configPaths("cot", "react"), LLM: config.LLM{Provider: "sim"}, OutDir: t.TempDir(), NoTraces: true}
	plain, err := compare.Run(ctx, loader, tasks, opts)
	require.NoError(t, err)

	opts.Scorers = []score.Scorer{judge(t, srv, cache)}
	rep, err := compare.Run(ctx, loader, tasks, opts)
	require.NoError(t, err)
	require.Len(t, rep.Scorers, 1)
	u := rep.Scorers[0]
	assert.Equal(t, "judge", u.Name)
	assert.Equal(t, 10, u.Verdicts)
	// cot and react give the same answer to each task, and the judge's
	// cache is keyed by its prompt: one call per distinct answer, the
	// other config's verdict from the cache.
	assert.Equal(t, 5, u.Calls)
	assert.Equal(t, 5, u.Cached)
	assert.Equal(t, int64(5), requests.Load())
	assert.Equal(t, 500, u.PromptTokens)
	assert.Equal(t, 100, u.CompletionTokens)
	assert.InDelta(t, 0.0006, u.CostUSD, 1e-12, "600 tokens at $1 per million")
	assert.InDelta(t, 0.0006, u.SavedUSD, 1e-12)
	for i, s := range rep.Configs {
		assert.Equal(t, plain.Configs[i].ModelCalls, s.ModelCalls, "the runs' calls leave the judge's out")
		assert.InDelta(t, plain.Configs[i].CostUSD, s.CostUSD, 1e-12)
		require.Contains(t, s.Scores, "judge")
		assert.Equal(t, 5, s.Scores["judge"].Scored)
		assert.InDelta(t, 1, s.Scores["judge"].Mean, 1e-12)
	}
	var md strings.Builder
	require.NoError(t, rep.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "scorer judge: 10 verdicts, 5 model calls (500 prompt + 100 completion tokens, $0.00060, apart from the runs'), 5 from its cache (saved $0.00060)")
	assert.Contains(t, md.String(), "| judge |")

	rep, err = compare.Run(ctx, loader, tasks, opts)
	require.NoError(t, err)
	assert.Equal(t, int64(5), requests.Load(), "the second report asks nothing")
	assert.Equal(t, 10, rep.Scorers[0].Cached)
	assert.Zero(t, rep.Scorers[0].Calls)
	assert.InDelta(t, 0.0012, rep.Scorers[0].SavedUSD, 1e-12)
}

// A judge named as the success scorer decides success: a judge that fails
// every answer makes every run wrong, however right the built-in scorer
// finds it.
func TestASuccessScorerDecidesSuccess(t *testing.T) {
	var requests atomic.Int64
	srv := judgeServer(t, false, &requests)
	opts := compare.Options{Configs: configPaths("cot"), LLM: config.LLM{Provider: "sim"}, OutDir: t.TempDir(), NoTraces: true,
		Scorers: []score.Scorer{judge(t, srv, "")}, SuccessScorer: "judge"}
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}, withOracle()), demoTasks(t)[:4], opts)
	require.NoError(t, err)
	s := rep.Configs[0]
	assert.Equal(t, 4, s.Scored)
	assert.Zero(t, s.Correct)
	assert.Equal(t, map[string]int{"wrong": 4}, s.Failures)
	assert.InDelta(t, 1, s.EM, 1e-12, "EM is still the built-in scorer's")

	opts.SuccessScorer = "nope"
	_, err = compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), demoTasks(t)[:4], opts)
	require.ErrorIs(t, err, compare.ErrOptions)
}
