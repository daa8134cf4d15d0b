package nodes_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// request is one model call as a recorder saw it.
type request struct {
	caller llm.CallMeta
	prompt string
}

// newRecorder wraps m in a recorder that keeps each call's caller.
func newRecorder(m llms.Model) *llmtest.Recorder {
	return &llmtest.Recorder{Model: m, Meta: func(ctx context.Context) any { return llm.CallMetaFrom(ctx) }}
}

// requests returns the calls rec (from newRecorder) saw so far, optionally
// only those of one role.
func requests(rec *llmtest.Recorder, role string) []request {
	var out []request
	for _, r := range rec.Requests() {
		q := request{caller: r.Meta.(llm.CallMeta), prompt: r.Text()}
		if role == "" || q.caller.Role == role {
			out = append(out, q)
		}
	}
	return out
}

// fixedModels hands the same model to every llm block of a pipeline.
type fixedModels struct{ m llms.Model }

func (f fixedModels) Model(context.Context, config.LLM, string) (llm.Model, error) {
	return llm.Model{LLM: f.m}, nil
}

// script builds a scripted model wrapped in a recorder.
func script(t *testing.T, strict bool, replies ...scripted.Reply) (*llmtest.Recorder, *scripted.Model) {
	t.Helper()
	m, err := scripted.New(scripted.Script{Strict: &strict, Replies: replies})
	require.NoError(t, err)
	return newRecorder(m), m
}

// buildYAML writes a pipeline to a temporary file and builds it with the
// default node kinds, the built-in tools and model m.
func buildYAML(t *testing.T, yaml string, m llms.Model) *pipeline.Pipeline {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
	return buildConfig(t, path, m)
}

// buildYAMLErr builds yaml as buildYAML does and returns the error.
func buildYAMLErr(t *testing.T, yaml string) (*pipeline.Pipeline, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
	cfg, err := config.Load(path)
	require.NoError(t, err)
	return pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Tools: builtin.Factory{}, Keywords: search.Keywords{}})
}

// buildConfig builds the pipeline file at path with the default node kinds,
// the built-in tools and model m.
func buildConfig(t *testing.T, path string, m llms.Model) *pipeline.Pipeline {
	t.Helper()
	cfg, err := config.Load(path)
	require.NoError(t, err)
	p, err := pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Models: fixedModels{m}, Tools: builtin.Factory{}, Keywords: search.Keywords{}, LLM: config.LLM{Provider: "fixed"}})
	require.NoError(t, err)
	return p
}

// runTask runs task on p and returns the state and the trace.
func runTask(t *testing.T, p *pipeline.Pipeline, task state.Task) (*state.State, *trace.Recorder) {
	t.Helper()
	rec := &trace.Recorder{}
	res, err := p.Run(context.Background(), task, trace.New("run", rec))
	require.NoError(t, err)
	return res.State, rec
}

// runNode builds one node with model m and runs it on a fresh state.
func runNode(t *testing.T, ctor nodekind.Constructor, kind string, settings map[string]any, m llms.Model, task state.Task) (*state.State, *trace.Recorder, error) {
	t.Helper()
	built, err := ctor(nodekind.Env{Model: llm.Model{LLM: m}}, nodekind.Spec{ID: kind, Type: kind, Settings: settings})
	require.NoError(t, err)
	st := hookedState(task)
	rec := &trace.Recorder{}
	_, err = built.Node.Run(traceCtx(rec), st)
	return st, rec, err
}

func traceCtx(rec *trace.Recorder) context.Context {
	return trace.WithTracer(context.Background(), trace.New("r", rec))
}

// requireSettingError checks that err is an invalid-settings error naming key.
func requireSettingError(t *testing.T, err error, key string) {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, config.ErrSettings)
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, key, se.Key)
}
