package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// runEvents streams a run's events as Server-Sent Events: each event's
// `id:` is its seq, `event:` its kind and `data:` the trace.Event as JSON.
// It replays the events kept in memory after Last-Event-ID (or ?after=),
// then follows the run live, with heartbeat comments, and ends with
// `event: end` (data: the run) once the run has ended and every event was
// sent. Events dropped from memory before the client asked for them are
// announced by one `event: gap` (data: {"from","to"}, the missing seqs).
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	rn, err := s.runOf(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	after, err := lastEventID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		s.fail(w, r, fmt.Errorf("%w: %d event streams are open (the server's limit)", ErrBusy, cap(s.streams)))
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var buf strings.Builder
	write := func() bool {
		if buf.Len() == 0 {
			return true
		}
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		_, err := w.Write([]byte(buf.String()))
		buf.Reset()
		if err == nil {
			err = rc.Flush()
		}
		return err == nil
	}
	buf.WriteString("retry: 1000\n\n")
	if !write() {
		return
	}
	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	deadline := time.NewTimer(s.cfg.MaxStreamDuration)
	defer deadline.Stop()
	gapSent := false
	for {
		rn.mu.Lock()
		if first := rn.dropped + 1; after+1 < first && !gapSent && len(rn.events) > 0 {
			gapSent = true
			fmt.Fprintf(&buf, "event: gap\ndata: {\"from\":%d,\"to\":%d}\n\n", after+1, rn.events[0].seq-1)
		}
		batch := rn.eventsAfterLocked(after)
		finished, notify := rn.finished, rn.notify
		var end RunView
		if finished {
			end = rn.viewLocked()
		}
		rn.mu.Unlock()
		for _, e := range batch {
			if e.frame == "" {
				continue // an event that JSON cannot encode
			}
			buf.WriteString(e.frame)
			after = e.seq
		}
		if finished {
			b, _ := json.Marshal(end)
			fmt.Fprintf(&buf, "event: end\ndata: %s\n\n", s.scrub.String(string(b)))
			write()
			return
		}
		if !write() {
			return
		}
		select {
		case <-notify:
		case <-heartbeat.C:
			buf.WriteString(": heartbeat\n\n")
			if !write() {
				return
			}
		case <-deadline.C:
			return // the client reconnects with Last-Event-ID
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			// The server stops: let the run record its end first.
			select {
			case <-notify:
			case <-time.After(2 * time.Second):
				return
			}
		}
	}
}

// lastEventID reads where a stream resumes: the Last-Event-ID header,
// else the ?after= query; 0 replays from the first event.
func lastEventID(r *http.Request) (int64, error) {
	v, from := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, from = r.URL.Query().Get("after"), "after"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, withDetails(fmt.Errorf("%w: %s must be an event id (a seq, 0 or more), got %q", ErrBadRequest, from, v), map[string]string{"field": from})
	}
	return n, nil
}

// sseField keeps a value on one line of the stream.
func sseField(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }
