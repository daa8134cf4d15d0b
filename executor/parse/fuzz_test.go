package parse

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzParse checks the invariants every Result must satisfy, whatever the
// model wrote, in every format.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.text)
	}
	f.Add("Action: a\nAction Input: \"\nObservation: x\"")
	f.Add("Action: Search[[[[[[[[[[")
	f.Add("Action: Search[]]]]]]]]], Lookup[")
	f.Add("Final Answer: " + fence + "\nObservation: x\n" + fence)
	f.Add("**Action**：**Finish**\n**Action Input**：`\"Observation：\"`")
	f.Fuzz(func(t *testing.T, text string) {
		for _, format := range []Format{FormatAuto, FormatReAct, FormatPaper} {
			got := Parse(text, WithFormat(format))
			checkInvariants(t, text, format, got)
		}
	})
}

func checkInvariants(t *testing.T, text string, format Format, got Result) {
	t.Helper()
	switch got.Kind {
	case KindAction:
		require.NotEmpty(t, got.Tool, "an action names a tool")
		assert.NotContains(t, got.Tool, "\n", "a tool name is one line")
		assert.Empty(t, got.Answer)
		assert.Empty(t, got.Error)
	case KindFinal:
		require.NotEmpty(t, got.Answer, "a final answer is not empty")
		assert.Empty(t, got.Tool)
		assert.Empty(t, got.Input)
		assert.Empty(t, got.Error)
	case KindInvalid:
		require.True(t, strings.HasPrefix(got.Error, "Invalid format: "), "error %q", got.Error)
		assert.Empty(t, got.Tool)
		assert.Empty(t, got.Input)
		assert.Empty(t, got.Answer)
	default:
		require.Failf(t, "unknown kind", "%q", got.Kind)
	}

	for name, field := range map[string]string{
		"thought": got.Thought, "tool": got.Tool, "input": got.Input, "answer": got.Answer,
	} {
		_, cut := CutObservation(field)
		assert.False(t, cut, "%s %q holds an Observation label", name, field)
		if utf8.ValidString(text) {
			assert.True(t, utf8.ValidString(field), "%s %q is not valid UTF-8", name, field)
		}
	}

	if _, cut := CutObservation(text); cut {
		assert.True(t, got.Truncated, "an invented observation was cut")
	}

	again := Parse(text, WithFormat(format))
	assert.Equal(t, got, again, "deterministic")

	if !strings.Contains(text, "\r") {
		if kept, cut := CutObservation(text); cut {
			pre := Parse(kept, WithFormat(format))
			assert.Equal(t, got.Kind, pre.Kind, "cutting first changes nothing")
			assert.Equal(t, got.Thought, pre.Thought)
			assert.Equal(t, got.Tool, pre.Tool)
			assert.Equal(t, got.Input, pre.Input)
			assert.Equal(t, got.Answer, pre.Answer)
		}
	}
}
