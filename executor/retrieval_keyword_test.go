package executor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/tools/search"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unitEmbedder embeds every text as the same vector.
type unitEmbedder struct{}

func (unitEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

func (unitEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return []float32{1, 0}, nil
}

// settingKey returns the key of err's *config.SettingError.
func settingKey(t *testing.T, err error) string {
	t.Helper()
	var se *config.SettingError
	require.True(t, errors.As(err, &se), "%v is no setting error", err)
	return se.Key
}

func TestALoopThatNeedsAKeywordIndexFailsToBuildWithoutOne(t *testing.T) {
	env := nodekind.Env{Tools: registry(t, manyTools()...)}

	_, err := executor.NewLoop(env, retrievalCfg(3))
	require.ErrorIs(t, err, executor.ErrNoKeywordIndex)
	require.ErrorIs(t, err, config.ErrSettings)
	assert.Equal(t, "tool_retrieval.method", settingKey(t, err))
	assert.ErrorContains(t, err, "planner.WithKeywordIndex")

	hybrid := retrievalCfg(3)
	hybrid.ToolRetrieval.Method = "hybrid"
	env.Model = llm.Model{Embedder: unitEmbedder{}}
	_, err = executor.NewLoop(env, hybrid)
	require.ErrorIs(t, err, executor.ErrNoKeywordIndex)

	_, err = executor.NewLoop(env, executor.ReActConfig{Compaction: executor.CompactionSummarize})
	require.ErrorIs(t, err, executor.ErrNoKeywordIndex)
	assert.Equal(t, "recall", settingKey(t, err))
	assert.ErrorContains(t, err, "recall: false")
}

func TestALoopThatNeedsNoKeywordIndexBuildsWithoutOne(t *testing.T) {
	env := nodekind.Env{Tools: registry(t, manyTools()...), Model: llm.Model{Embedder: unitEmbedder{}}}
	embedding := retrievalCfg(3)
	embedding.ToolRetrieval.Method = "embedding"
	no := false
	for name, cfg := range map[string]executor.ReActConfig{
		"retrieval by embeddings":   embedding,
		"no more tools than needed": retrievalCfg(100),
		"retrieval disabled":        {ToolRetrieval: executor.ToolRetrieval{MaxTools: 3, Disabled: true}},
		"summaries without recall":  {Compaction: executor.CompactionSummarize, Recall: &no, ToolRetrieval: executor.ToolRetrieval{MaxTools: 100}},
	} {
		_, err := executor.NewLoop(env, cfg)
		assert.NoError(t, err, name)
	}
	env.Keywords = search.Keywords{}
	_, err := executor.NewLoop(env, retrievalCfg(3))
	assert.NoError(t, err, "with the command line's index")
}
