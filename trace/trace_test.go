package trace_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTracerStampsSequenceAndRunIDUnderConcurrency(t *testing.T) {
	var buf bytes.Buffer
	sink := trace.NewJSONL(&buf)
	rec := &trace.Recorder{}
	tr := trace.New("run-1", sink, rec)
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr.Emit(trace.Event{Kind: trace.KindThought, Text: "x"})
		}()
	}
	wg.Wait()
	require.NoError(t, sink.Flush())
	sc := bufio.NewScanner(&buf)
	want := int64(1)
	for sc.Scan() {
		var e trace.Event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		assert.Equal(t, "run-1", e.RunID)
		assert.Equal(t, want, e.Seq, "JSONL lines must be in sequence order")
		assert.False(t, e.Time.IsZero())
		want++
	}
	assert.Equal(t, int64(101), want)
	assert.Len(t, rec.OfKind(trace.KindThought), 100)
}

func TestNilTracerDiscards(t *testing.T) {
	var tr *trace.Tracer
	tr.Emit(trace.Event{Kind: trace.KindInfo})
	assert.Empty(t, tr.RunID())
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestJSONLReportsWriteErrors(t *testing.T) {
	s := trace.NewJSONL(failingWriter{})
	s.Emit(trace.Event{Kind: trace.KindInfo, Text: strings.Repeat("x", 5000)})
	err := s.Flush()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disk full")
}

func TestTerminalShowsTheReActStreamAndHidesNoiseUnlessVerbose(t *testing.T) {
	var buf bytes.Buffer
	term := trace.NewTerminal(&buf, trace.WithMaxLen(20))
	tr := trace.New("r", term)
	tr.Emit(trace.Event{Node: "act", Kind: trace.KindThought, Text: "look it up"})
	tr.Emit(trace.Event{Node: "act", Kind: trace.KindAction, Data: map[string]any{"tool": "search", "input": "Eiffel"}})
	tr.Emit(trace.Event{Node: "act", Kind: trace.KindObservation, Text: strings.Repeat("o", 30)})
	tr.Emit(trace.Event{Node: "act", Kind: trace.KindNodeStart})
	tr.Emit(trace.Event{Node: "act", Kind: trace.KindLLMCall, Usage: &trace.Usage{PromptTokens: 5}})
	out := buf.String()
	assert.Contains(t, out, "[act] Thought: look it up\n")
	assert.Contains(t, out, "Action: search[Eiffel]")
	assert.Contains(t, out, "… [10 more chars]")
	assert.NotContains(t, out, "-> act")
	assert.NotContains(t, out, "\x1b[", "no colour unless asked")

	buf.Reset()
	verbose := trace.New("r", trace.NewTerminal(&buf, trace.WithVerbose(true), trace.WithColor(true)))
	verbose.Emit(trace.Event{Node: "act", Kind: trace.KindNodeStart})
	verbose.Emit(trace.Event{Node: "act", Kind: trace.KindLLMCall, Usage: &trace.Usage{PromptTokens: 5, Estimated: true}})
	assert.Contains(t, buf.String(), "-> act")
	assert.Contains(t, buf.String(), "5 prompt + 0 completion tokens (estimated)")
	assert.Contains(t, buf.String(), "\x1b[")
}
