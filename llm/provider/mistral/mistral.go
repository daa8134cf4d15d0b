// Package mistral is the adapter of the provider "mistral": Mistral's chat
// API, through langchaingo's mistral client (the mistral-go SDK, which
// builds its own HTTP client: Config.HTTPClient must stay nil). Register
// it with planner.WithProviders(mistral.Adapter()), or build a model with
// adapter.New; package llm/provider documents the behaviour.
package mistral

import (
	"context"

	sdkmistral "github.com/gage-technologies/mistral-go"
	"github.com/planner-engine/planner/llm/provider/adapter"
	lcmistral "github.com/tmc/langchaingo/llms/mistral"
)

// Adapter returns the adapter of the provider "mistral".
func Adapter() adapter.Adapter {
	return adapter.Adapter{Name: adapter.Mistral, Build: build}
}

func build(_ context.Context, s adapter.Settings) (adapter.Client, error) {
	endpoint := s.BaseURL
	if endpoint == "" {
		endpoint = sdkmistral.Endpoint
	}
	llm, err := lcmistral.New(
		lcmistral.WithAPIKey(s.Key),
		lcmistral.WithModel(s.Model),
		lcmistral.WithEndpoint(endpoint),
		lcmistral.WithTimeout(s.Timeout),
		// mistral-go v1.1.0 re-sends a drained request body on retry, which
		// turns every 429/5xx into a misleading "ContentLength ... with Body
		// length 0" error. One attempt surfaces the real status.
		lcmistral.WithMaxRetries(1),
	)
	if err != nil {
		return adapter.Client{}, err
	}
	return adapter.Client{Chat: llm, Embed: llm}, nil
}
