package config_test

import (
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseReadsTheEmbeddingModel(t *testing.T) {
	p, err := config.Parse("p.yaml", llmPipeline("  provider: openai\n  embedding_model: text-embedding-3-large\n"), env(nil))
	require.NoError(t, err)
	assert.Equal(t, "text-embedding-3-large", p.LLM.EmbeddingModel)

	p, err = config.Parse("p.yaml", llmPipeline("  provider: openai\n"), env(nil))
	require.NoError(t, err)
	assert.Empty(t, p.LLM.EmbeddingModel, "unset means the provider's default")

	_, err = config.Parse("p.yaml", llmPipeline("  provider: openai\n  embedding_model: \"  \"\n"), env(nil))
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), "llm.embedding_model: is blank")
	require.ErrorIs(t, config.LLM{Provider: "ollama", EmbeddingModel: " "}.Validate(), config.ErrInvalid)
}
