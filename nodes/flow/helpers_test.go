package flow_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// build constructs a node of kind with settings and model m (nil: none).
func build(ctor nodekind.Constructor, kind string, settings map[string]any, m llms.Model) (nodekind.Built, error) {
	env := nodekind.Env{Compiled: &nodekind.TemplateSet{}}
	if m != nil {
		env.Model = llm.Model{LLM: m}
	}
	return ctor(env, nodekind.Spec{ID: "n", Type: kind, Settings: settings})
}

// mustBuild is build that fails the test on error.
func mustBuild(t *testing.T, ctor nodekind.Constructor, kind string, settings map[string]any, m llms.Model) nodekind.Built {
	t.Helper()
	b, err := build(ctor, kind, settings, m)
	require.NoError(t, err)
	return b
}

// run runs node on st and returns its route and the trace.
func run(t *testing.T, n nodekind.Node, st *state.State) (string, *trace.Recorder, error) {
	t.Helper()
	rec := &trace.Recorder{}
	route, err := n.Run(trace.WithTracer(context.Background(), trace.New("r", rec)), st)
	return route, rec, err
}

// requireSettingError checks that err is an invalid-settings error naming
// key, and returns its message.
func requireSettingError(t *testing.T, err error, key string) string {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, config.ErrSettings)
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, key, se.Key, "error: %v", err)
	return err.Error()
}

// eventData returns the Data of the trace's events of kind k.
func eventData(rec *trace.Recorder, k trace.Kind) []map[string]any {
	var out []map[string]any
	for _, e := range rec.OfKind(k) {
		out = append(out, e.Data)
	}
	return out
}
