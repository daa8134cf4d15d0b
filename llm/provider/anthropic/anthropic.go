// Package anthropic is the adapter of the provider "anthropic": the
// Messages API, through langchaingo's anthropic client, with prompt-cache
// breakpoints set on the stable prefix of each request
// (Config.PromptCache, on by default; see PromptCacheMinTokens). Register
// it with planner.WithProviders(anthropic.Adapter()), or build a model
// with adapter.New; package llm/provider documents the behaviour.
package anthropic

import (
	"context"

	"github.com/planner-engine/planner/llm/provider/adapter"
	"github.com/tmc/langchaingo/llms"
	lcanthropic "github.com/tmc/langchaingo/llms/anthropic"
)

// Adapter returns the adapter of the provider "anthropic".
func Adapter() adapter.Adapter {
	return adapter.Adapter{Name: adapter.Anthropic, Build: build}
}

func build(_ context.Context, s adapter.Settings) (adapter.Client, error) {
	hc := s.HTTPClient("", "")
	if s.PromptCache {
		hc.Transport = &cacheTransport{base: hc.Transport}
	}
	opts := []lcanthropic.Option{
		lcanthropic.WithToken(s.Key),
		lcanthropic.WithModel(s.Model),
		lcanthropic.WithHTTPClient(hc),
	}
	if s.BaseURL != "" {
		opts = append(opts, lcanthropic.WithBaseURL(s.BaseURL))
	}
	llm, err := lcanthropic.New(opts...)
	if err != nil {
		return adapter.Client{}, err
	}
	// The adapter sends only the first part of an assistant or tool
	// message; the Messages API merges consecutive same-role turns.
	return adapter.Client{Chat: llm, SplitRoles: []llms.ChatMessageType{llms.ChatMessageTypeAI, llms.ChatMessageTypeTool}}, nil
}
