package executor_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runRetrying runs one loop whose model retries empty replies twice, as
// the Factory's default does.
func runRetrying(t *testing.T, cfg executor.ReActConfig, s scripted.Script, task string) *harness {
	t.Helper()
	sm, err := scripted.New(s)
	require.NoError(t, err)
	h := &harness{model: newRecModel(sm), events: &trace.Recorder{}, state: hookedState(state.Task{Question: task})}
	l, err := executor.NewLoop(nodekind.Env{Model: llm.Model{LLM: h.model, EmptyRetries: 2}, Tools: registry(t, echoTool())}, cfg)
	require.NoError(t, err)
	ctx := trace.WithTracer(context.Background(), trace.New("test", h.events))
	h.out, h.err = l.Run(ctx, h.state, executor.Input{NodeID: "act", Task: task})
	return h
}

func TestMaxEmptyRetriesReplacesTheModelsRetries(t *testing.T) {
	// With the model's two retries inside the loop's one, the first turn
	// would take four calls and the strict script would run out.
	h := runRetrying(t, executor.ReActConfig{MaxEmptyRetries: intp(1)}, text(" ", " ", "Thought: t\nFinal Answer: a"), "q")
	require.NoError(t, h.err)
	assert.True(t, h.out.Complete)
	assert.Equal(t, 2, h.out.Iterations, "one retry, then the empty reply is format feedback")
	assert.Len(t, requests(h.model), 3)
	assert.Equal(t, []string{llm.GuardEmptyReply}, h.guards())
	assert.Contains(t, h.out.Entries[0].Error, "the reply is empty")
}

func TestCompletionStyleDoesNotRetryEmptyReplies(t *testing.T) {
	cfg := paperCfg()
	h := runRetrying(t, cfg, text(" ", " Finish[x]"), "q")
	require.NoError(t, h.err)
	assert.True(t, h.out.Complete)
	assert.Equal(t, "x", h.out.Answer)
	reqs := requests(h.model)
	require.Len(t, reqs, 2, "the empty reply gets the harness's action-only call, not a retry")
	assert.Equal(t, paperHeader+"Thought 1: \nAction 1:", completionPrompt(t, reqs[1]))
	assert.Equal(t, []string{executor.GuardActionOnly}, h.guards())
}
