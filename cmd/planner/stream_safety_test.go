package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunStreamShowsNoSecretAndNoControlCharacters: a model that echoes
// the API key and writes escape sequences (window title, clear screen,
// hidden text), a NUL and a bidi override: run --stream shows the key
// scrubbed although the scripted model streams it in 8-character chunks,
// and the control characters escaped, live and in the answer; the
// --trace-tokens file holds no piece of the key either.
func TestRunStreamShowsNoSecretAndNoControlCharacters(t *testing.T) {
	const secret = "planner-stream-0123456789-abcdefghijk"
	t.Setenv("PLANNER_TEST_API_KEY", secret) // the scrubber reads the process environment
	dir := t.TempDir()
	script := filepath.Join(dir, "echo.yaml")
	require.NoError(t, os.WriteFile(script, []byte(`strict: true
replies:
  - node: cot
    text: "The key is `+secret+`. \e]0;owned\a\e[2J\e[8mhidden\e[0m \0 \u202Eevil\nAnswer: 42 \e]0;title\a `+secret+`"
`), 0o600))
	traceFile := filepath.Join(dir, "trace.jsonl")
	res := cli(t, "run", "--config", configPath("cot.yaml"), "--llm", "scripted:"+script, "--stream", "--trace", traceFile, "--trace-tokens", "what is the key?")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "[reason] ▸ The key is [REDACTED:PLANNER_TEST_API_KEY].", "the reply streams live, scrubbed")
	assert.Contains(t, res.stdout, `\x1b]0;owned\x07\x1b[2J\x1b[8mhidden`, "escape sequences are shown, escaped")
	assert.Contains(t, res.stdout, "\nAnswer: 42 \\x1b]0;title\\x07 [REDACTED:PLANNER_TEST_API_KEY]\n")
	for _, c := range []string{"\x1b", "\x07", "\x00", "\u202e"} {
		assert.NotContains(t, res.stdout, c)
		assert.NotContains(t, res.stderr, c)
	}
	for _, piece := range []string{secret[:8], secret[8:16], secret[16:24], secret[24:]} {
		assert.NotContains(t, res.stdout, piece)
	}
	kinds, tokens := traceKinds(t, traceFile)
	assert.Positive(t, kinds["token"])
	assert.Contains(t, tokens, "The key is [REDACTED:PLANNER_TEST_API_KEY]. ")
	raw, err := os.ReadFile(traceFile)
	require.NoError(t, err)
	for _, piece := range []string{secret[:8], secret[8:16], secret[16:24], secret[24:]} {
		assert.NotContains(t, string(raw), piece, "no piece of the key in the trace file")
	}
}
