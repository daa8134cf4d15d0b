// Package openai is the adapter of the provider "openai": OpenAI's Chat
// Completions API and every OpenAI-compatible server (DeepSeek, vLLM,
// llama.cpp's server, LM Studio, Ollama's /v1), through langchaingo's
// openai client. Register it with planner.WithProviders(openai.Adapter()),
// or build a model with adapter.New; package llm/provider documents the
// behaviour.
package openai

import (
	"context"
	"net/url"
	"strings"

	"github.com/planner-engine/planner/llm/provider/adapter"
	"github.com/tmc/langchaingo/llms"
	lcopenai "github.com/tmc/langchaingo/llms/openai"
)

// officialHost is OpenAI's own API host, the only one sent
// max_completion_tokens; OpenAI-compatible servers may ignore it and get
// max_tokens.
const officialHost = "api.openai.com"

// Adapter returns the adapter of the provider "openai".
func Adapter() adapter.Adapter {
	return adapter.Adapter{Name: adapter.OpenAI, Build: build}
}

func build(_ context.Context, s adapter.Settings) (adapter.Client, error) {
	llm, err := lcopenai.New(
		lcopenai.WithToken(s.Key),
		lcopenai.WithModel(s.Model),
		lcopenai.WithBaseURL(s.BaseURL),
		lcopenai.WithHTTPClient(s.HTTPClient("", "")),
		lcopenai.WithEmbeddingModel(s.EmbeddingModel),
	)
	if err != nil {
		return adapter.Client{}, err
	}
	c := adapter.Client{Chat: llm, Embed: llm, SplitRoles: []llms.ChatMessageType{llms.ChatMessageTypeTool}}
	if u, err := url.Parse(s.BaseURL); err == nil && !strings.EqualFold(u.Hostname(), officialHost) {
		c.LegacyMaxTokens = true
	}
	return c, nil
}
