// Package llm builds models from pipeline llm blocks and --llm specs: real
// providers through langchaingo, and the offline scripted, replay and sim
// models. Every model is wrapped in the configured middleware and metered.
package llm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/tmc/langchaingo/llms"
)

// ErrUnknownProvider means no builder is registered for a provider name.
var ErrUnknownProvider = errors.New("unknown llm provider")

// ErrBadSpec means an --llm spec could not be parsed.
var ErrBadSpec = errors.New("bad llm spec")

// Builder builds a raw model for one provider. baseDir resolves relative
// paths in cfg.
type Builder func(ctx context.Context, cfg config.LLM, baseDir string) (llms.Model, error)

// Wrapper wraps a built model (middleware such as retries and recording).
type Wrapper func(cfg config.LLM, m llms.Model) llms.Model

// Factory builds metered models by provider name. Build one with
// NewFactory; it is safe for concurrent use once configured.
type Factory struct {
	builders map[string]Builder
	labels   map[string]string
	wrappers []Wrapper
	meter    Meter
	pricer   func(model string) Pricer
}

// FactoryOption configures a Factory.
type FactoryOption func(*Factory)

// WithMeter sets how call usage is measured. Default llm.ApproxMeter.
func WithMeter(m Meter) FactoryOption { return func(f *Factory) { f.meter = m } }

// WithPricer sets how a model's usage is priced. Default: no cost.
func WithPricer(p func(model string) Pricer) FactoryOption {
	return func(f *Factory) { f.pricer = p }
}

// WithWrapper adds middleware around every built model, outermost last.
func WithWrapper(w Wrapper) FactoryOption {
	return func(f *Factory) { f.wrappers = append(f.wrappers, w) }
}

// WithProvider registers a builder. label says what kind of model it is in
// outputs ("real", "scripted (offline replay of a script)", "simulated").
func WithProvider(name, label string, b Builder) FactoryOption {
	return func(f *Factory) {
		f.builders[name] = b
		f.labels[name] = label
	}
}

// NewFactory returns a factory with the scripted model registered; add the
// others with WithProvider.
func NewFactory(opts ...FactoryOption) *Factory {
	f := &Factory{builders: map[string]Builder{}, labels: map[string]string{}}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Providers returns the registered provider names, sorted.
func (f *Factory) Providers() []string {
	out := make([]string, 0, len(f.builders))
	for n := range f.builders {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Label says what kind of model a provider is, for outputs.
func (f *Factory) Label(provider string) string {
	if l, ok := f.labels[provider]; ok {
		return l
	}
	return provider
}

// Model builds the metered, wrapped model for cfg. It fails with
// ErrUnknownProvider, with an error wrapping config.ErrInvalid when cfg has
// an invalid setting (config.LLM.Validate: checked here because node-level
// llm blocks and --llm specs do not pass through config.Parse), or with the
// builder's error.
func (f *Factory) Model(ctx context.Context, cfg config.LLM, baseDir string) (Model, error) {
	b, ok := f.builders[cfg.Provider]
	if !ok {
		return Model{}, fmt.Errorf("%w %q (available: %s)", ErrUnknownProvider, cfg.Provider, strings.Join(f.Providers(), ", "))
	}
	if err := cfg.Validate(); err != nil {
		return Model{}, err
	}
	m, err := b(ctx, cfg, baseDir)
	if err != nil {
		return Model{}, fmt.Errorf("%s: %w", cfg.Provider, err)
	}
	for _, w := range f.wrappers {
		m = w(cfg, m)
	}
	out := Model{LLM: m, Meter: f.meter}
	if f.pricer != nil {
		out.Pricer = f.pricer(cfg.Model)
	}
	return out, nil
}

// ParseSpec parses an --llm flag: "provider:model" (openai:gpt-4o-mini,
// ollama:llama3.1), "scripted:FILE", "replay:FILE", "sim" or "sim:PROFILE".
func ParseSpec(spec string) (config.LLM, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return config.LLM{}, fmt.Errorf("%w: empty (want provider:model, e.g. openai:gpt-4o-mini)", ErrBadSpec)
	}
	provider, rest, _ := strings.Cut(spec, ":")
	cfg := config.LLM{Provider: strings.ToLower(provider)}
	switch cfg.Provider {
	case "scripted", "replay":
		if rest == "" {
			return config.LLM{}, fmt.Errorf("%w: %s needs a file, as %s:FILE", ErrBadSpec, provider, provider)
		}
		cfg.Script = rest
	case "sim":
		cfg.Profile = rest
	default:
		if rest == "" {
			return config.LLM{}, fmt.Errorf("%w: %q has no model (want %s:MODEL)", ErrBadSpec, spec, provider)
		}
		cfg.Model = rest
	}
	return cfg, nil
}
