package steps_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/search"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// topicTool answers with its name; its description names its topic.
type topicTool struct{ name, topic string }

func (t topicTool) Name() string        { return t.name }
func (t topicTool) Description() string { return "Answers questions about " + t.topic + "." }
func (t topicTool) Call(_ context.Context, in string) (string, error) {
	return t.name + ": " + in, nil
}

// TestReactStepsUseToolRetrieval: the react: block of an execute node
// takes tool_retrieval like a react node (lats builds its loop the same
// way): the step's prompt lists only the retrieved tools, and a bad
// setting is an error keyed under react.
func TestReactStepsUseToolRetrieval(t *testing.T) {
	var ts []tools.Tool
	for i, topic := range []string{"volcanoes", "rivers", "deserts", "glaciers", "oceans", "forests", "mountains", "islands"} {
		ts = append(ts, topicTool{name: fmt.Sprintf("t%d_%s", i, topic), topic: topic})
	}
	reg, err := tools.NewRegistry(ts)
	require.NoError(t, err)
	sm := scripted.Texts("Thought: I'll ask about glaciers.\nAction: t3_glaciers\nAction Input: size", "Thought: done\nFinal Answer: big")
	m := &llmtest.Recorder{Model: sm}
	a, err := steps.NewReActAgent(nodekind.Env{Keywords: search.Keywords{}, Model: llm.Model{LLM: m}, Tools: reg}, map[string]any{"tool_retrieval": map[string]any{"max_tools": 2}})
	require.NoError(t, err)
	out, err := a.Run(context.Background(), hookedState(state.Task{Question: "q"}), executor.Input{Task: "How large are the glaciers of Patagonia?"})
	require.NoError(t, err)
	assert.True(t, out.Complete)
	reqs := m.Requests()
	require.NotEmpty(t, reqs)
	system := reqs[0].Messages[0].Parts[0].(llms.TextContent).Text // the first call's system message
	assert.Contains(t, system, "### t3_glaciers")
	assert.NotContains(t, system, "### t0_volcanoes")
	assert.LessOrEqual(t, strings.Count(system, "\n### "), 2)

	_, err = steps.NewExecute(nodekind.Env{Keywords: search.Keywords{}, Tools: reg}, nodekind.Spec{ID: "x", Type: "execute", Settings: map[string]any{
		"react": map[string]any{"tool_retrieval": map[string]any{"method": "tfidf"}}}})
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "react.tool_retrieval.method", se.Key)
}
