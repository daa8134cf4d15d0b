// Package llm builds models from pipeline llm blocks and --llm specs: real
// providers through langchaingo and offline models (scripted, replayed,
// simulated), each registered with the Kind of model it is. Every model is
// wrapped in the configured middleware and metered.
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

// Kind says what kind of model a provider builds, so that outputs can say
// what their numbers measure and offline models can skip what only a
// network needs.
type Kind string

// The kinds of models.
const (
	// KindReal is a language model behind a provider's API.
	KindReal Kind = "real"
	// KindScripted replies from a fixed script.
	KindScripted Kind = "scripted"
	// KindReplayed plays recorded responses back.
	KindReplayed Kind = "replayed"
	// KindSimulated is a simulator: its numbers measure the engine, never
	// the quality of a language model.
	KindSimulated Kind = "simulated"
)

// Offline reports whether models of kind k call no network, their failures
// being scripted, replayed or simulated.
func (k Kind) Offline() bool { return k == KindScripted || k == KindReplayed || k == KindSimulated }

// Factory builds metered models by provider name. Build one with
// NewFactory; it is safe for concurrent use once configured.
type Factory struct {
	builders map[string]Builder
	labels   map[string]string
	kinds    map[string]Kind
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

// ProviderOption adjusts one provider's registration (WithProvider).
type ProviderOption func(*registration)

// registration is what the options of one WithProvider set.
type registration struct {
	kind Kind
}

// AsKind registers the provider as building models of kind k. Default
// KindReal.
func AsKind(k Kind) ProviderOption { return func(r *registration) { r.kind = k } }

// WithProvider registers a builder. label says what the model is in
// outputs ("real: openai", "scripted (offline replay of a script)", "sim:
// SIMULATED ..."); the options say what kind of model it is (AsKind). A
// later registration of the same name replaces an earlier one.
func WithProvider(name, label string, b Builder, opts ...ProviderOption) FactoryOption {
	r := registration{kind: KindReal}
	for _, o := range opts {
		o(&r)
	}
	return func(f *Factory) {
		f.builders[name] = b
		f.labels[name] = label
		f.kinds[name] = r.kind
	}
}

// NewFactory returns a factory with the scripted model registered; add the
// others with WithProvider.
func NewFactory(opts ...FactoryOption) *Factory {
	f := &Factory{builders: map[string]Builder{}, labels: map[string]string{}, kinds: map[string]Kind{}}
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

// Kind says what kind of model a provider builds: the kind it was
// registered as, KindReal when it was registered without AsKind or is not
// registered.
func (f *Factory) Kind(provider string) Kind {
	if k, ok := f.kinds[provider]; ok {
		return k
	}
	return KindReal
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
