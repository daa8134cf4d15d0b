package planner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// followUpScript answers each follow-up only when its prompt shows the
// earlier turns: a prompt that matches no reply gets none, and the run
// fails.
const followUpScript = `strict: false
replies:
  - node: direct
    regex: '(?s)User: What is the capital of France\?\nAssistant: Paris\n.*How many people live there\?'
    text: "About 2.1 million"
  - {node: direct, contains: "capital of France", text: "Paris"}
  - node: react
    regex: '(?s)Assistant: About 2.1 million.*And in 1900\?'
    text: |
      Thought: The question follows up on the population of Paris.
      Final Answer: About 2.7 million
`

func TestAFollowUpSeesTheEarlierTurns(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	files := map[string]string{
		"script.yaml": followUpScript,
		"direct.yaml": "name: direct\nnodes:\n  - {id: answer, type: direct}\nedges:\n  - {from: START, to: answer}\n  - {from: answer, to: END}\n",
		"react.yaml":  "name: react\ntools: [calculator]\nnodes:\n  - {id: act, type: react, mode: text}\nedges:\n  - {from: START, to: act}\n  - {from: act, to: END}\n",
	}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "threads.db"))
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	eng, err := planner.New(full.Options()...)
	require.NoError(t, err)
	defer func() { require.NoError(t, eng.Close()) }()
	load := func(name string) *planner.Pipeline {
		p, err := eng.Load(ctx, filepath.Join(dir, name), planner.WithLLM("scripted:"+filepath.Join(dir, "script.yaml")))
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	direct := load("direct.yaml")

	res, err := direct.Run(ctx, "What is the capital of France?", planner.WithThread(store, "paris"))
	require.NoError(t, err)
	assert.Equal(t, "Paris", res.Answer)
	firstLive := res.Live
	th, err := store.Thread(ctx, "paris")
	require.NoError(t, err)
	assert.Equal(t, "Paris", th.Answer, "a done thread records its answer")

	// Asked alone, without the first turn, the question gets no reply.
	_, err = direct.Run(ctx, "How many people live there?")
	require.Error(t, err, "the script answers it only after the first turn")

	second, err := planner.FollowUp(ctx, store, "paris", "How many people live there?")
	require.NoError(t, err)
	assert.Equal(t, "paris.turn2", second.Name)
	res, err = direct.Resume(ctx, store, second.Name)
	require.NoError(t, err)
	assert.Equal(t, "About 2.1 million", res.Answer)
	assert.Equal(t, firstLive, res.Live, "the turn's own calls only: the first turn is not run again")
	assert.Zero(t, res.Replayed)

	// A third turn, on another paradigm's prompt (ReAct's task line).
	third, err := planner.FollowUp(ctx, store, "paris", "And in 1900?")
	require.NoError(t, err)
	assert.Equal(t, "paris.turn3", third.Name)
	res, err = load("react.yaml").Resume(ctx, store, third.Name)
	require.NoError(t, err)
	assert.Equal(t, "About 2.7 million", res.Answer)
	assert.Len(t, res.State.Task.History, 2)

	latest, err := planner.LatestTurn(ctx, store, "paris")
	require.NoError(t, err)
	assert.Equal(t, "paris.turn3", latest.Name)

	// A follow-up waits for the latest turn to be done.
	_, err = journal.Fork(ctx, store, "paris", "unfinished", 0)
	require.NoError(t, err)
	_, err = planner.FollowUp(ctx, store, "unfinished", "Why?")
	require.ErrorIs(t, err, planner.ErrTurnNotDone)
	assert.Contains(t, err.Error(), "planner resume unfinished")
	_, err = planner.FollowUp(ctx, store, "nosuch", "Why?")
	require.ErrorIs(t, err, journal.ErrNotFound)
}
