package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceKinds reads a --trace file and returns its events' kinds and the
// texts of its token events.
func traceKinds(t *testing.T, path string) (kinds map[string]int, tokens string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	kinds = map[string]int{}
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		kinds[e.Kind]++
		if e.Kind == "token" {
			b.WriteString(e.Text)
		}
	}
	require.NoError(t, sc.Err())
	return kinds, b.String()
}

func TestRunStreamsRepliesLiveAndWritesTokensOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	script := filepath.Join(repoRoot, "examples", "scripts", "cot_demo.yaml")
	question := "A farmer has 3 fields of 17 rows with 23 plants each. How many plants?"
	dir := t.TempDir()

	plainTrace := filepath.Join(dir, "plain.jsonl")
	plain := cli(t, "run", "--config", configPath("cot.yaml"), "--llm", "scripted:"+script, "--trace", plainTrace, question)
	require.Equal(t, 0, plain.code, plain.stderr)
	assert.NotContains(t, plain.stdout, "▸", "not a terminal: no live reply by default")

	liveTrace := filepath.Join(dir, "live.jsonl")
	live := cli(t, "run", "--config", configPath("cot.yaml"), "--llm", "scripted:"+script, "--stream", "--trace", liveTrace, "--trace-tokens", question)
	require.Equal(t, 0, live.code, live.stderr)
	assert.Contains(t, live.stdout, "[reason] ▸ Each field has 17 rows", "the reply is printed as it streams")
	assert.Contains(t, live.stdout, "\nAnswer: 1173\n")
	assert.Contains(t, plain.stdout, "\nAnswer: 1173\n", "the same answer either way")

	kinds, tokens := traceKinds(t, liveTrace)
	assert.Positive(t, kinds["token"], "--trace-tokens writes token events")
	assert.Contains(t, tokens, "1173", "the token events spell the reply")
	kinds, _ = traceKinds(t, plainTrace)
	assert.Zero(t, kinds["token"])

	noTokens := filepath.Join(dir, "notokens.jsonl")
	res := cli(t, "run", "--config", configPath("cot.yaml"), "--llm", "scripted:"+script, "--stream", "--trace", noTokens, question)
	require.Equal(t, 0, res.code, res.stderr)
	kinds, _ = traceKinds(t, noTokens)
	assert.Zero(t, kinds["token"], "a live terminal does not put tokens in the trace file")
	assert.Positive(t, kinds["answer"])

	res = cli(t, "run", "--config", configPath("cot.yaml"), "--llm", "scripted:"+script, "--trace-tokens", question)
	assert.Equal(t, 2, res.code, "--trace-tokens without --trace is a usage error")
	assert.Contains(t, res.stderr, "--trace-tokens needs --trace FILE")
}
