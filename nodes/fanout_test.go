package nodes_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// gaugeModel wraps a model, holds every call for a moment and remembers
// the most calls in flight at once. A call whose seed is panicSeed panics.
type gaugeModel struct {
	llms.Model
	hold      time.Duration
	panicSeed int
	now, peak atomic.Int32
}

func (g *gaugeModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	n := g.now.Add(1)
	defer g.now.Add(-1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	if g.panicSeed > 0 && o.Seed == g.panicSeed {
		panic("provider adapter bug")
	}
	time.Sleep(g.hold)
	return g.Model.GenerateContent(ctx, msgs, opts...)
}

func TestFanOutsNeverExceedTheirConcurrency(t *testing.T) {
	reg, err := tools.NewRegistry([]tools.Tool{calc.New()})
	require.NoError(t, err)
	cases := []struct {
		kind     string
		ctor     nodekind.Constructor
		settings map[string]any
		model    llms.Model
	}{
		{"self_consistency", nodes.NewSelfConsistency, map[string]any{"samples": 8, "concurrency": 3},
			scriptedModel(t, scripted.Reply{Text: "Answer: 18", Times: 8})},
		{"tot", nodes.NewToT, map[string]any{"beam": 3, "proposals": 3, "depth": 2, "concurrency": 2},
			&latencyModel{delay: time.Millisecond, k: 3}},
		{"lats", nodes.NewLATS, map[string]any{"children": 5, "concurrency": 2, "iterations": 2},
			scriptedModel(t,
				scripted.Reply{Role: "expand", Text: "Thought: compute.\nAction: calculator\nAction Input: 3 * 5 + 3", Times: 50},
				scripted.Reply{Role: "value", Text: "Score: 5/10", Times: 50})},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			g := &gaugeModel{Model: tc.model, hold: 5 * time.Millisecond}
			built, err := tc.ctor(nodekind.Env{Model: llm.Model{LLM: g}, Tools: reg}, nodekind.Spec{ID: tc.kind, Type: tc.kind, Settings: tc.settings})
			require.NoError(t, err)
			_, err = built.Node.Run(context.Background(), state.NewState(arithmeticTask))
			require.NoError(t, err)
			limit := tc.settings["concurrency"].(int)
			assert.LessOrEqual(t, int(g.peak.Load()), limit)
			assert.Greater(t, int(g.peak.Load()), 1, "the calls overlap")
		})
	}
}

func TestFanOutsStopAtTheContextsCause(t *testing.T) {
	cause := errors.New("the run's deadline")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	cases := []struct {
		kind string
		ctor nodekind.Constructor
	}{
		{"self_consistency", nodes.NewSelfConsistency},
		{"tot", nodes.NewToT},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			m := &latencyModel{delay: time.Millisecond, k: 2}
			built, err := tc.ctor(nodekind.Env{Model: llm.Model{LLM: m}}, nodekind.Spec{ID: tc.kind, Type: tc.kind})
			require.NoError(t, err)
			_, err = built.Node.Run(ctx, state.NewState(arithmeticTask))
			require.ErrorIs(t, err, cause)
			assert.Zero(t, m.calls, "no call starts once the context has ended")
		})
	}
}

func TestSelfConsistencyCountsAPanickingSampleAsFailed(t *testing.T) {
	g := &gaugeModel{Model: scriptedModel(t, scripted.Reply{Text: "Answer: 18", Times: 3}), panicSeed: 2}
	st, _, err := runNode(t, nodes.NewSelfConsistency, "self_consistency", map[string]any{"samples": 3}, g, arithmeticTask)
	require.NoError(t, err)
	assert.Equal(t, "18", st.Answer)
	require.NotNil(t, st.SelfConsistency)
	assert.Equal(t, 1, st.SelfConsistency.Failed)
}

func scriptedModel(t *testing.T, replies ...scripted.Reply) llms.Model {
	t.Helper()
	strict := false
	m, err := scripted.New(scripted.Script{Strict: &strict, Replies: replies})
	require.NoError(t, err)
	return m
}
