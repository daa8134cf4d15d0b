package llm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/planner-engine/planner/config"
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
	c = tracedEmbedder{c: c, provider: cfg.Provider, model: src.EmbeddingModel(), observe: f.observeEmbedding}
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

// EmbeddingEvent describes one embedding request a Model's Embedder made.
// Embedding requests are not counted in a run's model calls or tokens:
// providers price them apart, far below chat tokens.
type EmbeddingEvent struct {
	// Node is the calling node (from ctx's CallMeta).
	Node string
	// Provider and Model name the embedding model; Texts is how many texts
	// the request embedded; Elapsed how long it took with its retries.
	Provider, Model string
	Texts           int
	Elapsed         time.Duration
}

// Data keys of the trace event the planner emits for an embedding request.
const (
	// TraceEmbeddingTexts is the number of texts embedded.
	TraceEmbeddingTexts = "embedding_texts"
	// TraceEmbeddingModel is the embedding model.
	TraceEmbeddingModel = "embedding_model"
)

// WithEmbeddingObserver calls observe after every successful embedding
// request of the Factory's embedders (the planner traces each as an event
// of kind info). Default: none.
func WithEmbeddingObserver(observe func(ctx context.Context, e EmbeddingEvent)) FactoryOption {
	return func(f *Factory) { f.observeEmbedding = observe }
}

// tracedEmbedder reports each embedding request to the Factory's observer.
type tracedEmbedder struct {
	c               embeddings.EmbedderClient
	provider, model string
	observe         func(ctx context.Context, e EmbeddingEvent)
}

func (e tracedEmbedder) CreateEmbedding(ctx context.Context, texts []string) ([][]float32, error) {
	began := time.Now()
	vecs, err := e.c.CreateEmbedding(ctx, texts)
	if err != nil {
		return nil, err
	}
	if e.observe != nil {
		e.observe(ctx, EmbeddingEvent{Node: CallMetaFrom(ctx).Node, Provider: e.provider, Model: e.model, Texts: len(texts), Elapsed: time.Since(began)})
	}
	return vecs, nil
}
