package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/trace"
)

// The Go API other front doors use (planner as an MCP server): they start
// runs, follow their events and decide their approvals through the same
// machinery as the HTTP API, so that every run shares the server's slots,
// loaded pipelines, thread store, audit log and scrubber.

// Call is a run started through the Go API (Server.Start, Server.Decide,
// Server.FollowUp).
type Call struct {
	rn *run
}

// CallEvent is one event of a call's run, as its event stream sends it:
// Data is the trace.Event's JSON, scrubbed.
type CallEvent struct {
	// Seq numbers the run's events from 1.
	Seq int64
	// Kind is the event's kind (trace.Kind).
	Kind string
	// Data is the event as JSON, scrubbed of secrets.
	Data json.RawMessage
}

// Start starts a run as POST /api/runs does and returns it; the errors are
// the API's (ErrBadRequest, ErrNotFound, ErrConflict, ErrBusy, ...).
func (s *Server) Start(ctx context.Context, req RunRequest) (*Call, error) {
	acc, err := s.start(ctx, req)
	if err != nil {
		return nil, err
	}
	return s.callOf(acc)
}

// Decide answers the tool call thread waits for, as POST
// /api/approvals/{thread} does, and returns the run that goes on.
func (s *Server) Decide(ctx context.Context, thread string, d journal.Decision) (*Call, error) {
	acc, err := s.decideThread(ctx, thread, d)
	if err != nil {
		return nil, err
	}
	return s.callOf(acc)
}

func (s *Server) callOf(acc Accepted) (*Call, error) {
	rn, err := s.runOf(acc.RunID)
	if err != nil {
		return nil, err
	}
	return &Call{rn: rn}, nil
}

// ID is the run's id.
func (c *Call) ID() string { return c.rn.id }

// Thread is the thread the run journals into.
func (c *Call) Thread() string { return c.rn.thread }

// View is the run as the API shows it now.
func (c *Call) View() RunView { return c.rn.view() }

// Cancel stops the run; its thread is saved as interrupted.
func (c *Call) Cancel() { c.rn.cancel() }

// Wait waits for the run to end and returns its view. When ctx ends first
// (the caller went away or cancelled) it cancels the run and returns ctx's
// error.
func (c *Call) Wait(ctx context.Context) (RunView, error) { return waitRun(ctx, c.rn) }

// Events returns the run's events after seq after, waiting until there is
// one or the run has finished; finished is true once the run has ended
// and every event it kept is returned. Events dropped for the run's limit
// (Config.MaxEventsPerRun) are skipped. It returns ctx's error when ctx
// ends first (the run goes on).
func (c *Call) Events(ctx context.Context, after int64) (events []CallEvent, finished bool, err error) {
	for {
		c.rn.mu.Lock()
		kept := c.rn.eventsAfterLocked(after)
		done, notify := c.rn.finished, c.rn.notify
		c.rn.mu.Unlock()
		if len(kept) > 0 || done {
			for _, e := range kept {
				if ev, ok := parseFrame(e); ok {
					events = append(events, ev)
				}
			}
			return events, done, nil
		}
		select {
		case <-notify:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// parseFrame reads an event back from its Server-Sent Events frame.
func parseFrame(e runEvent) (CallEvent, bool) {
	ev := CallEvent{Seq: e.seq}
	for _, line := range strings.Split(e.frame, "\n") {
		switch {
		case strings.HasPrefix(line, "event: "):
			ev.Kind = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		}
	}
	return ev, len(ev.Data) > 0
}

// Handle serves h at pattern (an http.ServeMux pattern, such as "/mcp")
// behind the server's guard: its Host and Origin checks, its bearer token
// (required on every path under /mcp, /api/ and /v1/ when the server has
// one) and its body limit. Call it before serving.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Scrubber is the scrubber everything the server sends passes through.
func (s *Server) Scrubber() trace.Scrubber { return s.scrub }

// Pipelines returns the names of the pipelines of the configs folder
// whose YAML parses, sorted as the folder lists them (a pipeline whose
// nodes do not build fails when a run loads it, with its error).
func (s *Server) Pipelines() []string { return s.pipelineNames() }

// PipelineInfo describes the named pipeline (its paradigm, description,
// nodes), or fails with ErrNotFound.
func (s *Server) PipelineInfo(name string) (PipelineInfo, error) {
	path, err := s.pipelinePath(name)
	if err != nil {
		return PipelineInfo{}, err
	}
	return info(path), nil
}
