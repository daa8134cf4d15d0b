package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hideSecret is a scrubber that hides "secret".
type hideSecret struct{}

func (hideSecret) String(s string) string { return strings.ReplaceAll(s, "secret", "[REDACTED]") }

func newTestRun(keep int) *run {
	return &run{max: keep, notify: make(chan struct{}), scrub: hideSecret{}}
}

func seqs(evs []runEvent) []int64 {
	var out []int64
	for _, e := range evs {
		out = append(out, e.seq)
	}
	return out
}

// Emit encodes each event once as its SSE frame: id, kind (on one line)
// and the scrubbed JSON, as the stream writes it.
func TestEmitKeepsTheEventsFrame(t *testing.T) {
	rn := newTestRun(10)
	e := trace.Event{RunID: "r1", Seq: 1, Kind: "odd\nkind", Text: "my secret", Data: map[string]any{"tool": "calculator"}}
	rn.Emit(e)
	b, err := json.Marshal(e)
	require.NoError(t, err)
	require.Len(t, rn.events, 1)
	assert.Equal(t, "id: 1\nevent: odd kind\ndata: "+strings.ReplaceAll(string(b), "secret", "[REDACTED]")+"\n\n", rn.events[0].frame)
	assert.NotContains(t, rn.events[0].frame, "my secret")
	rn.Emit(trace.Event{Seq: 2, Kind: trace.KindError, Data: map[string]any{"bad": func() {}}})
	assert.Empty(t, rn.events[1].frame, "an event JSON cannot encode has no frame")
	assert.Equal(t, int64(2), rn.view().LastSeq)
}

// The stream finds where to resume by seq; an event the server adds
// without a seq takes the next one, so the search stays right.
func TestEventsAfter(t *testing.T) {
	rn := newTestRun(10)
	for i := int64(1); i <= 5; i++ {
		rn.Emit(trace.Event{Seq: i, Kind: trace.KindNodeStart})
	}
	rn.Emit(trace.Event{Kind: trace.KindError, Text: "closing the audit log"})
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6}, seqs(rn.events))
	assert.True(t, strings.HasPrefix(rn.events[5].frame, "id: 6\n"), rn.events[5].frame)
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6}, seqs(rn.eventsAfterLocked(0)))
	assert.Equal(t, []int64{5, 6}, seqs(rn.eventsAfterLocked(4)))
	assert.Nil(t, rn.eventsAfterLocked(6))
	assert.Nil(t, rn.eventsAfterLocked(99))

	// Past max, the oldest tenth is dropped; the search starts from the
	// first kept event.
	for i := int64(7); i <= 12; i++ {
		rn.Emit(trace.Event{Seq: i, Kind: trace.KindNodeEnd})
	}
	require.Equal(t, int64(2), rn.dropped)
	assert.Equal(t, []int64{3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, seqs(rn.eventsAfterLocked(0)))
	assert.Equal(t, []int64{12}, seqs(rn.eventsAfterLocked(11)))
	batch := rn.eventsAfterLocked(10)
	rn.Emit(trace.Event{Seq: 13, Kind: trace.KindNodeEnd})
	assert.Equal(t, []int64{11, 12}, seqs(batch), "a batch is a copy that later events do not shift")
}
