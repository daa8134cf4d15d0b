package trace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tok(node string, call int64, text string) Event {
	return Event{Node: node, Kind: KindToken, Text: text, Data: map[string]any{"call": call}}
}

func TestTerminalPrintsOneStreamedReplyAtATime(t *testing.T) {
	var b bytes.Buffer
	term := NewTerminal(&b, WithTokens(true))
	for _, e := range []Event{
		tok("a", 1, "Thought: first"),
		tok("b", 2, "Thought: other call, printed once parsed"),
		tok("a", 1, " reply\nAction: x\n"),
		{Node: "a", Kind: KindLLMCall},
		{Node: "a", Kind: KindThought, Text: "first reply"},
		{Node: "a", Kind: KindAction, Data: map[string]any{"tool": "x", "input": ""}},
		{Node: "b", Kind: KindThought, Text: "other call, printed once parsed"},
		tok("a", 3, "Thought: second"),
		{Node: "a", Kind: KindError, Text: "boom"},
		{Node: "a", Kind: KindThought, Text: "not streamed"},
	} {
		term.Emit(e)
	}
	assert.Equal(t, "[a] ▸ Thought: first reply\n    Action: x\n"+
		"[a] Action: x[]\n"+
		"[b] Thought: other call, printed once parsed\n"+
		"[a] ▸ Thought: second\n"+
		"[a] Error: boom\n"+
		"[a] Thought: not streamed\n", b.String())
}

func TestTerminalCapsAStreamedReplyAndIgnoresTokensWhenOff(t *testing.T) {
	var b bytes.Buffer
	term := NewTerminal(&b, WithTokens(true), WithMaxLen(10))
	term.Emit(tok("", 1, "0123456"))
	term.Emit(tok("", 1, "789abcdef"))
	term.Emit(tok("", 1, "more"))
	assert.Equal(t, "▸ 0123456789…", b.String())

	var off bytes.Buffer
	NewTerminal(&off).Emit(tok("a", 1, "hidden"))
	assert.Empty(t, off.String())
}

func TestDropKindsFiltersOnlyTheGivenKinds(t *testing.T) {
	rec := &Recorder{}
	tr := New("r", DropKinds(rec, KindToken, KindRoute))
	for _, k := range []Kind{KindToken, KindThought, KindRoute, KindAnswer, KindToken} {
		tr.Emit(Event{Kind: k})
	}
	var got []string
	for _, e := range rec.Events() {
		got = append(got, string(e.Kind))
	}
	require.Equal(t, "thought answer", strings.Join(got, " "))
}
