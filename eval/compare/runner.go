// Package compare runs a matrix of pipeline configs × suite tasks with
// bounded concurrency, per-task timeouts and a seed, stores every result in
// SQLite so an interrupted comparison resumes, keeps each run's JSONL
// trace, and reports per config: success, EM/F1, model calls, tokens, tool
// calls, latency percentiles, cost and failures by kind.
//
// A comparison writes into one run folder (Options.OutDir; the command
// line names it with Identity.DirName unless --out is given):
//
//	results.db                  every result (SQLite), so a rerun resumes
//	traces/<model>/<config>.jsonl  each run's JSONL trace, runs appended whole
//	report.md, report.json, report.html
//
// <model> is the model spec (ModelSpec: "sim:noisy", "openai:gpt-4o-mini")
// made safe for a file name ("sim_noisy"). Every run's events sit on
// consecutive lines under a run id unique to the run (see RunID); a
// result's Trace field says which lines ("traces/sim_noisy/react.jsonl:120-141").
//
// A stored result is reused only for the same config name, task id, seed,
// model spec and fingerprint (the pipeline file's bytes and the --llm
// override, and the task's digest in Options.TaskDigests where it has one:
// its own scripted replies), so editing a config or a task's replies or
// switching models (or sim profiles) re-runs it and a report never mixes
// models. Verdicts are not taken from
// the store: every answer is scored again with the current scorer when the
// report is built.
//
// Besides its outcome, each result counts the faults the engine met and
// worked around during the run, read from its trace events (FaultKind):
// parse failures fed back to the model, unknown tools, repeated calls,
// provider retries, tool errors... Reports count them as recovered for the
// runs that succeeded.
//
// Secrets are scrubbed (package redact) from everything a comparison
// writes: each run's events before they reach its trace, and each result's
// answer, error and failure before it is stored. Reports are built from
// stored results, so they hold no secrets either; results stored by an
// earlier version are scrubbed again when read.
package compare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/state"
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
	// Concurrency bounds runs in flight. 0 means the default, 4; negative
	// is invalid.
	Concurrency int
	// Timeout bounds each run. 0 means the default, 2m; negative is
	// invalid.
	Timeout time.Duration
	// Seed is recorded with each result and, with LLM, seeds the model's
	// random draws where its provider makes any (the simulator's faults).
	// Default 1.
	Seed uint64
	// OutDir is the run folder: it receives results.db, the traces
	// (traces/<model>/<config>.jsonl, runs appended whole) and, from the
	// caller, the reports. Required; Identity.DirName names one per
	// comparison.
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
	// TaskDigests holds, by task id, a digest of what a task's runs
	// depend on besides the task, the config and the model spec: the
	// task's own scripted replies when the scripted model plays them
	// (--llm scripted). A stored result is reused only for the same
	// digest, so editing a task's replies runs it again. Default: none.
	TaskDigests map[string]string
	// Threads journals each run as a thread (package journal) in the run
	// folder's threads.db, named by ThreadName: a comparison stopped in
	// the middle of long runs resumes inside them, without repeating
	// their finished model and tool calls. Default false: an unfinished
	// run starts over.
	Threads bool
	// MaxModelCalls, MaxTokens (prompt plus completion) and MaxCostUSD
	// bound what the whole comparison spends: one tally (llm.SharedBudget)
	// that every model call of every run of this invocation adds to,
	// checked before each call (a finalizer's call is always made). Once
	// one is reached, runs in flight stop as their own budget would stop
	// them (a ReAct loop's finalizer answers from the work so far, marked
	// incomplete with failure "budget" and a reason naming the compare
	// budget; other nodes fail the run as "budget"); they are stored like
	// any other result. Runs not yet started are not started and not
	// stored: the report counts them (BudgetSummary.NotRun,
	// ConfigSummary.NotRun), and running the comparison again runs them.
	// Results reused from the store cost nothing. Only finalizers' calls
	// go past MaxModelCalls (calls are admitted one at a time); calls in
	// flight may go a little past MaxTokens and MaxCostUSD. Default 0: no
	// bound; negative is invalid. A pipeline's own limits still bound each
	// run.
	MaxModelCalls int
	MaxTokens     int
	MaxCostUSD    float64
	// RunFunc, when set, runs each (config, task) in place of the pipeline
	// loaded in this process: `planner compare --temporal` submits each run
	// to a Temporal workflow and waits for its result. It gets the run's
	// description and its tracer (events emitted there go to the run's
	// trace and count its faults) and returns what Pipeline.Run returns; a
	// nil result with an error counts as a failed run. The pipelines are
	// still loaded here, for their names, models and fingerprints, and
	// results are stored, resumed and reported as usual. Threads and the
	// compare budget (MaxModelCalls, MaxTokens, MaxCostUSD) do not reach
	// into its runs. Default nil: every run runs in this process.
	RunFunc func(ctx context.Context, run RunSpec, tracer *trace.Tracer) (*pipeline.Result, error)
}

// RunSpec describes one run of a comparison, for Options.RunFunc.
type RunSpec struct {
	// ConfigPath is the pipeline's YAML file, as Options.Configs gives
	// it; Config is the pipeline's name.
	ConfigPath, Config string
	// Task is the task to run.
	Task state.Task
	// LLM is the llm block that replaces the pipeline's (Options.LLM with
	// the comparison's seed); zero when the pipeline runs with its own.
	LLM config.LLM
	// Seed is the comparison's seed.
	Seed uint64
	// Model is the run's model spec and Fingerprint its fingerprint, under
	// which its result is stored; RunID is its trace run id (RunID).
	Model, Fingerprint, RunID string
	// Timeout is the run's time limit (Options.Timeout), for RunFunc to
	// apply where the run runs: RunFunc's context has no deadline of its
	// own, since the run may wait in a queue before it starts.
	Timeout time.Duration
}

// budget returns the comparison's shared budget, or nil when o sets none.
func (o Options) budget() *llm.SharedBudget {
	b := llm.Budget{MaxModelCalls: o.MaxModelCalls, MaxTokens: o.MaxTokens, MaxCostUSD: o.MaxCostUSD}
	if b.IsZero() {
		return nil
	}
	return llm.NewSharedBudget(b, CompareBudgetName)
}

// CompareBudgetName is what messages call the budget of a whole
// comparison (Options.MaxModelCalls, MaxTokens, MaxCostUSD).
const CompareBudgetName = "the compare budget"

// ThreadName is the thread that journals the run of task taskID with
// config under model, seed and config fingerprint fp, when
// Options.Threads is set: readable, a valid journal name, and distinct
// for every distinct run.
func ThreadName(config, model, taskID string, seed uint64, fp string) string {
	sum := sha256.Sum256([]byte(RunID(config, model, taskID, seed, fp)))
	name := strings.TrimLeft(safeName(fmt.Sprintf("%s.%s.s%d", config, taskID, seed)), "._-")
	if len(name) > 100 {
		name = name[:100]
	}
	return name + "." + hex.EncodeToString(sum[:6])
}

// ErrOptions marks invalid options.
var ErrOptions = errors.New("compare: invalid options")

// ErrInterrupted marks a comparison whose context ended before every run
// finished. Run's error wraps it and the context's error; the finished
// runs are stored, so running the same comparison again resumes.
var ErrInterrupted = errors.New("compare interrupted")

// Identity is what selects a comparison's runs; DirName names its run
// folder from it.
type Identity struct {
	// Suite names the suite as given: "demo", or a file path.
	Suite string
	// Selection says which of the suite's tasks run, as given ("slice
	// 900:1000, limit 50"); empty for all of them.
	Selection string
	// Configs are the pipeline paths, in order.
	Configs []string
	// LLM is the model override every config runs with; zero when each
	// config uses its own llm block.
	LLM config.LLM
	// Seed is the comparison's seed.
	Seed uint64
}

// DirName names the comparison's run folder:
// "<suite>-<model>-seed<seed>-<hash>", where <suite> is the suite file's
// base name without extension ("demo" for the built-in suite), <model> the
// override's ModelSpec made safe for a file name ("sim_noisy"; "own-llm"
// when each config uses its own llm block) and <hash> 8 hex digits of
// everything in id. The same comparison always gets the same name, so
// running a command again finds its results and resumes, while another
// suite, selection, set of configs, model or seed gets a folder of its own.
func (id Identity) DirName() string {
	h := sha256.New()
	js, _ := json.Marshal(struct { // a struct of strings and numbers always marshals
		Suite, Selection string
		Configs          []string
		LLM              config.LLM
		Seed             uint64
	}{id.Suite, id.Selection, id.Configs, id.LLM, id.Seed})
	h.Write(js)
	base := filepath.Base(id.Suite)
	suiteName := safeName(strings.TrimSuffix(base, filepath.Ext(base)))
	model := "own-llm"
	if id.LLM.Provider != "" {
		model = modelSlug(id.LLM)
	}
	return fmt.Sprintf("%s-%s-seed%d-%s", suiteName, model, id.Seed, hex.EncodeToString(h.Sum(nil))[:8])
}

// ModelSpec writes an llm block as the --llm spec that selects it
// (llm.ParseSpec's inverse): "provider:model", "sim:PROFILE" ("sim" for
// the default profile), "scripted:FILE" or "replay:FILE", or the provider
// alone when the block names nothing more. Reports show it, and results
// are stored under it.
func ModelSpec(c config.LLM) string {
	var rest string
	switch c.Provider {
	case "sim":
		rest = c.Profile
	case "scripted", "replay":
		rest = c.Script
	default:
		rest = c.Model
	}
	if rest == "" {
		return c.Provider
	}
	return c.Provider + ":" + rest
}

// modelSlug is c's ModelSpec made safe for a file name; a script or
// cassette counts by its base name.
func modelSlug(c config.LLM) string {
	if c.Script != "" && (c.Provider == "scripted" || c.Provider == "replay") {
		c.Script = filepath.Base(c.Script)
	}
	return safeName(ModelSpec(c))
}

// RunID is the trace run id of one run: its config, model spec, task id,
// seed and the first 8 digits of its fingerprint, joined by "/"
// ("react/sim:noisy/demo-01/1/3f9a2c1b"), so no two runs that a run
// folder can hold share one.
func RunID(configName, model, taskID string, seed uint64, fp string) string {
	return fmt.Sprintf("%s/%s/%s/%d/%s", configName, model, taskID, seed, fp[:min(8, len(fp))])
}

// Failure kinds the runner adds to the engine's own (the state.Failure*
// constants).
const (
	// FailureWrong marks a run that finished normally with an answer the
	// scorer judged wrong.
	FailureWrong = state.FailureWrong
	// FailureError marks a run that failed with an error the engine did not
	// classify.
	FailureError = state.FailureError
)

type job struct {
	cfg  int
	task int
}

// Run executes the comparison and returns the report. Results already in
// OutDir's store for the same seed are reused, not re-run.
func Run(ctx context.Context, loader Loader, tasks []state.Task, opts Options) (_ *Report, err error) {
	if len(opts.Configs) == 0 || opts.OutDir == "" {
		return nil, fmt.Errorf("%w: need at least one config and an output folder", ErrOptions)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%w: no tasks to run", ErrOptions)
	}
	if opts.Concurrency < 0 {
		return nil, fmt.Errorf("%w: concurrency must be at least 1 (0 for the default), got %d", ErrOptions, opts.Concurrency)
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("%w: the timeout must be positive (0 for the default), got %s", ErrOptions, opts.Timeout)
	}
	if opts.MaxModelCalls < 0 || opts.MaxTokens < 0 || opts.MaxCostUSD < 0 || math.IsNaN(opts.MaxCostUSD) {
		return nil, fmt.Errorf("%w: the compare budget's limits must not be negative (0 for none), got %d model calls, %d tokens, $%g",
			ErrOptions, opts.MaxModelCalls, opts.MaxTokens, opts.MaxCostUSD)
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = 4
	}
	if opts.Timeout == 0 {
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
	models := make([]config.LLM, len(opts.Configs)) // the llm block each config runs with
	names := map[string]string{}
	defer func() {
		for _, p := range pipes {
			if p != nil {
				// Close only stops what tools started (MCP servers); a
				// failure to stop one cannot change the comparison.
				_ = p.Close()
			}
		}
	}()
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
		models[i] = p.Config.LLM
		if opts.LLM.Provider != "" {
			models[i] = opts.LLM
		}
	}
	specs := make([]string, len(models))
	for i, m := range models {
		specs[i] = ModelSpec(m)
	}
	// printOf is the fingerprint of config c's runs of task id: the
	// config's, with the task's digest when it has one.
	printOf := func(c int, id string) string {
		d := opts.TaskDigests[id]
		if d == "" {
			return prints[c]
		}
		sum := sha256.Sum256([]byte(prints[c] + "\x00" + d))
		return hex.EncodeToString(sum[:])[:16]
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
			if !done[storeKey(pipes[c].Config.Name, tasks[t].ID, printOf(c, tasks[t].ID), specs[c])] {
				jobs = append(jobs, job{cfg: c, task: t})
			}
		}
	}
	var bar *progressbar.ProgressBar
	if opts.Progress != nil && len(jobs) > 0 {
		bar = progressbar.NewOptions(len(jobs), progressbar.OptionSetWriter(opts.Progress), progressbar.OptionSetDescription("compare"),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(opts.Progress) }))
	}
	var traces *traceSet
	if !opts.NoTraces && len(jobs) > 0 {
		files := make([]traceKey, len(pipes))
		for i, p := range pipes {
			files[i] = traceKey{config: p.Config.Name, model: specs[i], slug: modelSlug(models[i])}
		}
		if traces, err = openTraces(opts.OutDir, files); err != nil {
			return nil, err
		}
		defer func() {
			if cerr := traces.close(); cerr != nil && err == nil {
				err = fmt.Errorf("compare: closing traces: %w", cerr)
			}
		}()
	}
	var threads journal.Store
	if opts.Threads && opts.RunFunc == nil && len(jobs) > 0 {
		ts, err := sqlitestore.Open(ctx, filepath.Join(opts.OutDir, "threads.db"))
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		defer ts.Close()
		threads = ts
	}
	// The wall time runs from here, the first run's start (the trace files
	// and the threads store are open), to the last result stored.
	began := time.Now()
	work := make(chan job)
	// Room for a whole batch: a worker whose run ended does not wait while
	// the writer commits the previous batch.
	results := make(chan Record, max(opts.Concurrency, maxBatch))
	written := make(chan error, 1)
	var stored int
	go func() {
		var err error
		stored, err = writeResults(context.WithoutCancel(ctx), store, traces, results, bar)
		written <- err
	}()
	budget := opts.budget()
	notRun := make([]atomic.Int64, len(pipes)) // by config: runs the spent budget kept from starting
	var cutShort atomic.Int64                  // runs the budget refused a model call
	var wg sync.WaitGroup
	for w := 0; w < opts.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				if budget.Exhausted() != nil {
					notRun[j.cfg].Add(1) // not started, not stored: a rerun runs it
					if bar != nil {
						_ = bar.Add(1)
					}
					continue
				}
				rctx := llm.WithSharedBudget(ctx, budget) // a scope of its own, for SharedBudgetRefused
				rec, ok := runOne(rctx, pipes[j.cfg], tasks[j.task], opts, traces, threads, specs[j.cfg], printOf(j.cfg, tasks[j.task].ID))
				if !ok {
					continue // interrupted: leave it for the resume
				}
				if llm.SharedBudgetRefused(rctx) {
					cutShort.Add(1)
				}
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
	total := len(tasks) * len(pipes)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w after %d of %d runs; they are saved in %s and a rerun resumes from them: %w",
			ErrInterrupted, total-len(jobs)+stored, total, opts.OutDir, err)
	}
	records, err := store.All(ctx, opts.Seed)
	if err != nil {
		return nil, err
	}
	want := map[string]int{} // config name -> index
	order := make([]string, len(pipes))
	for i, p := range pipes {
		want[p.Config.Name] = i
		order[i] = p.Config.Name
	}
	var mine []Record
	for _, r := range records {
		t, ok := ids[r.TaskID]
		if c, mineCfg := want[r.Config]; mineCfg && ok && printOf(c, r.TaskID) == r.Fingerprint && specs[c] == r.Model {
			mine = append(mine, judge(scrubRecord(opts.Scrubber, r), tasks[t], opts.Scorer))
		}
	}
	provider := opts.LLM.Provider
	if provider == "" {
		provider = pipes[0].Config.LLM.Provider
	}
	rep := Summarize(mine, order)
	for i := range rep.Configs {
		rep.Configs[i].ModelSpec = opts.Scrubber.String(specs[i])
		rep.Configs[i].NotRun = int(notRun[i].Load())
	}
	if budget != nil {
		b := budget.Limits()
		bs := &BudgetSummary{MaxModelCalls: b.MaxModelCalls, MaxTokens: b.MaxTokens, MaxCostUSD: b.MaxCostUSD, CutShort: int(cutShort.Load())}
		bs.ModelCalls, bs.Tokens, bs.CostUSD = budget.Spent()
		if err := budget.Exhausted(); err != nil {
			bs.Spent, bs.Reason = true, err.Error()
		}
		for i := range notRun {
			bs.NotRun += int(notRun[i].Load())
		}
		rep.Budget = bs
	}
	rep.ModelSpec = opts.Scrubber.String(ModelSpec(opts.LLM))
	if opts.LLM.Provider == "" {
		var distinct []string
		for _, s := range specs {
			if !slices.Contains(distinct, s) {
				distinct = append(distinct, s)
			}
		}
		rep.ModelSpec = opts.Scrubber.String(strings.Join(distinct, ", "))
	}
	rep.Dir = opts.OutDir
	rep.Model = opts.Scrubber.String(loader.ModelLabel(provider))
	kind := loader.ModelKind(provider)
	rep.Simulated = kind == llm.KindSimulated
	rep.Scripted = kind == llm.KindScripted
	rep.TaskReplies = rep.Scripted && slices.IndexFunc(models, func(m config.LLM) bool { return !scripted.PlaysTaskReplies(m) }) < 0
	rep.Suite = opts.Scrubber.String(opts.Suite)
	rep.Seed = opts.Seed
	rep.Tasks = len(tasks)
	rep.Ran = len(jobs)
	if rep.Budget != nil {
		rep.Ran -= rep.Budget.NotRun
	}
	rep.Reused = total - len(jobs)
	rep.WallSeconds = wall.Seconds()
	rep.GeneratedAt = time.Now().UTC()
	return rep, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName turns a config name into a file name.
func safeName(s string) string { return unsafeName.ReplaceAllString(s, "_") }

// maxBatch bounds the records stored in one transaction.
const maxBatch = 256

// batchWait is how long a batch waits for more records once its first
// has arrived. A transaction costs far more than a row (begin, prepare,
// commit to the WAL), and runs that end a few milliseconds apart would
// otherwise be committed one or two at a time. A record is thus stored
// at most batchWait after its run ended; the last batch, once in is
// closed, at once.
const batchWait = 20 * time.Millisecond

// writeResults stores records as they arrive, batching those that arrive
// within batchWait of a batch's first (up to maxBatch) into one
// transaction, and advances the progress bar. Traces are flushed before
// each batch is committed, so a stored record's trace lines are on disk.
// It drains in even after a failed write and returns the number of
// records stored and the first error.
func writeResults(ctx context.Context, store *Store, traces *traceSet, in <-chan Record, bar *progressbar.ProgressBar) (int, error) {
	var first error
	stored := 0
	batch := make([]Record, 0, maxBatch)
	wait := time.NewTimer(batchWait)
	wait.Stop()
	for rec := range in {
		batch = append(batch[:0], rec)
		wait.Reset(batchWait)
	fill:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-in:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			case <-wait.C:
				break fill
			}
		}
		wait.Stop()
		if err := traces.flush(); err != nil && first == nil {
			first = fmt.Errorf("compare: writing traces: %w", err)
		}
		if err := store.PutAll(ctx, batch); err != nil {
			if first == nil {
				first = err
			}
		} else {
			stored += len(batch)
		}
		if bar != nil {
			_ = bar.Add(len(batch))
		}
	}
	return stored, first
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

func storeKey(config, taskID, fingerprint, model string) string {
	return config + "\x00" + taskID + "\x00" + fingerprint + "\x00" + model
}

// judge scores a record's answer for task and labels a normally finished
// run with a wrong answer FailureWrong. It is applied to fresh and stored
// records alike, so a stored verdict never outlives a change of scorer.
func judge(rec Record, task state.Task, sc verify.Scorer) Record {
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

// runOne runs one task on one pipeline whose model spec is model and
// fingerprint fp. It reports false when ctx ended during the run, whose
// result is then left for a resume.
func runOne(ctx context.Context, p *pipeline.Pipeline, task state.Task, opts Options, traces *traceSet, threads journal.Store, model, fp string) (Record, bool) {
	rec := Record{Config: p.Config.Name, TaskID: task.ID, Seed: opts.Seed, Model: model, Fingerprint: fp}
	faults := &faultCounter{}
	tracer := trace.NewWithOptions(RunID(p.Config.Name, model, task.ID, opts.Seed, fp), trace.WithScrubber(opts.Scrubber), trace.WithSinks(faults))
	// The trace is kept in memory and appended to the config's trace file
	// once the run is over, so file I/O neither delays the run nor counts in
	// its latency, and an interrupted run leaves no partial trace behind.
	var buf *traceBuffer
	var sink *trace.JSONL
	if traces != nil {
		buf = newTraceBuffer()
		defer buf.release()
		sink = trace.NewJSONL(buf)
		tracer.AddSink(sink)
	}
	// A RunFunc's run keeps to the time limit where it runs (RunSpec.Timeout):
	// the wait here may include its time in a queue.
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if opts.RunFunc == nil {
		rctx, cancel = context.WithTimeout(ctx, opts.Timeout)
	}
	defer cancel()
	began := time.Now()
	var (
		res *pipeline.Result
		err error
	)
	switch {
	case opts.RunFunc != nil:
		llmCfg := opts.LLM
		if llmCfg.Provider != "" {
			llmCfg.Seed = opts.Seed
		}
		res, err = opts.RunFunc(rctx, RunSpec{ConfigPath: p.Config.File, Config: p.Config.Name, Task: task, LLM: llmCfg, Seed: opts.Seed,
			Model: model, Fingerprint: fp, RunID: RunID(p.Config.Name, model, task.ID, opts.Seed, fp), Timeout: opts.Timeout}, tracer)
	case threads == nil:
		res, err = p.Run(rctx, task, tracer)
	default:
		res, _, err = p.RunThread(rctx, task, tracer, pipeline.Thread{Store: threads, Name: ThreadName(p.Config.Name, model, task.ID, opts.Seed, fp)})
	}
	if res == nil || res.State == nil { // the run (or its thread) could not start: report it as the run's failure
		if err == nil {
			err = errors.New("compare: the run returned no result")
		}
		res = &pipeline.Result{State: state.NewState(task)}
		res.State.Failure = FailureError
	}
	rec.LatencyMS = float64(time.Since(began).Microseconds()) / 1000
	if ctx.Err() != nil {
		return rec, false
	}
	if sink != nil && sink.Close() == nil {
		rec.Trace = traces.add(p.Config.Name, model, buf.bytes())
	}
	rec.Faults = faults.counts()
	st := res.State
	u := st.Usage.Snapshot()
	rec.Answer, rec.Complete, rec.Failure = st.Answer, st.Complete && err == nil, st.Failure
	if rec.Failure == "" && len(st.Incidents) > 0 {
		rec.Failure = st.Incidents[0] // the first thing that went wrong
	}
	rec.ModelCalls, rec.PromptTokens, rec.CompletionTokens, rec.ToolCalls = u.ModelCalls, u.PromptTokens, u.CompletionTokens, u.ToolCalls
	rec.CachedPromptTokens = u.CachedPromptTokens
	rec.Estimated, rec.CostUSD, rec.Steps = u.Estimated, u.CostUSD, len(res.Steps)
	if err != nil {
		rec.Error = err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			rec.Failure = state.FailureTimeout
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
// succeed (see Succeeded). A run that succeeded counts under Recovered
// once for each kind it met: its failure kind, if any (a ReWOO step failed
// but the solver still answered correctly), and each kind of its Faults
// (a parse failure fed back, a provider retry...); RecoveryEvents adds up
// those faults' events and RecoveredRuns counts the runs.
func Summarize(records []Record, order []string) *Report {
	by := map[string][]Record{}
	for _, r := range records {
		by[r.Config] = append(by[r.Config], r)
	}
	rep := &Report{}
	for _, name := range order {
		rs := by[name]
		s := ConfigSummary{Config: name, Runs: len(rs), Failures: map[string]int{}, Recovered: map[string]int{}, RecoveryEvents: map[string]int{}}
		lat := make([]float64, 0, len(rs))
		verdicts := make([]verify.Result, len(rs))
		for i, r := range rs {
			verdicts[i] = verify.Result{Correct: r.Correct, EM: r.EM, F1: r.F1, HasF1: r.HasF1, Unscorable: !r.Scored}
			if r.Complete {
				s.Completed++
			}
			if Succeeded(r) {
				met := map[string]bool{}
				if r.Failure != "" {
					met[r.Failure] = true
				}
				for kind, n := range r.Faults {
					if n > 0 {
						met[kind] = true
						s.RecoveryEvents[kind] += n
					}
				}
				for kind := range met {
					s.Recovered[kind]++
				}
				if len(met) > 0 {
					s.RecoveredRuns++
				}
			} else if r.Failure != "" {
				s.Failures[r.Failure]++
			}
			s.ModelCalls += r.ModelCalls
			s.PromptTokens += r.PromptTokens
			s.CachedPromptTokens += r.CachedPromptTokens
			s.CompletionTokens += r.CompletionTokens
			s.ToolCalls += r.ToolCalls
			s.CostUSD += r.CostUSD
			s.Estimated = s.Estimated || r.Estimated
			if r.Estimated {
				s.EstimatedRuns++
			}
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
