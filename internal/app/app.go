// Package app wires the engine's parts together for the command line: the
// model factory with every provider, the tool factory with every built-in
// tool, and the node registry. Commands in cmd/planner stay thin.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/tools/builtin"
)

// App holds the wired factories. Build one per process with New.
type App struct {
	Models   *llm.Factory
	Tools    pipeline.ToolFactory
	Registry *nodes.Registry
}

// New wires the default factories.
func New() (*App, error) {
	est, err := usage.NewEstimator()
	if err != nil {
		return nil, fmt.Errorf("loading the tokenizer: %w", err)
	}
	models := newModels(est)
	return &App{Models: models, Tools: builtin.Factory{}, Registry: nodes.Default()}, nil
}

// Load loads and builds a pipeline file. llmSpec, when non-empty, replaces
// the pipeline's llm block (paths in it are relative to the working
// directory).
func (a *App) Load(ctx context.Context, path, llmSpec string, maxSteps int) (*pipeline.Pipeline, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	opts := pipeline.Options{Registry: a.Registry, Models: a.Models, Tools: a.Tools, MaxSteps: maxSteps}
	if llmSpec == "" && cfg.LLM.Provider == "" {
		return nil, fmt.Errorf("%w: %s has no llm block; pass --llm provider:model (e.g. --llm openai:gpt-4o-mini, --llm sim) or set PLANNER_LLM", ErrNoModel, path)
	}
	if llmSpec != "" {
		spec, err := llm.ParseSpec(llmSpec)
		if err != nil {
			return nil, err
		}
		if spec.Script != "" && !filepath.IsAbs(spec.Script) {
			if abs, err := filepath.Abs(spec.Script); err == nil {
				spec.Script = abs
			}
		}
		opts.LLM = spec
	}
	return pipeline.Build(ctx, cfg, opts)
}

// LoadWith loads and builds a pipeline; llm, when its Provider is set,
// replaces the pipeline's llm block.
func (a *App) LoadWith(ctx context.Context, path string, llmCfg config.LLM, maxSteps int) (*pipeline.Pipeline, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if llmCfg.Provider == "" && cfg.LLM.Provider == "" {
		return nil, fmt.Errorf("%w: %s has no llm block; pass --llm", ErrNoModel, path)
	}
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

// Exists reports whether a file exists.
func Exists(path string) bool { _, err := os.Stat(path); return err == nil }

// BuiltinTools lists the built-in tool names.
func BuiltinTools() []string { return builtin.Names() }
