package general_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// fixedModels hands the same model to every llm block of a pipeline.
type fixedModels struct{ m llms.Model }

func (f fixedModels) Model(context.Context, config.LLM, string) (llm.Model, error) {
	return llm.Model{LLM: f.m}, nil
}

// testTools builds the pipeline's tools from a fixed set, by name.
type testTools map[string]tools.Tool

func (f testTools) Tools(_ context.Context, spec config.Tool, _ string) ([]tools.Tool, error) {
	t, ok := f[spec.Name]
	if !ok {
		return nil, fmt.Errorf("%w %q", tools.ErrUnknownTool, spec.Name)
	}
	return []tools.Tool{t}, nil
}

// funcTool is a tool that runs fn.
type funcTool struct {
	name string
	fn   func(ctx context.Context, input string) (string, error)
}

func (f funcTool) Name() string                                        { return f.name }
func (f funcTool) Description() string                                 { return "test tool " + f.name }
func (f funcTool) Call(ctx context.Context, in string) (string, error) { return f.fn(ctx, in) }

// echoTool answers "got " and its input.
func echoTool(name string) funcTool {
	return funcTool{name: name, fn: func(_ context.Context, in string) (string, error) { return "got " + in, nil }}
}

// errBroken is the error of failingTool.
var errBroken = errors.New("the service is down")

// failingTool always fails with errBroken.
func failingTool(name string) funcTool {
	return funcTool{name: name, fn: func(context.Context, string) (string, error) { return "", errBroken }}
}

// registry returns a tool registry of ts.
func registry(t *testing.T, ts ...tools.Tool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(ts)
	require.NoError(t, err)
	return reg
}

// recorder wraps m so that each request is kept.
func recorder(m llms.Model) *llmtest.Recorder { return &llmtest.Recorder{Model: m} }

// env returns a node environment with model m and tools ts.
func env(t *testing.T, m llms.Model, ts ...tools.Tool) nodekind.Env {
	t.Helper()
	return nodekind.Env{Model: llm.Model{LLM: m}, Tools: registry(t, ts...)}
}

// hookedState is a run state for task with the engine's hooks, as nodes
// get it in a pipeline's run.
func hookedState(task state.Task) *state.State {
	st := state.NewState(task)
	st.SetHooks(pipeline.ContextHooks(st))
	return st
}

// traced returns a context with a tracer that records into rec.
func traced() (context.Context, *trace.Recorder) {
	rec := &trace.Recorder{}
	return trace.WithTracer(context.Background(), trace.New("run", rec)), rec
}

// run builds a node with ctor and runs it once on a fresh state for
// question.
func run(t *testing.T, ctor nodekind.Constructor, e nodekind.Env, settings map[string]any, question string) (route string, st *state.State, rec *trace.Recorder, err error) {
	t.Helper()
	built, err := ctor(e, nodekind.Spec{ID: "n", Type: "node", Settings: settings})
	require.NoError(t, err)
	st = hookedState(state.Task{ID: "t1", Question: question})
	ctx, rec := traced()
	route, err = built.Node.Run(ctx, st)
	return route, st, rec, err
}

// requireSettingError checks that err is an invalid-settings error naming
// key.
func requireSettingError(t *testing.T, err error, key string) {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, config.ErrSettings)
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, key, se.Key)
}

// writeYAML writes a pipeline file and returns its path.
func writeYAML(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
	return path
}

// build loads the pipeline file at path through the real loader and
// builds it with the built-in node kinds, model m and tools ts.
func build(t *testing.T, path string, m llms.Model, ts testTools) (*pipeline.Pipeline, error) {
	t.Helper()
	cfg, err := config.Load(path)
	require.NoError(t, err)
	return pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Models: fixedModels{m}, Tools: ts, LLM: config.LLM{Provider: "fixed"}})
}

// nodeSpec is the spec of a node with id id.
func nodeSpec(id string, settings map[string]any) nodekind.Spec {
	return nodekind.Spec{ID: id, Type: "node", Settings: settings}
}
