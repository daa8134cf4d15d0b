package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/viewer"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/trace"
)

// compareTasks answers GET /api/compares/{id}/tasks: the per-task grid of
// a comparison (viewer.Data) from what its run folder's results store
// holds so far, finished or running. Events are left out: each run's
// Trace names its events, which GET /api/compares/{id}/trace returns.
func (s *Server) compareTasks(w http.ResponseWriter, r *http.Request) {
	c, err := s.compareOf(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := s.tasksData(r.Context(), c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, d)
}

// compareTrace answers GET /api/compares/{id}/trace?ref=...: the events
// of one run of the comparison, read from its run folder with
// viewer.ReadTrace; a ref that leaves the folder's traces/ is refused.
func (s *Server) compareTrace(w http.ResponseWriter, r *http.Request) {
	c, err := s.compareOf(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		s.fail(w, r, withDetails(fmt.Errorf("%w: ref is required: a run's trace reference from GET /api/compares/%s/tasks (runs[].trace)", ErrBadRequest, c.id),
			map[string]string{"field": "ref"}))
		return
	}
	events, err := viewer.ReadTrace(c.dir, ref)
	switch {
	case errors.Is(err, viewer.ErrBadRef), errors.Is(err, viewer.ErrTooLarge):
		s.fail(w, r, withDetails(fmt.Errorf("%w: %w", ErrBadRequest, err), map[string]string{"field": "ref"}))
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	for i := range events {
		events[i] = trace.Scrub(s.scrub, events[i])
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"ref": ref, "events": events})
}

// tasksData builds the grid of comparison c: its suite's tasks as rows,
// one column per config (with the comparison's model), and a run per
// result stored so far, judged with the comparison's scorer as its
// report judges them. Where the store holds several results of one
// config and task (an earlier invocation before a config was edited),
// the latest, by its place in the trace file, is shown.
func (s *Server) tasksData(ctx context.Context, c *comparison) (viewer.Data, error) {
	c.mu.Lock()
	rep, status := c.report, c.status
	c.mu.Unlock()
	d := viewer.Data{
		Title:   fmt.Sprintf("Comparison %s: %s on %s (%s)", c.id, strings.Join(c.names, ", "), c.suite, status),
		Banner:  s.compareBanner(c, rep),
		Tasks:   make([]viewer.Task, len(c.tasks)),
		Columns: make([]viewer.Column, len(c.names)),
		Runs:    []viewer.Run{},
	}
	taskIdx := map[string]int{}
	for i, t := range c.tasks {
		d.Tasks[i] = viewer.Task{ID: t.ID, Question: t.Question, Reference: t.Answer}
		taskIdx[t.ID] = i
	}
	colIdx := map[string]int{}
	for i, n := range c.names {
		d.Columns[i] = viewer.Column{Config: n, Model: c.model, Label: n}
		colIdx[n] = i
	}
	st, err := compare.OpenStore(ctx, c.dir)
	if err != nil {
		return viewer.Data{}, fmt.Errorf("comparison %s: opening its results in %s: %w", c.id, c.dir, err)
	}
	seeds := make([]uint64, max(1, c.repeats))
	for r := range seeds {
		seeds[r] = compare.SeedOf(c.seed, r)
	}
	recs, err := st.All(ctx, seeds...)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return viewer.Data{}, fmt.Errorf("comparison %s: reading its results in %s: %w", c.id, c.dir, err)
	}
	kept := map[[3]int]int{} // (task, column, repeat) -> index in d.Runs
	for _, rec := range recs {
		ti, okT := taskIdx[rec.TaskID]
		ci, okC := colIdx[rec.Config]
		if !okT || !okC || (c.model != "" && rec.Model != c.model) {
			continue
		}
		rep := int(rec.Seed - c.seed)
		run := viewer.Run{Task: ti, Column: ci, Repeat: rep, Answer: rec.Answer, Failure: rec.Failure, CostUSD: rec.CostUSD, LatencyMS: rec.LatencyMS,
			ModelCalls: rec.ModelCalls, ToolCalls: rec.ToolCalls, Trace: rec.Trace}
		if c.scorer != nil {
			v := c.scorer.Score(rec.Answer, c.tasks[ti].Reference())
			run.Scored, run.Correct = !v.Unscorable, v.Correct
			if run.Failure == compare.FailureWrong {
				run.Failure = ""
			}
		} else {
			run.Scored, run.Correct = rec.Scored, rec.Correct
		}
		if run.Failure == "" && run.Scored && !run.Correct {
			run.Failure = compare.FailureWrong
		}
		key := [3]int{ti, ci, rep}
		if j, ok := kept[key]; ok {
			if traceStart(rec.Trace) >= traceStart(d.Runs[j].Trace) {
				d.Runs[j] = run
			}
			continue
		}
		kept[key] = len(d.Runs)
		d.Runs = append(d.Runs, run)
	}
	return d, nil
}

// traceStart is the first line of a trace reference
// ("traces/m/c.jsonl:120-141": 120); 0 when it has none.
func traceStart(ref string) int {
	i := strings.LastIndexByte(ref, ':')
	if i < 0 {
		return 0
	}
	first, _, _ := strings.Cut(ref[i+1:], "-")
	n, _ := strconv.Atoi(first)
	return n
}

// compareBanner says what produced a comparison's numbers: its report's
// banner once there is one, else what kind of model it runs.
func (s *Server) compareBanner(c *comparison, rep *compare.Report) string {
	if rep != nil {
		return rep.Banner()
	}
	if c.model == "" {
		return "Each config's own model (running: the banner of its report says more once it is done)."
	}
	provider, _, _ := strings.Cut(c.model, ":")
	switch s.engine.ModelKind(provider) {
	case llm.KindSimulated:
		return "SIMULATED: these numbers come from the simulated model " + c.model + "; they measure the engine, not the quality of any language model."
	case llm.KindScripted:
		return "SCRIPTED: these numbers come from a scripted model (" + c.model + ") replaying fixed replies, not a real language model."
	}
	return "Model: " + c.model
}
