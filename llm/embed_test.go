package llm_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"
)

// embeddingModel is a built model whose provider offers embeddings: a
// vector per text of its length and the count of "e"s, or replies of the
// wrong size when short is set.
type embeddingModel struct {
	llms.Model
	short bool
	calls atomic.Int32
}

func (m *embeddingModel) EmbeddingClient() embeddings.EmbedderClient {
	return embeddings.EmbedderClientFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		m.calls.Add(1)
		if m.short {
			return nil, nil
		}
		out := make([][]float32, len(texts))
		for i, s := range texts {
			out[i] = []float32{float32(len(s)), float32(strings.Count(s, "e"))}
		}
		return out, nil
	})
}

func (m *embeddingModel) EmbeddingModel() string { return "embed-1" }

// embeddingEvents keeps what the Factory's embedding observer is told.
type embeddingEvents struct {
	mu  sync.Mutex
	got []llm.EmbeddingEvent
}

func (e *embeddingEvents) observe(_ context.Context, ev llm.EmbeddingEvent) {
	e.mu.Lock()
	e.got = append(e.got, ev)
	e.mu.Unlock()
}

func (e *embeddingEvents) all() []llm.EmbeddingEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]llm.EmbeddingEvent(nil), e.got...)
}

func TestFactoryGivesModelsTheirProvidersEmbedder(t *testing.T) {
	em := &embeddingModel{}
	var wrapped atomic.Int32
	events := &embeddingEvents{}
	f := llm.NewFactory(
		llm.WithEmbeddingObserver(events.observe),
		llm.WithProvider("emb", "real: emb", func(context.Context, config.LLM, string) (llms.Model, error) { return em, nil }),
		llm.WithProvider("plain", "real: plain", func(context.Context, config.LLM, string) (llms.Model, error) { return struct{ llms.Model }{}, nil }),
		// The chat middleware hides the built model's methods, as the
		// planner's does; the embedder is taken before it.
		llm.WithWrapper(func(_ config.LLM, m llms.Model) llms.Model { return struct{ llms.Model }{m} }),
		llm.WithEmbeddingWrapper(func(cfg config.LLM, c embeddings.EmbedderClient) embeddings.EmbedderClient {
			assert.Equal(t, "emb", cfg.Provider)
			return embeddings.EmbedderClientFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
				wrapped.Add(1)
				return c.CreateEmbedding(ctx, texts)
			})
		}),
	)
	m, err := f.Model(context.Background(), config.LLM{Provider: "emb", Model: "chat-1"}, "")
	require.NoError(t, err)
	require.NotNil(t, m.Embedder)

	ctx := llm.WithCallMeta(context.Background(), llm.CallMeta{Node: "act"})
	docs, err := m.Embedder.EmbedDocuments(ctx, []string{"tree", "sky"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{4, 2}, {3, 0}}, docs)
	q, err := m.Embedder.EmbedQuery(ctx, "green")
	require.NoError(t, err)
	assert.Equal(t, []float32{5, 2}, q)
	assert.EqualValues(t, 2, em.calls.Load())
	assert.EqualValues(t, 2, wrapped.Load(), "every request goes through the embedding wrappers")

	evs := events.all()
	require.Len(t, evs, 2, "the observer is told of every embedding request")
	for i, texts := range []int{2, 1} {
		assert.GreaterOrEqual(t, evs[i].Elapsed, time.Duration(0))
		evs[i].Elapsed = 0
		assert.Equal(t, llm.EmbeddingEvent{Node: "act", Provider: "emb", Model: "embed-1", Texts: texts}, evs[i])
	}

	plain, err := f.Model(context.Background(), config.LLM{Provider: "plain"}, "")
	require.NoError(t, err)
	assert.Nil(t, plain.Embedder, "a model that is no EmbeddingSource has no embedder")
}

func TestFactoryEmbedderRejectsRepliesOfTheWrongSize(t *testing.T) {
	events := &embeddingEvents{}
	f := llm.NewFactory(llm.WithEmbeddingObserver(events.observe), llm.WithProvider("emb", "real: emb", func(context.Context, config.LLM, string) (llms.Model, error) {
		return &embeddingModel{short: true}, nil
	}))
	m, err := f.Model(context.Background(), config.LLM{Provider: "emb"}, "")
	require.NoError(t, err)
	_, err = m.Embedder.EmbedQuery(context.Background(), "x")
	require.ErrorIs(t, err, llm.ErrBadEmbedding, "no panic on an empty reply")
	_, err = m.Embedder.EmbedDocuments(context.Background(), []string{"a", "b"})
	require.ErrorIs(t, err, llm.ErrBadEmbedding)
	assert.Empty(t, events.all(), "a failed request is not reported")
}
