package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
)

// suiteTask is a task of a suite.
type suiteTask = suite.Task

// defaultTasks is the default TaskLoader: a built-in suite ("demo",
// "sorting", ...: suite.Builtin), else the suite file (under Root) in its
// detected format.
func (s *Server) defaultTasks(ctx context.Context, name string) ([]suite.Task, suite.Format, error) {
	if tasks, format, ok, err := suite.Builtin(name); ok {
		return tasks, format, err
	}
	path, err := s.localPath(name)
	if err != nil {
		return nil, "", err
	}
	tasks, format, err := suite.LoadFormat(ctx, path)
	if err != nil {
		return nil, "", fmt.Errorf("%w: suite %s: %w", ErrBadRequest, name, err)
	}
	return tasks, format, nil
}

// engineLoader is compare.Loader over a planner.Engine.
type engineLoader struct{ e *planner.Engine }

func (l engineLoader) LoadWith(ctx context.Context, path string, cfg config.LLM, maxSteps int) (*planner.Pipeline, error) {
	return l.e.Load(ctx, path, planner.WithLLMConfig(cfg), planner.WithMaxSteps(maxSteps))
}

func (l engineLoader) ModelLabel(provider string) string  { return l.e.ModelLabel(provider) }
func (l engineLoader) ModelKind(provider string) llm.Kind { return l.e.ModelKind(provider) }

func (l engineLoader) Scrubber() trace.Scrubber { return l.e.Scrubber() }

// CompareRequest is the body of POST /api/compares.
type CompareRequest struct {
	// Suite is "demo" or a suite file under the server's root. Required.
	Suite string `json:"suite"`
	// Configs name pipelines of the configs folder. Required.
	Configs []string `json:"configs"`
	// LLM is the model spec every config runs with. Default: the
	// server's, else each config's own llm block.
	LLM string `json:"llm,omitempty"`
	// Concurrency bounds the runs in flight (1 to 64; default 4).
	Concurrency int `json:"concurrency,omitempty"`
	// Limit uses only the first Limit tasks (default all).
	Limit int `json:"limit,omitempty"`
	// Seed seeds the comparison (default 1).
	Seed uint64 `json:"seed,omitempty"`
	// Timeout bounds each run ("2m"; default compare's).
	Timeout string `json:"timeout,omitempty"`
	// Repeats runs each (config, task) this many times, repeat r with
	// seed Seed + r (1 to 20; default 1).
	Repeats int `json:"repeats,omitempty"`
}

// comparison is one comparison of this process.
type comparison struct {
	id, dir, suite, model string
	configs, names        []string // paths; pipeline names
	seed                  uint64
	total, repeats        int
	started               time.Time

	mu     sync.Mutex
	status string // running, done, failed, interrupted
	ended  time.Time
	report *compare.Report
	err    string

	// tasks are the suite's tasks it runs, in order, and scorer judges
	// their answers: the rows of its per-task grid (comparetasks.go).
	tasks  []suite.Task
	scorer verify.Scorer
}

// ConfigProgress tallies one config's finished runs.
type ConfigProgress struct {
	// Config is the pipeline name.
	Config string `json:"config"`
	// Done counts its finished runs, Correct those judged correct,
	// Failed those with a failure kind.
	Done    int `json:"done"`
	Correct int `json:"correct"`
	Failed  int `json:"failed"`
}

// CompareView is a comparison as the API shows it.
type CompareView struct {
	// ID identifies the comparison.
	ID string `json:"id"`
	// Status is running, done, failed or interrupted.
	Status string `json:"status"`
	// Dir is its run folder.
	Dir string `json:"dir"`
	// Suite, Configs, Model and Seed are what it compares.
	Suite   string   `json:"suite"`
	Configs []string `json:"configs"`
	Model   string   `json:"model,omitempty"`
	Seed    uint64   `json:"seed"`
	// Done of Total runs are finished (results reused from an earlier
	// comparison in the same folder count as done).
	Done  int `json:"done"`
	Total int `json:"total"`
	// PerConfig tallies each config's finished runs.
	PerConfig []ConfigProgress `json:"per_config"`
	// Started and Ended time it.
	Started time.Time  `json:"started"`
	Ended   *time.Time `json:"ended,omitempty"`
	// Error is why it failed.
	Error string `json:"error,omitempty"`
	// Report is the path of its report, once done.
	Report string `json:"report,omitempty"`
}

func (s *Server) startCompare(w http.ResponseWriter, r *http.Request) {
	var req CompareRequest
	if err := decode(r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	ctx := r.Context()
	field := func(name string, err error) error { return withDetails(err, map[string]string{"field": name}) }
	switch {
	case req.Suite == "":
		s.fail(w, r, field("suite", fmt.Errorf("%w: suite is required (\"demo\" or a suite file)", ErrBadRequest)))
		return
	case len(req.Configs) == 0:
		s.fail(w, r, field("configs", fmt.Errorf("%w: configs is required (pipelines of GET /api/pipelines)", ErrBadRequest)))
		return
	case len(req.Configs) > 64:
		s.fail(w, r, field("configs", fmt.Errorf("%w: at most 64 configs", ErrBadRequest)))
		return
	case req.Concurrency < 0 || req.Concurrency > 64:
		s.fail(w, r, field("concurrency", fmt.Errorf("%w: concurrency must be 1 to 64", ErrBadRequest)))
		return
	case req.Repeats < 0 || req.Repeats > 20:
		s.fail(w, r, field("repeats", fmt.Errorf("%w: repeats must be 1 to 20", ErrBadRequest)))
		return
	case req.Limit < 0:
		s.fail(w, r, field("limit", fmt.Errorf("%w: limit must be at least 1", ErrBadRequest)))
		return
	}
	opts := compare.Options{Concurrency: req.Concurrency, Seed: req.Seed, Suite: req.Suite, Repeats: max(1, req.Repeats)}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if req.Timeout != "" {
		d, err := time.ParseDuration(req.Timeout)
		if err != nil || d <= 0 {
			s.fail(w, r, field("timeout", fmt.Errorf("%w: timeout %q: a positive Go duration such as 2m", ErrBadRequest, req.Timeout)))
			return
		}
		opts.Timeout = d
	}
	var names []string
	for _, c := range req.Configs {
		path, err := s.pipelinePath(c)
		if err != nil {
			s.fail(w, r, field("configs", err))
			return
		}
		if slices.Contains(opts.Configs, path) {
			s.fail(w, r, field("configs", fmt.Errorf("%w: config %q is listed twice", ErrBadRequest, c)))
			return
		}
		opts.Configs = append(opts.Configs, path)
		names = append(names, info(path).Name)
	}
	var err error
	if opts.LLM, _, err = s.modelSpec(req.LLM); err != nil {
		s.fail(w, r, err)
		return
	}
	tasks, format, err := s.cfg.Tasks(ctx, req.Suite)
	if err != nil {
		s.fail(w, r, field("suite", err))
		return
	}
	if opts.Scorer, err = suite.DefaultScorer(format); err != nil {
		s.fail(w, r, field("suite", fmt.Errorf("%w: %w", ErrBadRequest, err)))
		return
	}
	selection := ""
	if req.Limit > 0 {
		if tasks, err = suite.Select(tasks, suite.WithLimit(req.Limit)); err != nil {
			s.fail(w, r, field("limit", fmt.Errorf("%w: %w", ErrBadRequest, err)))
			return
		}
		selection = fmt.Sprintf("limit %d", req.Limit)
	}
	loader, err := s.cfg.CompareLoader(ctx, tasks)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	id := compare.Identity{Suite: req.Suite, Selection: selection, Configs: opts.Configs, LLM: opts.LLM, Seed: opts.Seed}
	opts.OutDir = filepath.Join(s.cfg.CompareDir, id.DirName())
	cmp := &comparison{id: newID(6), dir: opts.OutDir, suite: req.Suite, configs: opts.Configs, names: names, seed: opts.Seed,
		total: len(tasks) * len(opts.Configs) * opts.Repeats, repeats: opts.Repeats, started: time.Now().UTC(), status: "running"}
	if opts.LLM.Provider != "" {
		cmp.model = compare.ModelSpec(opts.LLM)
	}
	cmp.tasks, cmp.scorer = tasks, opts.Scorer
	opts.Gold = suite.GoldOf(tasks)
	s.mu.Lock()
	switch {
	case s.closed:
		err = ErrShuttingDown
	default:
		for _, c := range s.compares {
			if c.dir == cmp.dir && c.view(context.Background(), false).Status == "running" {
				err = fmt.Errorf("%w: comparison %s runs in the same folder %s", ErrConflict, c.id, c.dir)
			}
		}
	}
	if err == nil {
		select {
		case s.cmpSem <- struct{}{}:
		default:
			err = fmt.Errorf("%w: %d comparisons are running", ErrBusy, cap(s.cmpSem))
		}
	}
	if err != nil {
		s.mu.Unlock()
		s.fail(w, r, err)
		return
	}
	s.compares[cmp.id] = cmp
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer func() { <-s.cmpSem }()
		rep, err := compare.Run(s.ctx, loader, suite.AgentTasks(tasks), opts)
		if err == nil {
			_, err = rep.WriteFiles(opts.OutDir)
		}
		cmp.mu.Lock()
		defer cmp.mu.Unlock()
		cmp.ended, cmp.report = time.Now().UTC(), rep
		switch {
		case err == nil:
			cmp.status = "done"
		case errors.Is(err, compare.ErrInterrupted):
			cmp.status, cmp.err = "interrupted", s.scrub.String(err.Error())
		default:
			cmp.status, cmp.err = "failed", s.scrub.String(err.Error())
		}
	}()
	s.writeJSON(w, r, http.StatusAccepted, map[string]string{"id": cmp.id, "dir": cmp.dir})
}

// view returns the comparison; with progress, a running one's finished
// runs are read from its results store.
func (c *comparison) view(ctx context.Context, progress bool) CompareView {
	c.mu.Lock()
	v := CompareView{ID: c.id, Status: c.status, Dir: c.dir, Suite: c.suite, Configs: c.names, Model: c.model, Seed: c.seed,
		Total: c.total, Started: c.started, Error: c.err}
	if !c.ended.IsZero() {
		t := c.ended
		v.Ended = &t
	}
	rep := c.report
	c.mu.Unlock()
	tally := map[string]*ConfigProgress{}
	for _, n := range c.names {
		tally[n] = &ConfigProgress{Config: n}
	}
	switch {
	case rep != nil:
		v.Report = filepath.Join(c.dir, "report.json")
		for _, cs := range rep.Configs {
			if t := tally[cs.Config]; t != nil {
				t.Done, t.Correct = cs.Runs, cs.Correct
				for _, n := range cs.Failures {
					t.Failed += n
				}
			}
		}
	case progress:
		if st, err := compare.OpenStore(ctx, c.dir); err == nil {
			recs, _ := st.All(ctx, c.seed)
			_ = st.Close()
			for _, rec := range recs {
				t := tally[rec.Config]
				if t == nil || (c.model != "" && rec.Model != c.model) {
					continue
				}
				t.Done++
				if rec.Failure != "" {
					t.Failed++
				} else if rec.Complete {
					t.Correct++ // judged at report time; complete runs until then
				}
			}
		}
	}
	for _, n := range c.names {
		v.PerConfig = append(v.PerConfig, *tally[n])
		v.Done += tally[n].Done
	}
	v.Done = min(v.Done, v.Total)
	return v
}

func (s *Server) compareOf(id string) (*comparison, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.compares[id]; c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("%w: no comparison %q in this server", ErrNotFound, id)
}

func (s *Server) listCompares(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	cs := make([]*comparison, 0, len(s.compares))
	for _, c := range s.compares {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	out := make([]CompareView, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.view(r.Context(), false))
	}
	slices.SortFunc(out, func(a, b CompareView) int { return b.Started.Compare(a.Started) })
	s.writeJSON(w, r, http.StatusOK, map[string]any{"compares": out})
}

func (s *Server) getCompare(w http.ResponseWriter, r *http.Request) {
	c, err := s.compareOf(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, c.view(r.Context(), true))
}

func (s *Server) compareReport(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "json"
	}
	if !slices.Contains([]string{"json", "md", "html", "table"}, format) {
		s.fail(w, r, fmt.Errorf("%w: format must be json, md, html or table, got %q", ErrBadRequest, format))
		return
	}
	c, err := s.compareOf(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c.mu.Lock()
	rep, status := c.report, c.status
	c.mu.Unlock()
	if rep == nil {
		s.fail(w, r, fmt.Errorf("%w: comparison %s is %s and has no report yet", ErrConflict, c.id, status))
		return
	}
	switch format {
	case "json":
		s.writeJSON(w, r, http.StatusOK, rep)
	case "table":
		s.writeJSON(w, r, http.StatusOK, reportTable(rep))
	case "md":
		var b bytes.Buffer
		if err := rep.WriteMarkdown(&b); err != nil {
			s.fail(w, r, err)
			return
		}
		s.writeBody(w, r, http.StatusOK, "text/markdown; charset=utf-8", []byte(s.scrub.String(b.String())))
	default:
		b, err := rep.HTML()
		if err != nil {
			s.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
		s.writeBody(w, r, http.StatusOK, "text/html; charset=utf-8", []byte(s.scrub.String(string(b))))
	}
}
