package app

import (
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/state"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFindTaskByIDOrByQuestion(t *testing.T) {
	t.Parallel()
	task, found, err := FindTask(t.Context(), TaskQuery{ID: "demo-07"})
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "In which city was Galileo Galilei born?", task.Question)
	assert.Equal(t, "Pisa", task.Answer)
	assert.NotNil(t, task.Gold)

	for _, q := range []string{"In which city was Galileo Galilei born?", "  in which CITY was galileo galilei born  ", "In which city was Galileo Galilei born"} {
		task, found, err = FindTask(t.Context(), TaskQuery{Question: q})
		require.NoError(t, err)
		require.True(t, found, q)
		assert.Equal(t, "demo-07", task.ID)
	}
	_, found, err = FindTask(t.Context(), TaskQuery{Question: "In which city was Kepler born?"})
	require.NoError(t, err)
	assert.False(t, found)

	_, _, err = FindTask(t.Context(), TaskQuery{Suite: DemoSuite, ID: "demo-99"})
	require.ErrorIs(t, err, ErrNoSuchTask)
	assert.EqualError(t, err, `no such task "demo-99" in the demo suite (ids demo-01 to demo-40)`)

	gsm8k := filepath.Join("..", "..", "eval", "suite", "testdata", "gsm8k.jsonl")
	task, found, err = FindTask(t.Context(), TaskQuery{Suite: gsm8k, ID: "gsm8k-1"})
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "12.5", task.Answer)

	_, _, err = FindTask(t.Context(), TaskQuery{Suite: filepath.Join(t.TempDir(), "absent.jsonl"), ID: "x"})
	require.Error(t, err)
}

func TestSimTaskErrorSaysWhatToPass(t *testing.T) {
	t.Parallel()
	err := SimTaskError(TaskQuery{Question: "What is 17 * 23?"}, suite.Task{}, false)
	require.ErrorIs(t, err, ErrSimNeedsTask)
	assert.Contains(t, err.Error(), "--suite demo --task ID (e.g. demo-07")
	assert.Contains(t, err.Error(), "--llm scripted:FILE")

	err = SimTaskError(TaskQuery{Suite: "s.jsonl", Question: "What?"}, suite.Task{}, false)
	assert.Contains(t, err.Error(), "this question is no task of the s.jsonl suite; pass --task ID")

	noGold := suite.Task{Task: state.Task{ID: "capital", Question: "What is the capital of France?"}}
	err = SimTaskError(TaskQuery{Suite: "s.jsonl", ID: "capital"}, noGold, true)
	assert.Contains(t, err.Error(), "task capital of the s.jsonl suite has none; use a real model or --llm scripted:FILE")
}
