// Package app wires the engine's parts together for the command line: the
// model factory with every provider, the tool factory with every built-in
// tool, and the node registry. Commands in cmd/planner stay thin.
package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
)

// App holds the wired factories. Build one per process (or per session of
// runs that share a cassette) with New, and Close it when done.
type App struct {
	// Models builds the metered, middleware-wrapped model for an llm block.
	Models *llm.Factory
	// Tools builds the tools a pipeline lists.
	Tools pipeline.ToolFactory
	// Registry maps node types to constructors.
	Registry *nodes.Registry

	rec     *recording // nil unless WithRecording
	replays *replays   // cassettes opened by the replay provider
}

// Option configures New.
type Option func(*options)

type options struct {
	record string       // cassette path; "" records nothing
	tasks  []agent.Task // the suite's tasks, for offline models that play them
}

// WithTasks gives the suite's tasks (with their gold solutions, keyed by
// task id) to the offline models that play them: the simulator follows the
// gold solution of the task whose id its call metadata names. Production
// providers never see them.
func WithTasks(tasks []agent.Task) Option {
	return func(o *options) { o.tasks = tasks }
}

// WithRecording makes the App record every model exchange of every model it
// builds to the cassette file at path: one JSON line per provider attempt,
// secrets scrubbed (see package llm/cassette). The file is created (or
// truncated) by the first recorded call, so a run that fails before calling
// a model leaves an existing file alone; New fails with ErrRecording when
// path's folder does not exist. Replay the cassette with the provider
// "replay" (--llm replay:FILE).
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
// provider and are not part of it. Models built with the same App share one
// recorder, so the cassette has one call order. Close the App to close the
// file.
func WithRecording(path string) Option {
	return func(o *options) { o.record = path }
}

// New wires the default factories. It fails with ErrRecording when the
// WithRecording folder is missing. The tokenizer that estimates usage a
// provider does not report is loaded on first use.
func New(opts ...Option) (*App, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	a := &App{Tools: builtin.Factory{}, Registry: nodes.Default(), replays: newReplays()}
	if o.record != "" {
		var err error
		if a.rec, err = newRecording(o.record); err != nil {
			return nil, err
		}
	}
	a.Models = newModels(newTokenMeter(), a.rec, a.replays, o.tasks)
	return a, nil
}

// Close closes the cassette of WithRecording, after which recorded models
// fail; call it once every run of the App has returned. It is a no-op
// without recording and safe to call twice.
func (a *App) Close() error {
	if a == nil || a.rec == nil {
		return nil
	}
	return a.rec.close()
}

// Recording returns the path of the WithRecording cassette once a call has
// been recorded into it, else "".
func (a *App) Recording() string {
	if a == nil || a.rec == nil || !a.rec.file.created() {
		return ""
	}
	return a.rec.path
}

// UnusedRecordings returns how many recorded calls of the cassettes opened
// by the replay provider have not been played back. After a run that
// replayed its cassette faithfully it is 0; more means the run made fewer
// (or different) calls than the recorded one.
func (a *App) UnusedRecordings() int {
	if a == nil {
		return 0
	}
	return a.replays.unused()
}

// Load loads and builds a pipeline file. llmSpec, when non-empty, is a
// provider:model specification (llm.ParseSpec) that replaces the pipeline's
// llm block; see LoadWith.
func (a *App) Load(ctx context.Context, path, llmSpec string, maxSteps int) (*pipeline.Pipeline, error) {
	var spec config.LLM
	if llmSpec != "" {
		var err error
		if spec, err = llm.ParseSpec(llmSpec); err != nil {
			return nil, err
		}
	}
	return a.LoadWith(ctx, path, spec, maxSteps)
}

// LoadWith loads and builds a pipeline; llmCfg, when its Provider is set,
// replaces the pipeline's llm block, and a relative Script in it is taken
// relative to the working directory. It fails with ErrNoModel when neither
// names a model.
func (a *App) LoadWith(ctx context.Context, path string, llmCfg config.LLM, maxSteps int) (*pipeline.Pipeline, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if llmCfg.Provider == "" && cfg.LLM.Provider == "" {
		return nil, fmt.Errorf("%w: %s has no llm block; pass --llm provider:model (e.g. --llm openai:gpt-4o-mini, --llm sim) or set PLANNER_LLM", ErrNoModel, path)
	}
	if llmCfg.Script != "" && !filepath.IsAbs(llmCfg.Script) {
		if abs, err := filepath.Abs(llmCfg.Script); err == nil {
			llmCfg.Script = abs
		}
	}
	fillReplayModel(&llmCfg, "")
	fillReplayModel(&cfg.LLM, cfg.Dir())
	return pipeline.Build(ctx, cfg, pipeline.Options{Registry: a.Registry, Models: a.Models, Tools: a.Tools, MaxSteps: maxSteps, LLM: llmCfg})
}

// ModelLabel says what kind of model a provider is, for outputs.
func (a *App) ModelLabel(provider string) string { return a.Models.Label(provider) }

// Validate loads and builds a pipeline without any model.
func (a *App) Validate(ctx context.Context, path string) (*pipeline.Pipeline, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	return pipeline.Build(ctx, cfg, pipeline.Options{Registry: a.Registry, Tools: a.Tools})
}

// ErrNoModel means neither the pipeline nor the command line names a model.
var ErrNoModel = errors.New("no model configured")

// BuiltinTools returns every built-in tool, each with its default
// settings, in one registry.
func (a *App) BuiltinTools(ctx context.Context) (*tools.Registry, error) {
	var all []tools.Tool
	for _, name := range builtin.Names() {
		ts, err := a.Tools.Tools(ctx, config.Tool{Name: name}, "")
		if err != nil {
			return nil, err
		}
		all = append(all, ts...)
	}
	return tools.NewRegistry(all)
}
