package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/state"
)

// ThreadView is a thread as the API shows it: the store's thread with its
// live status, the settings it runs with, and this server's run of it.
type ThreadView struct {
	journal.Thread
	// Question is the thread's task.
	Question string `json:"question,omitempty"`
	// Config, LLM, Suite and TaskID are the run settings it recorded.
	Config string `json:"config,omitempty"`
	LLM    string `json:"llm,omitempty"`
	Suite  string `json:"suite,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	// RunID is the run of this server that runs it now, if any.
	RunID string `json:"run_id,omitempty"`
}

// Checkpoint is one entry of a thread's journal (planner history).
type Checkpoint struct {
	// N numbers the checkpoint (fork from it with POST .../fork).
	N int64 `json:"n"`
	// Time is when it was journaled.
	Time time.Time `json:"time"`
	// Kind is node, model, tool or approval.
	Kind string `json:"kind"`
	// Node and Scope say where in the run it happened.
	Node  string `json:"node,omitempty"`
	Scope string `json:"scope,omitempty"`
	// Summary says in one line what it holds, scrubbed.
	Summary string `json:"summary"`
}

// Checkpoints returns a thread's journal entries as checkpoints, in order,
// with their summaries scrubbed by scrub: the history that planner history
// and GET /threads/{name} show. Each entry's request and response are
// scrubbed before its summary clips them to a line, so that a secret cut
// by the clip (which the scrubber would no longer recognize) never shows
// in part; the summary is scrubbed again as a whole.
func Checkpoints(entries []journal.Entry, scrub redact.StringScrubber) []Checkpoint {
	cps := make([]Checkpoint, 0, len(entries))
	for _, e := range entries {
		e.Request, e.Response = scrubJSON(e.Request, scrub), scrubJSON(e.Response, scrub)
		cps = append(cps, Checkpoint{N: e.Seq, Time: e.Time, Kind: string(e.Kind), Node: e.Node, Scope: e.Scope, Summary: scrub.String(e.Summary())})
	}
	return cps
}

// scrubJSON returns raw with every string in it (keys and values)
// scrubbed. JSON that does not decode is scrubbed as text and kept only
// if it still is JSON (else dropped).
func scrubJSON(raw json.RawMessage, scrub redact.StringScrubber) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if out := []byte(scrub.String(string(raw))); json.Valid(out) {
			return out
		}
		return nil
	}
	out, err := json.Marshal(scrubTree(v, scrub))
	if err != nil {
		return nil
	}
	return out
}

// scrubTree scrubs the strings of a decoded JSON value.
func scrubTree(v any, scrub redact.StringScrubber) any {
	switch t := v.(type) {
	case string:
		return scrub.String(t)
	case []any:
		for i := range t {
			t[i] = scrubTree(t[i], scrub)
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[scrub.String(k)] = scrubTree(x, scrub)
		}
		return out
	}
	return v
}

// viewThread builds a thread's view; the store's Meta and Task stay out.
func (s *Server) viewThread(ctx context.Context, th journal.Thread) ThreadView {
	s.mu.Lock()
	runID := s.active[th.Name]
	s.mu.Unlock()
	if runID == "" {
		th.Status = journal.LiveStatus(ctx, s.store, th)
	}
	v := ThreadView{RunID: runID}
	var meta threadMeta
	if json.Unmarshal(th.Meta, &meta) == nil {
		v.Config, v.LLM, v.Suite, v.TaskID = meta.Config, meta.LLM, meta.Suite, meta.Task
	}
	var task state.Task
	if json.Unmarshal(th.Task, &task) == nil {
		v.Question = task.Question
	}
	th.Meta, th.Task = nil, nil
	v.Thread = th
	return v
}

func (s *Server) listThreads(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	if status != "" && (status == StatusQueued || !slices.Contains(runStatuses(), status)) {
		s.fail(w, r, fmt.Errorf("%w: status must be one of running, interrupted, waiting, done, failed; got %q", ErrBadRequest, status))
		return
	}
	ts, err := s.store.Threads(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]ThreadView, 0, len(ts))
	for _, th := range ts {
		v := s.viewThread(r.Context(), th)
		if status == "" || string(v.Status) == status {
			out = append(out, v)
		}
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"threads": out})
}

func (s *Server) getThread(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := journal.CheckName(name); err != nil {
		s.fail(w, r, err)
		return
	}
	th, err := s.store.Thread(r.Context(), name)
	if err != nil {
		s.fail(w, r, fmt.Errorf("thread %q: %w", name, err))
		return
	}
	entries, err := s.store.Entries(r.Context(), name)
	if err != nil {
		s.fail(w, r, fmt.Errorf("thread %q: %w", name, err))
		return
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"thread": s.viewThread(r.Context(), th), "history": Checkpoints(entries, s.scrub)})
}

// resumeLaunch is the launch of a run that resumes thread name with opts.
func (s *Server) resumeLaunch(th journal.Thread, meta threadMeta, kind string, opts ...planner.RunOption) launch {
	var task state.Task
	_ = json.Unmarshal(th.Task, &task)
	return launch{thread: th.Name, pipeline: th.Pipeline, meta: meta, kind: kind, question: task.Question,
		run: func(ctx context.Context, p *planner.Pipeline, ropts ...planner.RunOption) (*planner.Result, error) {
			return p.Resume(ctx, s.store, th.Name, append(ropts, opts...)...)
		}}
}

func (s *Server) resumeThread(w http.ResponseWriter, r *http.Request) {
	if err := decode(r, &struct{}{}, true); err != nil {
		s.fail(w, r, err)
		return
	}
	th, meta, err := s.threadOf(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	acc, err := s.launch(s.resumeLaunch(th, meta, KindResume))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusAccepted, acc)
}

// ForkRequest is the body of POST /api/threads/{name}/fork.
type ForkRequest struct {
	// From is the checkpoint to fork from (its n in the history); 0
	// starts from scratch with the thread's task. Required.
	From *int64 `json:"from"`
	// As names the new thread. Required.
	As string `json:"as"`
	// Resume runs the new thread at once (default true).
	Resume *bool `json:"resume,omitempty"`
}

func (s *Server) forkThread(w http.ResponseWriter, r *http.Request) {
	var req ForkRequest
	if err := decode(r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.From == nil || req.As == "" {
		s.fail(w, r, fmt.Errorf("%w: from (a checkpoint) and as (the new thread's name) are required", ErrBadRequest))
		return
	}
	if err := journal.CheckName(req.As); err != nil {
		s.fail(w, r, withDetails(fmt.Errorf("as: %w", err), map[string]string{"field": "as"}))
		return
	}
	name := r.PathValue("name")
	if _, _, err := s.threadOf(r.Context(), name); err != nil {
		s.fail(w, r, err)
		return
	}
	run := req.Resume == nil || *req.Resume
	var id string
	if run {
		// The run is admitted before the fork, so that a refused run
		// (429) leaves no new thread behind.
		var err error
		if id, err = s.reserve(req.As); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	forked, err := journal.Fork(r.Context(), s.store, name, req.As, *req.From)
	if err != nil {
		if run {
			s.unreserve(req.As, id)
		}
		s.fail(w, r, fmt.Errorf("fork %q: %w", name, err))
		return
	}
	if !run {
		s.writeJSON(w, r, http.StatusCreated, map[string]any{"thread": s.viewThread(r.Context(), forked)})
		return
	}
	var meta threadMeta
	_ = json.Unmarshal(forked.Meta, &meta)
	l := s.resumeLaunch(forked, meta, KindFork)
	l.id = id
	acc, err := s.launch(l)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusAccepted, acc)
}

// ApprovalView is a tool call waiting for a human's decision.
type ApprovalView struct {
	// Thread is the waiting thread: decide with POST /api/approvals/{thread}.
	Thread string `json:"thread"`
	// Pipeline is the thread's pipeline, Question its task.
	Pipeline string `json:"pipeline"`
	Question string `json:"question,omitempty"`
	// Node, Tool and Input are the call's.
	Node  string `json:"node,omitempty"`
	Tool  string `json:"tool"`
	Input string `json:"input"`
	// Since is when the thread started waiting.
	Since time.Time `json:"since"`
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	ts, err := s.store.Threads(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := []ApprovalView{}
	for _, th := range ts {
		if th.Status != journal.StatusWaiting || th.Pending == nil {
			continue
		}
		v := s.viewThread(r.Context(), th)
		if v.RunID != "" { // being resumed right now
			continue
		}
		out = append(out, ApprovalView{Thread: th.Name, Pipeline: th.Pipeline, Question: v.Question, Node: th.Pending.Node,
			Tool: th.Pending.Tool, Input: th.Pending.Input, Since: th.Updated})
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"approvals": out})
}

// DecisionRequest is the body of POST /api/approvals/{thread}.
type DecisionRequest struct {
	// Approve runs the call (true) or denies it (false). Required.
	Approve *bool `json:"approve"`
	// Reason says why it was denied; the model is shown it. For a
	// `human` node that asks for text (pending tool "human_input"), an
	// approval's Reason is the person's answer.
	Reason string `json:"reason,omitempty"`
	// By says who decided; it is journaled. Default "api".
	By string `json:"by,omitempty"`
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	var req DecisionRequest
	if err := decode(r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Approve == nil {
		s.fail(w, r, withDetails(fmt.Errorf("%w: approve (true or false) is required", ErrBadRequest), map[string]string{"field": "approve"}))
		return
	}
	if len(req.Reason) > 4000 || len(req.By) > 200 {
		s.fail(w, r, fmt.Errorf("%w: reason (4000 bytes) or by (200 bytes) too long", ErrBadRequest))
		return
	}
	by := strings.TrimSpace(req.By)
	if by == "" {
		by = "api"
	}
	acc, err := s.decideThread(r.Context(), r.PathValue("thread"), journal.Decision{Approved: *req.Approve, Reason: strings.TrimSpace(req.Reason), By: by})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusAccepted, acc)
}

// decideThread answers the tool call thread waits for with d and launches
// the run that goes on, as POST /api/approvals/{thread} does.
func (s *Server) decideThread(ctx context.Context, thread string, d journal.Decision) (Accepted, error) {
	th, meta, err := s.threadOf(ctx, thread)
	if err != nil {
		return Accepted{}, err
	}
	if th.Status != journal.StatusWaiting || th.Pending == nil {
		return Accepted{}, fmt.Errorf("%w: thread %q is %s, not waiting for an approval", ErrConflict, th.Name, th.Status)
	}
	return s.launch(s.resumeLaunch(th, meta, KindApprove, planner.WithDecision(d)))
}
