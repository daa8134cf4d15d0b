package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// checkScript parses data as the script file path and checks parse's
// contract: an error wraps ErrBadScript and names the file; a model has
// every reply valid (positive times, something to say, tool-call arguments
// that are JSON) and counts its replies without overflow; and one call
// either is answered, fails as scripted, or is refused as unexpected, with
// the counts moving accordingly.
func checkScript(t *testing.T, path string, data []byte) {
	m, err := parse(path, data)
	if err != nil {
		require.ErrorIs(t, err, ErrBadScript)
		require.Contains(t, err.Error(), path)
		return
	}
	want := 0
	for _, r := range m.script.Replies {
		require.Positive(t, r.Times)
		require.True(t, r.Text != "" || len(r.ToolCalls) > 0 || r.Error != "")
		require.Equal(t, r.Regex != "", r.re != nil)
		for _, tc := range r.ToolCalls {
			require.True(t, json.Valid([]byte(tc.argsJSON)), "arguments %q", tc.argsJSON)
		}
		if want <= math.MaxInt-r.Times {
			want += r.Times
		} else {
			want = math.MaxInt
		}
	}
	require.Equal(t, want, m.Remaining())
	require.Zero(t, m.Calls())

	ctx := llm.WithCallMeta(context.Background(), llm.CallMeta{Node: "act", Kind: "react", Role: "finalize"})
	resp, err := m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "What is the capital of France? step 1")},
		llms.WithStopWords([]string{"Observation:"}))
	switch {
	case err == nil:
		require.NotEmpty(t, resp.Choices)
		for _, c := range resp.Choices {
			if !m.script.IgnoreStop {
				require.NotContains(t, c.Content, "Observation:")
			}
			for _, tc := range c.ToolCalls {
				require.NotEmpty(t, tc.ID)
				require.True(t, json.Valid([]byte(tc.FunctionCall.Arguments)))
			}
		}
		if m.Calls() == 0 { // the fallback answered
			require.NotEmpty(t, m.script.Fallback)
			require.False(t, m.strict())
		}
	case errors.Is(err, ErrScriptedFailure):
		require.Equal(t, 1, m.Calls())
	case errors.Is(err, ErrUnexpectedCall):
		require.Zero(t, m.Calls())
		require.Equal(t, want, m.Remaining())
	default:
		require.Fail(t, "unexpected error", "%T: %v", err, err)
	}
	if m.Calls() == 1 && want < math.MaxInt {
		require.Equal(t, want-1, m.Remaining())
	}
}

func FuzzParseYAML(f *testing.F) {
	scripts, err := filepath.Glob(filepath.Join("..", "..", "examples", "scripts", "*.yaml"))
	require.NoError(f, err)
	require.NotEmpty(f, scripts)
	for _, name := range scripts {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range []string{
		"replies: [{text: hi}]",
		"strict: false\nfallback: dunno\nreplies:\n  - {role: finalize, contains: France, text: \"Paris\\nObservation: x\", times: 2}\n  - {regex: 'step \\d', error: boom}\n",
		"replies:\n  - {text: a, times: 9223372036854775807}\n  - {text: b, times: 9223372036854775807}\n",
		"replies: [{tool_calls: [{name: f, arguments: '{\"a\":1}'}, {name: g, arguments: {b: [1, .nan]}}, {name: h, arguments: {1: {2: 3}}}]}]",
		"replies: [{text: x, times: -1}]", "replies: [{}]", "replies: [{regex: '('}]", "unknown: 1",
		"a: &a [*a]", "", "{\"strict\": true, \"replies\": [{\"text\": \"json works too\"}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkScript(t, "fuzz/script.yaml", data) })
}

func FuzzParseJSONL(f *testing.F) {
	for _, s := range []string{
		`{"text":"hi"}` + "\n// comment\n\n" + `{"node":"act","tool_calls":[{"name":"search","arguments":{"q":"x"}}],"split_choices":true}`,
		`{"error":"boom","times":2}`,
		`{"text":"a"} trailing`,
		`{"text":"a"}{"text":"b"}`,
		`{"text":"a","times":9223372036854775807}` + "\n" + `{"text":"b","times":9223372036854775807}`,
		`{"text":"a","bogus":1}`,
		`{"tool_calls":[{"name":"f","arguments":"not json"}]}`,
		`{"regex":"[","text":"a"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkScript(t, "fuzz/script.jsonl", data) })
}

func TestParseRejectsTrailingTextAndCountsHugeTimes(t *testing.T) {
	_, err := parse("s.jsonl", []byte(`{"text":"a"}`+"\n"+`{"text":"b"} {"text":"c"}`))
	require.ErrorIs(t, err, ErrBadScript)
	assert.Contains(t, err.Error(), "s.jsonl:2: text after the reply's JSON object")

	m, err := parse("s.yaml", []byte("replies:\n  - {text: a, times: 9223372036854775807}\n  - {text: b, times: 9223372036854775807}\n"))
	require.NoError(t, err)
	assert.Equal(t, math.MaxInt, m.Remaining(), "the count saturates instead of wrapping negative")
	assert.True(t, strings.HasPrefix(m.script.Replies[1].Text, "b"))
}
