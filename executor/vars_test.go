package executor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/vars"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// runVars runs the loop on a state whose vars already hold city=Paris.
func runVars(t *testing.T, cfg executor.ReActConfig, s scripted.Script) (*harness, *state.State) {
	t.Helper()
	sm, err := scripted.New(s)
	require.NoError(t, err)
	st := hookedState(state.Task{Question: "q"})
	require.NoError(t, st.Vars.Set("city", "Paris"))
	h := &harness{model: newRecModel(sm), events: &trace.Recorder{}, state: st}
	l, err := executor.NewLoop(nodekind.Env{Model: llm.Model{LLM: h.model}, Tools: registry(t, vars.New(), echoTool())}, cfg)
	require.NoError(t, err)
	ctx := trace.WithTracer(context.Background(), trace.New("test", h.events))
	h.out, h.err = l.Run(ctx, st, executor.Input{NodeID: "act", Task: "Plan the trip."})
	require.NoError(t, h.err)
	require.True(t, h.out.Complete, h.out.Reason)
	return h, st
}

func TestTheStateBlockShowsVarsWhenTheyChange(t *testing.T) {
	h, st := runVars(t, executor.ReActConfig{}, text(
		"Thought: note the budget\nAction: vars\nAction Input: budget = 1200 EUR",
		"Thought: check\nAction: echo\nAction Input: hi",
		"Final Answer: Paris, 1200 EUR",
	))
	v, _ := st.Vars.Get("budget")
	assert.Equal(t, "1200 EUR", v)
	reqs := requests(h.model)
	require.Len(t, reqs, 3)
	task := reqs[0].msgs[1].Parts[0].(llms.TextContent).Text
	assert.True(t, strings.HasSuffix(task, "Working memory (vars):\ncity = Paris"), task)

	// The step that set a var is followed by the whole block; the next
	// step, which changed nothing, has none.
	second := reqs[1].msgs
	obs := second[len(second)-1].Parts[0].(llms.TextContent).Text
	assert.True(t, strings.HasSuffix(obs, "\n\nWorking memory (vars):\nbudget = 1200 EUR\ncity = Paris"), obs)
	third := reqs[2].msgs
	assert.Equal(t, second, third[:len(second)], "the block stays where it was: the prompt is append-only")
	assert.NotContains(t, third[len(third)-1].Parts[0].(llms.TextContent).Text, "Working memory (vars):")
}

func TestTheStateBlockCanBeTurnedOff(t *testing.T) {
	h, _ := runVars(t, executor.ReActConfig{ShowVars: boolp(false)}, text(
		"Action: vars\nAction Input: budget = 1200 EUR",
		"Final Answer: ok",
	))
	for _, r := range requests(h.model) {
		assert.NotContains(t, r.text(), "Working memory (vars):")
	}
}

func TestTheStateBlockFollowsTheLastToolResult(t *testing.T) {
	s := scripted.Script{Replies: []scripted.Reply{
		{ToolCalls: []scripted.ToolCall{
			{Name: "echo", Arguments: `{"input":"a"}`},
			{Name: "vars", Arguments: `{"set":{"budget":"900"},"delete":"city"}`},
		}},
		{Text: "done"},
	}}
	h, _ := runVars(t, executor.ReActConfig{Mode: executor.ModeTools}, s)
	msgs := requests(h.model)[1].msgs
	last := msgs[len(msgs)-1].Parts[0].(llms.ToolCallResponse)
	assert.Equal(t, "vars", last.Name)
	assert.True(t, strings.HasSuffix(last.Content, "Working memory (vars):\nbudget = 900"), last.Content)
	first := msgs[len(msgs)-2].Parts[0].(llms.ToolCallResponse)
	assert.NotContains(t, first.Content, "Working memory (vars):")
}
