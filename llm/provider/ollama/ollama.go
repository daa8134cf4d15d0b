// Package ollama is the adapter of the provider "ollama": the native
// /api/chat API of an Ollama server, through langchaingo's ollama client
// (which has no tool calling: use the provider openai with base_url
// http://HOST:11434/v1 for that). Register it with
// planner.WithProviders(ollama.Adapter()), or build a model with
// adapter.New; package llm/provider documents the behaviour.
package ollama

import (
	"context"

	"github.com/planner-engine/planner/llm/provider/adapter"
	lcollama "github.com/tmc/langchaingo/llms/ollama"
)

// Adapter returns the adapter of the provider "ollama".
func Adapter() adapter.Adapter {
	return adapter.Adapter{Name: adapter.Ollama, Build: build}
}

func build(_ context.Context, s adapter.Settings) (adapter.Client, error) {
	header, value := "", ""
	if s.Key != "" {
		header, value = "Authorization", "Bearer "+s.Key
	}
	hc := s.HTTPClient(header, value)
	llm, err := lcollama.New(
		lcollama.WithModel(s.Model),
		// BaseURL was parsed by adapter.New: langchaingo's WithServerURL
		// calls log.Fatal on an unparsable URL.
		lcollama.WithServerURL(s.BaseURL),
		lcollama.WithHTTPClient(hc),
	)
	if err != nil {
		return adapter.Client{}, err
	}
	// The adapter embeds with its chat model: embeddings get a client of
	// their own, for the embedding model.
	embed, err := lcollama.New(lcollama.WithModel(s.EmbeddingModel), lcollama.WithServerURL(s.BaseURL), lcollama.WithHTTPClient(hc))
	if err != nil {
		return adapter.Client{}, err
	}
	return adapter.Client{Chat: llm, Embed: embed, RejectTools: true}, nil
}
