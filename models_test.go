package planner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// hangingServer accepts every request and never answers it, until the
// client gives up; it counts the requests.
func hangingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		// Drain the body so the server notices when the client hangs up.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestRetryWaitsOfARealProviderAreTracedAndPrinted(t *testing.T) {
	t.Setenv("PLANNER_TEST_OPENAI_KEY", "sk-test")
	srv, hits := hangingServer(t)
	e, err := New(fullSet())
	require.NoError(t, err)
	m, err := e.Models().Model(t.Context(), config.LLM{
		Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL + "/v1", APIKeyEnv: "PLANNER_TEST_OPENAI_KEY",
		Timeout: 100 * time.Millisecond,
		Retry:   config.Retry{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
	}, "")
	require.NoError(t, err)
	rec := &trace.Recorder{}
	var term bytes.Buffer
	ctx := trace.WithTracer(t.Context(), trace.New("run", rec, trace.NewTerminal(&term)))

	_, _, err = m.Call(ctx, nil, llm.CallMeta{Node: "act", Kind: "react"}, llm.Prompt("", "hi"))

	require.ErrorIs(t, err, middleware.ErrRetriesExhausted)
	require.ErrorIs(t, err, middleware.ErrCallTimeout, "each attempt is bounded by llm.timeout")
	// Under load an attempt may time out before its request reaches the
	// server, so the server's count is only bounded; the two retry events
	// show the three attempts.
	assert.InDelta(t, 2, hits.Load(), 1)
	retries := rec.OfKind(trace.KindRetry)
	require.Len(t, retries, 2, "one event per retry wait")
	for i, ev := range retries {
		assert.Equal(t, "act", ev.Node)
		assert.Equal(t, []string{
			"retrying in 1ms after timeout (attempt 1 of 3)",
			"retrying in 1ms after timeout (attempt 2 of 3)",
		}[i], ev.Text)
		assert.Equal(t, i+1, ev.Data["attempt"])
		assert.Equal(t, 3, ev.Data["max_attempts"])
		assert.Equal(t, 0, ev.Data["status"])
		assert.Equal(t, "timeout", ev.Data["reason"])
		assert.Contains(t, ev.Data, "delay_ms")
	}
	assert.Contains(t, term.String(), "  [act] ↻ retrying in 1ms after timeout (attempt 1 of 3)\n")
	assert.Contains(t, term.String(), "  [act] ↻ retrying in 1ms after timeout (attempt 2 of 3)\n")
}

func TestRetryOfAnHTTP429IsTracedWithItsStatus(t *testing.T) {
	t.Setenv("PLANNER_TEST_OPENAI_KEY", "sk-test")
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "5")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"rate_limit"}}`)
	}))
	t.Cleanup(srv.Close)
	e, err := New(fullSet())
	require.NoError(t, err)
	m, err := e.Models().Model(t.Context(), config.LLM{
		Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL + "/v1", APIKeyEnv: "PLANNER_TEST_OPENAI_KEY",
		Retry: config.Retry{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
	}, "")
	require.NoError(t, err)
	rec := &trace.Recorder{}
	ctx := trace.WithTracer(t.Context(), trace.New("run", rec))

	_, _, err = m.Call(ctx, nil, llm.CallMeta{Node: "plan"}, llm.Prompt("", "hi"))

	require.ErrorIs(t, err, middleware.ErrRetriesExhausted)
	assert.Equal(t, int32(2), hits.Load())
	retries := rec.OfKind(trace.KindRetry)
	require.Len(t, retries, 1)
	assert.Equal(t, "retrying in 5ms after HTTP 429 (attempt 1 of 2)", retries[0].Text)
	assert.Equal(t, 429, retries[0].Data["status"])
	assert.Equal(t, "HTTP 429", retries[0].Data["reason"])
	assert.Equal(t, int64(5), retries[0].Data["retry_after_ms"])
}

func TestMiddlewareForBoundsEveryRealAttempt(t *testing.T) {
	tests := []struct {
		name        string
		cfg         config.LLM
		offline     bool
		wantTimeout time.Duration
	}{
		{"real provider gets the default", config.LLM{Provider: "openai"}, false, middleware.DefaultCallTimeout},
		{"real provider keeps its own", config.LLM{Provider: "anthropic", Timeout: 5 * time.Minute}, false, 5 * time.Minute},
		{"offline has none", config.LLM{Provider: "scripted"}, true, 0},
		{"offline keeps its own", config.LLM{Provider: "replay", Timeout: time.Second}, true, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantTimeout, middlewareFor(tt.cfg, tt.offline).Timeout)
		})
	}
	assert.Equal(t, 2*time.Minute, middleware.DefaultCallTimeout)
}

func TestMiddlewareForMapsReplyLimitAndMaxRetryAfter(t *testing.T) {
	mc := middlewareFor(config.LLM{Provider: "openai"}, false)
	assert.Equal(t, config.DefaultMaxReplyBytes, mc.MaxReplyBytes)
	assert.Zero(t, mc.Retry.MaxRetryAfter, "the middleware's own default (2m) applies")

	mc = middlewareFor(config.LLM{Provider: "scripted", MaxReplyBytes: 1024, Retry: config.Retry{MaxRetryAfter: 10 * time.Minute}}, true)
	assert.Equal(t, 1024, mc.MaxReplyBytes)
	assert.Equal(t, 10*time.Minute, mc.Retry.MaxRetryAfter)
}

func TestMiddlewareForRetriesOfflineModelsQuickly(t *testing.T) {
	real := middlewareFor(config.LLM{Provider: "openai"}, false)
	assert.Equal(t, middleware.DefaultConfig().Retry, real.Retry)
	off := middlewareFor(config.LLM{Provider: "scripted"}, true)
	assert.Equal(t, time.Millisecond, off.Retry.BaseDelay)
	assert.Equal(t, 10*time.Millisecond, off.Retry.MaxDelay)
}

func TestReplyLimitCutsRepliesButTheCassetteKeepsThemRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/run.jsonl"
	long := strings.Repeat("y", 200)
	e, err := New(fullSet(), WithRecording(path))
	require.NoError(t, err)
	m, err := e.Models().Model(t.Context(), config.LLM{Provider: "scripted", Script: writeScript(t, dir, "long.yaml", long), MaxReplyBytes: 64}, "")
	require.NoError(t, err)
	rec := &trace.Recorder{}
	ctx := trace.WithTracer(t.Context(), trace.New("run", rec))

	text, resp, err := m.Call(ctx, nil, llm.CallMeta{Node: "n"}, llm.Prompt("", "q"))

	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("y", 64)+"\n[reply truncated: 136 of 200 bytes dropped; the limit is 64 bytes]", text)
	assert.Equal(t, true, resp.Choices[0].GenerationInfo[middleware.TruncatedInfoKey])
	infos := rec.OfKind(trace.KindInfo)
	require.Len(t, infos, 1)
	assert.Equal(t, "n", infos[0].Node)
	assert.Contains(t, infos[0].Text, "model reply truncated")
	require.NoError(t, e.Close())

	entries := readCassette(t, path)
	require.Len(t, entries, 1)
	assert.Equal(t, long, entries[0].Response.Choices[0].Content, "the cassette records the raw reply")
	assert.NotContains(t, entries[0].Response.Choices[0].GenerationInfo, middleware.TruncatedInfoKey)
}

func TestModelsRejectAnAbsurdReplyLimit(t *testing.T) {
	t.Parallel()
	e, err := New(fullSet())
	require.NoError(t, err)
	_, err = e.Models().Model(t.Context(), config.LLM{Provider: "scripted", Script: "unused.yaml", MaxReplyBytes: 1 << 30}, "")
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), "llm.max_reply_bytes")
}

func TestMistralIsBuiltWithoutAnHTTPClient(t *testing.T) {
	t.Setenv("PLANNER_TEST_MISTRAL_KEY", "test")
	e, err := New(fullSet())
	require.NoError(t, err)
	m, err := e.Models().Model(context.Background(), config.LLM{Provider: "mistral", Model: "mistral-small-latest", APIKeyEnv: "PLANNER_TEST_MISTRAL_KEY"}, "")
	require.NoError(t, err, "the mistral SDK refuses a caller's HTTP client")
	assert.NotNil(t, m.LLM)
}

func TestModelsAreMeteredWithTheTokenizerAndPricedFromTheTable(t *testing.T) {
	t.Parallel()
	prices := usage.PriceTable{"house-model": {InputPerMTok: 1e6, OutputPerMTok: 2e6}} // $1 and $2 a token
	e, err := New(fullSet(), WithPriceTable(prices))
	require.NoError(t, err)
	const reply = "The tokenizer counts tokens, not characters, 1173 plants."
	m, err := e.Models().Model(t.Context(), config.LLM{Provider: "scripted", Model: "house-model", Script: writeScript(t, t.TempDir(), "s.yaml", reply)}, "")
	require.NoError(t, err)
	st := state.NewState(state.Task{Question: "q"})
	st.SetHooks(pipeline.ContextHooks(st)) // usage and trace events, as in a run
	msgs := llm.Prompt("You are terse.", "How many plants do 3 fields of 17 rows of 23 plants hold?")

	_, resp, err := m.Call(t.Context(), st, llm.CallMeta{Node: "n"}, msgs)

	require.NoError(t, err)
	est, err := usage.NewEstimator()
	require.NoError(t, err)
	want := est.Estimate(msgs, resp)
	got := st.Usage.Snapshot()
	assert.Equal(t, want.PromptTokens, got.PromptTokens, "the o200k tokenizer, not characters/4")
	assert.Equal(t, want.CompletionTokens, got.CompletionTokens)
	approxPrompt, approxCompletion, _ := llm.ApproxMeter{}.Measure(msgs, resp)
	assert.NotEqual(t, [2]int{approxPrompt, approxCompletion}, [2]int{got.PromptTokens, got.CompletionTokens})
	assert.True(t, got.Estimated)
	assert.InDelta(t, float64(want.PromptTokens)+2*float64(want.CompletionTokens), got.CostUSD, 1e-9)
}

func TestOfflineProvidersRetryQuickly(t *testing.T) {
	t.Parallel()
	// The model fails every call with an HTTP 500, which the middleware
	// retries.
	build := func(context.Context, config.LLM, string) (llms.Model, error) {
		return llmtest.Fail(&middleware.HTTPError{StatusCode: http.StatusInternalServerError, Err: errors.New("server error")}), nil
	}
	tests := []struct {
		name    string
		opt     Option
		offline bool
	}{
		{"WithProvider", WithProvider("p", "p", build), false},
		{"WithOfflineProvider", WithOfflineProvider("p", "p", build), true},
		{"an offline kind", WithProvider("p", "p", build, llm.AsKind(llm.KindSimulated)), true},
		{"a later registration decides", func(o *options) {
			WithOfflineProvider("p", "p", build)(o)
			WithProvider("p", "p", build)(o)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := New(fullSet(), tt.opt)
			require.NoError(t, err)
			m, err := e.Models().Model(t.Context(), config.LLM{Provider: "p", Retry: config.Retry{MaxAttempts: 2}}, "")
			require.NoError(t, err)
			rec := &trace.Recorder{}
			_, _, err = m.Call(trace.WithTracer(t.Context(), trace.New("run", rec)), nil, llm.CallMeta{Node: "n"}, llm.Prompt("", "hi"))
			require.ErrorIs(t, err, middleware.ErrRetriesExhausted)
			retries := rec.OfKind(trace.KindRetry)
			require.Len(t, retries, 1)
			delay := retries[0].Data["delay_ms"].(int64)
			if tt.offline {
				assert.LessOrEqual(t, delay, int64(10))
			} else {
				assert.GreaterOrEqual(t, delay, int64(100), "the real providers' backoff")
			}
		})
	}
}

// An OpenAI-compatible server's prompt_tokens_details.cached_tokens reaches
// the trace and is priced at the table's cached rate.
func TestCachedPromptTokensArePricedAtTheCachedRate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"house-model",
"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],
"usage":{"prompt_tokens":1000,"completion_tokens":10,"total_tokens":1010,"prompt_tokens_details":{"cached_tokens":800}}}`)
	}))
	t.Cleanup(srv.Close)
	// $1 a token of input, $0.10 a cached one, $2 a token of output.
	prices := usage.PriceTable{"house-model": {InputPerMTok: 1e6, CachedInputPerMTok: 1e5, OutputPerMTok: 2e6}}
	e, err := New(fullSet(), WithPriceTable(prices))
	require.NoError(t, err)
	m, err := e.Models().Model(t.Context(), config.LLM{Provider: "openai", Model: "house-model", BaseURL: srv.URL + "/v1"}, "")
	require.NoError(t, err)
	st := state.NewState(state.Task{Question: "q"})
	st.SetHooks(pipeline.ContextHooks(st)) // usage and trace events, as in a run
	rec := &trace.Recorder{}
	_, _, err = m.Call(trace.WithTracer(t.Context(), trace.New("r", rec)), st, llm.CallMeta{Node: "n"}, llm.Prompt("s", "u"))
	require.NoError(t, err)
	calls := rec.OfKind(trace.KindLLMCall)
	require.Len(t, calls, 1)
	assert.Equal(t, 800, calls[0].Usage.CachedPromptTokens)
	assert.Equal(t, 1000, calls[0].Usage.PromptTokens)
	assert.InDelta(t, 200*1+800*0.1+10*2, st.Usage.Snapshot().CostUSD, 1e-6)
	assert.Equal(t, 800, st.Usage.Snapshot().CachedPromptTokens, "the run's usage (run --json, compare) counts them too")
}
