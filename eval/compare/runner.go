// Package compare runs a matrix of pipeline configs × suite tasks with
// bounded concurrency, per-task timeouts and a seed, stores every result in
// SQLite so an interrupted comparison resumes, keeps each run's JSONL
// trace, and reports per config: success, EM/F1, model calls, tokens, tool
// calls, latency percentiles, cost and failures by kind.
//
// Each config's run traces go to traces/<config>.jsonl in the output
// folder, every run's events on consecutive lines; a result's Trace field
// says which lines ("traces/react.jsonl:120-141").
//
// A stored result is reused only for the same config name, task id, seed
// and fingerprint (the pipeline file's bytes and the --llm override), so
// editing a config or switching models re-runs it. Verdicts are not taken
// from the store: every answer is scored again with the current scorer when
// the report is built.
//
// Secrets are scrubbed (package redact) from everything a comparison
// writes: each run's events before they reach its trace, and each result's
// answer, error and failure before it is stored. Reports are built from
// stored results, so they hold no secrets either; results stored by an
// earlier version are scrubbed again when read.
package compare

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/schollz/progressbar/v3"
)

// Loader builds pipelines and says what their models are; *app.App
// implements it.
type Loader interface {
	// LoadWith builds the pipeline at path; llm, when its Provider is set,
	// replaces the pipeline's llm block.
	LoadWith(ctx context.Context, path string, llm config.LLM, maxSteps int) (*pipeline.Pipeline, error)
	// ModelLabel says what a provider's model is, for reports.
	ModelLabel(provider string) string
	// ModelKind says what kind of model a provider builds; a simulated or
	// scripted one is announced as such by every report.
	ModelKind(provider string) llm.Kind
}

// Options configure a comparison.
type Options struct {
	// Configs are pipeline YAML paths. Required; names must be unique.
	Configs []string
	// LLM replaces every pipeline's llm block when Provider is set.
	LLM config.LLM
	// Concurrency bounds runs in flight. Default 4.
	Concurrency int
	// Timeout bounds each run. Default 2m.
	Timeout time.Duration
	// Seed is recorded with each result and, with LLM, seeds the model's
	// random draws where its provider makes any (the simulator's faults).
	// Default 1.
	Seed uint64
	// OutDir receives results.db, the traces (traces/<config>.jsonl, runs
	// appended whole) and the reports. Required.
	OutDir string
	// Scorer judges answers. Default verify.ExactMatch.
	Scorer verify.Scorer
	// Suite names the task suite in reports.
	Suite string
	// Progress receives a progress bar; nil shows none.
	Progress io.Writer
	// NoTraces skips writing the runs' JSONL traces. Default false.
	NoTraces bool
	// Scrubber removes secrets from the traces, the stored results and so
	// the reports. Default: redact.New(), built once per Run from the
	// process environment.
	Scrubber *redact.Scrubber
}

// ErrOptions marks invalid options.
var ErrOptions = errors.New("compare: invalid options")

// Failure kinds the runner adds to the engine's own (the agent.Failure*
// constants).
const (
	// FailureWrong marks a run that finished normally with an answer the
	// scorer judged wrong.
	FailureWrong = agent.FailureWrong
	// FailureError marks a run that failed with an error the engine did not
	// classify.
	FailureError = agent.FailureError
)

type job struct {
	cfg  int
	task int
}

// Run executes the comparison and returns the report. Results already in
// OutDir's store for the same seed are reused, not re-run.
func Run(ctx context.Context, loader Loader, tasks []agent.Task, opts Options) (_ *Report, err error) {
	if len(opts.Configs) == 0 || opts.OutDir == "" {
		return nil, fmt.Errorf("%w: need at least one config and an output folder", ErrOptions)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%w: the suite has no tasks", ErrOptions)
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Scorer == nil {
		opts.Scorer = verify.ExactMatch{}
	}
	if opts.Scrubber == nil {
		opts.Scrubber = redact.New()
	}
	llmCfg := opts.LLM
	if llmCfg.Provider != "" {
		llmCfg.Seed = opts.Seed // providers without random draws ignore it
	}
	tasks = slices.Clone(tasks) // ids are filled in below; leave the caller's slice alone
	ids := map[string]int{}
	for i := range tasks {
		if tasks[i].ID == "" {
			tasks[i].ID = fmt.Sprintf("task-%04d", i)
		}
		if _, dup := ids[tasks[i].ID]; dup {
			return nil, fmt.Errorf("%w: duplicate task id %q", ErrOptions, tasks[i].ID)
		}
		ids[tasks[i].ID] = i
	}
	pipes := make([]*pipeline.Pipeline, len(opts.Configs))
	prints := make([]string, len(opts.Configs))
	names := map[string]string{}
	for i, path := range opts.Configs {
		p, err := loader.LoadWith(ctx, path, llmCfg, 0)
		if err != nil {
			return nil, err
		}
		if prev, dup := names[p.Config.Name]; dup {
			return nil, fmt.Errorf("%w: %s and %s are both named %q", ErrOptions, prev, path, p.Config.Name)
		}
		names[p.Config.Name] = path
		pipes[i] = p
		if prints[i], err = fingerprint(p.Config.File, opts.LLM); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	store, err := OpenStore(ctx, opts.OutDir)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	done, err := store.Done(ctx, opts.Seed)
	if err != nil {
		return nil, err
	}
	var jobs []job
	for t := range tasks {
		for c := range pipes {
			if !done[storeKey(pipes[c].Config.Name, tasks[t].ID, prints[c])] {
				jobs = append(jobs, job{cfg: c, task: t})
			}
		}
	}
	began := time.Now()
	var bar *progressbar.ProgressBar
	if opts.Progress != nil && len(jobs) > 0 {
		bar = progressbar.NewOptions(len(jobs), progressbar.OptionSetWriter(opts.Progress), progressbar.OptionSetDescription("compare"),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(opts.Progress) }))
	}
	var traces *traceSet
	if !opts.NoTraces && len(jobs) > 0 {
		names := make([]string, len(pipes))
		for i, p := range pipes {
			names[i] = p.Config.Name
		}
		if traces, err = openTraces(opts.OutDir, names); err != nil {
			return nil, err
		}
		defer func() {
			if cerr := traces.close(); cerr != nil && err == nil {
				err = fmt.Errorf("compare: closing traces: %w", cerr)
			}
		}()
	}
	work := make(chan job)
	results := make(chan Record, opts.Concurrency)
	written := make(chan error, 1)
	go func() { written <- writeResults(context.WithoutCancel(ctx), store, traces, results, bar) }()
	var wg sync.WaitGroup
	for w := 0; w < opts.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				rec, ok := runOne(ctx, pipes[j.cfg], tasks[j.task], opts, traces)
				if !ok {
					continue // interrupted: leave it for the resume
				}
				rec.Fingerprint = prints[j.cfg]
				results <- rec
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(results)
	werr := <-written
	wall := time.Since(began)
	if bar != nil {
		_ = bar.Finish()
	}
	if werr != nil {
		return nil, werr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("compare interrupted; finished results are saved in %s and a rerun resumes: %w", opts.OutDir, err)
	}
	records, err := store.All(ctx, opts.Seed)
	if err != nil {
		return nil, err
	}
	want := map[string]string{} // config name -> fingerprint
	order := make([]string, len(pipes))
	for i, p := range pipes {
		want[p.Config.Name] = prints[i]
		order[i] = p.Config.Name
	}
	var mine []Record
	for _, r := range records {
		t, ok := ids[r.TaskID]
		if fp, mineCfg := want[r.Config]; mineCfg && ok && fp == r.Fingerprint {
			mine = append(mine, judge(scrubRecord(opts.Scrubber, r), tasks[t], opts.Scorer))
		}
	}
	provider := opts.LLM.Provider
	if provider == "" {
		provider = pipes[0].Config.LLM.Provider
	}
	rep := Summarize(mine, order)
	rep.Model = opts.Scrubber.String(loader.ModelLabel(provider))
	kind := loader.ModelKind(provider)
	rep.Simulated = kind == llm.KindSimulated
	rep.Scripted = kind == llm.KindScripted
	rep.Suite = opts.Scrubber.String(opts.Suite)
	rep.Seed = opts.Seed
	rep.Tasks = len(tasks)
	rep.Ran = len(jobs)
	rep.Reused = len(tasks)*len(pipes) - len(jobs)
	rep.WallSeconds = wall.Seconds()
	rep.GeneratedAt = time.Now().UTC()
	return rep, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName turns a config name into a file name.
func safeName(s string) string { return unsafeName.ReplaceAllString(s, "_") }

// maxBatch bounds the records stored in one transaction.
const maxBatch = 256

// writeResults stores records as they arrive, batching those already
// waiting into one transaction, and advances the progress bar. Traces are
// flushed before each batch is committed, so a stored record's trace lines
// are on disk. It drains in even after a failed write and returns the first
// error.
func writeResults(ctx context.Context, store *Store, traces *traceSet, in <-chan Record, bar *progressbar.ProgressBar) error {
	var first error
	batch := make([]Record, 0, maxBatch)
	for rec := range in {
		batch = append(batch[:0], rec)
	fill:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-in:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		if err := traces.flush(); err != nil && first == nil {
			first = fmt.Errorf("compare: writing traces: %w", err)
		}
		if err := store.PutAll(ctx, batch); err != nil && first == nil {
			first = err
		}
		if bar != nil {
			_ = bar.Add(len(batch))
		}
	}
	return first
}

// fingerprint identifies what a stored result was produced with: the
// pipeline file's bytes and the llm override. Files the pipeline refers to
// (prompt files, corpora) are not included.
func fingerprint(path string, llm config.LLM) (string, error) {
	h := sha256.New()
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("compare: fingerprinting %s: %w", path, err)
		}
		h.Write(b)
	}
	h.Write([]byte{0})
	js, err := json.Marshal(llm)
	if err != nil {
		return "", fmt.Errorf("compare: fingerprinting the llm override: %w", err)
	}
	h.Write(js)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func storeKey(config, taskID, fingerprint string) string {
	return config + "\x00" + taskID + "\x00" + fingerprint
}

// judge scores a record's answer for task and labels a normally finished
// run with a wrong answer FailureWrong. It is applied to fresh and stored
// records alike, so a stored verdict never outlives a change of scorer.
func judge(rec Record, task agent.Task, sc verify.Scorer) Record {
	if rec.Failure == FailureWrong {
		rec.Failure = ""
	}
	verdict := sc.Score(rec.Answer, task.Reference())
	rec.Scored = !verdict.Unscorable
	rec.Correct, rec.EM, rec.F1, rec.HasF1 = verdict.Correct, verdict.EM, verdict.F1, verdict.HasF1
	if rec.Failure == "" && rec.Scored && !rec.Correct {
		rec.Failure = FailureWrong
	}
	return rec
}

// runOne runs one task on one pipeline. It reports false when ctx ended
// during the run, whose result is then left for a resume.
func runOne(ctx context.Context, p *pipeline.Pipeline, task agent.Task, opts Options, traces *traceSet) (Record, bool) {
	rec := Record{Config: p.Config.Name, TaskID: task.ID, Seed: opts.Seed}
	tracer := trace.NewWithOptions(fmt.Sprintf("%s/%s/%d", p.Config.Name, task.ID, opts.Seed), trace.WithScrubber(opts.Scrubber))
	// The trace is kept in memory and appended to the config's trace file
	// once the run is over, so file I/O neither delays the run nor counts in
	// its latency, and an interrupted run leaves no partial trace behind.
	var buf bytes.Buffer
	var sink *trace.JSONL
	if traces != nil {
		sink = trace.NewJSONL(&buf)
		tracer.AddSink(sink)
	}
	rctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	began := time.Now()
	res, err := p.Run(rctx, task, tracer)
	rec.LatencyMS = float64(time.Since(began).Microseconds()) / 1000
	if ctx.Err() != nil {
		return rec, false
	}
	if sink != nil && sink.Close() == nil {
		rec.Trace = traces.add(p.Config.Name, buf.Bytes())
	}
	st := res.State
	u := st.Usage.Snapshot()
	rec.Answer, rec.Complete, rec.Failure = st.Answer, st.Complete && err == nil, st.Failure
	if rec.Failure == "" && len(st.Incidents) > 0 {
		rec.Failure = st.Incidents[0] // the first thing that went wrong
	}
	rec.ModelCalls, rec.PromptTokens, rec.CompletionTokens, rec.ToolCalls = u.ModelCalls, u.PromptTokens, u.CompletionTokens, u.ToolCalls
	rec.Estimated, rec.CostUSD, rec.Steps = u.Estimated, u.CostUSD, len(res.Steps)
	if err != nil {
		rec.Error = err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			rec.Failure = agent.FailureTimeout
		}
		if rec.Failure == "" {
			rec.Failure = FailureError
		}
	}
	return judge(scrubRecord(opts.Scrubber, rec), task, opts.Scorer), true
}

// scrubRecord removes secrets from the free text of a record: its answer,
// error and failure kind. The fields that key the store (config, task id,
// fingerprint) are left alone, so a resume still finds the record. The
// answer is scrubbed before it is judged, so a fresh record and the same
// record read back from the store get the same verdict.
func scrubRecord(s *redact.Scrubber, r Record) Record {
	r.Answer, r.Error, r.Failure = s.String(r.Answer), s.String(r.Error), s.String(r.Failure)
	return r
}

// percentile returns the p-th percentile (0–100) of sorted values by the
// nearest-rank method: the smallest value with at least p% of the values at
// or below it.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(len(sorted))*p/100)) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// Succeeded reports whether a record counts as a success: its answer was
// scored and judged correct.
func Succeeded(r Record) bool { return r.Scored && r.Correct }

// Summarize aggregates records per config, in the given config order.
// Records of configs not in order are ignored.
//
// Success rate, EM and F1 are verify.Summarize's over the records'
// verdicts: success rate and EM average over scored records only, F1 over
// scored records whose scorer gives F1. Latency percentiles use the nearest-rank method.
// A record's failure kind counts under Failures when the run did not
// succeed (see Succeeded) and under Recovered when it succeeded anyway, for
// example when a ReWOO step failed but the solver still answered correctly.
func Summarize(records []Record, order []string) *Report {
	by := map[string][]Record{}
	for _, r := range records {
		by[r.Config] = append(by[r.Config], r)
	}
	rep := &Report{}
	for _, name := range order {
		rs := by[name]
		s := ConfigSummary{Config: name, Runs: len(rs), Failures: map[string]int{}, Recovered: map[string]int{}}
		lat := make([]float64, 0, len(rs))
		verdicts := make([]verify.Result, len(rs))
		for i, r := range rs {
			verdicts[i] = verify.Result{Correct: r.Correct, EM: r.EM, F1: r.F1, HasF1: r.HasF1, Unscorable: !r.Scored}
			if r.Complete {
				s.Completed++
			}
			switch {
			case r.Failure == "":
			case Succeeded(r):
				s.Recovered[r.Failure]++
			default:
				s.Failures[r.Failure]++
			}
			s.ModelCalls += r.ModelCalls
			s.PromptTokens += r.PromptTokens
			s.CompletionTokens += r.CompletionTokens
			s.ToolCalls += r.ToolCalls
			s.CostUSD += r.CostUSD
			s.Estimated = s.Estimated || r.Estimated
			lat = append(lat, r.LatencyMS)
		}
		sort.Float64s(lat)
		s.LatencyP50MS, s.LatencyP95MS = percentile(lat, 50), percentile(lat, 95)
		sum := verify.Summarize(verdicts)
		s.Scored, s.Correct, s.SuccessRate, s.EM = sum.Scored, sum.Correct, sum.Accuracy, sum.EM
		s.F1, s.HasF1 = sum.F1, sum.WithF1 > 0
		rep.Configs = append(rep.Configs, s)
	}
	return rep
}
