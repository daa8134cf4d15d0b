package trace_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testSecret is the value of PLANNER_TEST_API_KEY in these tests: it has
// no well-known key shape, so only the environment rule can catch it.
const testSecret = "planner-test-0123456789-abcdefghijklmnop"

const marker = "[REDACTED:PLANNER_TEST_API_KEY]"

type planStep struct {
	ID    int    `json:"id"`
	Input string `json:"input"`
}

// echoedEvents are what a run emits when the model (an echoing proxy)
// repeats the key back: in thoughts, tool inputs, observations, plans,
// errors and the answer.
func echoedEvents() []trace.Event {
	return []trace.Event{
		{Node: "act", Kind: trace.KindThought, Text: "the proxy says my key is " + testSecret},
		{Node: "act", Kind: trace.KindAction, Text: "search: " + testSecret, Data: map[string]any{"tool": "search", "input": testSecret}},
		{Node: "act", Kind: trace.KindObservation, Text: "found " + testSecret, Data: map[string]any{"tool": "search", "depth": 1}},
		{Node: "plan", Kind: trace.KindPlan, Text: "1. look up " + testSecret,
			Data: map[string]any{"steps": []planStep{{ID: 1, Input: testSecret}}, "attempts": 1}},
		{Node: "act", Kind: trace.KindError, Text: "provider: 401 invalid key " + testSecret},
		{Node: "act", Kind: trace.KindLLMCall, Usage: &trace.Usage{PromptTokens: 3}, Data: map[string]any{"reply": []any{"k=" + testSecret}}},
		{Kind: trace.KindAnswer, Text: testSecret, Data: map[string]any{"answer": testSecret, "complete": true}},
	}
}

func TestTracerWithScrubberScrubsEveryEventForEverySink(t *testing.T) {
	t.Setenv("PLANNER_TEST_API_KEY", testSecret)
	var jsonlBuf, termBuf bytes.Buffer
	jsonl := trace.NewJSONL(&jsonlBuf)
	rec := &trace.Recorder{}
	tr := trace.NewWithOptions("run-1", trace.WithScrubber(redact.New()),
		trace.WithSinks(jsonl, trace.NewTerminal(&termBuf, trace.WithVerbose(true), trace.WithMaxLen(40))))
	tr.AddSink(rec) // added later: scrubbed too

	events := echoedEvents()
	for _, e := range events {
		tr.Emit(e)
	}
	require.NoError(t, jsonl.Flush())

	// Any 12 characters of the key would identify it; the terminal clips
	// after scrubbing, so no prefix of the key survives either.
	prefix := testSecret[:12]
	for name, out := range map[string]string{"jsonl": jsonlBuf.String(), "terminal": termBuf.String()} {
		assert.NotContains(t, out, prefix, name)
		assert.Contains(t, out, marker, name)
	}
	assert.Contains(t, termBuf.String(), "Action: search["+marker+"]")
	assert.Contains(t, termBuf.String(), "Answer: "+marker)

	got := rec.Events()
	require.Len(t, got, len(events))
	for i, e := range got {
		js, err := json.Marshal(e)
		require.NoError(t, err)
		assert.NotContains(t, string(js), prefix, "recorded event %d", i)
		assert.Equal(t, int64(i+1), e.Seq)
	}
	assert.Equal(t, []planStep{{ID: 1, Input: marker}}, got[3].Data["steps"], "data keeps its types")
	assert.Equal(t, 1, got[3].Data["attempts"])

	assert.Equal(t, testSecret, events[1].Data["input"], "the emitter's data is not modified")
	assert.Equal(t, []planStep{{ID: 1, Input: testSecret}}, events[3].Data["steps"])
}

func TestTracerWithoutScrubberPassesEventsUnchanged(t *testing.T) {
	t.Setenv("PLANNER_TEST_API_KEY", testSecret)
	rec := &trace.Recorder{}
	tr := trace.New("run-1", rec)
	tr.Emit(trace.Event{Kind: trace.KindAnswer, Text: testSecret, Data: map[string]any{"answer": testSecret}})
	tr2 := trace.NewWithOptions("run-2", trace.WithSinks(rec), trace.WithScrubber(nil))
	tr2.Emit(trace.Event{Kind: trace.KindAnswer, Text: testSecret})
	for _, e := range rec.Events() {
		assert.Equal(t, testSecret, e.Text)
	}
}

func TestScrubOneEvent(t *testing.T) {
	s := redact.New(redact.WithEnviron([]string{"PLANNER_TEST_API_KEY=" + testSecret}))
	data := map[string]any{"input": "x " + testSecret, "n": 2}
	e := trace.Scrub(s, trace.Event{Node: testSecret, Kind: trace.KindAction, Text: testSecret, Data: data})
	assert.Equal(t, trace.Event{Node: marker, Kind: trace.KindAction, Text: marker, Data: map[string]any{"input": "x " + marker, "n": 2}}, e)
	assert.Equal(t, "x "+testSecret, data["input"])
	clean := trace.Event{Kind: trace.KindInfo, Text: "fine"}
	assert.Equal(t, clean, trace.Scrub(nil, clean))
}

func TestScrubbingTracerIsSafeForConcurrentEmitters(t *testing.T) {
	s := redact.New(redact.WithEnviron([]string{"PLANNER_TEST_API_KEY=" + testSecret}))
	var buf bytes.Buffer
	sink := trace.NewJSONL(&buf)
	tr := trace.NewWithOptions("run", trace.WithScrubber(s), trace.WithSinks(sink))
	shared := map[string]any{"input": testSecret, "list": []string{"a", testSecret}}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr.Emit(trace.Event{Kind: trace.KindAction, Text: testSecret, Data: shared})
		}()
	}
	wg.Wait()
	require.NoError(t, sink.Flush())
	assert.Equal(t, 50, strings.Count(buf.String(), "\n"))
	assert.NotContains(t, buf.String(), testSecret)
	assert.Equal(t, testSecret, shared["input"])
}
