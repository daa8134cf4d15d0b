package app

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// byConfig is spiders' task with replies recorded for single configs.
func byConfig(id string, replies map[string][]string) suite.Task {
	t := spiders(id)
	t.ConfigReplies = map[string][]scripted.Reply{}
	for config, texts := range replies {
		for _, text := range texts {
			t.ConfigReplies[config] = append(t.ConfigReplies[config], scripted.Reply{Text: text})
		}
	}
	return t
}

func TestScriptedWithoutAFilePlaysEachConfigsRepliesOfATask(t *testing.T) {
	t.Parallel()
	task := byConfig("spiders", map[string][]string{
		"cot":   {"Each spider has 8 legs, and 3 * 8 = 24.\nAnswer: 24"},
		"react": {spiderRun[0], "Thought: I misread.\nFinal Answer: 18"},
	})
	a, err := New(WithTasks([]suite.Task{task}))
	require.NoError(t, err)
	cot, err := a.Load(t.Context(), cotConfig, "scripted", 0)
	require.NoError(t, err)
	react, err := a.Load(t.Context(), reactConfig, "scripted", 0)
	require.NoError(t, err)

	res, err := cot.Run(t.Context(), "", planner.WithTask(task.Task))
	require.NoError(t, err)
	assert.Equal(t, "24", res.Answer, "cot plays cot's recorded run")
	res, err = react.Run(t.Context(), "", planner.WithTask(task.Task))
	require.NoError(t, err)
	assert.Equal(t, "18", res.Answer, "react plays react's recorded run")

	other, err := a.Load(t.Context(), "../../configs/direct.yaml", "scripted", 0)
	require.NoError(t, err)
	_, err = other.Run(t.Context(), "", planner.WithTask(task.Task))
	require.ErrorIs(t, err, scripted.ErrNoTaskReplies)
	assert.Contains(t, err.Error(), `task "spiders" has none for config "direct", only for the configs cot, react`)
}

func TestConfigReplyDigestsChangeWithEachConfigsReplies(t *testing.T) {
	t.Parallel()
	both := byConfig("a", map[string][]string{"cot": {"x"}, "react": {"y"}})
	both.Replies = []scripted.Reply{{Text: "anyone's"}}
	byTask, byCfg, err := ConfigReplyDigests([]suite.Task{both, spiders("b", "z"), spiders("c")})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, sortedKeys(byTask), "the replies of every config, by task")
	require.Len(t, byCfg, 2)
	assert.Equal(t, []string{"a"}, sortedKeys(byCfg["cot"]))
	assert.Equal(t, []string{"a"}, sortedKeys(byCfg["react"]))
	assert.NotEqual(t, byCfg["cot"]["a"], byCfg["react"]["a"])
	old, err := ReplyDigests([]suite.Task{both, spiders("b", "z")})
	require.NoError(t, err)
	assert.Equal(t, old, byTask, "a list's digest is ReplyDigests', so earlier run folders resume")

	edited := byConfig("a", map[string][]string{"cot": {"x"}, "react": {"y, edited"}})
	edited.Replies = both.Replies
	byTask2, byCfg2, err := ConfigReplyDigests([]suite.Task{edited, spiders("b", "z")})
	require.NoError(t, err)
	assert.Equal(t, byTask, byTask2)
	assert.Equal(t, byCfg["cot"], byCfg2["cot"], "cot's replies did not change")
	assert.NotEqual(t, byCfg["react"]["a"], byCfg2["react"]["a"], "react's did")

	_, none, err := ConfigReplyDigests([]suite.Task{spiders("b", "z")})
	require.NoError(t, err)
	assert.Nil(t, none)
	assert.Empty(t, WithoutReplies([]suite.Task{byConfig("only cot", map[string][]string{"cot": {"x"}})}), "a task with some config's replies has replies")
}

func TestConfigRepliesErrorNamesTheTaskTheConfigAndThoseThatHave(t *testing.T) {
	t.Parallel()
	q := TaskQuery{Suite: "runs.jsonl", ID: "t1"}
	task := byConfig("t1", map[string][]string{"react": {"x"}, "cot": {"y"}})
	require.NoError(t, ConfigRepliesError(q, task, "cot"))
	err := ConfigRepliesError(q, task, "tot")
	require.True(t, errors.Is(err, ErrNoReplies))
	assert.Contains(t, err.Error(), "task t1 of the runs.jsonl suite has none for config tot, only for cot, react")
	task.Replies = []scripted.Reply{{Text: "anyone's"}}
	require.NoError(t, ConfigRepliesError(q, task, "tot"), `"*" serves every config`)
	err = ConfigRepliesError(q, suite.Task{Task: state.Task{ID: "t1", Question: "q"}}, "cot")
	assert.Contains(t, err.Error(), "task t1 of the runs.jsonl suite has none; give it replies")
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
