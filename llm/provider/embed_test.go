package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"
)

// embeddingSource is what the llm factory reads from a built model.
type embeddingSource interface {
	EmbeddingClient() embeddings.EmbedderClient
	EmbeddingModel() string
}

func embedClientOf(t *testing.T, m llms.Model) (embeddings.EmbedderClient, string) {
	t.Helper()
	src, ok := m.(embeddingSource)
	require.True(t, ok, "%T offers no EmbeddingClient", m)
	return src.EmbeddingClient(), src.EmbeddingModel()
}

// vectorOf is a deterministic vector for text: its length and its first
// byte, so that the tests can tell which text a vector belongs to.
func vectorOf(text string) []float32 { return []float32{float32(len(text)), float32(text[0]), 1} }

// openAIEmbeddings answers POST /embeddings in OpenAI's format, one vector
// per input, echoing the model.
func openAIEmbeddings(w http.ResponseWriter, _ *http.Request, _ int, body []byte) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, `{"error":{"message":"bad json"}}`)
		return
	}
	type datum struct {
		Object    string    `json:"object"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	out := struct {
		Object string         `json:"object"`
		Data   []datum        `json:"data"`
		Model  string         `json:"model"`
		Usage  map[string]int `json:"usage"`
	}{Object: "list", Model: req.Model, Usage: map[string]int{"prompt_tokens": 8, "total_tokens": 8}}
	for i, in := range req.Input {
		out.Data = append(out.Data, datum{Object: "embedding", Embedding: vectorOf(in), Index: i})
	}
	raw, _ := json.Marshal(out)
	writeJSON(w, http.StatusOK, string(raw))
}

func TestOpenAIEmbeddingsSendTheEmbeddingModelAndKey(t *testing.T) {
	srv := newFakeServer(t, openAIEmbeddings)
	cfg := Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL + "/v1"}
	m := newTestModel(t, cfg, "TEST_OPENAI_KEY")
	c, model := embedClientOf(t, m)
	require.NotNil(t, c)
	assert.Equal(t, "text-embedding-3-small", model, "the provider's default")

	vecs, err := c.CreateEmbedding(context.Background(), []string{"weather in Paris", "convert units"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{vectorOf("weather in Paris"), vectorOf("convert units")}, vecs)

	req := srv.only(t)
	assertPOST(t, req, "/v1/embeddings")
	assert.Equal(t, "Bearer "+testSecret, req.Header.Get("Authorization"))
	body := req.JSON(t)
	assert.Equal(t, "text-embedding-3-small", body["model"])
	assert.Equal(t, []any{"weather in Paris", "convert units"}, body["input"])
}

func TestOpenAIEmbeddingModelIsConfigurable(t *testing.T) {
	srv := newFakeServer(t, openAIEmbeddings)
	cfg := Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL + "/v1", EmbeddingModel: "text-embedding-3-large"}
	c, model := embedClientOf(t, newTestModel(t, cfg, "TEST_OPENAI_KEY"))
	assert.Equal(t, "text-embedding-3-large", model)
	_, err := c.CreateEmbedding(context.Background(), []string{"x"})
	require.NoError(t, err)
	assert.Equal(t, "text-embedding-3-large", srv.only(t).JSON(t)["model"])
}

func TestEmbeddingFailuresAreStatusErrorsWithoutTheKey(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
		w.Header().Set("Retry-After", "3")
		writeJSON(w, http.StatusTooManyRequests, `{"error":{"message":"Rate limit reached for `+testSecret+`","type":"requests"}}`)
	})
	cfg := Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL + "/v1"}
	c, _ := embedClientOf(t, newTestModel(t, cfg, "TEST_OPENAI_KEY"))
	_, err := c.CreateEmbedding(context.Background(), []string{"x"})
	require.Error(t, err)
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusTooManyRequests, se.StatusCode)
	assert.Positive(t, se.RetryAfter)
	assert.NotContains(t, err.Error(), testSecret)
	assert.Contains(t, err.Error(), "text-embedding-3-small")
}

func TestEmbeddingRepliesOfTheWrongSizeFail(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
		writeJSON(w, http.StatusOK, `{"object":"list","data":[{"embedding":[1,2],"index":0}],"model":"m"}`)
	})
	cfg := Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL + "/v1"}
	c, _ := embedClientOf(t, newTestModel(t, cfg, "TEST_OPENAI_KEY"))
	vecs, err := c.CreateEmbedding(context.Background(), []string{"a", "b"})
	require.Error(t, err)
	assert.Nil(t, vecs)
	assert.Contains(t, err.Error(), "openai: embedding with text-embedding-3-small")
}

func TestOllamaEmbedsWithTheEmbeddingModelNotTheChatModel(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, body []byte) {
		var req struct {
			Model string `json:"model"`
			Input string `json:"input"`
		}
		_ = json.Unmarshal(body, &req)
		raw, _ := json.Marshal(map[string]any{"model": req.Model, "embeddings": [][]float32{vectorOf(req.Input)}})
		writeJSON(w, http.StatusOK, string(raw))
	})
	c, model := embedClientOf(t, newTestModel(t, ollamaConfig(srv.URL), ""))
	assert.Equal(t, "nomic-embed-text", model)
	vecs, err := c.CreateEmbedding(context.Background(), []string{"alpha", "be"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{vectorOf("alpha"), vectorOf("be")}, vecs)

	reqs := srv.requests()
	require.Len(t, reqs, 2, "the adapter sends one request per text")
	for i, in := range []string{"alpha", "be"} {
		assertPOST(t, reqs[i], "/api/embed")
		body := reqs[i].JSON(t)
		assert.Equal(t, "nomic-embed-text", body["model"])
		assert.Equal(t, in, body["input"])
	}
}

func TestGoogleAIEmbedsThroughBatchEmbedContents(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, body []byte) {
		var req struct {
			Requests []struct {
				Content struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"content"`
			} `json:"requests"`
		}
		_ = json.Unmarshal(body, &req)
		var out []string
		for _, r := range req.Requests {
			raw, _ := json.Marshal(vectorOf(r.Content.Parts[0].Text))
			out = append(out, fmt.Sprintf(`{"values":%s}`, raw))
		}
		writeJSON(w, http.StatusOK, `{"embeddings":[`+strings.Join(out, ",")+`]}`)
	})
	t.Setenv("TEST_GOOGLE_KEY", testSecret)
	cfg := geminiConfig(srv.URL)
	cfg.APIKeyEnv = "TEST_GOOGLE_KEY"
	m, err := New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.(interface{ Close() error }).Close() })
	c, model := embedClientOf(t, m)
	assert.Equal(t, "text-embedding-004", model)

	vecs, err := c.CreateEmbedding(context.Background(), []string{"search the web", "add"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{vectorOf("search the web"), vectorOf("add")}, vecs)

	req := srv.only(t)
	assertPOST(t, req, "/v1beta/models/text-embedding-004:batchEmbedContents")
	assert.Equal(t, testSecret, req.Header.Get("x-goog-api-key"))
	assert.NotContains(t, req.RawQuery, testSecret)
	assert.Contains(t, string(req.Body), `"model":"models/text-embedding-004"`)
}

func TestAnthropicOffersNoEmbeddings(t *testing.T) {
	t.Setenv("TEST_ANTHROPIC_KEY", testSecret)
	m, err := New(context.Background(), Config{Provider: "anthropic", Model: "claude-3-5-haiku-latest", APIKeyEnv: "TEST_ANTHROPIC_KEY", EmbeddingModel: "ignored"})
	require.NoError(t, err, "anthropic ignores embedding_model")
	c, model := embedClientOf(t, m)
	assert.Nil(t, c)
	assert.Empty(t, model)
	_, ok := DefaultEmbeddingModel("anthropic")
	assert.False(t, ok)
}

func TestMistralEmbedsOnlyWithMistralEmbed(t *testing.T) {
	t.Setenv("TEST_MISTRAL_KEY", testSecret)
	cfg := Config{Provider: "mistral", Model: "mistral-small-latest", APIKeyEnv: "TEST_MISTRAL_KEY"}
	m, err := New(context.Background(), cfg)
	require.NoError(t, err)
	c, model := embedClientOf(t, m)
	assert.NotNil(t, c)
	assert.Equal(t, "mistral-embed", model)

	cfg.EmbeddingModel = "other-embed"
	_, err = New(context.Background(), cfg)
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), `only with "mistral-embed"`)
}

func TestEmbeddingWithACancelledContextMakesNoRequest(t *testing.T) {
	srv := newFakeServer(t, openAIEmbeddings)
	cfg := Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: srv.URL + "/v1"}
	c, _ := embedClientOf(t, newTestModel(t, cfg, "TEST_OPENAI_KEY"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.CreateEmbedding(ctx, []string{"x"})
	require.True(t, errors.Is(err, context.Canceled), "got %v", err)
	assert.Empty(t, srv.requests())
}
