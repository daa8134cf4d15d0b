package app

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/provider"
	"github.com/planner-engine/planner/llm/sim"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/tmc/langchaingo/llms"
)

// tokenMeter measures usage with the provider's report, falling back to a
// tiktoken estimate.
type tokenMeter struct{ est *usage.Estimator }

func (m tokenMeter) Measure(msgs []llms.MessageContent, resp *llms.ContentResponse) (int, int, bool) {
	u := m.est.Resolve(msgs, resp)
	return u.PromptTokens, u.CompletionTokens, u.Estimated
}

type pricer struct {
	table usage.PriceTable
	model string
}

func (p pricer) Cost(prompt, completion int) (float64, bool) {
	return p.table.Cost(p.model, usage.Usage{PromptTokens: prompt, CompletionTokens: completion})
}

// middlewareFor turns an llm block into the middleware stack. Offline models
// get quick retries: their failures are simulated, so waiting serves nothing.
func middlewareFor(cfg config.LLM) middleware.Config {
	mc := middleware.DefaultConfig()
	if cfg.Provider == "sim" || cfg.Provider == "scripted" || cfg.Provider == "replay" {
		mc.Retry.BaseDelay = time.Millisecond
		mc.Retry.MaxDelay = 10 * time.Millisecond
	}
	if cfg.Retry.MaxAttempts > 0 {
		mc.Retry.MaxAttempts = cfg.Retry.MaxAttempts
	}
	if cfg.Retry.BaseDelay > 0 {
		mc.Retry.BaseDelay = cfg.Retry.BaseDelay
	}
	if cfg.Retry.MaxDelay > 0 {
		mc.Retry.MaxDelay = cfg.Retry.MaxDelay
	}
	mc.Timeout = cfg.Timeout
	mc.RateLimit.RequestsPerSecond = cfg.RateLimit.RequestsPerSecond
	mc.RateLimit.MaxConcurrent = cfg.RateLimit.MaxConcurrent
	return mc
}

// newModels builds the model factory. With rec set, every built model is
// recorded just around the provider, inside the middleware (see
// WithRecording); the factory applies wrappers innermost first.
func newModels(est *usage.Estimator, rec *recording, cassettes *replays) *llm.Factory {
	prices := usage.DefaultPriceTable()
	real := func(ctx context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		return provider.New(ctx, provider.Config{Provider: cfg.Provider, Model: cfg.Model, BaseURL: cfg.BaseURL,
			APIKeyEnv: cfg.APIKeyEnv, Temperature: cfg.Temperature, MaxTokens: cfg.MaxTokens,
			HTTPClient: middleware.NewObservingClient(nil)})
	}
	var opts []llm.FactoryOption
	if rec != nil {
		opts = append(opts, llm.WithWrapper(rec.wrap))
	}
	opts = append(opts,
		llm.WithMeter(tokenMeter{est: est}),
		llm.WithPricer(func(model string) agent.Pricer { return pricer{table: prices, model: model} }),
		llm.WithWrapper(func(cfg config.LLM, m llms.Model) llms.Model { return middleware.Apply(m, middlewareFor(cfg)) }),
		llm.WithProvider("sim", sim.Label, func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
			seed := cfg.Seed
			if seed == 0 {
				seed = 1
			}
			return sim.New(cfg.Profile, sim.WithSeed(seed))
		}),
		llm.WithProvider("replay", "replay: recorded responses played back offline", func(_ context.Context, cfg config.LLM, baseDir string) (llms.Model, error) {
			path := cfg.Script
			if path == "" {
				return nil, fmt.Errorf("%w: replay needs a cassette (--llm replay:FILE)", llm.ErrBadSpec)
			}
			if !filepath.IsAbs(path) && baseDir != "" {
				path = filepath.Join(baseDir, path)
			}
			return cassettes.get(path)
		}),
	)
	for _, p := range provider.Providers() {
		opts = append(opts, llm.WithProvider(p, "real: "+p, real))
	}
	return llm.NewFactory(opts...)
}
