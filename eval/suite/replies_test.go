package suite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/llm/scripted"
)

func TestLoadJSONLReadsEachTasksReplies(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "recorded.jsonl",
		`{"id": "fever-1", "question": "Claim: x", "answer": "SUPPORTS", "replies": ["Thought 1: I need to search x.\nAction 1: Search[x]", "Thought 2: x is so.\nAction 2: Finish[SUPPORTS]"]}`+"\n"+
			`{"id": "tools", "question": "q", "replies": [{"tool_calls": [{"name": "search", "arguments": {"query": "x"}}]}, {"text": "Final Answer: y", "node": "kept but ignored"}]}`+"\n"+
			`{"id": "none", "question": "q2", "replies": []}`+"\n")

	tasks, err := Load(context.Background(), path)

	require.NoError(t, err)
	require.Len(t, tasks, 3)
	assert.Equal(t, []scripted.Reply{
		{Text: "Thought 1: I need to search x.\nAction 1: Search[x]"},
		{Text: "Thought 2: x is so.\nAction 2: Finish[SUPPORTS]"},
	}, tasks[0].Replies, "strings are the model's raw outputs")
	assert.Equal(t, "SUPPORTS", tasks[0].Answer)
	require.Len(t, tasks[1].Replies, 2)
	assert.Equal(t, "search", tasks[1].Replies[0].ToolCalls[0].Name)
	assert.Equal(t, "Final Answer: y", tasks[1].Replies[1].Text)
	assert.Equal(t, "kept but ignored", tasks[1].Replies[1].Node)
	assert.Empty(t, tasks[2].Replies)
	assert.Equal(t, "q", AgentTasks(tasks)[1].Question, "agents see the task without its replies")
}

func TestLoadJSONLReportsABadReplyWithItsLine(t *testing.T) {
	t.Parallel()
	good := `{"id": "ok", "question": "q", "replies": ["fine"]}` + "\n"
	tests := []struct {
		name, record, want string
	}{
		{"unknown field", `{"question": "q", "replies": ["a", {"txt": "typo"}]}`,
			`record 1: bad suite record: replies: bad scripted reply 2 of 2: json: unknown field "txt"`},
		{"neither object nor string", `{"question": "q", "replies": [7]}`,
			"record 1: bad suite record: replies: bad scripted reply 1 of 1: want a JSON object with the reply's fields"},
		{"arguments that are not JSON", `{"question": "q", "replies": [{"tool_calls": [{"name": "s", "arguments": "{oops"}]}]}`,
			`record 1: bad suite record: replies: bad scripted reply 1 of 1: tool call "s": arguments "{oops" are not valid JSON`},
		{"negative times", `{"question": "q", "replies": [{"text": "x", "times": -1}]}`,
			"record 1: bad suite record: replies: bad scripted reply 1 of 1: times must be positive"},
		{"not an array", `{"question": "q", "replies": "Thought: x"}`,
			`record 1: bad suite record: replies: want a list of replies, which every config plays, or an object of such lists by config name ("*" for every config not named), not a string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, "bad.jsonl", good+"\n"+tt.record+"\n")

			_, err := Load(context.Background(), path)

			require.ErrorIs(t, err, ErrBadRecord)
			assert.Contains(t, err.Error(), filepath.Join(filepath.Dir(path), "bad.jsonl:3: ")+tt.want, "the file, the line and the reply")
		})
	}
}
