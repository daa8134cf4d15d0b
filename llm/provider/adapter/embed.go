package adapter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/embeddings"
)

// DefaultEmbeddingModel returns the embedding model used for provider when
// Config.EmbeddingModel is empty: openai "text-embedding-3-small", ollama
// "nomic-embed-text", googleai "text-embedding-004", mistral
// "mistral-embed". ok is false for a provider whose adapter offers no
// embeddings (anthropic) or that is unknown.
func DefaultEmbeddingModel(provider string) (model string, ok bool) {
	switch normalizeProvider(provider) {
	case OpenAI:
		return "text-embedding-3-small", true
	case Ollama:
		return "nomic-embed-text", true
	case GoogleAI:
		return "text-embedding-004", true
	case Mistral:
		return mistralEmbedModel, true
	}
	return "", false
}

// mistralEmbedModel is the only model langchaingo v0.1.14's mistral
// adapter embeds with (it is hard-coded there).
const mistralEmbedModel = "mistral-embed"

// EmbeddingClient returns what creates embeddings with the model's
// provider and its embedding model (Config.EmbeddingModel), through the
// same HTTP client, key and timeout as its chat calls, or nil when the
// provider offers none (anthropic). Its errors are classified and
// redacted like GenerateContent's (a *StatusError for HTTP failures), and
// a reply whose vectors do not match the texts one to one fails with
// ErrEmbedding.
func (m *model) EmbeddingClient() embeddings.EmbedderClient {
	if m.embed == nil {
		return nil
	}
	return embedClient{m: m}
}

// EmbeddingModel returns the embedding model EmbeddingClient uses; "" when
// there is none.
func (m *model) EmbeddingModel() string { return m.embedModel }

// embedClient creates embeddings through a model's embedding adapter.
type embedClient struct{ m *model }

// CreateEmbedding implements embeddings.EmbedderClient.
func (c embedClient) CreateEmbedding(ctx context.Context, texts []string) ([][]float32, error) {
	m := c.m
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", m.name, err)
	}
	if len(texts) == 0 {
		return nil, nil
	}
	ctx, obs := observe(ctx)
	vecs, err := m.embed.CreateEmbedding(ctx, texts)
	status, retryAfter := obs.StatusCode(), obs.RetryAfter()
	if err == nil && status >= 400 {
		err = errors.New("the response carried no error message")
	}
	if err != nil {
		return nil, m.wrapError(fmt.Errorf("embedding with %s: %w", m.embedModel, err), status, retryAfter, obs.TransportErr())
	}
	return vecs, nil // llm's Factory checks the vectors against the texts
}

// resolveEmbeddingModel returns the embedding model of cfg for provider:
// cfg's, or the provider's default; "" when the provider offers none.
func resolveEmbeddingModel(provider, configured string) (string, error) {
	def, ok := DefaultEmbeddingModel(provider)
	if !ok {
		return "", nil
	}
	name := strings.TrimSpace(configured)
	if name == "" {
		return def, nil
	}
	if provider == Mistral && name != mistralEmbedModel {
		return "", fmt.Errorf("%w: mistral: embedding model %q: langchaingo's mistral adapter embeds only with %q; leave embedding_model unset",
			ErrInvalidConfig, name, mistralEmbedModel)
	}
	return name, nil
}
