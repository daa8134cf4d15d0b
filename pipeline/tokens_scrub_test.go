package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// splitSecret is the value of PLANNER_TEST_API_KEY in these tests: no key
// shape, so only the environment rule catches it.
const splitSecret = "planner-split-0123456789-abcdefghij"

// scrubbedTokens runs one call of m with token events through a tracer
// that scrubs splitSecret and writes a JSONL trace file, and returns the
// file and the token events.
func scrubbedTokens(t *testing.T, m llm.Model) (file string, toks []trace.Event, text string) {
	t.Helper()
	var buf bytes.Buffer
	jsonl := trace.NewJSONL(&buf)
	rec := &trace.Recorder{}
	tracer := trace.NewWithOptions("run", trace.WithSinks(jsonl, rec),
		trace.WithScrubber(redact.New(redact.WithEnviron([]string{"PLANNER_TEST_API_KEY=" + splitSecret}))))
	p := &Pipeline{Config: &config.Pipeline{Name: "p"}}
	st := state.NewState(state.Task{ID: "t1", Question: "q"})
	st.SetHooks(p.runHooks(st, tracer, runConfig{tokens: true}))
	text, _, err := m.Call(context.Background(), st, llm.CallMeta{Node: "act"}, llm.Prompt("", "q"))
	require.NoError(t, err)
	require.NoError(t, jsonl.Flush())
	return buf.String(), rec.OfKind(trace.KindToken), text
}

func TestTokenEventsScrubASecretSplitAcrossChunks(t *testing.T) {
	half := len(splitSecret) / 2
	chunks := []string{"The key is ", splitSecret[:half], splitSecret[half:], ", and that is all."}
	file, toks, text := scrubbedTokens(t, llm.Model{LLM: &llmtest.Stream{Chunks: chunks}})
	assert.Equal(t, strings.Join(chunks, ""), text, "the reply itself is the model's")
	assert.NotContains(t, file, splitSecret[:half], "no half of the secret reaches the trace file")
	assert.NotContains(t, file, splitSecret[half:])
	var spelled strings.Builder
	for _, e := range toks {
		spelled.WriteString(e.Text)
		assert.Equal(t, 1, e.Data["attempt"])
	}
	assert.Equal(t, "The key is [REDACTED:PLANNER_TEST_API_KEY], and that is all.", spelled.String(),
		"the token events spell the scrubbed reply, held-back text included")
	for _, line := range strings.Split(strings.TrimSpace(file), "\n") {
		var e trace.Event
		require.NoError(t, json.Unmarshal([]byte(line), &e))
	}
}

func TestTokenEventsOfAFailedAttemptEndBeforeTheRetryStreams(t *testing.T) {
	half := len(splitSecret) / 2
	m := retryingModel(llmtest.Seq(
		&llmtest.Stream{Chunks: []string{"Thought: ", splitSecret[:half], splitSecret[half:]}, Err: errors.New("error reading streaming response: unexpected EOF")},
		&llmtest.Stream{Chunks: []string{"Thought: ", splitSecret[:half], splitSecret[half:], " done"}},
	))
	file, toks, _ := scrubbedTokens(t, m)
	assert.NotContains(t, file, splitSecret[:half])
	byAttempt := map[any]string{}
	last := 0
	for _, e := range toks {
		a := e.Data["attempt"].(int)
		require.GreaterOrEqual(t, a, last, "attempts do not interleave")
		last = a
		byAttempt[a] += e.Text
	}
	assert.Equal(t, "Thought: [REDACTED:PLANNER_TEST_API_KEY]", byAttempt[1],
		"the failed attempt's held-back end is emitted, scrubbed, as its own")
	assert.Equal(t, "Thought: [REDACTED:PLANNER_TEST_API_KEY] done", byAttempt[2])
}
