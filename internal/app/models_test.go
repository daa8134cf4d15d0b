package app

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	a, err := New()
	require.NoError(t, err)
	m, err := a.Models.Model(t.Context(), config.LLM{
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
	a, err := New()
	require.NoError(t, err)
	m, err := a.Models.Model(t.Context(), config.LLM{
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
		wantTimeout time.Duration
	}{
		{"real provider gets the default", config.LLM{Provider: "openai"}, middleware.DefaultCallTimeout},
		{"real provider keeps its own", config.LLM{Provider: "anthropic", Timeout: 5 * time.Minute}, 5 * time.Minute},
		{"sim has none", config.LLM{Provider: "sim"}, 0},
		{"scripted has none", config.LLM{Provider: "scripted"}, 0},
		{"replay has none", config.LLM{Provider: "replay"}, 0},
		{"offline keeps its own", config.LLM{Provider: "sim", Timeout: time.Second}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantTimeout, middlewareFor(tt.cfg).Timeout)
		})
	}
	assert.Equal(t, 2*time.Minute, middleware.DefaultCallTimeout)
}

func TestMiddlewareForMapsReplyLimitAndMaxRetryAfter(t *testing.T) {
	mc := middlewareFor(config.LLM{Provider: "openai"})
	assert.Equal(t, config.DefaultMaxReplyBytes, mc.MaxReplyBytes)
	assert.Zero(t, mc.Retry.MaxRetryAfter, "the middleware's own default (2m) applies")

	mc = middlewareFor(config.LLM{Provider: "sim", MaxReplyBytes: 1024, Retry: config.Retry{MaxRetryAfter: 10 * time.Minute}})
	assert.Equal(t, 1024, mc.MaxReplyBytes)
	assert.Equal(t, 10*time.Minute, mc.Retry.MaxRetryAfter)
}

func TestReplyLimitCutsRepliesButTheCassetteKeepsThemRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/run.jsonl"
	long := strings.Repeat("y", 200)
	a, err := New(WithRecording(path))
	require.NoError(t, err)
	m, err := a.Models.Model(t.Context(), config.LLM{Provider: "scripted", Script: writeScript(t, dir, "long.yaml", long), MaxReplyBytes: 64}, "")
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
	require.NoError(t, a.Close())

	entries := readCassette(t, path)
	require.Len(t, entries, 1)
	assert.Equal(t, long, entries[0].Response.Choices[0].Content, "the cassette records the raw reply")
	assert.NotContains(t, entries[0].Response.Choices[0].GenerationInfo, middleware.TruncatedInfoKey)
}

func TestModelsRejectAnAbsurdReplyLimit(t *testing.T) {
	t.Parallel()
	a, err := New()
	require.NoError(t, err)
	_, err = a.Models.Model(t.Context(), config.LLM{Provider: "sim", MaxReplyBytes: 1 << 30}, "")
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), "llm.max_reply_bytes")
}

func TestMistralIsBuiltWithoutAnHTTPClient(t *testing.T) {
	t.Setenv("PLANNER_TEST_MISTRAL_KEY", "test")
	a, err := New()
	require.NoError(t, err)
	m, err := a.Models.Model(context.Background(), config.LLM{Provider: "mistral", Model: "mistral-small-latest", APIKeyEnv: "PLANNER_TEST_MISTRAL_KEY"}, "")
	require.NoError(t, err, "the mistral SDK refuses a caller's HTTP client")
	assert.NotNil(t, m.LLM)
}
