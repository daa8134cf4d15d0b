package pipeline_test

import (
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/pipeline"
	"github.com/stretchr/testify/assert"
)

func TestEmbeddingModelIsKeptOnlyWithItsProvider(t *testing.T) {
	block := config.LLM{Provider: "openai", Model: "gpt-4o", EmbeddingModel: "text-embedding-3-large"}
	same := pipeline.OverrideLLM(block, config.LLM{Provider: "openai", Model: "gpt-4o-mini"})
	assert.Equal(t, "text-embedding-3-large", same.EmbeddingModel, "--llm with the same provider keeps the embedding model")
	other := pipeline.OverrideLLM(block, config.LLM{Provider: "ollama", Model: "llama3.1"})
	assert.Empty(t, other.EmbeddingModel, "another provider gets its own default, not openai's model")
	own := pipeline.OverrideLLM(block, config.LLM{Provider: "openai", Model: "gpt-4o", EmbeddingModel: "text-embedding-3-small"})
	assert.Equal(t, "text-embedding-3-small", own.EmbeddingModel, "an override's own embedding model wins")
}
