package compare

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/score"
	"github.com/planner-engine/planner/eval/trajectory"
	"github.com/planner-engine/planner/internal/par"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/respcache"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/schollz/progressbar/v3"
)

// execution is a comparison while its runs execute: what they write to
// (the trace files, the threads store, the progress bar, the writer's
// channel), the compare budget and what the budget stopped.
type execution struct {
	*comparison
	traces   *traceSet                // nil: no trace files
	threads  *sqlitestore.Store       // nil: the runs are not journaled
	bar      *progressbar.ProgressBar // nil: no progress bar
	budget   *llm.SharedBudget        // nil: no compare budget
	results  chan Record              // to the writer (writeResults)
	notRun   []atomic.Int64           // by entry: runs the spent budget kept from starting
	cutShort atomic.Int64             // runs the budget refused a model call
	decider  *decider                 // nil: no stopping when decided
}

// ran is what executing a comparison's jobs did.
type ran struct {
	jobs     int               // runs planned
	wall     time.Duration     // from the first run's start to the last result stored
	notRun   []int             // by entry: runs the spent budget kept from starting
	cutShort int               // runs the budget refused a model call
	budget   *llm.SharedBudget // nil: no compare budget
	stopped  []*Stopped        // by entry: what stopped it (Options.StopWhenDecided), nil if nothing
}

// execute runs jobs, at most Options.Concurrency at once, while one
// writer stores their results, and says what it did. A comparison whose
// ctx ends first fails with ErrInterrupted, its finished runs stored.
func (c *comparison) execute(ctx context.Context, jobs []job) (_ ran, err error) {
	x, err := c.start(ctx, jobs)
	if err != nil {
		return ran{}, err
	}
	defer func() {
		if cerr := x.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	// The wall time runs from here, the first run's start (the trace files
	// and the threads store are open), to the last result stored.
	began := time.Now()
	stored, err := x.runAll(ctx, jobs)
	wall := time.Since(began)
	if x.bar != nil {
		_ = x.bar.Finish()
	}
	if err != nil {
		return ran{}, err
	}
	if err := ctx.Err(); err != nil {
		total := c.runs()
		return ran{}, fmt.Errorf("%w after %d of %d runs; they are saved in %s and a rerun resumes from them: %w",
			ErrInterrupted, total-len(jobs)+stored, total, c.opts.OutDir, err)
	}
	out := ran{jobs: len(jobs), wall: wall, notRun: make([]int, len(x.notRun)), cutShort: int(x.cutShort.Load()), budget: x.budget,
		stopped: make([]*Stopped, len(x.notRun))}
	for i := range x.notRun {
		out.notRun[i] = int(x.notRun[i].Load())
		out.stopped[i] = x.decider.result(i)
		if out.stopped[i] != nil {
			out.jobs -= out.stopped[i].Skipped
		}
	}
	return out, nil
}

// start prepares the execution of jobs: the progress bar, the trace files
// (unless Options.NoTraces) and the threads store (Options.Threads, for
// runs in this process), none of them when there is nothing to run.
func (c *comparison) start(ctx context.Context, jobs []job) (*execution, error) {
	x := &execution{comparison: c, budget: c.opts.budget(), notRun: make([]atomic.Int64, len(c.cfgs.entries))}
	if c.opts.StopWhenDecided {
		d, err := c.newDecider(ctx)
		if err != nil {
			return nil, err
		}
		x.decider = d
	}
	if len(jobs) == 0 {
		return x, nil
	}
	if c.opts.Progress != nil {
		x.bar = progressbar.NewOptions(len(jobs), progressbar.OptionSetWriter(c.opts.Progress), progressbar.OptionSetDescription("compare"),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(c.opts.Progress) }))
	}
	if !c.opts.NoTraces {
		keys := make([]traceKey, len(c.cfgs.entries))
		for i, e := range c.cfgs.entries {
			keys[i] = traceKey{config: e.name, model: e.spec, slug: modelSlug(e.model)}
		}
		traces, err := openTraces(c.opts.OutDir, keys)
		if err != nil {
			return nil, err
		}
		x.traces = traces
	}
	if c.opts.Threads && c.opts.RunFunc == nil {
		ts, err := sqlitestore.Open(ctx, filepath.Join(c.opts.OutDir, "threads.db"))
		if err != nil {
			_ = x.close() // the comparison fails with the store's error
			return nil, fmt.Errorf("compare: %w", err)
		}
		x.threads = ts
	}
	return x, nil
}

// newDecider returns the decider of Options.StopWhenDecided, fed the
// results an earlier invocation stored, repeat by repeat.
func (c *comparison) newDecider(ctx context.Context) (*decider, error) {
	d, err := newDecider(len(c.cfgs.entries), max(0, c.cfgs.baseline(c.opts.Baseline)), c.opts.StopAlpha)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	stored, err := c.records(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(stored, func(a, b Record) int { return cmp.Compare(a.Repeat, b.Repeat) })
	for _, r := range stored {
		d.add(r.entry-1, r)
	}
	return d, nil
}

// close closes the threads store and the trace files, and returns the
// trace files' error: a run's trace lines that did not reach the disk.
func (x *execution) close() error {
	if x.threads != nil {
		_ = x.threads.Close() // every thread's status is saved by then
	}
	if err := x.traces.close(); err != nil {
		return fmt.Errorf("compare: closing traces: %w", err)
	}
	return nil
}

// runAll runs jobs on a pool of Options.Concurrency workers, in order,
// and hands their records to one writer (writeResults). Once ctx ends no
// further run starts. It returns how many records were stored, and the
// writer's first error or a worker's panic.
func (x *execution) runAll(ctx context.Context, jobs []job) (int, error) {
	// Room for a whole batch: a worker whose run ended does not wait while
	// the writer commits the previous batch.
	x.results = make(chan Record, max(x.opts.Concurrency, maxBatch))
	var stored int
	written := make(chan error, 1)
	go func() {
		var err error
		stored, err = writeResults(context.WithoutCancel(ctx), x.store, x.traces, x.results, x.bar)
		written <- err
	}()
	_, errs := par.Map(ctx, x.opts.Concurrency, len(jobs), func(ctx context.Context, i int) (struct{}, error) {
		x.do(ctx, jobs[i])
		return struct{}{}, nil
	})
	close(x.results)
	if err := <-written; err != nil {
		return stored, err
	}
	for _, err := range errs {
		if errors.Is(err, par.ErrPanic) {
			return stored, fmt.Errorf("compare: %w", err)
		}
	}
	return stored, nil
}

// do makes the run of j and hands its record to the writer, unless the
// compare budget is spent before it starts (the run is then counted as not
// run, not stored: a rerun runs it) or ctx ends during it (it is left for
// the resume).
func (x *execution) do(ctx context.Context, j job) {
	spent := x.budget.Exhausted() != nil
	if spent || (x.decider != nil && x.decider.skip(j.e)) {
		if spent {
			x.notRun[j.e].Add(1)
		}
		if x.bar != nil {
			_ = x.bar.Add(1)
		}
		return
	}
	rec, refused, ok := x.runOne(ctx, j)
	if !ok {
		return
	}
	if x.decider != nil {
		x.decider.add(j.e, x.successFor(ctx, rec))
	}
	if refused {
		x.cutShort.Add(1)
	}
	x.results <- rec
}

// runOne makes the run of j and returns its record, scrubbed and judged,
// and whether the compare budget refused one of its model calls. It
// reports ok false when ctx ended during the run, whose result is then
// left for a resume.
func (x *execution) runOne(ctx context.Context, j job) (rec Record, refused, ok bool) {
	task, e := x.tasks[j.task], &x.cfgs.entries[j.e]
	name, model, seed := e.name, e.spec, SeedOf(x.opts.Seed, j.rep)
	fp := x.cfgs.printOf(j.e, task.ID)
	rec = Record{Config: name, TaskID: task.ID, Seed: seed, Repeat: j.rep, Model: model, Fingerprint: fp}
	faults, cut, path, route := &faultCounter{}, &budgetRefusals{}, trajectory.NewCollector(trajectory.Options{}), &routeCollector{}
	sinks := scrubbed{s: x.opts.Scrubber, sinks: []trace.Sink{faults, cut, path, route}}
	// The trace is kept in memory and appended to the config's trace file
	// once the run is over, so file I/O neither delays the run nor counts in
	// its latency, and an interrupted run leaves no partial trace behind.
	var buf *traceBuffer
	var jsonl *trace.JSONL
	if x.traces != nil {
		buf = x.traces.buffer()
		defer buf.release()
		jsonl = trace.NewJSONL(buf)
		sinks.sinks = append(sinks.sinks, jsonl)
	}
	began := time.Now()
	var cache *respcache.RunHook
	if x.opts.Cache != nil && x.opts.RunFunc == nil {
		cache = x.opts.Cache.ForRun(j.rep, sinks, cacheOptions(e, seed)...)
	}
	res, err := x.run(ctx, j, RunID(name, model, task.ID, seed, fp), fp, sinks, cache)
	rec.LatencyMS = float64(time.Since(began).Microseconds()) / 1000
	if cache != nil {
		st := cache.Stats()
		rec.CacheHits, rec.CacheSavedUSD = st.Hits, st.SavedUSD
	}
	if ctx.Err() != nil {
		return rec, false, false
	}
	if jsonl != nil && jsonl.Close() == nil {
		rec.Trace = x.traces.add(name, model, buf.bytes())
	}
	rec.Faults = faults.counts()
	rec.Route = route.route()
	if b, err := json.Marshal(path.Trajectory()); err == nil {
		rec.Trajectory = b
	}
	fill(&rec, res, err)
	return judge(scrubRecord(x.opts.Scrubber, rec), task, x.opts.Scorer), cut.seen.Load(), true
}

// successFor returns rec judged by Options.SuccessScorer when one is set,
// as the report will judge it, for the stopping rule (Options.
// StopWhenDecided); rec itself otherwise. A scorer that fails on the run
// leaves it unscored, so it feeds no pair.
func (x *execution) successFor(ctx context.Context, rec Record) Record {
	name := x.opts.SuccessScorer
	if name == "" {
		return rec
	}
	for _, sc := range x.opts.Scorers {
		if sc.Name() != name {
			continue
		}
		t := x.tasks[x.ids[rec.TaskID]]
		v, err := sc.Score(ctx, score.Input{TaskID: rec.TaskID, Question: t.Question, Answer: rec.Answer, Reference: t.Answer})
		res := ScoreResult{Score: v.Score, Pass: v.Pass, Unscorable: v.Unscorable}
		if err != nil {
			res = ScoreResult{Error: err.Error()}
		}
		return judgeBy(rec, res)
	}
	return rec
}

// budgetRefusals is a trace sink that notes whether a run's model call was
// refused by a shared budget (the guard event llm.GuardSharedBudget).
type budgetRefusals struct{ seen atomic.Bool }

// Emit notes e when it reports a refusal.
func (b *budgetRefusals) Emit(e trace.Event) {
	if e.Kind == trace.KindGuard && e.Data["guard"] == llm.GuardSharedBudget {
		b.seen.Store(true)
	}
}

// run makes the run of j, with trace run id id and fingerprint fp, its
// events going to sink: through Options.RunFunc when set, else through
// the pipeline's Run within Options.Timeout, journaled as a thread when
// the comparison has a threads store.
func (x *execution) run(ctx context.Context, j job, id, fp string, sink trace.Sink, cache *respcache.RunHook) (*planner.Result, error) {
	e, task := &x.cfgs.entries[j.e], x.tasks[j.task]
	p, seed := e.pipes[j.rep], SeedOf(x.opts.Seed, j.rep)
	if x.opts.RunFunc != nil {
		// The run keeps to its time limit where it runs (RunSpec.Timeout):
		// the wait here may include its time in a queue.
		// The llm block goes with the run when the comparison overrides the
		// pipeline's, and for a later repeat of a simulated model, whose
		// seed the worker's pipeline would not have.
		var override config.LLM
		if x.opts.models()[j.e%x.cfgs.models].Provider != "" || (e.kind == llm.KindSimulated && j.rep > 0) {
			override = withSeed(e.model, seed)
		}
		res, err := x.opts.RunFunc(ctx, RunSpec{ConfigPath: p.Config().File, Config: e.name, Task: task, LLM: override,
			Seed: seed, Repeat: j.rep, Model: e.spec, Fingerprint: fp, RunID: id, Timeout: x.opts.Timeout})
		if res != nil {
			for _, e := range res.Trace {
				sink.Emit(e)
			}
		}
		return res, err
	}
	ctx, cancel := context.WithTimeout(ctx, x.opts.Timeout)
	defer cancel()
	opts := []planner.RunOption{planner.WithTask(task), planner.WithRunID(id), planner.WithTraceSink(sink)}
	if x.threads != nil {
		opts = append(opts, planner.WithThread(x.threads, ThreadName(e.name, e.spec, task.ID, seed, fp)),
			planner.WithApprover(journal.ApproverFunc(refuseApproval)))
	}
	if x.budget != nil {
		opts = append(opts, planner.WithSharedBudget(x.budget))
	}
	if cache != nil {
		opts = append(opts, planner.WithRunHooks(cache))
	}
	return p.Run(ctx, "", opts...)
}

// cacheOptions are the response cache's settings for a run of e with
// seed: the model's settings that its calls do not carry (its spec,
// endpoint, default temperature and max tokens), and for an offline model,
// which answers from who calls rather than from the request alone (the
// simulator, a scripted model), the caller and the seed.
func cacheOptions(e *entry, seed uint64) []respcache.RunOption {
	m := e.model
	opts := []respcache.RunOption{respcache.WithModelSettings("spec="+e.spec, "base_url="+m.BaseURL, fmt.Sprintf("max_tokens=%d", m.MaxTokens))}
	if m.Temperature != nil {
		opts = append(opts, respcache.WithModelTemperature(*m.Temperature))
	}
	if e.kind != llm.KindReal {
		opts = append(opts, respcache.WithCaller(), respcache.WithModelSettings(fmt.Sprintf("seed=%d", seed)))
	}
	return opts
}

// refuseApproval answers a tool call that needs approval in a run
// journaled as a thread as a run without a thread has it answered: nobody
// can approve it, so it fails the run (a thread's default approver would
// make the run wait for a decision that a comparison never gives).
func refuseApproval(_ context.Context, a journal.Approval) (journal.Decision, error) {
	return journal.Decision{}, fmt.Errorf("%w: tool %q", journal.ErrNoApprover, a.Tool)
}

// fill sets rec's outcome from the run's result res (nil when the run, or
// its thread, could not start) and error err: its answer, whether it is
// complete, its failure kind, usage and steps, and its error.
func fill(rec *Record, res *planner.Result, err error) {
	if res == nil { // report it as the run's failure
		if err == nil {
			err = errors.New("compare: the run returned no result")
		}
		res = &planner.Result{Failure: FailureError}
	}
	rec.Answer, rec.Complete, rec.Failure = res.Answer, res.Complete && err == nil, res.Failure
	if rec.Failure == "" && res.State != nil && len(res.State.Incidents) > 0 {
		rec.Failure = res.State.Incidents[0] // the first thing that went wrong
	}
	u := res.Usage
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
}

// scrubbed is a sink that scrubs each event with s (Options.Scrubber)
// before handing it to sinks, so that a comparison's scrubber reaches its
// traces whatever the Engine's scrubber is.
type scrubbed struct {
	s     trace.Scrubber
	sinks []trace.Sink
}

// Emit scrubs e and hands it to every sink.
func (k scrubbed) Emit(e trace.Event) {
	e = trace.Scrub(k.s, e)
	for _, s := range k.sinks {
		s.Emit(e)
	}
}

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
