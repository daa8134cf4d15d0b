package planner

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/provider/adapter"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"
)

// Names and labels of the offline providers every Engine registers.
const (
	providerScripted = "scripted"
	providerReplay   = "replay"
	replayLabel      = "replay: recorded responses played back offline"
)

// tokenMeter measures usage with the provider's report, falling back to a
// tiktoken estimate. The tokenizer is loaded on the first call that needs an
// estimate (loading its ranks takes a noticeable fraction of a second), so
// commands and runs whose providers report usage never pay for it. If it
// cannot be loaded, the meter falls back to llm.ApproxMeter.
type tokenMeter struct {
	est func() (*usage.Estimator, error)
}

func newTokenMeter() tokenMeter {
	return tokenMeter{est: sync.OnceValues(func() (*usage.Estimator, error) { return usage.NewEstimator() })}
}

// Cached implements llm.CacheMeter: the cached prompt tokens the
// provider reported.
func (m tokenMeter) Cached(resp *llms.ContentResponse) int {
	if u, ok := usage.FromResponse(resp); ok {
		return u.CachedPromptTokens
	}
	return 0
}

func (m tokenMeter) Measure(msgs []llms.MessageContent, resp *llms.ContentResponse) (int, int, bool) {
	if u, ok := usage.FromResponse(resp); ok {
		return u.PromptTokens, u.CompletionTokens, u.Estimated
	}
	est, err := m.est()
	if err != nil {
		return llm.ApproxMeter{}.Measure(msgs, resp)
	}
	u := est.Estimate(msgs, resp)
	return u.PromptTokens, u.CompletionTokens, u.Estimated
}

// pricer prices one model's usage from a price table.
type pricer struct {
	table usage.PriceTable
	model string
}

func (p pricer) Cost(prompt, completion int) (float64, bool) {
	return p.table.Cost(p.model, usage.Usage{PromptTokens: prompt, CompletionTokens: completion})
}

// CostCached implements llm.CachePricer: the cached part of the prompt at
// the model's cached rate (or its input rate when the table has none).
func (p pricer) CostCached(prompt, cached, completion int) (float64, bool) {
	return p.table.Cost(p.model, usage.Usage{PromptTokens: prompt, CachedPromptTokens: cached, CompletionTokens: completion})
}

// callTimeout is the per-attempt timeout of cfg's model: llm.timeout, else
// middleware.DefaultCallTimeout for real providers and none (0) for offline
// ones.
func callTimeout(cfg config.LLM, offline bool) time.Duration {
	if cfg.Timeout > 0 || offline {
		return cfg.Timeout
	}
	return middleware.DefaultCallTimeout
}

// httpTimeoutMargin is how much longer than the per-attempt timeout a real
// provider's HTTP client may take: the client's timeout is only a backstop,
// so that the per-attempt timeout, whose error says which setting to raise,
// fires first.
const httpTimeoutMargin = 5 * time.Second

// middlewareFor turns an llm block into the middleware stack. Offline models
// get quick retries: their failures are simulated, so waiting serves nothing.
func middlewareFor(cfg config.LLM, offline bool) middleware.Config {
	mc := middleware.DefaultConfig()
	if offline {
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
	if cfg.Retry.MaxRetryAfter > 0 {
		mc.Retry.MaxRetryAfter = cfg.Retry.MaxRetryAfter
	}
	mc.Timeout = callTimeout(cfg, offline)
	mc.RateLimit.RequestsPerSecond = cfg.RateLimit.RequestsPerSecond
	mc.RateLimit.MaxConcurrent = cfg.RateLimit.MaxConcurrent
	mc.MaxReplyBytes = cfg.ReplyLimit()
	return mc
}

// middlewareOptions are the hooks of every model's middleware: each retry
// wait and each truncated reply is reported to the tracer of the call's
// context, attributed to the calling node.
func middlewareOptions() []middleware.Option {
	return []middleware.Option{
		middleware.WithOnRetry(func(ctx context.Context, ev middleware.RetryEvent) {
			data := map[string]any{
				"attempt": ev.Attempt, "max_attempts": ev.MaxAttempts, "delay_ms": ev.Delay.Milliseconds(),
				"status": ev.StatusCode, "reason": ev.Reason,
			}
			if ev.RetryAfter > 0 {
				data["retry_after_ms"] = ev.RetryAfter.Milliseconds()
			}
			if ev.Err != nil {
				data["error"] = ev.Err.Error()
			}
			trace.From(ctx).Emit(trace.Event{Kind: trace.KindRetry, Node: llm.CallMetaFrom(ctx).Node, Text: ev.String(), Data: data})
		}),
		middleware.WithOnTruncate(func(ctx context.Context, ev middleware.TruncateEvent) {
			trace.From(ctx).Emit(trace.Event{Kind: trace.KindInfo, Node: llm.CallMetaFrom(ctx).Node,
				Text: fmt.Sprintf("model reply truncated: its %s had %d bytes, over the %d-byte limit (llm.max_reply_bytes)", ev.Field, ev.Size, ev.Limit),
				Data: map[string]any{"truncated": ev.Field, "bytes": ev.Size, "limit_bytes": ev.Limit, "choice": ev.Choice}})
		}),
	}
}

// realModel returns the builder of a's models (a real provider of
// WithProviders): an HTTP client whose timeout backs up the per-attempt
// timeout.
func realModel(a adapter.Adapter) llm.Builder {
	return func(ctx context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		pc := adapter.Config{Provider: cfg.Provider, Model: cfg.Model, BaseURL: cfg.BaseURL,
			APIKeyEnv: cfg.APIKeyEnv, Temperature: cfg.Temperature, MaxTokens: cfg.MaxTokens,
			Timeout: callTimeout(cfg, false) + httpTimeoutMargin, PromptCache: cfg.PromptCache,
			EmbeddingModel: cfg.EmbeddingModel}
		if a.Name != adapter.Mistral {
			// The mistral SDK builds its own client and refuses one.
			pc.HTTPClient = middleware.NewObservingClient(nil)
		}
		return adapter.New(ctx, pc, a)
	}
}

// newModels builds the model factory: the real providers of
// WithProviders, the scripted and replay models, then the extra providers
// of o (which replace built-in ones
// of the same name). With rec set, every built model is recorded just
// around the provider, inside the middleware (see WithRecording); the
// factory applies wrappers innermost first.
func newModels(o *options, rec *recording, cassettes *replays) *llm.Factory {
	prices := o.prices
	if prices == nil {
		prices = usage.DefaultPriceTable()
	}
	// A provider is offline when it was registered WithOfflineProvider or
	// as an offline kind of model (scripted, replayed, simulated); a later
	// registration of a name decides.
	offlineOpt := map[string]bool{}
	for _, p := range o.providers {
		offlineOpt[p.name] = p.offline
	}
	var f *llm.Factory // set below, before any model is built
	offline := func(provider string) bool { return offlineOpt[provider] || f.Kind(provider).Offline() }
	var opts []llm.FactoryOption
	if rec != nil {
		opts = append(opts, llm.WithWrapper(rec.wrap))
	}
	opts = append(opts,
		llm.WithMeter(newTokenMeter()),
		llm.WithPricer(func(model string) llm.Pricer { return pricer{table: prices, model: model} }),
		llm.WithWrapper(func(cfg config.LLM, m llms.Model) llms.Model {
			return middleware.Apply(m, middlewareFor(cfg, offline(cfg.Provider)), middlewareOptions()...)
		}),
		// Embedding requests get the same retries, rate limit and
		// per-attempt timeout as the model's calls (a limiter of their own).
		llm.WithEmbeddingWrapper(func(cfg config.LLM, c embeddings.EmbedderClient) embeddings.EmbedderClient {
			return embeddings.EmbedderClientFunc(middleware.ApplyEmbed(c.CreateEmbedding, middlewareFor(cfg, offline(cfg.Provider)), middlewareOptions()...))
		}),
		llm.WithEmbeddingObserver(traceEmbedding),
		llm.WithUnknownProviderHint(registerHint),
	)
	for _, a := range o.adapters {
		opts = append(opts, llm.WithProvider(a.Name, "real: "+a.Name, realModel(a)))
	}
	opts = append(opts,
		llm.WithProvider(providerScripted, scripted.Label, scripted.Build, llm.AsKind(llm.KindScripted)),
		llm.WithProvider(providerReplay, replayLabel, func(_ context.Context, cfg config.LLM, baseDir string) (llms.Model, error) {
			path := cfg.Script
			if path == "" {
				return nil, fmt.Errorf("%w: replay needs a cassette (replay:FILE)", llm.ErrBadSpec)
			}
			if !filepath.IsAbs(path) && baseDir != "" {
				path = filepath.Join(baseDir, path)
			}
			return cassettes.get(path)
		}, llm.AsKind(llm.KindReplayed)),
	)
	for _, p := range o.providers {
		opts = append(opts, llm.WithProvider(p.name, p.label, p.build, p.opts...))
	}
	f = llm.NewFactory(opts...)
	return f
}

// traceEmbedding emits an embedding request as a trace event of kind info
// of the run in ctx.
func traceEmbedding(ctx context.Context, e llm.EmbeddingEvent) {
	trace.From(ctx).Emit(trace.Event{Node: e.Node, Kind: trace.KindInfo, ElapsedMS: float64(e.Elapsed.Microseconds()) / 1000,
		Text: fmt.Sprintf("embedding: %d text(s) with %s (%s)", e.Texts, e.Model, e.Provider),
		Data: map[string]any{llm.TraceEmbeddingTexts: e.Texts, llm.TraceEmbeddingModel: e.Model, "provider": e.Provider}})
}
