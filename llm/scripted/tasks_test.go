package scripted_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// inRun returns a context for the model calls of one run of task: the
// task id in the call metadata and a run state of its own, as a pipeline
// run has.
func inRun(task string) context.Context {
	ctx := tools.WithRunState(context.Background(), tools.NewRunState())
	return llm.WithCallMeta(ctx, llm.CallMeta{Node: "act", Kind: "react", TaskID: task})
}

func taskModel(t *testing.T, replies map[string][]scripted.Reply) *scripted.TaskModel {
	t.Helper()
	m, err := scripted.NewTaskModel(replies)
	require.NoError(t, err)
	return m
}

func TestTaskRepliesPlayInOrderWhateverThePromptSays(t *testing.T) {
	t.Parallel()
	m := taskModel(t, map[string][]scripted.Reply{
		"a": {
			{Node: "elsewhere", Contains: "never in the prompt", Text: "first"},
			{Regex: `^nothing$`, Role: "finalize", Text: "second", Times: 2},
			{Text: "third"},
		},
		"b": {{Text: "other task"}},
	})
	ctx := inRun("a")
	for _, want := range []string{"first", "second", "second", "third"} {
		resp, err := ask(ctx, m, "a prompt no matcher accepts")
		require.NoError(t, err)
		assert.Equal(t, want, resp.Choices[0].Content)
	}
	resp, err := ask(inRun("b"), m, "x")
	require.NoError(t, err)
	assert.Equal(t, "other task", resp.Choices[0].Content, "each task has its own replies")
}

func TestEveryRunOfATaskStartsAtItsFirstReply(t *testing.T) {
	t.Parallel()
	m := taskModel(t, map[string][]scripted.Reply{"a": {{Text: "1"}, {Text: "2"}, {Text: "3"}}})
	const runs = 8
	got := make([][]string, runs)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for r := range runs {
		wg.Go(func() {
			ctx := inRun("a") // one run state per run, as each pipeline run gets
			<-start
			for range 3 {
				resp, err := ask(ctx, m, "p")
				if !assert.NoError(t, err) {
					return
				}
				got[r] = append(got[r], resp.Choices[0].Content)
			}
		})
	}
	close(start)
	wg.Wait()
	for r := range runs {
		assert.Equal(t, []string{"1", "2", "3"}, got[r], "run %d", r)
	}
}

func TestRunningOutOfRepliesNamesTheTaskAndItsReplies(t *testing.T) {
	t.Parallel()
	m := taskModel(t, map[string][]scripted.Reply{"hotpot-7": {{Text: "Thought 1: x\nAction 1: Search[y]"}, {Text: "done"}}})
	ctx := inRun("hotpot-7")
	for range 2 {
		_, err := ask(ctx, m, "p")
		require.NoError(t, err)
	}
	_, err := ask(ctx, m, "Question: where is y?\nObservation 2: y is here.")
	require.ErrorIs(t, err, scripted.ErrRepliesUsedUp)
	require.ErrorIs(t, err, middleware.ErrPermanent, "not retried: it would fail again")
	assert.Contains(t, err.Error(), `task "hotpot-7" had 2 replies, and this run has used them all: call 3 has none`)
	assert.Contains(t, err.Error(), "Observation 2: y is here.", "the call is shown")

	_, err = ask(inRun("hotpot-7"), m, "p")
	require.NoError(t, err, "another run starts over")
}

func TestATaskWithoutRepliesFails(t *testing.T) {
	t.Parallel()
	m := taskModel(t, map[string][]scripted.Reply{"a": {{Text: "x"}}, "empty": nil})
	for _, tc := range []struct {
		ctx  context.Context
		want string
	}{
		{inRun("b"), `task "b" has none`},
		{inRun("empty"), `task "empty" has none`},
		{llm.WithCallMeta(context.Background(), llm.CallMeta{Node: "act"}), "the call names no task"},
	} {
		_, err := ask(tc.ctx, m, "p")
		require.ErrorIs(t, err, scripted.ErrNoTaskReplies)
		require.ErrorIs(t, err, middleware.ErrPermanent)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestTaskRepliesKeepToolCallsErrorsAndStopWords(t *testing.T) {
	t.Parallel()
	m := taskModel(t, map[string][]scripted.Reply{"a": {
		{Error: "rate limited"},
		{ToolCalls: []scripted.ToolCall{{Name: "search", Arguments: map[string]any{"query": "Paris"}}}},
		{Text: "Thought 1: t\nAction 1: Search[x]\nObservation 1: invented"},
	}})
	ctx := inRun("a")
	_, err := ask(ctx, m, "p")
	require.ErrorIs(t, err, scripted.ErrScriptedFailure)
	resp, err := ask(ctx, m, "p")
	require.NoError(t, err)
	require.Len(t, resp.Choices[0].ToolCalls, 1)
	assert.JSONEq(t, `{"query":"Paris"}`, resp.Choices[0].ToolCalls[0].FunctionCall.Arguments)
	resp, err = ask(ctx, m, "p", llms.WithStopWords([]string{"\nObservation 1:"}))
	require.NoError(t, err)
	assert.Equal(t, "Thought 1: t\nAction 1: Search[x]", resp.Choices[0].Content, "cut at the stop word, as the API was")
}

func TestCallsOutsideARunShareOnePositionPerTask(t *testing.T) {
	t.Parallel()
	m := taskModel(t, map[string][]scripted.Reply{"a": {{Text: "1"}, {Text: "2"}}})
	ctx := llm.WithCallMeta(context.Background(), llm.CallMeta{TaskID: "a"})
	for _, want := range []string{"1", "2"} {
		resp, err := ask(ctx, m, "p")
		require.NoError(t, err)
		assert.Equal(t, want, resp.Choices[0].Content)
	}
	_, err := ask(ctx, m, "p")
	require.ErrorIs(t, err, scripted.ErrRepliesUsedUp)
}

func TestParseRepliesReadsObjectsAndStrings(t *testing.T) {
	t.Parallel()
	raw := []json.RawMessage{
		json.RawMessage(`"Thought 1: I should search.\nAction 1: Search[Paris]"`),
		json.RawMessage(`{"text": "Final Answer: x", "node": "ignored", "contains": "ignored too"}`),
		json.RawMessage(`{"tool_calls": [{"name": "search", "arguments": "{\"query\": \"x\"}"}]}`),
		json.RawMessage(`""`),
	}
	replies, err := scripted.ParseReplies(raw)
	require.NoError(t, err)
	require.Len(t, replies, 4)
	assert.Equal(t, "Thought 1: I should search.\nAction 1: Search[Paris]", replies[0].Text)
	assert.Equal(t, scripted.Reply{Text: "Final Answer: x", Node: "ignored", Contains: "ignored too"}, replies[1])
	assert.Equal(t, "search", replies[2].ToolCalls[0].Name)
	assert.Empty(t, replies[3].Text, "an empty string is an empty output")

	for _, tc := range []struct {
		raw  string
		want string
	}{
		{`{"txt": "typo"}`, `bad scripted reply 2 of 2: json: unknown field "txt"`},
		{`42`, "bad scripted reply 2 of 2: want a JSON object with the reply's fields (text, tool_calls, ...) or a string, the reply's text"},
		{`{"text": "x", "times": -1}`, "bad scripted reply 2 of 2: times must be positive"},
		{`{"tool_calls": [{"name": "s", "arguments": "{not json"}]}`, `bad scripted reply 2 of 2: tool call "s": arguments "{not json" are not valid JSON`},
	} {
		_, err := scripted.ParseReplies([]json.RawMessage{json.RawMessage(`"ok"`), json.RawMessage(tc.raw)})
		require.ErrorIs(t, err, scripted.ErrBadReply, tc.raw)
		assert.EqualError(t, err, tc.want)
	}
}

func TestNewTaskModelChecksTheReplies(t *testing.T) {
	t.Parallel()
	_, err := scripted.NewTaskModel(map[string][]scripted.Reply{"t1": {{Text: "ok"}, {Text: "x", Times: -2}}})
	require.ErrorIs(t, err, scripted.ErrBadReply)
	assert.EqualError(t, err, `bad scripted reply 2 of task "t1": times must be positive`)
}
