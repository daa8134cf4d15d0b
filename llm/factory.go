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
	// observeEmbedding is WithEmbeddingObserver's.
	observeEmbedding func(ctx context.Context, e EmbeddingEvent)
	builders         map[string]Builder
	labels           map[string]string
	kinds            map[string]Kind
	wrappers         []Wrapper
	// embedWrappers wrap the embedding clients (WithEmbeddingWrapper).
	embedWrappers []EmbeddingWrapper
	meter         Meter
	pricer        func(model string) Pricer
	// unknownHint is WithUnknownProviderHint's.
	unknownHint func(provider string) string
}

// FactoryOption configures a Factory.
type FactoryOption func(*Factory)

// WithMeter sets how call usage is measured. Default llm.ApproxMeter.
func WithMeter(m Meter) FactoryOption { return func(f *Factory) { f.meter = m } }

// WithUnknownProviderHint sets what the ErrUnknownProvider error of Model
// adds after the registered providers, for a provider name no builder is
// registered for: how to register it, say ("" adds nothing). Default:
// nothing.
func WithUnknownProviderHint(hint func(provider string) string) FactoryOption {
	return func(f *Factory) { f.unknownHint = hint }
}

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

// CheckProvider returns nil when a builder is registered for provider,
// else an error wrapping ErrUnknownProvider that suggests the nearest
// registered name, when one is close, and lists them all: `unknown llm
// provider "opena" (did you mean "openai"? available: anthropic, ...)`.
// Callers that check an --llm value before building use it for the same
// message as Model.
func (f *Factory) CheckProvider(provider string) error {
	if _, ok := f.builders[provider]; ok {
		return nil
	}
	return f.unknownProvider(provider, "")
}

// unknownProvider is the error of Model and CheckProvider for a provider
// no builder is registered for, with hint after the list.
func (f *Factory) unknownProvider(provider, hint string) error {
	names := f.Providers()
	return fmt.Errorf("%w %q (%savailable: %s)%s", ErrUnknownProvider, provider, config.DidYouMean(provider, names), strings.Join(names, ", "), hint)
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

// Model builds the metered, wrapped model for cfg, which retries empty
// replies as cfg's empty_retries and empty_nudge say (Model.EmptyRetries:
// default config.DefaultEmptyRetries), and whose Embedder is the built
// model's embedding client (EmbeddingSource) wrapped by the
// EmbeddingWrappers, nil when its provider offers none. It fails with
// ErrUnknownProvider, with an error wrapping config.ErrInvalid when cfg has
// an invalid setting (config.LLM.Validate: checked here because node-level
// llm blocks and --llm specs do not pass through config.Parse), or with the
// builder's error.
func (f *Factory) Model(ctx context.Context, cfg config.LLM, baseDir string) (Model, error) {
	b, ok := f.builders[cfg.Provider]
	if !ok {
		hint := ""
		if f.unknownHint != nil {
			hint = f.unknownHint(cfg.Provider)
		}
		return Model{}, f.unknownProvider(cfg.Provider, hint)
	}
	if err := cfg.Validate(); err != nil {
		return Model{}, err
	}
	m, err := b(ctx, cfg, baseDir)
	if err != nil {
		return Model{}, fmt.Errorf("%s: %w", cfg.Provider, err)
	}
	embedder, err := f.embedderFor(cfg, m)
	if err != nil {
		return Model{}, err
	}
	for _, w := range f.wrappers {
		m = w(cfg, m)
	}
	out := Model{LLM: m, Meter: f.meter, Provider: cfg.Provider, Name: cfg.Model,
		EmptyRetries: cfg.EmptyReplyRetries(), EmptyNudge: cfg.EmptyNudge, Embedder: embedder}
	if f.pricer != nil {
		out.Pricer = f.pricer(cfg.Model)
	}
	return out, nil
}

// SpecError describes a model specification (an --llm value) that
// ParseSpec cannot read: what is wrong with it and a specification that
// would work. It matches ErrBadSpec under errors.Is.
type SpecError struct {
	// Spec is the specification as given.
	Spec string
	// Problem says what is wrong: "no provider given", "no model given",
	// "no file given".
	Problem string
	// Example is a specification of the same intent that would parse:
	// "openai:gpt-4o" for "gpt-4o", "scripted:FILE" for "scripted".
	Example string
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("%s %q: %s (want provider:model, e.g. %s)", ErrBadSpec, e.Spec, e.Problem, e.Example)
}

// Is makes a *SpecError match ErrBadSpec.
func (e *SpecError) Is(target error) bool { return target == ErrBadSpec }

// ParseSpec parses an --llm flag: "provider:model" (openai:gpt-4o-mini,
// ollama:llama3.1), "scripted:FILE", "replay:FILE", "sim" or "sim:PROFILE".
// It fails with a *SpecError (matching ErrBadSpec) when spec is empty,
// names a provider without its model or file, or names a model without its
// provider ("gpt-4o": the example then guesses the provider from the
// model's name). It does not check that the provider exists: Factory.Model
// does.
func ParseSpec(spec string) (config.LLM, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return config.LLM{}, &SpecError{Spec: spec, Problem: "empty", Example: "openai:gpt-4o-mini"}
	}
	provider, rest, hasColon := strings.Cut(spec, ":")
	cfg := config.LLM{Provider: strings.ToLower(provider)}
	switch cfg.Provider {
	case "scripted", "replay":
		if rest == "" {
			return config.LLM{}, &SpecError{Spec: spec, Problem: "no file given", Example: cfg.Provider + ":FILE"}
		}
		cfg.Script = rest
	case "sim":
		cfg.Profile = rest
	default:
		if rest != "" {
			cfg.Model = rest
			return cfg, nil
		}
		if example := exampleModel(cfg.Provider); example != "" {
			return config.LLM{}, &SpecError{Spec: spec, Problem: "no model given", Example: cfg.Provider + ":" + example}
		}
		if !hasColon {
			if p := guessProvider(spec); p != "" {
				return config.LLM{}, &SpecError{Spec: spec, Problem: "no provider given", Example: p + ":" + spec}
			}
			return config.LLM{}, &SpecError{Spec: spec, Problem: "no provider given", Example: "openai:gpt-4o-mini"}
		}
		return config.LLM{}, &SpecError{Spec: spec, Problem: "no model given", Example: cfg.Provider + ":MODEL"}
	}
	return cfg, nil
}

// exampleModel returns a model name of a built-in real provider, for
// error messages; "" for any other name.
func exampleModel(provider string) string {
	switch provider {
	case "openai":
		return "gpt-4o-mini"
	case "anthropic":
		return "claude-3-5-haiku-latest"
	case "googleai":
		return "gemini-1.5-flash"
	case "mistral":
		return "mistral-small-latest"
	case "ollama":
		return "llama3.1"
	}
	return ""
}

// guessProvider returns the built-in provider that serves models named
// like model ("gpt-4o": openai), or "" when the name says nothing.
func guessProvider(model string) string {
	m := strings.ToLower(model)
	has := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(m, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("gpt", "o1", "o3", "o4", "chatgpt", "text-", "davinci"):
		return "openai"
	case has("claude"):
		return "anthropic"
	case has("gemini"):
		return "googleai"
	case has("mistral", "ministral", "codestral", "pixtral", "open-mistral", "magistral"):
		return "mistral"
	case has("llama", "qwen", "phi", "gemma", "deepseek", "mixtral"):
		return "ollama"
	}
	return ""
}
