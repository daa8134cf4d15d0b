package executor_test

import (
	"context"
	"sync"
	"testing"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// branchLoop builds a loop on a non-strict scripted model.
func branchLoop(t *testing.T, cfg executor.ReActConfig, replies ...scripted.Reply) (*executor.Loop, *llmtest.Recorder) {
	t.Helper()
	f := false
	sm, err := scripted.New(scripted.Script{Strict: &f, Replies: replies})
	require.NoError(t, err)
	m := newRecModel(sm)
	l, err := executor.NewLoop(nodekind.Env{Model: llm.Model{LLM: m}, Tools: registry(t, echoTool())}, cfg)
	require.NoError(t, err)
	return l, m
}

func TestBranchNextExtendsACopyAndLeavesTheBranchAsItWas(t *testing.T) {
	l, m := branchLoop(t, executor.ReActConfig{},
		scripted.Reply{Contains: "Observation: [echo] echo: b", Text: "Thought: done.\nFinal Answer: b"},
		scripted.Reply{Contains: "Observation: [echo] echo: a", Text: "Thought: more.\nAction: echo\nAction Input: b"},
		scripted.Reply{Text: "Thought: start.\nAction: echo\nAction Input: a", Times: 2},
	)
	st := hookedState(state.Task{Question: "q"})
	root, err := l.Begin(st, executor.Input{NodeID: "lats", Kind: "lats", Role: "expand", Task: "q"})
	require.NoError(t, err)

	one, t1, err := root.Next(context.Background(), executor.TurnOptions{})
	require.NoError(t, err)
	require.Len(t, t1.Entries, 1)
	assert.Equal(t, state.Entry{Thought: "start.", Tool: "echo", Input: "a", Observation: "echo: a", Raw: "Thought: start.\nAction: echo\nAction Input: a"}, t1.Entries[0])
	assert.False(t, t1.Ended())
	assert.Empty(t, root.Entries(), "the root is unchanged")
	assert.Equal(t, 0, root.Turns())

	two, t2, err := one.Next(context.Background(), executor.TurnOptions{})
	require.NoError(t, err)
	assert.Equal(t, "b", t2.Entries[0].Input)
	three, t3, err := two.Next(context.Background(), executor.TurnOptions{})
	require.NoError(t, err)
	assert.True(t, t3.Final)
	assert.Equal(t, "b", t3.Answer)
	assert.True(t, three.Ended())
	assert.Len(t, three.Entries(), 3)
	assert.Len(t, one.Entries(), 1, "an extended branch keeps its own steps")
	assert.Equal(t, "Thought: start.\nAction: echo\nAction Input: a\nObservation: [echo] echo: a\n"+
		"Thought: more.\nAction: echo\nAction Input: b\nObservation: [echo] echo: b\n"+
		"Thought: done.\nFinal Answer: b", three.Transcript())

	_, _, err = three.Next(context.Background(), executor.TurnOptions{})
	assert.ErrorIs(t, err, executor.ErrBranchEnded)

	// A sibling of one: the same first step again, from the root.
	sibling, _, err := root.Next(context.Background(), executor.TurnOptions{})
	require.NoError(t, err)
	assert.Len(t, sibling.Entries(), 1)

	for _, r := range requests(m) {
		assert.Equal(t, llm.CallMeta{Node: "lats", Kind: "lats", Role: "expand"}, r.caller)
	}
	assert.Equal(t, 3, st.Usage.Snapshot().ToolCalls)
}

func TestBranchesKeepTheirOwnRepeatGuard(t *testing.T) {
	l, _ := branchLoop(t, executor.ReActConfig{MaxRepeats: 1},
		scripted.Reply{Text: "Thought: again.\nAction: echo\nAction Input: a", Times: 10},
	)
	st := hookedState(state.Task{Question: "q"})
	root, err := l.Begin(st, executor.Input{Task: "q"})
	require.NoError(t, err)
	one, _, err := root.Next(context.Background(), executor.TurnOptions{})
	require.NoError(t, err)
	two, t2, err := one.Next(context.Background(), executor.TurnOptions{})
	require.NoError(t, err)
	assert.Contains(t, t2.Entries[0].Observation, "You already called echo with this input in step 1")
	assert.Empty(t, t2.Failure)

	// Both the extension of two and a second extension of one see their
	// own history: two's repeat is one too many, one's is the first.
	_, t3, err := two.Next(context.Background(), executor.TurnOptions{})
	require.NoError(t, err)
	assert.Equal(t, state.FailureLoop, t3.Failure)
	assert.True(t, t3.Ended())
	_, again, err := one.Next(context.Background(), executor.TurnOptions{})
	require.NoError(t, err)
	assert.Empty(t, again.Failure, "the repeat count of a branch does not leak into its siblings")
	assert.Equal(t, 4, st.Usage.Snapshot().ToolCalls)
}

func TestBranchNextTakesLessonsAndCallOptionsAndRunsConcurrently(t *testing.T) {
	l, m := branchLoop(t, executor.ReActConfig{},
		scripted.Reply{Text: "Thought: t.\nAction: echo\nAction Input: x", Times: 8},
	)
	st := hookedState(state.Task{Question: "q"})
	root, err := l.Begin(st, executor.Input{Task: "q"})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			_, turn, err := root.Next(context.Background(), executor.TurnOptions{Reflections: []string{"check twice"}, CallOptions: []llms.CallOption{llms.WithSeed(i + 1)}})
			assert.NoError(t, err)
			assert.Equal(t, "echo: x", turn.Entries[0].Observation)
		})
	}
	wg.Wait()
	seeds := map[int]bool{}
	for _, r := range requests(m) {
		seeds[r.opts.Seed] = true
		assert.Contains(t, r.text(), "Lessons from earlier attempts at this task")
		assert.Contains(t, r.text(), "1. check twice")
		assert.NotEmpty(t, r.opts.StopWords, "the loop's own options stay")
	}
	assert.Len(t, seeds, 8)
	assert.Equal(t, 8, st.Usage.Snapshot().ToolCalls)
}

func TestBranchFormatErrorsGetFeedbackUntilTheParseGuardStops(t *testing.T) {
	l, m := branchLoop(t, executor.ReActConfig{MaxParseFailures: 2},
		scripted.Reply{Text: "no labels at all", Times: 5},
	)
	root, err := l.Begin(hookedState(state.Task{Question: "q"}), executor.Input{Task: "q"})
	require.NoError(t, err)
	one, t1, err := root.Next(context.Background(), executor.TurnOptions{})
	require.NoError(t, err)
	assert.True(t, t1.Invalid)
	assert.False(t, t1.Ended())
	_, t2, err := one.Next(context.Background(), executor.TurnOptions{})
	require.NoError(t, err)
	assert.True(t, t2.Invalid)
	assert.Equal(t, state.FailureParse, t2.Failure)
	assert.Contains(t, requests(m)[1].text(), "Observation: "+t1.Entries[0].Error, "the feedback is shown in the next turn")
}
