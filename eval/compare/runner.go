// Package compare runs a matrix of pipeline configs × suite tasks with
// bounded concurrency, per-task timeouts and a seed, stores every result in
// SQLite so an interrupted comparison resumes, keeps each run's JSONL
// trace, and reports per config: success, EM/F1, model calls, tokens, tool
// calls, latency percentiles, cost and failures by kind.
package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/score"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/trace"
	"github.com/schollz/progressbar/v3"
)

// Loader builds pipelines; *app.App implements it.
type Loader interface {
	LoadWith(ctx context.Context, path string, llm config.LLM, maxSteps int) (*pipeline.Pipeline, error)
	ModelLabel(provider string) string
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
	// Seed is recorded with each result and seeds the sim model. Default 1.
	Seed uint64
	// OutDir receives results.db, traces/ and the reports. Required.
	OutDir string
	// Scorer judges answers. Default score.ExactMatch.
	Scorer score.Scorer
	// Suite names the task suite in reports.
	Suite string
	// Progress receives a progress bar; nil shows none.
	Progress io.Writer
	// NoTraces skips writing per-run JSONL traces. Default false.
	NoTraces bool
}

// ErrOptions marks invalid options.
var ErrOptions = errors.New("compare: invalid options")

type job struct {
	cfg  int
	task int
}

// Run executes the comparison and returns the report. Results already in
// OutDir's store for the same seed are reused, not re-run.
func Run(ctx context.Context, loader Loader, tasks []agent.Task, opts Options) (*Report, error) {
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
		opts.Scorer = score.ExactMatch{}
	}
	llmCfg := opts.LLM
	if llmCfg.Provider == "sim" {
		llmCfg.Seed = opts.Seed
	}
	ids := map[string]bool{}
	for i := range tasks {
		if tasks[i].ID == "" {
			tasks[i].ID = fmt.Sprintf("task-%04d", i)
		}
		if ids[tasks[i].ID] {
			return nil, fmt.Errorf("%w: duplicate task id %q", ErrOptions, tasks[i].ID)
		}
		ids[tasks[i].ID] = true
	}
	pipes := make([]*pipeline.Pipeline, len(opts.Configs))
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
			if !done[pipes[c].Config.Name+"\x00"+tasks[t].ID] {
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
	work := make(chan job)
	errs := make(chan error, opts.Concurrency)
	var wg sync.WaitGroup
	for w := 0; w < opts.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				rec, ok := runOne(ctx, pipes[j.cfg], tasks[j.task], opts)
				if !ok {
					continue // interrupted: leave it for the resume
				}
				if err := store.Put(context.WithoutCancel(ctx), rec); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
				if bar != nil {
					_ = bar.Add(1)
				}
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
	if bar != nil {
		_ = bar.Finish()
	}
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("compare interrupted; finished results are saved in %s and a rerun resumes: %w", opts.OutDir, err)
	}
	records, err := store.All(ctx, opts.Seed)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	order := make([]string, len(pipes))
	for i, p := range pipes {
		keep[p.Config.Name] = true
		order[i] = p.Config.Name
	}
	var mine []Record
	for _, r := range records {
		if keep[r.Config] && ids[r.TaskID] {
			mine = append(mine, r)
		}
	}
	provider := opts.LLM.Provider
	if provider == "" {
		provider = pipes[0].Config.LLM.Provider
	}
	rep := Summarize(mine, order)
	rep.Model = loader.ModelLabel(provider)
	rep.Simulated = provider == "sim"
	rep.Scripted = provider == "scripted"
	rep.Suite = opts.Suite
	rep.Seed = opts.Seed
	rep.Tasks = len(tasks)
	rep.Ran = len(jobs)
	rep.Reused = len(tasks)*len(pipes) - len(jobs)
	rep.WallSeconds = time.Since(began).Seconds()
	rep.GeneratedAt = time.Now().UTC()
	return rep, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func runOne(ctx context.Context, p *pipeline.Pipeline, task agent.Task, opts Options) (Record, bool) {
	rec := Record{Config: p.Config.Name, TaskID: task.ID, Seed: opts.Seed}
	tracer := trace.New(fmt.Sprintf("%s/%s/%d", p.Config.Name, task.ID, opts.Seed))
	var sink *trace.JSONL
	if !opts.NoTraces {
		path := filepath.Join(opts.OutDir, "traces", unsafeName.ReplaceAllString(p.Config.Name, "_"), unsafeName.ReplaceAllString(task.ID, "_")+".jsonl")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			if f, err := os.Create(path); err == nil {
				sink = trace.NewJSONL(f)
				tracer.AddSink(sink)
				rec.Trace, _ = filepath.Rel(opts.OutDir, path)
			}
		}
	}
	rctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	began := time.Now()
	res, err := p.Run(rctx, task, tracer)
	rec.LatencyMS = float64(time.Since(began).Microseconds()) / 1000
	if sink != nil {
		_ = sink.Close()
	}
	if ctx.Err() != nil {
		return rec, false
	}
	st := res.State
	u := st.Usage.Snapshot()
	rec.Answer, rec.Complete, rec.Failure = st.Answer, st.Complete && err == nil, st.Failure
	rec.ModelCalls, rec.PromptTokens, rec.CompletionTokens, rec.ToolCalls = u.ModelCalls, u.PromptTokens, u.CompletionTokens, u.ToolCalls
	rec.Estimated, rec.CostUSD, rec.Steps = u.Estimated, u.CostUSD, len(res.Steps)
	if err != nil {
		rec.Error = err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			rec.Failure = agent.FailureTimeout
		}
		if rec.Failure == "" {
			rec.Failure = "error"
		}
	}
	verdict := opts.Scorer.Score(st.Answer, task)
	rec.Scored = !verdict.Unscorable
	rec.Correct, rec.EM, rec.F1, rec.HasF1 = verdict.Correct, verdict.EM, verdict.F1, verdict.HasF1
	if rec.Failure == "" && rec.Scored && !rec.Correct {
		rec.Failure = "wrong"
	}
	return rec, true
}

// percentile returns the p-th percentile (0–100) of sorted values by the
// nearest-rank method.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100+0.999999) - 1
	if rank < 0 {
		rank = 0
	}
	if rank >= len(sorted) {
		rank = len(sorted) - 1
	}
	return sorted[rank]
}

// Summarize aggregates records per config, in the given config order.
func Summarize(records []Record, order []string) *Report {
	by := map[string][]Record{}
	for _, r := range records {
		by[r.Config] = append(by[r.Config], r)
	}
	rep := &Report{}
	for _, name := range order {
		rs := by[name]
		s := ConfigSummary{Config: name, Runs: len(rs), Failures: map[string]int{}}
		var lat []float64
		var em, f1 float64
		for _, r := range rs {
			if r.Scored {
				s.Scored++
				em += r.EM
				if r.Correct {
					s.Correct++
				}
				if r.HasF1 {
					s.HasF1 = true
					s.withF1++
					f1 += r.F1
				}
			}
			if r.Complete {
				s.Completed++
			}
			if r.Failure != "" {
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
		if s.Scored > 0 {
			s.SuccessRate = float64(s.Correct) / float64(s.Scored)
			s.EM = em / float64(s.Scored)
		}
		if s.withF1 > 0 {
			s.F1 = f1 / float64(s.withF1)
		}
		rep.Configs = append(rep.Configs, s)
	}
	return rep
}
