package trace_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrintableEscapesWhatATerminalWouldAct(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, ünïcödé ✓\n\tindented", "plain text, ünïcödé ✓\n\tindented"},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`},
		{"\x1b[2J\x1b[Hcleared", `\x1b[2J\x1b[Hcleared`},
		{"\x1b[8mhidden\x1b[0m", `\x1b[8mhidden\x1b[0m`},
		{"nul\x00byte\x7fdel\bback", `nul\x00byte\x7fdel\x08back`},
		{"line\r\nnext\roverwrite", "line\nnext\\roverwrite"},
		{"c1 \u009b31m csi \u0085 nel", `c1 \u009b31m csi \u0085 nel`},
		{"bidi \u202eevil\u202c \u2066iso\u2069 \u200f\u061c", `bidi \u202eevil\u202c \u2066iso\u2069 \u200f\u061c`},
		{"bad \xff\xc3 utf8", `bad \xff\xc3 utf8`},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, trace.Printable(tt.in), "%q", tt.in)
	}
	clean := "nothing to do here\n"
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = trace.Printable(clean) }))
}

// hostile is model and tool output that tries to act on the terminal:
// set its title, clear it, hide text, reorder it, write a NUL and a C1
// CSI.
const hostile = "ok\x1b]0;owned\x07\x1b[2J\x1b[8mhidden\x1b[0m\x00\u009b1m \u202egnp.exe"

// assertInert checks that out holds no control character but line feeds
// (and the ANSI colours of the sink itself, when asked).
func assertInert(t *testing.T, out string) {
	t.Helper()
	for _, c := range []string{"\x1b", "\x07", "\x00", "\u009b", "\u202e"} {
		assert.NotContains(t, out, c)
	}
	assert.Contains(t, out, `\x1b]0;owned\x07`, "shown, escaped")
	assert.Contains(t, out, `\u202egnp.exe`)
}

func TestTerminalPrintsNoControlCharactersFromEvents(t *testing.T) {
	var b bytes.Buffer
	term := trace.NewTerminal(&b, trace.WithVerbose(true), trace.WithMaxLen(0))
	for _, e := range []trace.Event{
		{Kind: trace.KindRunStart, Text: "run " + hostile},
		{Node: "act" + hostile, Kind: trace.KindNodeStart},
		{Node: "act", Kind: trace.KindThought, Text: hostile},
		{Node: "act", Kind: trace.KindAction, Data: map[string]any{"tool": "t" + hostile, "input": hostile}},
		{Node: "act", Kind: trace.KindObservation, Text: hostile},
		{Node: "act", Kind: trace.KindRoute, Data: map[string]any{"route": hostile, "to": "x"}},
		{Node: "act", Kind: trace.KindError, Text: hostile},
		{Kind: trace.KindAnswer, Text: hostile},
		{Kind: "custom" + hostile, Text: hostile, Data: map[string]any{"k" + hostile: 1}},
	} {
		term.Emit(e)
	}
	assertInert(t, b.String())
	assert.Contains(t, b.String(), "Answer: ok\\x1b]0;owned")
}

func TestTerminalPrintsNoControlCharactersFromStreamedTokens(t *testing.T) {
	var b bytes.Buffer
	tr := trace.New("r", trace.NewTerminal(&b, trace.WithTokens(true), trace.WithMaxLen(0)))
	for _, chunk := range []string{"Thought: ", hostile[:5], hostile[5:20], hostile[20:], "\r\n", "done\n"} {
		tr.Emit(trace.Event{Node: "act", Kind: trace.KindToken, Text: chunk, Data: map[string]any{"call": 1}})
	}
	tr.Emit(trace.Event{Node: "act", Kind: trace.KindLLMCall})
	assertInert(t, b.String())
	assert.Contains(t, b.String(), "▸ Thought: ok")
	assert.Contains(t, b.String(), "gnp.exe\n    done\n", "CRLF is a line feed")
}

func TestJSONLKeepsControlCharactersExactAndEscaped(t *testing.T) {
	var b bytes.Buffer
	sink := trace.NewJSONL(&b)
	trace.New("r", sink).Emit(trace.Event{Kind: trace.KindAnswer, Text: hostile})
	require.NoError(t, sink.Flush())
	assert.NotContains(t, b.String(), "\x1b")
	assert.NotContains(t, b.String(), "\x00")
	var e trace.Event
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(b.String())), &e))
	assert.Equal(t, hostile, e.Text, "the file keeps the text exactly")
}
