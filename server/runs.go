package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
)

// Run statuses besides the thread statuses (journal.Status* values:
// running, interrupted, waiting, done, failed).
const (
	// StatusQueued: the run waits for one of Config.MaxRuns slots.
	StatusQueued = "queued"
)

// runStatuses returns the statuses a run can have.
func runStatuses() []string {
	return []string{StatusQueued, string(journal.StatusRunning), string(journal.StatusDone), string(journal.StatusWaiting),
		string(journal.StatusInterrupted), string(journal.StatusFailed)}
}

// Run kinds: what started a run.
const (
	KindStart   = "start"   // POST /api/runs
	KindResume  = "resume"  // POST /api/threads/{name}/resume
	KindFork    = "fork"    // POST /api/threads/{name}/fork
	KindApprove = "approve" // POST /api/approvals/{thread}
)

// run is one run of this process: its state, result and events.
type run struct {
	id, thread, pipeline, llm, kind, question string
	model                                     ModelInfo // what model it uses, and its kind
	created                                   time.Time
	cancel                                    context.CancelFunc
	max                                       int

	mu       sync.Mutex
	status   string
	started  time.Time
	ended    time.Time
	res      *planner.Result
	err      string
	events   []runEvent
	dropped  int64 // events dropped from the front of events
	notify   chan struct{}
	finished bool

	scrub trace.Scrubber // scrubs the events' JSON (the server's scrubber)
}

// runEvent is an event a run keeps for its streams: its seq and its
// Server-Sent Events frame, encoded and scrubbed once for every stream.
type runEvent struct {
	seq int64
	// frame is the event's "id:", "event:" and "data:" lines and the blank
	// line after them; empty when the event could not be encoded as JSON.
	frame string
}

// Emit implements trace.Sink: it keeps e for the run's streams and wakes
// them. The engine's tracer has scrubbed e; its JSON is scrubbed again,
// as everything the server sends. An event without a seq (one the server
// adds after the run, such as an audit log's failure to close) takes the
// next one, so that the events stay in seq order.
func (r *run) Emit(e trace.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Seq == 0 {
		e.Seq = r.dropped + 1
		if n := len(r.events); n > 0 {
			e.Seq = r.events[n-1].seq + 1
		}
	}
	ev := runEvent{seq: e.Seq}
	if b, err := json.Marshal(e); err == nil {
		ev.frame = fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", e.Seq, sseField(string(e.Kind)), r.scrub.String(string(b)))
	}
	if len(r.events) >= r.max {
		cut := max(1, r.max/10)
		r.events = slices.Delete(r.events, 0, cut)
		r.dropped += int64(cut)
	}
	r.events = append(r.events, ev)
	close(r.notify)
	r.notify = make(chan struct{})
}

// RunView is a run as the API shows it.
type RunView struct {
	// ID identifies the run (its trace events carry it as run_id).
	ID string `json:"id"`
	// Thread is the thread the run journals into.
	Thread string `json:"thread"`
	// Pipeline is the config file the run loaded.
	Pipeline string `json:"pipeline"`
	// LLM is the model spec, when the request or the server named one.
	LLM string `json:"llm,omitempty"`
	// Model is the model the run uses and its kind: offline models
	// (simulated, scripted, replayed) carry their Mark (SIMULATED, ...)
	// and the label `planner run` prints.
	Model ModelInfo `json:"model"`
	// Kind is what started it: start, resume, fork, approve or turn.
	Kind string `json:"kind"`
	// Question is the task's question.
	Question string `json:"question,omitempty"`
	// Status is queued, running, or the thread's status after the run:
	// done, waiting, interrupted, failed.
	Status string `json:"status"`
	// Created, Started and Ended time the run.
	Created time.Time  `json:"created"`
	Started *time.Time `json:"started,omitempty"`
	Ended   *time.Time `json:"ended,omitempty"`
	// DurationMS is the run's wall time once it ended.
	DurationMS float64 `json:"duration_ms,omitempty"`
	// Answer, Complete, Reason and Failure are the result's (see
	// planner.Result).
	Answer   string `json:"answer,omitempty"`
	Complete bool   `json:"complete"`
	Reason   string `json:"reason,omitempty"`
	Failure  string `json:"failure,omitempty"`
	// Error is why the run failed.
	Error string `json:"error,omitempty"`
	// Usage counts model calls, tokens, cost and tool calls, in total and
	// per node (usage.per_node).
	Usage *state.UsageSnapshot `json:"usage,omitempty"`
	// Steps are the node ids executed, in order.
	Steps []string `json:"steps,omitempty"`
	// Pending is the tool call the thread waits for (status waiting).
	Pending *journal.Approval `json:"pending,omitempty"`
	// Replayed and Live count the journaled calls answered from the
	// journal and made live.
	Replayed int `json:"replayed,omitempty"`
	Live     int `json:"live,omitempty"`
	// Events counts the run's events so far; LastSeq is the last one's
	// seq.
	Events  int64 `json:"events"`
	LastSeq int64 `json:"last_seq"`
}

// view returns r as the API shows it.
func (r *run) view() RunView {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.viewLocked()
}

// eventsAfterLocked returns a copy of the kept events whose seq is past
// after (a copy: Emit shifts r.events in place once it is full).
func (r *run) eventsAfterLocked(after int64) []runEvent {
	i := sort.Search(len(r.events), func(i int) bool { return r.events[i].seq > after }) // in seq order
	if i == len(r.events) {
		return nil
	}
	return slices.Clone(r.events[i:])
}

func (r *run) viewLocked() RunView {
	v := RunView{ID: r.id, Thread: r.thread, Pipeline: r.pipeline, LLM: r.llm, Model: r.model, Kind: r.kind, Question: r.question,
		Status: r.status, Created: r.created, Error: r.err, Events: r.dropped + int64(len(r.events))}
	if n := len(r.events); n > 0 {
		v.LastSeq = r.events[n-1].seq
	}
	if !r.started.IsZero() {
		t := r.started
		v.Started = &t
	}
	if !r.ended.IsZero() {
		t := r.ended
		v.Ended = &t
	}
	if res := r.res; res != nil {
		u := res.Usage
		v.Answer, v.Complete, v.Reason, v.Failure = res.Answer, res.Complete, res.Reason, res.Failure
		v.Usage, v.Steps, v.Pending, v.Replayed, v.Live = &u, res.Steps, res.Pending, res.Replayed, res.Live
		v.DurationMS = float64(res.Duration.Microseconds()) / 1000
	}
	return v
}

// threadMeta is the thread record `planner run --thread`, `planner serve`
// and `planner resume` share (planner.ThreadMeta).
type threadMeta = planner.ThreadMeta

// RunRequest is the body of POST /api/runs.
type RunRequest struct {
	// Config names a pipeline of the configs folder: its name or file
	// name. Required.
	Config string `json:"config"`
	// Question is the task. Required unless Task names a suite task.
	Question string `json:"question,omitempty"`
	// Suite and Task pick a task of a suite by id ("demo" and "demo-07");
	// its reference answer goes with it. Suite defaults to "demo". A
	// Suite without a Task matches Question against the suite's
	// questions (ignoring case and punctuation), as `planner run --suite`
	// does: a match runs as that task, anything else as the question
	// alone. A simulated model (sim) plays only suite tasks with a gold
	// solution: a question that is none is refused (400) before a thread
	// is created.
	Suite string `json:"suite,omitempty"`
	Task  string `json:"task,omitempty"`
	// LLM is the model spec, as --llm takes it: "sim", "scripted:FILE",
	// "openai:gpt-4o-mini". Default: the server's, else the pipeline's
	// own llm block.
	LLM string `json:"llm,omitempty"`
	// Thread names the thread the run journals into; it must not exist.
	// Default: a generated name.
	Thread string `json:"thread,omitempty"`
	// MaxSteps overrides the pipeline's limits.max_steps when positive.
	MaxSteps int `json:"max_steps,omitempty"`
	// Timeout overrides the pipeline's limits.timeout ("90s", "5m").
	Timeout string `json:"timeout,omitempty"`
	// Vars are the run's vars when it starts ({{.Vars.NAME}} in
	// templates, the vars tool): the caller's inputs.
	Vars map[string]string `json:"vars,omitempty"`
}

// Accepted is the answer to a request that started a run.
type Accepted struct {
	// RunID identifies the run: GET /api/runs/{run_id} and its events.
	RunID string `json:"run_id"`
	// Thread is the thread it journals into.
	Thread string `json:"thread"`
	// Events is the path of the run's event stream.
	Events string `json:"events"`
	// Model is the model the run uses and its kind (RunView.Model).
	Model ModelInfo `json:"model"`
}

// newID returns n random bytes in hex.
func newID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// modelSpec parses a model spec for a request: its files must lie under
// Root (a relative FILE is taken relative to Root).
func (s *Server) modelSpec(spec string) (config.LLM, string, error) {
	if spec == "" {
		spec = s.cfg.LLM
	}
	if spec == "" {
		return config.LLM{}, "", nil
	}
	cfg, err := llm.ParseSpec(spec)
	if err != nil {
		return config.LLM{}, "", withDetails(fmt.Errorf("%w: llm: %w", ErrBadRequest, err), map[string]string{"field": "llm"})
	}
	if !slices.Contains(s.engine.Providers(), cfg.Provider) {
		return config.LLM{}, "", withDetails(fmt.Errorf("%w: llm: unknown provider %q (available: %s)", ErrBadRequest, cfg.Provider, strings.Join(s.engine.Providers(), ", ")),
			map[string]string{"field": "llm"})
	}
	if cfg.Script != "" {
		p, err := s.localPath(cfg.Script)
		if err != nil {
			return config.LLM{}, "", withDetails(fmt.Errorf("llm: %w", err), map[string]string{"field": "llm"})
		}
		cfg.Script = p
		spec = cfg.Provider + ":" + p
	}
	return cfg, spec, nil
}

// localPath resolves a path of a request: relative to Root, and inside it.
func (s *Server) localPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.cfg.Root, p)
	}
	p = filepath.Clean(p)
	rel, err := filepath.Rel(s.cfg.Root, p)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%w: path %q is outside the server's root folder %s", ErrBadRequest, p, s.cfg.Root)
	}
	return p, nil
}

// loadError classifies an error of Engine.Load for the API.
func loadError(err error) error {
	err = modelError(err)
	switch {
	case errors.Is(err, ErrModelUnavailable):
		return err
	case errors.Is(err, planner.ErrInvalidConfig):
		return err
	case errors.Is(err, planner.ErrNoModel), errors.Is(err, planner.ErrBadLLMSpec), errors.Is(err, planner.ErrUnknownProvider):
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return err
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	var req RunRequest
	if err := decode(r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	acc, err := s.start(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusAccepted, acc)
}

// start checks req, creates its thread and launches its run, as POST
// /api/runs does.
func (s *Server) start(ctx context.Context, req RunRequest) (Accepted, error) {
	if req.Config == "" {
		return Accepted{}, withDetails(fmt.Errorf("%w: config is required (a pipeline of GET /api/pipelines)", ErrBadRequest), map[string]string{"field": "config"})
	}
	path, err := s.pipelinePath(req.Config)
	if err != nil {
		return Accepted{}, err
	}
	meta := threadMeta{Question: req.Question, MaxSteps: req.MaxSteps}
	if req.MaxSteps < 0 {
		return Accepted{}, withDetails(fmt.Errorf("%w: max_steps must not be negative", ErrBadRequest), map[string]string{"field": "max_steps"})
	}
	if req.Timeout != "" {
		if meta.Timeout, err = time.ParseDuration(req.Timeout); err != nil || meta.Timeout <= 0 {
			return Accepted{}, withDetails(fmt.Errorf("%w: timeout %q: a positive Go duration such as 90s or 5m (leave it out for the pipeline's limits.timeout)",
				ErrBadRequest, req.Timeout), map[string]string{"field": "timeout"})
		}
	}
	if _, meta.LLM, err = s.modelSpec(req.LLM); err != nil {
		return Accepted{}, err
	}
	if meta.Config, err = filepath.Abs(path); err != nil {
		return Accepted{}, err
	}
	task, err := s.runTask(ctx, &req, &meta)
	if err != nil {
		return Accepted{}, err
	}
	task.Vars = req.Vars
	if err := task.CheckVars(); err != nil {
		return Accepted{}, withDetails(fmt.Errorf("%w: vars: %w", ErrBadRequest, err), map[string]string{"field": "vars"})
	}
	name := req.Thread
	if name == "" {
		name = "run-" + time.Now().UTC().Format("20060102-150405") + "-" + newID(4)
	}
	if err := journal.CheckName(name); err != nil {
		return Accepted{}, withDetails(fmt.Errorf("thread: %w", err), map[string]string{"field": "thread"})
	}
	// The run is admitted before its thread is created, so that a run
	// refused for the limits (429), a conflict or a pipeline that does not
	// load leaves no thread behind; and its pipeline is checked (loaded
	// once per config and content, see pipeCache) but not kept: a queued
	// run holds none.
	id, err := s.reserve(name)
	if err != nil {
		return Accepted{}, err
	}
	if err := s.pipes.check(ctx, meta); err != nil {
		s.unreserve(name, id)
		return Accepted{}, loadError(err)
	}
	metaJSON, _ := json.Marshal(meta)
	taskJSON, _ := json.Marshal(task)
	if err := s.store.Create(ctx, journal.Thread{Name: name, Pipeline: path, Task: taskJSON, Meta: metaJSON, Status: journal.StatusInterrupted}); err != nil {
		s.unreserve(name, id)
		if errors.Is(err, journal.ErrExists) {
			err = fmt.Errorf("%w: thread %q exists; resume it with POST /api/threads/%s/resume, ask a follow-up with POST /api/threads/%s/turns, or pick another name",
				ErrConflict, name, name, name)
		}
		return Accepted{}, err
	}
	return s.launch(launch{id: id, thread: name, pipeline: path, meta: meta, kind: KindStart, question: task.Question,
		run: func(ctx context.Context, p *planner.Pipeline, opts ...planner.RunOption) (*planner.Result, error) {
			return p.Run(ctx, "", append(opts, planner.WithTask(task), planner.WithThread(s.store, name))...)
		}})
}

// launch describes a run to start.
type launch struct {
	// id is the run's id when reserve admitted it already; "" admits it
	// in launch.
	id                               string
	thread, pipeline, kind, question string
	// meta is the thread's run settings: its config (an absolute path),
	// model spec, limits and audit log; the run's pipeline is loaded from
	// them once the run leaves the queue.
	meta threadMeta
	// run runs p with the server's options (run id, event sink).
	run func(ctx context.Context, p *planner.Pipeline, opts ...planner.RunOption) (*planner.Result, error)
}

// launch registers a run and starts it in the background. A run that
// reserve did not admit (l.id empty) is admitted here: the thread must not
// be running, and past MaxRuns+MaxQueued runs it fails with ErrBusy.
func (s *Server) launch(l launch) (Accepted, error) {
	if l.id == "" {
		var err error
		if l.id, err = s.reserve(l.thread); err != nil {
			return Accepted{}, err
		}
	}
	ctx, cancel := context.WithCancel(s.ctx)
	rn := &run{id: l.id, thread: l.thread, pipeline: l.pipeline, llm: l.meta.LLM, model: s.runModel(l.meta), kind: l.kind, question: l.question,
		created: time.Now().UTC(), cancel: cancel, max: s.cfg.MaxEventsPerRun, status: StatusQueued, notify: make(chan struct{}),
		scrub: s.scrub}
	s.mu.Lock()
	s.runs[rn.id] = rn
	s.order = append(s.order, rn.id)
	s.mu.Unlock()
	go s.execute(ctx, rn, l) // it takes over the reservation's count in s.wg
	return Accepted{RunID: rn.id, Thread: l.thread, Events: "/api/runs/" + rn.id + "/events", Model: rn.model}, nil
}

// admitLocked says why a run of thread cannot start now, or nil.
func (s *Server) admitLocked(thread string) error {
	switch {
	case s.closed:
		return ErrShuttingDown
	case s.active[thread] != "":
		return fmt.Errorf("%w: thread %q is being run by run %s (POST /api/runs/%s/cancel stops it)", ErrConflict, thread, s.active[thread], s.active[thread])
	case len(s.active) >= s.cfg.MaxRuns+s.cfg.MaxQueued:
		return fmt.Errorf("%w: %d runs are running or queued; try again later", ErrBusy, len(s.active))
	}
	return nil
}

// reserve admits a run of thread: from now on it counts against the
// limits and marks the thread as being run, so that a request creates a
// thread (or forks one) only for a run that will be accepted. It returns
// the run's id. launch takes the reservation over; a request that gives
// up before launching calls unreserve.
func (s *Server) reserve(thread string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.admitLocked(thread); err != nil {
		return "", err
	}
	id := newID(6)
	s.active[thread] = id
	s.wg.Add(1) // Close waits for the request to launch or give up
	return id, nil
}

// unreserve gives back a reservation that was not launched.
func (s *Server) unreserve(thread, id string) {
	s.mu.Lock()
	if s.active[thread] == id {
		delete(s.active, thread)
	}
	s.mu.Unlock()
	s.wg.Done()
}

// execute runs rn once a slot is free, then records its result. The
// run's pipeline is taken (from the cache, or parked for its thread) only
// once it has a slot.
func (s *Server) execute(ctx context.Context, rn *run, l launch) {
	defer s.wg.Done()
	defer rn.cancel()
	var (
		res *planner.Result
		err error
		ls  lease
	)
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
		rn.mu.Lock()
		rn.status, rn.started = string(journal.StatusRunning), time.Now().UTC()
		rn.mu.Unlock()
		if ls, err = s.pipelineFor(ctx, l); err != nil {
			err = loadError(err)
			if l.kind == KindStart && ctx.Err() == nil {
				// The thread this request created never ran: it is
				// failed, not interrupted, so that no resume runs it.
				_ = s.store.SetStatus(context.WithoutCancel(ctx), l.thread, journal.Update{Status: journal.StatusFailed, Error: s.scrub.String(err.Error())})
			}
		}
		var auditor planner.ToolAuditor
		var closeAudit func() error
		if err == nil {
			auditor, closeAudit, err = s.auditFor(ctx, l.thread, l.meta.Audit)
		}
		if err == nil {
			res, err = l.run(ctx, ls.p, planner.WithRunID(rn.id), planner.WithTraceSink(rn), planner.WithTokens(), planner.WithAudit(auditor))
			if cerr := closeAudit(); cerr != nil {
				rn.Emit(trace.Event{Kind: trace.KindError, Text: cerr.Error(), Data: map[string]any{"audit": true}})
			}
		}
	case <-ctx.Done():
		err = fmt.Errorf("%w: the run was cancelled before it started: %w", planner.ErrRun, context.Cause(ctx))
	}
	status := string(journal.StatusFailed)
	if res != nil && res.Status != "" {
		status = string(res.Status)
	} else if ctx.Err() != nil {
		status = string(journal.StatusInterrupted)
		// A run stopped before it could record its end leaves no thread
		// saying it runs.
		bg := context.WithoutCancel(ctx)
		if th, terr := s.store.Thread(bg, l.thread); terr == nil && th.Status == journal.StatusRunning {
			_ = s.store.SetStatus(bg, l.thread, journal.Update{Status: journal.StatusInterrupted, Error: fmt.Sprint(context.Cause(ctx))})
		}
	}
	s.giveBack(l.thread, ls, status)
	rn.mu.Lock()
	rn.status, rn.ended, rn.res = status, time.Now().UTC(), res
	var waiting *journal.WaitingError
	if err != nil && !errors.As(err, &waiting) {
		rn.err = s.scrub.String(err.Error())
	}
	rn.finished = true
	close(rn.notify)
	rn.notify = make(chan struct{})
	rn.mu.Unlock()

	s.mu.Lock()
	if s.active[l.thread] == rn.id {
		delete(s.active, l.thread)
	}
	s.forgetLocked()
	s.mu.Unlock()
}

// pipelineFor returns the pipeline a run uses: the one parked for its
// thread, else the cache's (shared, or loaded for this run alone).
func (s *Server) pipelineFor(ctx context.Context, l launch) (lease, error) {
	s.mu.Lock()
	if pp := s.parked[l.thread]; pp != nil {
		s.unparkLocked(l.thread)
		s.mu.Unlock()
		return lease{p: pp.p}, nil
	}
	s.mu.Unlock()
	return s.pipes.acquire(ctx, l.meta)
}

// giveBack returns a run's pipeline once the run ended with status: a
// shared one to the cache; a private one is closed when its thread is
// done, else parked for the thread's resume.
func (s *Server) giveBack(thread string, ls lease, status string) {
	switch {
	case ls.p == nil:
	case ls.shared:
		ls.release()
	case status == string(journal.StatusDone):
		_ = ls.p.Close()
	default:
		s.park(thread, ls.p)
	}
}

// forgetLocked drops the oldest finished runs past MaxFinishedRuns.
func (s *Server) forgetLocked() {
	finished := 0
	for _, id := range s.order {
		if s.runs[id].isFinished() {
			finished++
		}
	}
	for i := 0; finished > s.cfg.MaxFinishedRuns && i < len(s.order); {
		id := s.order[i]
		if s.runs[id].isFinished() {
			delete(s.runs, id)
			s.order = slices.Delete(s.order, i, i+1)
			finished--
			continue
		}
		i++
	}
}

func (r *run) isFinished() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished
}

// parkedPipeline is the private pipeline (see pipeCache: one whose
// scripted or replayed model plays its replies in order) of a thread that
// may resume in this process: resuming it with the same pipeline goes on
// with the model where it stopped, and reuses its tools (MCP servers stay
// up), instead of loading the pipeline again. Shared pipelines are never
// parked: the cache keeps them.
type parkedPipeline struct{ p *planner.Pipeline }

// maxParked bounds the parked pipelines; past it the oldest is closed.
const maxParked = 256

// park keeps the pipeline of a thread that did not finish, for its resume.
func (s *Server) park(thread string, p *planner.Pipeline) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = p.Close()
		return
	}
	if old := s.parked[thread]; old != nil {
		_ = old.p.Close()
		s.unparkLocked(thread)
	}
	s.parked[thread] = &parkedPipeline{p: p}
	s.parkList = append(s.parkList, thread)
	for len(s.parkList) > maxParked {
		oldest := s.parkList[0]
		_ = s.parked[oldest].p.Close()
		s.unparkLocked(oldest)
	}
}

func (s *Server) unparkLocked(thread string) {
	delete(s.parked, thread)
	if i := slices.Index(s.parkList, thread); i >= 0 {
		s.parkList = slices.Delete(s.parkList, i, i+1)
	}
}

// threadOf reads a thread and the run settings it recorded.
func (s *Server) threadOf(ctx context.Context, name string) (journal.Thread, threadMeta, error) {
	if err := journal.CheckName(name); err != nil {
		return journal.Thread{}, threadMeta{}, err
	}
	th, err := s.store.Thread(ctx, name)
	if err != nil {
		return th, threadMeta{}, fmt.Errorf("thread %q: %w", name, err)
	}
	var meta threadMeta
	if err := json.Unmarshal(th.Meta, &meta); err != nil || meta.Config == "" {
		return th, meta, fmt.Errorf("%w: thread %q was not started by planner run or serve (no run settings recorded); resume it through the Go API", ErrConflict, name)
	}
	return th, meta, nil
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	if status != "" && !slices.Contains(runStatuses(), status) {
		s.fail(w, r, fmt.Errorf("%w: status must be one of %s, got %q", ErrBadRequest, strings.Join(runStatuses(), ", "), status))
		return
	}
	out := []RunView{}
	for _, v := range s.Runs() {
		if status == "" || v.Status == status {
			out = append(out, v)
		}
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"runs": out})
}

// Runs returns the runs of this process, newest first, as GET /api/runs
// lists them: what `planner serve` reports it saved when it stops.
func (s *Server) Runs() []RunView {
	s.mu.Lock()
	rs := make([]*run, 0, len(s.order))
	for _, id := range s.order {
		rs = append(rs, s.runs[id])
	}
	s.mu.Unlock()
	out := make([]RunView, 0, len(rs))
	for i := len(rs) - 1; i >= 0; i-- { // newest first
		out = append(out, rs[i].view())
	}
	return out
}

// runOf finds a run of this process.
func (s *Server) runOf(id string) (*run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rn := s.runs[id]; rn != nil {
		return rn, nil
	}
	return nil, fmt.Errorf("%w: no run %q in this server (runs of an earlier process are listed as threads: GET /api/threads)", ErrNotFound, id)
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	rn, err := s.runOf(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, rn.view())
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	if err := decode(r, &struct{}{}, true); err != nil {
		s.fail(w, r, err)
		return
	}
	rn, err := s.runOf(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if rn.isFinished() {
		s.fail(w, r, fmt.Errorf("%w: run %s has ended (%s)", ErrConflict, rn.id, rn.view().Status))
		return
	}
	rn.cancel()
	s.writeJSON(w, r, http.StatusAccepted, rn.view())
}

// auditFor returns the audit log a thread's runs record in: path, the
// file the thread was started with (`planner run --audit FILE`,
// ThreadMeta.Audit), opened for this run with the server's scrubber, else
// the server's. close releases what it opened.
func (s *Server) auditFor(ctx context.Context, thread, path string) (planner.ToolAuditor, func() error, error) {
	none := func() error { return nil }
	if path == "" || (s.ownAudit != nil && sameFile(path, s.ownAudit.Path())) {
		return s.audit, none, nil
	}
	l, err := audit.Open(ctx, path, audit.WithScrubber(s.scrub))
	if err != nil {
		return nil, none, fmt.Errorf("%w: thread %q records its tool calls in %s: %w", planner.ErrRun, thread, path, err)
	}
	return l, l.Close, nil
}

// sameFile reports whether a and b name the same file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
