// Package app wires the engine for the command line: the public
// planner.Engine (package planner, the module's root) with the full set of
// providers, tools and keyword index (package full),
// plus what is not for the public: the offline simulator "sim" of package
// eval/sim and the scripted model's per-task mode (--llm scripted without
// a file), which play a suite's tasks (WithTasks), and the command-line
// wording of errors. Commands in cmd/planner stay thin.
package app

import (
	"context"
	"errors"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/trace"
)

// App is the command line's engine. Build one per process (or per session
// of runs that share a cassette) with New, and Close it when done.
type App struct {
	// Engine is the public engine, with the simulator registered.
	Engine *planner.Engine
	// Models builds the metered, middleware-wrapped model for an llm block;
	// it is Engine.Models().
	Models *llm.Factory
}

// Option configures New.
type Option func(*options)

type options struct {
	record string                   // cassette path; "" records nothing
	tasks  []suite.Task             // the suite's tasks, for the simulator
	tp     oteltrace.TracerProvider // nil: no spans
}

// WithTracerProvider makes the App's runs emit OpenTelemetry spans through
// tp; see planner.WithTracerProvider. Default: none (a nil tp).
func WithTracerProvider(tp oteltrace.TracerProvider) Option {
	return func(o *options) { o.tp = tp }
}

// WithRecording makes the App record every model exchange to the cassette
// file at path; see planner.WithRecording. Replay the cassette with
// --llm replay:FILE.
func WithRecording(path string) Option {
	return func(o *options) { o.record = path }
}

// ErrRecording marks a failure to prepare or finish the WithRecording
// cassette; it is planner.ErrRecording.
var ErrRecording = planner.ErrRecording

// ErrNoModel means neither the pipeline nor the command line names a model;
// it is planner.ErrNoModel.
var ErrNoModel = planner.ErrNoModel

// New wires the engine with the simulator. It fails with ErrRecording when
// the WithRecording folder is missing.
func New(opts ...Option) (*App, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	scripted, err := withScripted(o.tasks)
	if err != nil {
		return nil, err
	}
	// The command line registers every provider, tool and index (package
	// full); the simulator and the per-task scripted model come after.
	popts := append(full.Options(), withSim(o.tasks), scripted)
	if o.record != "" {
		popts = append(popts, planner.WithRecording(o.record))
	}
	if o.tp != nil {
		popts = append(popts, planner.WithTracerProvider(o.tp))
	}
	e, err := planner.New(popts...)
	if err != nil {
		return nil, err
	}
	return &App{Engine: e, Models: e.Models()}, nil
}

// Close closes the cassette of WithRecording; see planner.Engine.Close. It
// is safe on a nil App and safe to call twice.
func (a *App) Close() error {
	if a == nil {
		return nil
	}
	return a.Engine.Close()
}

// Recording returns the path of the WithRecording cassette once a call has
// been recorded into it, else "".
func (a *App) Recording() string {
	if a == nil {
		return ""
	}
	return a.Engine.Recording()
}

// UnusedRecordings returns how many recorded calls of the replayed
// cassettes have not been played back; see planner.Engine.UnusedRecordings.
func (a *App) UnusedRecordings() int {
	if a == nil {
		return 0
	}
	return a.Engine.UnusedRecordings()
}

// ModelLabel says what kind of model a provider is, for outputs.
func (a *App) ModelLabel(provider string) string { return a.Engine.ModelLabel(provider) }

// ModelKind says what kind of model a provider builds (the simulator is
// llm.KindSimulated), so that outputs can say what their numbers measure.
func (a *App) ModelKind(provider string) llm.Kind { return a.Engine.ModelKind(provider) }

// Scrubber is the scrubber of the App's Engine (planner.Engine.Scrubber).
func (a *App) Scrubber() trace.Scrubber { return a.Engine.Scrubber() }

// Load loads and builds a pipeline file. llmSpec, when non-empty, is a
// provider:model specification (ParseSpec) that replaces the pipeline's
// llm block; see LoadWith.
func (a *App) Load(ctx context.Context, path, llmSpec string, maxSteps int) (*planner.Pipeline, error) {
	var spec config.LLM
	if llmSpec != "" {
		var err error
		if spec, err = ParseSpec(llmSpec); err != nil {
			return nil, err
		}
	}
	return a.LoadWith(ctx, path, spec, maxSteps)
}

// LoadWith loads and builds a pipeline; llmCfg, when its Provider is set,
// replaces the pipeline's llm block, and a relative Script in it is taken
// relative to the working directory. It fails with ErrNoModel when neither
// names a model. llmCfg is taken as the model of the --llm flag: a failure
// to build it is a *ModelFlagError naming --llm (see LoadModel, which knows
// where the model came from).
func (a *App) LoadWith(ctx context.Context, path string, llmCfg config.LLM, maxSteps int) (*planner.Pipeline, error) {
	return a.LoadModel(ctx, path, ModelFlag{Spec: specOf(llmCfg), Source: FromFlag, LLM: llmCfg}, maxSteps)
}

// Validate loads and builds a pipeline without any model; see
// planner.Engine.Validate.
func (a *App) Validate(ctx context.Context, path string) (*planner.Pipeline, error) {
	return a.Engine.Validate(ctx, path)
}

// BuiltinTools returns every built-in tool that works with its default
// settings, in one registry, and the names of the tools entries that need
// settings of their own to build (files needs a root, sql a database,
// mcp a server); a pipeline's tools list configures those.
func (a *App) BuiltinTools(ctx context.Context) (*tools.Registry, []string, error) {
	var all []tools.Tool
	var needSettings []string
	for _, name := range builtin.Names() {
		ts, err := builtin.Factory{}.Tools(ctx, config.Tool{Name: name}, "")
		if errors.Is(err, builtin.ErrMissingSetting) {
			needSettings = append(needSettings, name)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		all = append(all, ts...)
	}
	reg, err := tools.NewRegistry(all)
	return reg, needSettings, err
}
