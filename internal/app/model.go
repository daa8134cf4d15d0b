package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/provider"
)

// ModelSource says where a model specification of the command line came
// from, so that errors name what the user typed.
type ModelSource string

// The places a model specification comes from.
const (
	// FromFlag is the --llm flag.
	FromFlag ModelSource = "--llm"
	// FromEnv is the PLANNER_LLM environment variable.
	FromEnv ModelSource = "PLANNER_LLM"
)

// Show writes spec as the user gave it: "--llm sim:noisy" or
// "PLANNER_LLM=sim:noisy".
func (s ModelSource) Show(spec string) string {
	if s == FromEnv {
		return string(s) + "=" + spec
	}
	return string(s) + " " + spec
}

// ErrModelFlag marks an error caused by the model named on the command
// line: a specification that does not parse, an unknown provider or sim
// profile, a missing API key, a script or cassette that cannot be read.
// Such errors are *ModelFlagError.
var ErrModelFlag = errors.New("bad model on the command line")

// ModelFlagError is an error caused by the model named on the command line.
// Its message names the flag or variable and the value, once, then the
// problem and its fix: `--llm gpt-4o: no provider given; use --llm
// openai:gpt-4o (providers: ...)`. It matches ErrModelFlag and unwraps to
// the cause (llm.ErrBadSpec, llm.ErrUnknownProvider,
// provider.ErrMissingKey, ...).
type ModelFlagError struct {
	// Source and Spec are where the model was named and how.
	Source ModelSource
	Spec   string
	// Msg says what is wrong and how to fix it.
	Msg string
	// Err is the cause.
	Err error
}

func (e *ModelFlagError) Error() string { return e.Source.Show(e.Spec) + ": " + e.Msg }

// Unwrap returns the cause.
func (e *ModelFlagError) Unwrap() error { return e.Err }

// Is makes a *ModelFlagError match ErrModelFlag.
func (e *ModelFlagError) Is(target error) bool { return target == ErrModelFlag }

// ModelFlag is a model named on the command line, parsed.
type ModelFlag struct {
	// Spec is the value as given ("openai:gpt-4o-mini", "sim:noisy").
	Spec string
	// Source is where it was given.
	Source ModelSource
	// LLM is the llm block it stands for; its Provider is registered.
	LLM config.LLM
}

// ParseModel parses a model specification given on the command line (see
// ParseSpec) and checks that its provider is registered. Errors are
// *ModelFlagError naming src and spec, with the fix and the known
// providers.
func (a *App) ParseModel(spec string, src ModelSource) (ModelFlag, error) {
	providers := strings.Join(a.Models.Providers(), ", ")
	cfg, err := ParseSpec(spec)
	if err != nil {
		msg := err.Error()
		var se *llm.SpecError
		if errors.As(err, &se) {
			msg = fmt.Sprintf("%s; use %s (providers: %s)", se.Problem, src.Show(se.Example), providers)
		}
		return ModelFlag{}, &ModelFlagError{Source: src, Spec: spec, Msg: msg, Err: err}
	}
	if !slices.Contains(a.Models.Providers(), cfg.Provider) {
		return ModelFlag{}, &ModelFlagError{Source: src, Spec: spec, Err: llm.ErrUnknownProvider,
			Msg: fmt.Sprintf("%s %q (%sproviders: %s)", llm.ErrUnknownProvider, cfg.Provider, config.DidYouMean(cfg.Provider, a.Models.Providers()), providers)}
	}
	return ModelFlag{Spec: spec, Source: src, LLM: cfg}, nil
}

// LoadModel loads and builds a pipeline with the model named on the
// command line (m's LLM, replacing the pipeline's llm block; none when m
// is the zero ModelFlag). It fails with ErrNoModel when neither names a
// model. A failure to build m's model fails with a *ModelFlagError naming
// m's source rather than the pipeline file: the missing API key and the
// variable to set, the sim's profiles, the script or cassette that cannot
// be read.
func (a *App) LoadModel(ctx context.Context, path string, m ModelFlag, maxSteps int) (*planner.Pipeline, error) {
	p, err := a.Engine.Load(ctx, path, planner.WithLLMConfig(m.LLM), planner.WithMaxSteps(maxSteps))
	if errors.Is(err, planner.ErrNoModel) {
		return nil, fmt.Errorf("%w: %s has no llm block; pass --llm provider:model (e.g. --llm openai:gpt-4o-mini, --llm sim) or set PLANNER_LLM", ErrNoModel, path)
	}
	var ce *config.Error
	if err != nil && m.LLM.Provider != "" && errors.As(err, &ce) && ce.Key == "llm" {
		return nil, &ModelFlagError{Source: m.Source, Spec: m.Spec, Msg: modelProblem(m, ce, err), Err: err}
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// specOf writes an llm block that came from a model specification back as
// one ("openai:gpt-4o", "sim:noisy", "scripted:FILE").
func specOf(cfg config.LLM) string {
	for _, rest := range []string{cfg.Script, cfg.Model, cfg.Profile} {
		if rest != "" {
			return cfg.Provider + ":" + rest
		}
	}
	return cfg.Provider
}

// modelProblem says why the model m could not be built, from the pipeline
// error ce (its message is "llm: " and the factory's error) and its chain
// err, and how to fix it.
func modelProblem(m ModelFlag, ce *config.Error, err error) string {
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe) && m.LLM.Provider == "replay":
		return fmt.Sprintf("cannot read the cassette: %v (record one with: planner run --record FILE --llm PROVIDER:MODEL ...)", pe)
	case errors.As(err, &pe) && m.LLM.Provider == "scripted":
		return fmt.Sprintf("cannot read the script: %v (the shipped scripts are examples/scripts/*.yaml)", pe)
	}
	msg := strings.TrimPrefix(ce.Msg, "llm: ")
	// The factory and the builders each prefix the provider's name.
	prefix := m.LLM.Provider + ": "
	for strings.HasPrefix(msg, prefix) {
		msg = strings.TrimPrefix(msg, prefix)
	}
	msg = strings.ReplaceAll(msg, ": "+prefix, ": ")
	if errors.Is(err, provider.ErrMissingKey) {
		msg += " (keys come only from the environment, never from flags or YAML)"
	}
	return msg
}
