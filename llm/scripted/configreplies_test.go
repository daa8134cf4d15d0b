package scripted_test

import (
	"context"
	"sync"
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inConfigRun returns a context for the model calls of one run of task by
// the config (pipeline) named config, as a pipeline run has.
func inConfigRun(config, task string) context.Context {
	ctx := tools.WithRunState(context.Background(), tools.NewRunState())
	return llm.WithCallMeta(ctx, llm.CallMeta{Node: "act", Kind: "react", TaskID: task, Pipeline: config})
}

func configTaskModel(t *testing.T, replies map[string]scripted.TaskReplies) *scripted.TaskModel {
	t.Helper()
	m, err := scripted.NewConfigTaskModel(replies)
	require.NoError(t, err)
	return m
}

func TestConfigsOfOneTaskPlayTheirOwnRepliesConcurrently(t *testing.T) {
	t.Parallel()
	m := configTaskModel(t, map[string]scripted.TaskReplies{"q1": {Configs: map[string][]scripted.Reply{
		"cot":   {{Text: "cot 1"}, {Text: "cot 2"}},
		"react": {{Text: "react 1"}, {Text: "react 2"}, {Text: "react 3"}},
	}}})
	want := map[string][]string{"cot": {"cot 1", "cot 2"}, "react": {"react 1", "react 2", "react 3"}}
	const runsPerConfig = 6
	var mu sync.Mutex
	got := map[string][][]string{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for config, replies := range want {
		for range runsPerConfig {
			wg.Go(func() {
				ctx := inConfigRun(config, "q1")
				<-start
				var texts []string
				for range replies {
					resp, err := ask(ctx, m, "the same prompt for every config")
					if !assert.NoError(t, err) {
						return
					}
					texts = append(texts, resp.Choices[0].Content)
				}
				mu.Lock()
				got[config] = append(got[config], texts)
				mu.Unlock()
			})
		}
	}
	close(start)
	wg.Wait()
	for config, replies := range want {
		require.Len(t, got[config], runsPerConfig, config)
		for r, texts := range got[config] {
			assert.Equal(t, replies, texts, "run %d of %s", r, config)
		}
	}
}

func TestConfigsWithoutRepliesOfTheirOwnPlayTheAnyConfigOnes(t *testing.T) {
	t.Parallel()
	m := configTaskModel(t, map[string]scripted.TaskReplies{"q1": {
		All:     []scripted.Reply{{Text: "shared"}},
		Configs: map[string][]scripted.Reply{"cot": {{Text: "cot's"}}},
	}})
	for config, want := range map[string]string{"cot": "cot's", "react": "shared", "": "shared"} {
		resp, err := ask(inConfigRun(config, "q1"), m, "p")
		require.NoError(t, err, config)
		assert.Equal(t, want, resp.Choices[0].Content, "config %q", config)
	}
	_, err := ask(inConfigRun("cot", "q1"), m, "p")
	require.NoError(t, err)

	ctx := inConfigRun("cot", "q1")
	_, err = ask(ctx, m, "p")
	require.NoError(t, err)
	_, err = ask(ctx, m, "p")
	require.ErrorIs(t, err, scripted.ErrRepliesUsedUp)
	assert.Contains(t, err.Error(), `task "q1" had 1 reply for config "cot", and this run has used them all`)
}

func TestAConfigWithoutRepliesNamesTheTaskTheConfigAndThoseThatHave(t *testing.T) {
	t.Parallel()
	m := configTaskModel(t, map[string]scripted.TaskReplies{"q1": {Configs: map[string][]scripted.Reply{
		"react": {{Text: "r"}}, "cot": {{Text: "c"}}, "tot": nil,
	}}})
	_, err := ask(inConfigRun("tot", "q1"), m, "p")
	require.ErrorIs(t, err, scripted.ErrNoTaskReplies)
	require.ErrorIs(t, err, middleware.ErrPermanent, "not retried: it would fail again")
	assert.Contains(t, err.Error(), `task "q1" has none for config "tot", only for the configs cot, react`)
	assert.Contains(t, err.Error(), `or under "*" for every config`)

	_, err = ask(inConfigRun("", "q1"), m, "p")
	require.ErrorIs(t, err, scripted.ErrNoTaskReplies)
	assert.Contains(t, err.Error(), `task "q1" has replies only for the configs cot, react, and the call names no config (pipeline)`)
}

func TestCallsOutsideARunKeepOnePositionPerTaskAndConfig(t *testing.T) {
	t.Parallel()
	m := configTaskModel(t, map[string]scripted.TaskReplies{"q1": {Configs: map[string][]scripted.Reply{
		"a": {{Text: "a1"}, {Text: "a2"}}, "b": {{Text: "b1"}, {Text: "b2"}},
	}}})
	for _, step := range []string{"a1", "b1", "a2", "b2"} {
		ctx := llm.WithCallMeta(context.Background(), llm.CallMeta{TaskID: "q1", Pipeline: step[:1]})
		resp, err := ask(ctx, m, "p")
		require.NoError(t, err)
		assert.Equal(t, step, resp.Choices[0].Content)
	}
}

func TestNewConfigTaskModelNamesTheConfigOfABadReply(t *testing.T) {
	t.Parallel()
	_, err := scripted.NewConfigTaskModel(map[string]scripted.TaskReplies{"t1": {Configs: map[string][]scripted.Reply{
		"cot": {{Text: "ok"}, {Text: "ok"}, {Text: "x", Times: -1}},
	}}})
	require.ErrorIs(t, err, scripted.ErrBadReply)
	assert.EqualError(t, err, `bad scripted reply 3 of task "t1" for config "cot": times must be positive`)

	m := configTaskModel(t, map[string]scripted.TaskReplies{"t1": {Configs: map[string][]scripted.Reply{"cot": {{Text: "x"}}}}, "t2": {}})
	assert.Equal(t, 1, m.Tasks(), "a task without any reply is not counted")
}

func TestTaskRepliesForAndConfigNames(t *testing.T) {
	t.Parallel()
	tr := scripted.TaskReplies{All: []scripted.Reply{{Text: "*"}}, Configs: map[string][]scripted.Reply{"b": {{Text: "b"}}, "a": {{Text: "a"}}, "empty": {}}}
	for _, tc := range []struct{ config, key, text string }{
		{"a", "a", "a"}, {"b", "b", "b"}, {"empty", "", "*"}, {"other", "", "*"}, {"", "", "*"},
	} {
		rs, key := tr.For(tc.config)
		require.Len(t, rs, 1, tc.config)
		assert.Equal(t, tc.key, key, "config %q", tc.config)
		assert.Equal(t, tc.text, rs[0].Text, "config %q", tc.config)
	}
	assert.Equal(t, []string{"a", "b", "*"}, tr.ConfigNames())
	assert.False(t, tr.Empty())
	assert.True(t, scripted.TaskReplies{Configs: map[string][]scripted.Reply{"x": nil}}.Empty())
}
