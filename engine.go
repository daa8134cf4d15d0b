package planner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/provider/adapter"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/telemetry"
	"github.com/planner-engine/planner/tools/keyword"
	"github.com/planner-engine/planner/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// Errors returned by the package. Test for them with errors.Is; the
// returned errors wrap them with the details (file, provider, cause).
var (
	// ErrNoModel means neither the pipeline's llm block nor a Load option
	// (WithLLM, WithLLMConfig) names a model.
	ErrNoModel = errors.New("no model configured")
	// ErrEmptyQuestion means Run was given no question, neither as its
	// argument nor in the WithTask task.
	ErrEmptyQuestion = errors.New("the question is empty")
	// ErrUnknownProvider means a model names a provider that no builder is
	// registered for. It is llm.ErrUnknownProvider.
	ErrUnknownProvider = llm.ErrUnknownProvider
	// ErrBadLLMSpec means a WithLLM specification could not be parsed. It
	// is llm.ErrBadSpec.
	ErrBadLLMSpec = llm.ErrBadSpec
	// ErrInvalidConfig means a pipeline file could not be read or is
	// invalid; the error is a *config.Error naming the file and, where one
	// applies, the line. It is config.ErrInvalid.
	ErrInvalidConfig = config.ErrInvalid
	// ErrRun means a run failed (a model or tool error that was not worked
	// around, the run's time limit, a loop, a cancelled context); the
	// Result of the failed run is still returned. It is pipeline.ErrRun.
	ErrRun = pipeline.ErrRun
)

// Engine builds pipelines with the command line's defaults: every model is
// metered with the o200k tokenizer when its provider reports no usage,
// priced from the built-in price table, and wrapped in the retry,
// rate-limit, per-attempt timeout and reply-size middleware configured by
// its llm block, with each retry wait traced; runs are traced through a
// scrubber that removes secrets. Build one per process (or per set of runs
// that share a WithRecording cassette) with New, and Close it when done. An
// Engine is safe for concurrent use.
type Engine struct {
	models   *llm.Factory
	tools    pipeline.ToolFactory
	keywords keyword.Indexer // WithKeywordIndex's; nil: none
	registry pipeline.Constructors
	scrub    trace.Scrubber
	// spans makes the runs' OpenTelemetry spans (WithTracerProvider,
	// telemetry.go); nil: none.
	spans *telemetry.Provider

	hooks   []any      // WithHooks's
	rec     *recording // nil unless WithRecording
	replays *replays   // cassettes opened by the replay provider
}

// Option configures New.
type Option func(*options)

type options struct {
	record    string            // cassette path; "" records nothing
	providers []extraProvider   // registered after the built-in ones
	adapters  []adapter.Adapter // WithProviders's real providers
	tools     pipeline.ToolFactory
	keywords  keyword.Indexer
	registry  pipeline.Constructors
	scrub     trace.Scrubber
	scrubSet  bool // scrub was set, possibly to nil
	hooks     []any
	prices    usage.PriceTable

	// tracerProvider and telemetry are WithTracerProvider's.
	tracerProvider oteltrace.TracerProvider
	telemetry      []telemetry.Option
}

// extraProvider is a provider added with WithProvider or
// WithOfflineProvider.
type extraProvider struct {
	name, label string
	build       llm.Builder
	offline     bool
	opts        []llm.ProviderOption
}

// WithHooks adds hooks to every run of the Engine's pipelines: values
// implementing any of hooks.NodeHook, hooks.ModelHook, hooks.ProviderHook
// and hooks.ToolHook, which wrap every node execution, model call and tool
// call (see package hooks, and pipeline.HookOrder for where they sit among
// the engine's own: inside the budgets, outside spans, trace events, usage,
// the audit log and the journal). A hook is shared by every run, so it must
// be safe for concurrent use. Options accumulate; WithRunHooks adds hooks
// to one run. Default: none.
func WithHooks(hs ...any) Option {
	return func(o *options) { o.hooks = append(o.hooks, hs...) }
}

// WithRecording makes the Engine record every model exchange of every model
// it builds to the cassette file at path: one JSON line per provider
// attempt, secrets scrubbed (see package llm/cassette). The file is created
// (or truncated) by the first recorded call, so a run that fails before
// calling a model leaves an existing file alone; New fails with
// ErrRecording when path's folder does not exist. Replay the cassette with
// the provider "replay" (WithLLM("replay:FILE")). Default: no recording.
//
// The recorder sits below the retry, rate-limit and timeout middleware,
// directly around the provider, so it stores what the provider actually
// answered to each attempt, failed attempts included (an attempt cut off by
// the per-call timeout is not stored). A replayed model is wrapped in the
// same middleware, so the retries replay too and reach the same final
// result.
//
// A recorded request holds the messages and the call options the node
// passed; the llm block's temperature and max_tokens are applied inside the
// provider and are not part of it. Models built by the same Engine share
// one recorder, so the cassette has one call order. Close the Engine to
// close the file.
func WithRecording(path string) Option {
	return func(o *options) { o.record = path }
}

// WithProvider registers a model provider under name, next to the built-in
// ones ("scripted", "replay" and the real providers of WithProviders); a
// built-in provider of the same name is replaced. label says
// what kind of model it is in outputs (Engine.ModelLabel). Its models get
// the same metering, pricing and middleware as the real providers'; in
// particular each attempt is bounded by the llm block's timeout, default
// middleware.DefaultCallTimeout. opts say what kind of model it builds
// (llm.AsKind; default llm.KindReal, see Engine.ModelKind); a provider of
// an offline kind (llm.Kind.Offline) gets the middleware of
// WithOfflineProvider. Options accumulate; a later registration of a name
// wins.
func WithProvider(name, label string, build llm.Builder, opts ...llm.ProviderOption) Option {
	return func(o *options) {
		o.providers = append(o.providers, extraProvider{name: name, label: label, build: build, opts: opts})
	}
}

// WithOfflineProvider is WithProvider for a provider that calls no network
// (a simulator, a fake): like "scripted" and "replay", its models get no
// per-attempt timeout unless the llm block sets one, and retry after 1 to
// 10 ms instead of the real providers' backoff, since their failures are
// simulated. opts say what kind of model it builds, for instance
// llm.AsKind(llm.KindSimulated) for a simulator, so that reports say so.
func WithOfflineProvider(name, label string, build llm.Builder, opts ...llm.ProviderOption) Option {
	return func(o *options) {
		o.providers = append(o.providers, extraProvider{name: name, label: label, build: build, offline: true, opts: opts})
	}
}

// WithTools sets what builds the tools a pipeline lists. Default: no
// tools: a pipeline that lists one fails to load with an error wrapping
// tools.ErrUnknownTool that names this option. Register the families of
// the tools you need, toolset.New(toolset.Calculator(), builtin.Search())
// (packages tools/toolset and tools/builtin), so that the program compiles
// only those, or builtin.Factory{}, every built-in tool (the command
// line's). To add tools of your own, pass a factory that handles their
// names and delegates the others, or a toolset.Family of each.
func WithTools(f pipeline.ToolFactory) Option {
	return func(o *options) { o.tools = f }
}

// WithRegistry sets what maps a pipeline node's `type:` to its constructor.
// Default: NodeKinds(), every built-in node type. To add node types,
// register them on a NodeKinds() registry and pass it.
func WithRegistry(r pipeline.Constructors) Option {
	return func(o *options) { o.registry = r }
}

// WithScrubber sets what removes secrets from every trace event, the trace
// file and the Result's answer and reason. Default: redact.New(), built by
// New, which scrubs the values of the environment variables named like
// secrets (*_KEY, *_TOKEN, ...), bearer tokens and API key shapes. A nil s
// scrubs nothing.
func WithScrubber(s trace.Scrubber) Option {
	return func(o *options) { o.scrub, o.scrubSet = s, true }
}

// WithPriceTable sets the prices (USD per million tokens, by model name)
// that turn usage into cost. Default: usage.DefaultPriceTable(); extend it
// with usage.DefaultPriceTable().Merge(yours). A model not in the table
// costs 0.
func WithPriceTable(t usage.PriceTable) Option {
	return func(o *options) { o.prices = t }
}

// New builds an Engine. It fails with ErrRecording when the WithRecording
// folder is missing. The tokenizer that estimates the usage a provider does
// not report is loaded on first use.
func New(opts ...Option) (*Engine, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	e := &Engine{tools: o.tools, keywords: o.keywords, registry: o.registry, scrub: o.scrub, replays: newReplays(), hooks: o.hooks}
	if e.tools == nil {
		e.tools = noTools{}
	}
	if e.registry == nil {
		e.registry = NodeKinds()
	}
	if !o.scrubSet {
		e.scrub = redact.New()
	}
	e.spans = newSpans(o.tracerProvider, e.scrub, o.telemetry)
	if o.record != "" {
		var err error
		if e.rec, err = newRecording(o.record); err != nil {
			return nil, err
		}
	}
	e.models = newModels(&o, e.rec, e.replays)
	return e, nil
}

// Close closes the cassette of WithRecording, after which recorded models
// fail; call it once every run of the Engine has returned. It is a no-op
// without recording and safe to call twice.
func (e *Engine) Close() error {
	if e == nil || e.rec == nil {
		return nil
	}
	return e.rec.close()
}

// Recording returns the path of the WithRecording cassette once a call has
// been recorded into it, else "".
func (e *Engine) Recording() string {
	if e == nil || e.rec == nil || !e.rec.file.created() {
		return ""
	}
	return e.rec.path
}

// UnusedRecordings returns how many recorded calls of the cassettes opened
// by the replay provider have not been played back. After a run that
// replayed its cassette faithfully it is 0; more means the run made fewer
// (or different) calls than the recorded one.
func (e *Engine) UnusedRecordings() int {
	if e == nil {
		return 0
	}
	return e.replays.unused()
}

// Providers returns the names of the registered model providers, sorted.
func (e *Engine) Providers() []string { return e.models.Providers() }

// ModelLabel says what kind of model a provider is ("real: openai",
// "scripted: offline replies from a script, not a real model", ...), for
// outputs. An unknown provider's label is its name.
func (e *Engine) ModelLabel(provider string) string { return e.models.Label(provider) }

// ModelKind says what kind of model a provider builds (llm.KindReal,
// llm.KindScripted, llm.KindReplayed, llm.KindSimulated), as it was
// registered; an unknown provider is llm.KindReal.
func (e *Engine) ModelKind(provider string) llm.Kind { return e.models.Kind(provider) }

// Models returns the Engine's model factory, which builds the metered,
// priced, middleware-wrapped model of an llm block; for programs that call
// a model outside a pipeline.
func (e *Engine) Models() *llm.Factory { return e.models }

// Scrubber returns what removes secrets from the Engine's traces and
// results (see WithScrubber), for programs that write outputs of their own;
// nil when scrubbing is off.
func (e *Engine) Scrubber() trace.Scrubber { return e.scrub }

// LoadOption configures Engine.Load.
type LoadOption func(*loadOptions)

type loadOptions struct {
	spec     string     // WithLLM; parsed by Load
	llm      config.LLM // WithLLMConfig
	maxSteps int
	timeout  time.Duration
}

// WithLLM replaces the pipeline's llm block with a model given as
// "provider:model" (openai:gpt-4o-mini, anthropic:claude-3-5-haiku-latest,
// ollama:llama3.1), "scripted:FILE" or "replay:FILE", as the command line's
// --llm flag; node-level llm blocks still apply on top. A relative FILE is
// taken relative to the working directory. Load fails with ErrBadLLMSpec
// when spec cannot be parsed and with ErrUnknownProvider when no provider
// of that name is registered. Default: the pipeline's own llm block.
func WithLLM(spec string) LoadOption {
	return func(o *loadOptions) { o.spec, o.llm = spec, config.LLM{} }
}

// WithLLMConfig is WithLLM with a whole llm block (base URL, API key
// variable, temperature, retry, rate limit, timeout, ...). A zero Provider
// keeps the pipeline's llm block. A later WithLLM or WithLLMConfig wins.
func WithLLMConfig(cfg config.LLM) LoadOption {
	return func(o *loadOptions) { o.spec, o.llm = "", cfg }
}

// WithMaxSteps overrides the pipeline's limits.max_steps (node executions
// per run) when n is positive. Default: the pipeline's own limit.
func WithMaxSteps(n int) LoadOption {
	return func(o *loadOptions) { o.maxSteps = n }
}

// WithTimeout overrides the pipeline's limits.timeout, the time limit of a
// whole run; a negative d means no limit. Default: the pipeline's own
// limit, which defaults to config.DefaultTimeout.
func WithTimeout(d time.Duration) LoadOption {
	return func(o *loadOptions) { o.timeout = d }
}

// Load reads the pipeline file at path and builds it: its models (see
// WithLLM), tools and nodes. Relative paths inside the file (scripts,
// cassettes, corpora) are taken relative to the file's folder. It fails
// with an error wrapping ErrInvalidConfig (a *config.Error naming the file
// and line) when the file cannot be read or is invalid, with ErrNoModel
// when no model is named, and with ErrBadLLMSpec or ErrUnknownProvider for
// a bad WithLLM.
func (e *Engine) Load(ctx context.Context, path string, opts ...LoadOption) (*Pipeline, error) {
	return e.load(ctx, path, nil, opts)
}

// LoadConfig is Load of a pipeline already read and decoded (by
// config.Parse, config.ParseAllowed or config.Load), for programs that
// read the file themselves: to build exactly the bytes they hashed, to
// expand ${VAR} with their own lookup, or to check or rewrite its paths
// first (config.Pipeline.MapPaths). Relative paths are taken relative to
// the folder of cfg.File. Build consumes cfg: do not reuse it for
// another pipeline. Errors are Load's.
func (e *Engine) LoadConfig(ctx context.Context, cfg *config.Pipeline, opts ...LoadOption) (*Pipeline, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: LoadConfig: no pipeline", ErrInvalidConfig)
	}
	return e.load(ctx, cfg.File, cfg, opts)
}

// load is Load, of cfg when it is not nil, else of the file at path.
func (e *Engine) load(ctx context.Context, path string, cfg *config.Pipeline, opts []LoadOption) (*Pipeline, error) {
	var o loadOptions
	for _, opt := range opts {
		opt(&o)
	}
	override := o.llm
	if o.spec != "" {
		var err error
		if override, err = llm.ParseSpec(o.spec); err != nil {
			return nil, err
		}
	}
	if override.Provider != "" && !slices.Contains(e.models.Providers(), override.Provider) {
		return nil, unknownProvider(override.Provider, e.models.Providers())
	}
	if cfg == nil {
		var err error
		if cfg, err = config.Load(path); err != nil {
			return nil, err
		}
	}
	if override.Provider == "" && cfg.LLM.Provider == "" {
		return nil, fmt.Errorf("%w: %s has no llm block; name a model with WithLLM (for example openai:gpt-4o-mini)", ErrNoModel, path)
	}
	if override.Script != "" && !filepath.IsAbs(override.Script) {
		if abs, err := filepath.Abs(override.Script); err == nil {
			override.Script = abs
		}
	}
	fillReplayModel(&override, "")
	fillReplayModel(&cfg.LLM, cfg.Dir())
	built, err := pipeline.Build(ctx, cfg, pipeline.Options{Registry: e.registry, Models: e.models, Tools: e.tools, Keywords: e.keywords, MaxSteps: o.maxSteps, LLM: override})
	if err != nil {
		return nil, err
	}
	if o.timeout != 0 {
		built.Config.Limits.Timeout = o.timeout
	}
	provider := override.Provider
	if provider == "" {
		provider = cfg.LLM.Provider
	}
	return &Pipeline{engine: e, built: built, provider: provider}, nil
}

// Validate reads and builds the pipeline file at path without any model,
// checking its structure, node settings, tools and graph. The returned
// Pipeline cannot run a model: its first model call fails. Errors are as
// Load's, without ErrNoModel.
func (e *Engine) Validate(ctx context.Context, path string) (*Pipeline, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	return e.ValidateConfig(ctx, cfg)
}

// ValidateConfig is Validate of a pipeline already read and decoded, as
// LoadConfig is Load's: the HTTP server validates a posted pipeline this
// way, after expanding its ${VAR} with an allow-list
// (config.ParseAllowed) and confining its paths (config.Pipeline.MapPaths).
func (e *Engine) ValidateConfig(ctx context.Context, cfg *config.Pipeline) (*Pipeline, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: ValidateConfig: no pipeline", ErrInvalidConfig)
	}
	if p := cfg.LLM.Provider; p != "" {
		if err := e.models.CheckProvider(p); err != nil {
			return nil, cfg.Errorf("llm.provider", err, "llm: %s", err)
		}
	}
	built, err := pipeline.Build(ctx, cfg, pipeline.Options{Registry: e.registry, Tools: e.tools, Keywords: e.keywords})
	if err != nil {
		return nil, err
	}
	return &Pipeline{engine: e, built: built}, nil
}
