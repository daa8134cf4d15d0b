package llm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/embeddings"
)

// DefaultEmbedBatchSize is how many texts one embedding request of a
// Model's Embedder carries at most: EmbedDocuments splits longer lists
// into batches of this size (Gemini's batch endpoint takes 100).
const DefaultEmbedBatchSize = 100

// ErrBadEmbedding means an embedding call returned vectors that do not
// match its texts one to one.
var ErrBadEmbedding = errors.New("embedding call returned the wrong vectors")

// EmbeddingSource is implemented by the built models (as a Builder returns
// them, before any Wrapper) whose provider offers embeddings; the Factory
// makes Model.Embedder from it. The models of package llm/provider
// implement it.
type EmbeddingSource interface {
	// EmbeddingClient returns the client that creates embeddings, or nil
	// when the provider offers none.
	EmbeddingClient() embeddings.EmbedderClient
	// EmbeddingModel names the model EmbeddingClient embeds with.
	EmbeddingModel() string
}

// EmbeddingWrapper wraps a built model's embedding client, as a Wrapper
// wraps the model (middleware such as retries and timeouts).
type EmbeddingWrapper func(cfg config.LLM, c embeddings.EmbedderClient) embeddings.EmbedderClient

// WithEmbeddingWrapper adds middleware around the embedding client of
// every built model that has one, outermost last.
func WithEmbeddingWrapper(w EmbeddingWrapper) FactoryOption {
	return func(f *Factory) { f.embedWrappers = append(f.embedWrappers, w) }
}

// embedderFor returns the embedder of built model m for cfg: nil when m
// is no EmbeddingSource or its provider offers no embeddings.
func (f *Factory) embedderFor(cfg config.LLM, m any) (embeddings.Embedder, error) {
	src, ok := m.(EmbeddingSource)
	if !ok {
		return nil, nil
	}
	c := src.EmbeddingClient()
	if c == nil {
		return nil, nil
	}
	c = checkedEmbedder{c: c}
	for _, w := range f.embedWrappers {
		c = w(cfg, c)
	}
	c = tracedEmbedder{c: c, provider: cfg.Provider, model: src.EmbeddingModel()}
	e, err := newEmbedder(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Provider, err)
	}
	return e, nil
}

// EmbedderFrom returns an embedder over c, a client that creates
// embeddings (a langchaingo LLM that offers them), as the Factory makes
// Model.Embedder but without its middleware: replies are checked against
// their texts and documents go in batches of DefaultEmbedBatchSize.
func EmbedderFrom(c embeddings.EmbedderClient) (embeddings.Embedder, error) {
	return newEmbedder(checkedEmbedder{c: c})
}

func newEmbedder(c embeddings.EmbedderClient) (embeddings.Embedder, error) {
	e, err := embeddings.NewEmbedder(c, embeddings.WithBatchSize(DefaultEmbedBatchSize))
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	return e, nil
}

// checkedEmbedder fails a call whose reply does not hold one non-empty
// vector per text (langchaingo's EmbedQuery would index an empty reply).
type checkedEmbedder struct{ c embeddings.EmbedderClient }

func (e checkedEmbedder) CreateEmbedding(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := e.c.CreateEmbedding(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrBadEmbedding, len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return nil, fmt.Errorf("%w: text %d got an empty vector", ErrBadEmbedding, i+1)
		}
	}
	return vecs, nil
}

// tracedEmbedder emits one trace event (kind info, attributed to the
// calling node of ctx's CallMeta) per embedding request: how many texts,
// the model, and how long the request took with its retries. Embedding
// requests are not counted in a run's model calls or tokens: providers
// price them apart, far below chat tokens.
type tracedEmbedder struct {
	c               embeddings.EmbedderClient
	provider, model string
}

// Data keys of the trace event of an embedding request.
const (
	// TraceEmbeddingTexts is the number of texts embedded.
	TraceEmbeddingTexts = "embedding_texts"
	// TraceEmbeddingModel is the embedding model.
	TraceEmbeddingModel = "embedding_model"
)

func (e tracedEmbedder) CreateEmbedding(ctx context.Context, texts []string) ([][]float32, error) {
	began := time.Now()
	vecs, err := e.c.CreateEmbedding(ctx, texts)
	if err != nil {
		return nil, err
	}
	trace.From(ctx).Emit(trace.Event{Node: CallMetaFrom(ctx).Node, Kind: trace.KindInfo, ElapsedMS: ms(time.Since(began)),
		Text: fmt.Sprintf("embedding: %d text(s) with %s (%s)", len(texts), e.model, e.provider),
		Data: map[string]any{TraceEmbeddingTexts: len(texts), TraceEmbeddingModel: e.model, "provider": e.provider}})
	return vecs, nil
}
