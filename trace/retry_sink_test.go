package trace_test

import (
	"bytes"
	"testing"

	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
)

func TestTerminalAlwaysPrintsRetryWaits(t *testing.T) {
	var buf bytes.Buffer
	tr := trace.New("r", trace.NewTerminal(&buf))
	tr.Emit(trace.Event{Kind: trace.KindRetry, Text: "retrying in 30s after HTTP 429 (attempt 1 of 3)"})
	tr.Emit(trace.Event{Node: "act", Kind: trace.KindRetry, Text: "retrying in 1s after timeout (attempt 2 of 3)"})
	assert.Equal(t, "  ↻ retrying in 30s after HTTP 429 (attempt 1 of 3)\n"+
		"  [act] ↻ retrying in 1s after timeout (attempt 2 of 3)\n", buf.String(), "shown without verbose mode")

	buf.Reset()
	colored := trace.New("r", trace.NewTerminal(&buf, trace.WithColor(true), trace.WithVerbose(true)))
	colored.Emit(trace.Event{Kind: trace.KindRetry, Text: "retrying in 30s after HTTP 429 (attempt 1 of 3)"})
	assert.Contains(t, buf.String(), "↻ retrying in 30s after HTTP 429 (attempt 1 of 3)")
	assert.Contains(t, buf.String(), "\x1b[")
	assert.Equal(t, 1, bytes.Count(buf.Bytes(), []byte("\n")), "printed once, not again by the verbose fallback")
}
