package compare

import (
	"cmp"

	"github.com/planner-engine/planner/eval/viewer"
)

// grid builds the per-task viewer's data (package eval/viewer) from the
// comparison's judged records: a row per task, a column per entry, each
// run with its trace's events read back from the run folder, each trace
// file read once (none when the trace is missing or over the viewer's
// limits: the page then says the run has no events).
func (c *comparison) grid(rep *Report, recs []Record) viewer.Data {
	d := viewer.Data{Title: "planner comparison: " + rep.Suite, Banner: rep.Banner()}
	for _, t := range c.tasks {
		d.Tasks = append(d.Tasks, viewer.Task{ID: t.ID, Question: c.opts.Scrubber.String(t.Question), Reference: c.opts.Scrubber.String(t.Answer)})
	}
	for _, e := range c.cfgs.entries {
		col := viewer.Column{Config: e.name, Label: e.label}
		if c.cfgs.models > 1 {
			col.Model = c.opts.Scrubber.String(cmp.Or(e.modelLabel, e.spec))
		}
		d.Columns = append(d.Columns, col)
	}
	refs := make([]string, 0, len(recs))
	for _, r := range recs {
		if r.Trace != "" {
			refs = append(refs, r.Trace)
		}
	}
	// A trace that cannot be read (a trace file removed by hand, a run
	// over the viewer's limits) leaves its run without events, which the
	// page shows as such; the rest of the page is still worth writing.
	events, _ := viewer.ReadTraces(c.opts.OutDir, refs)
	for _, r := range recs {
		e := r.entry - 1
		if e < 0 {
			continue
		}
		run := viewer.Run{Task: c.ids[r.TaskID], Column: e, Repeat: r.Repeat, Answer: r.Answer, Scored: r.Scored, Correct: Succeeded(r),
			Failure: r.Failure, CostUSD: r.CostUSD, LatencyMS: r.LatencyMS, ModelCalls: r.ModelCalls, ToolCalls: r.ToolCalls, Trace: r.Trace}
		for name, v := range r.Scores {
			if v.Error == "" && !v.Unscorable {
				if run.Scores == nil {
					run.Scores = map[string]float64{}
				}
				run.Scores[name] = v.Score
			}
		}
		run.Events = events[r.Trace] // scrubbed when they were written
		d.Runs = append(d.Runs, run)
	}
	return d
}
