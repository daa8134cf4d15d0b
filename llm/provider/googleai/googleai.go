// Package googleai is the adapter of the provider "googleai": the Gemini
// API, through langchaingo's googleai client (Google's genai SDK, which
// brings gRPC and Google's auth libraries with it). Register it with
// planner.WithProviders(googleai.Adapter()), or build a model with
// adapter.New; package llm/provider documents the behaviour.
package googleai

import (
	"context"

	"github.com/planner-engine/planner/llm/provider/adapter"
	lcgoogleai "github.com/tmc/langchaingo/llms/googleai"
	"google.golang.org/api/option"
)

// apiKeyHeader carries the key for the Gemini REST API. Google's own
// transport would put it in the "key" query parameter, but it is bypassed
// once a custom HTTP client is supplied; the header also keeps the key out
// of URLs, and so out of *url.Error messages and proxy logs.
const apiKeyHeader = "x-goog-api-key"

// Adapter returns the adapter of the provider "googleai".
func Adapter() adapter.Adapter {
	return adapter.Adapter{Name: adapter.GoogleAI, Build: build}
}

// build prepares but does not dial the SDK's connections; it gets ctx for
// that.
func build(ctx context.Context, s adapter.Settings) (adapter.Client, error) {
	opts := []lcgoogleai.Option{
		lcgoogleai.WithDefaultModel(s.Model),
		// The REST clients use this HTTP client, which adds the key header.
		lcgoogleai.WithHTTPClient(s.HTTPClient(apiKeyHeader, s.Key)),
		// The SDK's gRPC cache client ignores the HTTP client and needs the
		// key option to build without searching for Google Cloud
		// credentials; it is never dialled by GenerateContent.
		lcgoogleai.WithAPIKey(s.Key),
		lcgoogleai.WithDefaultEmbeddingModel(s.EmbeddingModel),
	}
	if s.BaseURL != "" {
		endpoint := option.WithEndpoint(s.BaseURL)
		opts = append(opts, func(o *lcgoogleai.Options) {
			o.ClientOptions = append(o.ClientOptions, endpoint)
		})
	}
	llm, err := lcgoogleai.New(ctx, opts...)
	if err != nil {
		return adapter.Client{}, err
	}
	return adapter.Client{Chat: llm, Embed: llm, Closer: llm}, nil
}
