package executor_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const demoQuestion = "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?"

// buildDemo builds a shipped config with the real built-in tools and a
// scripted model.
func buildDemo(t *testing.T, configPath, script string) *pipeline.Pipeline {
	t.Helper()
	cfg, err := config.Load(configPath)
	require.NoError(t, err)
	reg := nodekind.NewRegistry().MustRegister(nodekind.Kind{Name: "react", Summary: "ReAct loop", New: executor.NewReAct})
	abs, err := filepath.Abs(script)
	require.NoError(t, err)
	p, err := pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: reg, Models: llm.NewFactory(llm.WithProvider("scripted", scripted.Label, scripted.Build)), Tools: builtin.Factory{},
		LLM: config.LLM{Provider: "scripted", Script: abs}})
	require.NoError(t, err)
	return p
}

func TestShippedDemosAnswerFromRealToolResults(t *testing.T) {
	cases := []struct {
		config, script string
		toolCalls      int
		modelCalls     int
	}{
		{"../configs/react.yaml", "../examples/scripts/react_demo.yaml", 3, 4},
		{"../configs/react_tools.yaml", "../examples/scripts/react_tools_demo.yaml", 3, 3},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.config), func(t *testing.T) {
			p := buildDemo(t, tc.config, tc.script)
			rec := &trace.Recorder{}
			res, err := p.Run(context.Background(), state.Task{Question: demoQuestion}, trace.New("demo", rec))
			require.NoError(t, err)
			st := res.State
			assert.Equal(t, "22448", st.Answer)
			assert.True(t, st.Complete)
			assert.Empty(t, st.Failure)
			u := st.Usage.Snapshot()
			assert.Equal(t, tc.toolCalls, u.ToolCalls)
			assert.Equal(t, tc.modelCalls, u.ModelCalls)
			require.Len(t, st.Scratchpad, 4)
			assert.Equal(t, "search", st.Scratchpad[0].Tool)
			assert.Contains(t, st.Scratchpad[0].Observation, "142984 km")
			assert.Equal(t, "calculator", st.Scratchpad[2].Tool)
			assert.Equal(t, "22448", st.Scratchpad[2].Observation)
			assert.Equal(t, "22448", st.Scratchpad[3].Final)
			assert.Equal(t, "Jupiter's equatorial diameter exceeds Saturn's by 22448 km.", st.Scratchpad[3].Thought)
			answers := rec.OfKind(trace.KindAnswer)
			require.Len(t, answers, 1)
			assert.Equal(t, "act", answers[0].Node)
			assert.Equal(t, true, answers[0].Data["complete"])
		})
	}
}

func TestReActNodeRecordsAPartialAnswer(t *testing.T) {
	m := newRecModel(scriptedModel(t, text("Thought: t\nAction: echo\nAction Input: a"), "Final Answer: echo: a"))
	built, err := executor.NewReAct(nodekind.Env{Model: llm.Model{LLM: m}, Tools: registry(t, echoTool())},
		nodekind.Spec{ID: "act", Type: "react", Settings: map[string]any{"max_iterations": 1}})
	require.NoError(t, err)
	st := hookedState(state.Task{Question: "q"})
	st.Reflections = []string{"echo first"}
	route, err := built.Node.Run(context.Background(), st)
	require.NoError(t, err)
	assert.Empty(t, route)
	assert.True(t, st.Done)
	assert.False(t, st.Complete)
	assert.Equal(t, "echo: a", st.Answer)
	assert.Equal(t, state.FailureBudget, st.Failure)
	assert.Contains(t, st.Reason, "max_iterations")
	require.Len(t, st.Scratchpad, 1)
	assert.Equal(t, "echo: a", st.Scratchpad[0].Observation)
	assert.Contains(t, requests(m)[0].text(), "Lessons from earlier attempts at this task (do not repeat these mistakes):\n1. echo first\n\nTask: q")
}
