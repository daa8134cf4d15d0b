package trace_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSONLKeepsActionsAndObservationsWholeWhileTheTerminalClips: the
// JSONL sink writes an action's input and an observation's text as
// emitted, however long, through a scrubbing tracer; the terminal clips
// them for display only.
func TestJSONLKeepsActionsAndObservationsWholeWhileTheTerminalClips(t *testing.T) {
	t.Parallel()
	input := "Love the Way You Lie " + strings.Repeat("(part two) ", 100)
	obs := strings.Repeat("Observation text that goes on and on. ", 500) + "\nThe end."
	var file, term bytes.Buffer
	jsonl := trace.NewJSONL(&file)
	tr := trace.NewWithOptions("run", trace.WithScrubber(redact.New()), trace.WithSinks(jsonl, trace.NewTerminal(&term)))

	tr.Emit(trace.Event{Node: "act", Kind: trace.KindAction, Text: "search: " + input, Data: map[string]any{"tool": "search", "input": input, "step": 1}})
	tr.Emit(trace.Event{Node: "act", Kind: trace.KindObservation, Text: obs, Data: map[string]any{"tool": "search", "step": 1}})
	require.NoError(t, jsonl.Flush())

	lines := strings.Split(strings.TrimSpace(file.String()), "\n")
	require.Len(t, lines, 2)
	var action, observation trace.Event
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &action))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &observation))
	assert.Equal(t, "search", action.Data["tool"])
	assert.Equal(t, input, action.Data["input"])
	assert.Equal(t, obs, observation.Text)
	assert.Contains(t, term.String(), "more chars]", "the terminal clips")
	assert.Less(t, term.Len(), len(obs))
}
