package planner

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Engine's models embed with the llm block's embedding_model, and
// their embedding requests are retried and traced as chat calls are.
func TestEngineModelsEmbedThroughTheMiddleware(t *testing.T) {
	t.Setenv("PLANNER_TEST_OPENAI_KEY", "sk-test")
	var hits atomic.Int32
	var model atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		model.Store(r.URL.Path + " " + req.Model)
		_, _ = io.WriteString(w, `{"object":"list","data":[{"embedding":[0.5,0.25],"index":0}],"model":"m"}`)
	}))
	t.Cleanup(srv.Close)
	e, err := New(fullSet())
	require.NoError(t, err)
	m, err := e.Models().Model(t.Context(), config.LLM{
		Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL + "/v1", APIKeyEnv: "PLANNER_TEST_OPENAI_KEY",
		EmbeddingModel: "text-embedding-3-large",
		Retry:          config.Retry{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
	}, "")
	require.NoError(t, err)
	require.NotNil(t, m.Embedder)
	rec := &trace.Recorder{}
	ctx := llm.WithCallMeta(trace.WithTracer(t.Context(), trace.New("run", rec)), llm.CallMeta{Node: "act"})

	v, err := m.Embedder.EmbedQuery(ctx, "rain tomorrow")
	require.NoError(t, err)
	assert.Equal(t, []float32{0.5, 0.25}, v)
	assert.Equal(t, int32(2), hits.Load(), "the 503 was retried")
	assert.Equal(t, "/v1/embeddings text-embedding-3-large", model.Load())
	retries := rec.OfKind(trace.KindRetry)
	require.Len(t, retries, 1)
	assert.Equal(t, 503, retries[0].Data["status"])
	assert.Equal(t, "act", retries[0].Node)

	anth, err := e.Models().Model(t.Context(), config.LLM{Provider: "anthropic", Model: "claude-3-5-haiku-latest", APIKeyEnv: "PLANNER_TEST_OPENAI_KEY"}, "")
	require.NoError(t, err)
	assert.Nil(t, anth.Embedder, "anthropic offers no embeddings")
}
