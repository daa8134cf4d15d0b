package suite

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/state"
)

func TestLoadJSONLReadsRepliesByConfig(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "recorded.jsonl",
		`{"id": "list", "question": "q1", "replies": ["every config's"]}`+"\n"+
			`{"id": "object", "question": "q2", "replies": {"cot": ["Final Answer: 4"], "react": ["Thought: x\nAction: calculator\nAction Input: 2+2", {"text": "Final Answer: 5"}]}}`+"\n"+
			`{"id": "star", "question": "q3", "replies": {"*": ["anyone's"], "cot": ["cot's"]}}`+"\n"+
			`{"id": "star only", "question": "q4", "replies": {"*": ["anyone's"]}}`+"\n"+
			`{"id": "null", "question": "q5", "replies": null}`+"\n")

	tasks, err := Load(context.Background(), path)

	require.NoError(t, err)
	require.Len(t, tasks, 5)
	assert.Equal(t, []scripted.Reply{{Text: "every config's"}}, tasks[0].Replies, "the list form is as it was")
	assert.Nil(t, tasks[0].ConfigReplies)

	assert.Nil(t, tasks[1].Replies, "no replies for configs the object does not name")
	assert.Equal(t, map[string][]scripted.Reply{
		"cot":   {{Text: "Final Answer: 4"}},
		"react": {{Text: "Thought: x\nAction: calculator\nAction Input: 2+2"}, {Text: "Final Answer: 5"}},
	}, tasks[1].ConfigReplies)

	assert.Equal(t, []scripted.Reply{{Text: "anyone's"}}, tasks[2].Replies, `"*" holds every other config's replies`)
	assert.Equal(t, map[string][]scripted.Reply{"cot": {{Text: "cot's"}}}, tasks[2].ConfigReplies)
	assert.Equal(t, []scripted.Reply{{Text: "anyone's"}}, tasks[3].Replies)
	assert.Nil(t, tasks[3].ConfigReplies)
	assert.False(t, tasks[4].HasReplies())

	for _, tc := range []struct {
		task        int
		config, got string
	}{
		{0, "cot", "every config's"}, {1, "cot", "Final Answer: 4"}, {1, "react", "Thought: x\nAction: calculator\nAction Input: 2+2"},
		{2, "cot", "cot's"}, {2, "react", "anyone's"}, {3, "tot", "anyone's"},
	} {
		rs, _ := tasks[tc.task].TaskReplies().For(tc.config)
		require.NotEmpty(t, rs, "task %d, config %s", tc.task, tc.config)
		assert.Equal(t, tc.got, rs[0].Text, "task %d, config %s", tc.task, tc.config)
	}
	rs, _ := tasks[1].TaskReplies().For("tot")
	assert.Empty(t, rs, "a config the object does not name, without \"*\", has none")
	assert.True(t, tasks[1].HasReplies())
}

func TestLoadJSONLReportsBadRepliesByConfigWithTheTaskConfigAndReply(t *testing.T) {
	t.Parallel()
	good := `{"id": "ok", "question": "q", "replies": {"cot": ["fine"]}}` + "\n"
	tests := []struct {
		name, record, want string
	}{
		{"a bad reply names the task, the config and the reply", `{"id": "t7", "question": "q", "replies": {"cot": ["a"], "react": ["a", "b", {"txt": "typo"}]}}`,
			`record 1 (task "t7"): bad suite record: replies for config "react": bad scripted reply 3 of 3: json: unknown field "txt"`},
		{"a bad reply of every config", `{"id": "t7", "question": "q", "replies": {"*": [{"text": "x", "times": -1}]}}`,
			`record 1 (task "t7"): bad suite record: replies for "*" (every config not named): bad scripted reply 1 of 1: times must be positive`},
		{"a config's replies that are a string", `{"question": "q", "replies": {"cot": "Final Answer: 4"}}`,
			`record 1: bad suite record: replies for config "cot": want a list of that config's replies, not a string`},
		{"a config's replies that are an object", `{"question": "q", "replies": {"cot": {"text": "x"}}}`,
			`record 1: bad suite record: replies for config "cot": want a list of that config's replies, not an object`},
		{"a config's replies that are null", `{"question": "q", "replies": {"cot": null}}`,
			`record 1: bad suite record: replies for config "cot": want a list of that config's replies, not null`},
		{"a config with no replies", `{"question": "q", "replies": {"cot": []}}`,
			`record 1: bad suite record: replies for config "cot": the list is empty; give the replies recorded for it, or remove the key`},
		{"an empty key", `{"question": "q", "replies": {"cot": ["x"], "": ["y"]}}`,
			`record 1: bad suite record: replies: key 2 of the object is empty; give a config's pipeline name`},
		{"a key given twice", `{"question": "q", "replies": {"cot": ["x"], "cot": ["y"]}}`,
			`record 1: bad suite record: replies: config "cot" is given twice`},
		{"an empty object", `{"question": "q", "replies": {}}`,
			`record 1: bad suite record: replies: the object names no config`},
		{"a number", `{"question": "q", "replies": 3}`,
			`record 1: bad suite record: replies: want a list of replies, which every config plays, or an object of such lists by config name ("*" for every config not named), not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, "bad.jsonl", good+"\n"+tt.record+"\n")

			_, err := Load(context.Background(), path)

			require.ErrorIs(t, err, ErrBadRecord)
			assert.Contains(t, err.Error(), filepath.Join(filepath.Dir(path), "bad.jsonl:3: ")+tt.want, "the file, the line, the config and the reply")
		})
	}
}

func TestTaskJSONRoundTripsRepliesByConfig(t *testing.T) {
	t.Parallel()
	tasks := []Task{
		{Task: taskOf("list", "q1"), Replies: []scripted.Reply{{Text: "a"}}},
		{Task: taskOf("object", "q2"), Replies: []scripted.Reply{{Text: "anyone's"}},
			ConfigReplies: map[string][]scripted.Reply{"cot": {{Text: "c"}}, "react": {{Text: "r1"}, {Text: "r2", Times: 2}}}},
		{Task: taskOf("none", "q3")},
	}
	var lines []string
	for _, task := range tasks {
		b, err := json.Marshal(task)
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	assert.Contains(t, lines[0], `"replies":[{"text":"a"}]`, "only every config's replies: the list form")
	assert.Contains(t, lines[1], `"replies":{"*":[{"text":"anyone's"}],"cot":[{"text":"c"}],"react":[{"text":"r1"},{"text":"r2","times":2}]}`)
	assert.NotContains(t, lines[2], "replies")

	got, err := Load(context.Background(), writeFile(t, "written.jsonl", strings.Join(lines, "\n")+"\n"))
	require.NoError(t, err)
	assert.Equal(t, tasks, got)
}

func taskOf(id, question string) state.Task { return state.Task{ID: id, Question: question} }
