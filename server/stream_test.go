package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/planner-engine/planner/server"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// next reads events until one that is not a comment, or fails.
func next(t *testing.T, ch <-chan sseEvent) (sseEvent, bool) {
	t.Helper()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return ev, false
			}
			if ev.event == "comment" {
				continue
			}
			return ev, true
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10s")
		}
	}
}

// A client that loses its connection in the middle of a run reconnects
// with Last-Event-ID and gets every event exactly once, in order.
func TestStreamReconnectLosesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gate.Hold()
	acc := e.start(server.RunRequest{Config: "react", Question: "Add them, steps:6", LLM: e.gated, Thread: "sum"})
	for range 2 {
		e.gate.Release(1)
	}
	var got []int64
	var kinds []string
	seen := func(ev sseEvent) {
		n, err := strconv.ParseInt(ev.id, 10, 64)
		require.NoError(t, err, "event %+v has a numeric id", ev)
		var te trace.Event
		require.NoError(t, json.Unmarshal([]byte(ev.data), &te))
		assert.Equal(t, n, te.Seq, "id is the event's seq")
		assert.Equal(t, string(te.Kind), ev.event, "event is the event's kind")
		assert.Equal(t, acc.RunID, te.RunID)
		got = append(got, n)
		kinds = append(kinds, ev.event)
	}

	// First connection: read until the second observation, then drop it.
	ctx, cancel := context.WithCancel(context.Background())
	_, ch := e.stream(ctx, acc.RunID, "")
	observations := 0
	for observations < 2 {
		ev, ok := next(t, ch)
		require.True(t, ok)
		seen(ev)
		if ev.event == "observation" {
			observations++
		}
	}
	cancel()
	for range ch { // the stream ends
	}
	last := got[len(got)-1]

	// The run goes on while nobody listens.
	for range 5 {
		e.gate.Release(1)
	}
	require.Eventually(t, func() bool { return e.wait(acc.RunID).Status == "done" }, 10*time.Second, 10*time.Millisecond)

	// Reconnect: the rest, then end.
	_, ch = e.stream(context.Background(), acc.RunID, strconv.FormatInt(last, 10))
	var end server.RunView
	for {
		ev, ok := next(t, ch)
		require.True(t, ok, "the stream ends with event: end")
		if ev.event == "end" {
			require.NoError(t, json.Unmarshal([]byte(ev.data), &end))
			break
		}
		seen(ev)
	}
	_, open := <-ch
	assert.False(t, open, "the server closes the stream after end")
	assert.Equal(t, "done", end.Status)
	assert.Equal(t, "6015", end.Answer)
	require.Equal(t, end.LastSeq, int64(len(got)), "every event once")
	for i, n := range got {
		require.Equal(t, int64(i+1), n, "events in order, none lost or repeated: %v", got)
	}
	assert.Equal(t, "run_start", kinds[0])
	assert.Equal(t, "run_end", kinds[len(kinds)-1])

	// ?after= works as Last-Event-ID does; a finished run replays and ends.
	r := e.do("GET", "/api/runs/"+acc.RunID+"/events?after="+strconv.FormatInt(end.LastSeq-1, 10), nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, string(r.body), "id: "+strconv.FormatInt(end.LastSeq, 10)+"\nevent: run_end\n")
	assert.NotContains(t, string(r.body), "id: "+strconv.FormatInt(end.LastSeq-1, 10)+"\n")
	assert.Contains(t, string(r.body), "event: end\n")

	for _, bad := range []string{"?after=-1", "?after=x"} {
		r := e.do("GET", "/api/runs/"+acc.RunID+"/events"+bad, nil)
		assert.Equal(t, http.StatusBadRequest, r.code, bad)
		r.errCode(t)
	}
	r = e.do("GET", "/api/runs/"+acc.RunID+"/events", nil, "Last-Event-ID", "abc")
	assert.Equal(t, http.StatusBadRequest, r.code)
}

// A stream sends heartbeat comments while the run is quiet.
func TestStreamHeartbeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gate.Hold()
	acc := e.start(server.RunRequest{Config: "react", Question: "Add them, steps:1", LLM: e.gated})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, ch := e.stream(ctx, acc.RunID, "")
	comments := 0
	for comments < 2 {
		select {
		case ev := <-ch:
			if ev.event == "comment" {
				comments++
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no heartbeat")
		}
	}
	for range 2 {
		e.gate.Release(1)
	}
	e.wait(acc.RunID)
}

// Past MaxStreams, a new stream is refused with 429.
func TestStreamLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *server.Config) { c.MaxStreams = 1 })
	e.gate.Hold()
	acc := e.start(server.RunRequest{Config: "react", Question: "Add them, steps:1", LLM: e.gated})
	ctx, cancel := context.WithCancel(context.Background())
	_, ch := e.stream(ctx, acc.RunID, "")
	r := e.do("GET", "/api/runs/"+acc.RunID+"/events", nil)
	assert.Equal(t, http.StatusTooManyRequests, r.code)
	assert.Equal(t, "busy", r.errCode(t))
	cancel()
	for range ch {
	}
	for range 2 {
		e.gate.Release(1)
	}
	e.wait(acc.RunID)
}

// The event buffer keeps the latest MaxEventsPerRun events; a client that
// asks for dropped ones is told with event: gap.
func TestStreamGap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *server.Config) { c.MaxEventsPerRun = 10 })
	v := e.wait(e.start(server.RunRequest{Config: "react", Question: "Add them, steps:5", LLM: e.gated}).RunID)
	require.Greater(t, v.LastSeq, int64(10))
	r := e.do("GET", "/api/runs/"+v.ID+"/events", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, string(r.body), "event: gap\ndata: {\"from\":1,")
	assert.Contains(t, string(r.body), "id: "+strconv.FormatInt(v.LastSeq, 10)+"\n")
}
