package nodes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// panicOnSeed passes every call to m but panics on a call whose seed is
// seed, as a buggy provider adapter might.
func panicOnSeed(seed int, m llms.Model) llmtest.Func {
	return func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		if llmtest.Options(opts...).Seed == seed {
			panic("provider adapter bug")
		}
		return m.GenerateContent(ctx, msgs, opts...)
	}
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
			&llmtest.Latency{Delay: time.Millisecond, Model: totReplies(3)}},
		{"lats", nodes.NewLATS, map[string]any{"children": 5, "concurrency": 2, "iterations": 2},
			scriptedModel(t,
				scripted.Reply{Role: "expand", Text: "Thought: compute.\nAction: calculator\nAction Input: 3 * 5 + 3", Times: 50},
				scripted.Reply{Role: "value", Text: "Score: 5/10", Times: 50})},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			// Every call is held a moment; the recorder keeps the most in
			// flight at once.
			g := &llmtest.Recorder{Model: &llmtest.Latency{Delay: 5 * time.Millisecond, Model: tc.model}}
			built, err := tc.ctor(nodekind.Env{Model: llm.Model{LLM: g}, Tools: reg}, nodekind.Spec{ID: tc.kind, Type: tc.kind, Settings: tc.settings})
			require.NoError(t, err)
			_, err = built.Node.Run(context.Background(), hookedState(arithmeticTask))
			require.NoError(t, err)
			limit := tc.settings["concurrency"].(int)
			assert.LessOrEqual(t, g.Peak(), limit)
			assert.Greater(t, g.Peak(), 1, "the calls overlap")
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
			answered := &llmtest.Recorder{Model: totReplies(2)} // the calls whose delay ran out
			m := &llmtest.Latency{Delay: time.Millisecond, Model: answered}
			built, err := tc.ctor(nodekind.Env{Model: llm.Model{LLM: m}}, nodekind.Spec{ID: tc.kind, Type: tc.kind})
			require.NoError(t, err)
			_, err = built.Node.Run(ctx, hookedState(arithmeticTask))
			require.ErrorIs(t, err, cause)
			assert.Zero(t, answered.Calls(), "no call starts once the context has ended")
		})
	}
}

func TestSelfConsistencyCountsAPanickingSampleAsFailed(t *testing.T) {
	g := panicOnSeed(2, scriptedModel(t, scripted.Reply{Text: "Answer: 18", Times: 3}))
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
