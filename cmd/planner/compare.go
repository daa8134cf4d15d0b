package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/planner-engine/planner/autopilot/fit"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/score"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/llm/respcache"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/planner-engine/planner/verify"
	"github.com/spf13/cobra"
)

// defaultRunFolder is what --out's help shows as its default: the pattern
// of the run folder compare names when --out is not given (see
// compare.Identity.DirName).
const defaultRunFolder = "out/compare/<suite>-<model>-seed<N>-<hash>"

type compareFlags struct {
	suite, format, slice, tasks, out, scorer string
	cache, judgeLLM, judgeCache              string
	scores                                   []string
	baseline                                 string
	configs, llms                            []string
	limit, concurrency, repeats              int
	maxModelCalls, maxTokens                 int
	maxCostUSD                               float64
	timeout                                  time.Duration
	seed                                     uint64
	json, quiet, threads, stop               bool
	temporal                                 temporalFlags
}

func newCompareCmd(p process) *cobra.Command {
	f := &compareFlags{}
	c := &cobra.Command{
		Use:   "compare --suite SUITE --config A.yaml --config B.yaml ... [flags]",
		Short: "Run several pipelines on a task suite and report them side by side",
		Long: `Run every config on every task of a suite (bounded concurrency, per-task timeout, seed),
store each result in SQLite in the comparison's run folder so an interrupted compare resumes
where it stopped, keep each run's JSONL trace, and report per config: success rate (EM/F1
where the scorer has them), model calls, prompt and completion tokens, tool calls, latency
p50/p95, estimated cost, failures by kind and the faults correct runs recovered from.

Each comparison has a run folder: --out when given, else
out/compare/<suite>-<model>-seed<N>-<hash>, named from the suite, the selection, the configs,
the model and the seed, so running the same command again resumes in it and another comparison
never writes into it. It holds results.db, traces/<model>/<config>.jsonl and report.md,
report.json and report.html (offline charts); its path is printed.

--suite demo is the built-in demo suite, --suite mixed a built-in suite of knowledge, lookup,
arithmetic, multi-hop and Game of 24 tasks; other suites are files: JSONL tasks, GSM8K, Game of 24
CSV, HotpotQA or ParallelQA JSON (format detected, or --format).

With --llm sim the numbers come from a simulated oracle model and measure the engine, not any
model; every output says so. Its capabilities are simulated from each task's gold steps and a
profile per task type: it knows no looked-up fact its prompt does not show and slips on mental
arithmetic, so paradigms without tools fail lookups.

With --llm scripted (no file) each run plays its task's own "replies" from a JSONL suite, in
order, from the first: a suite of recorded runs (a model's raw outputs as each task's replies)
becomes a regression test, whose scorer checks that the engine reaches each recorded answer, and
whose traces (traces/<model>/<config>.jsonl) hold each run's actions and observations. Every task
needs replies; the outputs say they are scripted.

--max-cost-usd, --max-tokens and --max-model-calls bound what the whole comparison spends (each
pipeline's limits still bound its own runs). Once one is reached, runs in flight stop early: a
ReAct loop's finalizer answers from the work so far (incomplete, failure budget, the reason
naming the compare budget) and other nodes fail as budget; those runs are stored. Runs not yet
started are not started and not stored: the table, the reports and report.json ("budget") count
them, and the command exits 4. Running the same command again runs them, with a fresh budget.

--temporal HOST:PORT runs each (config, task) as a Temporal workflow on the planner workers of
--task-queue (planner worker --temporal), whose model and tool calls are activities: the runs
spread across the workers' machines and survive a worker's death. The comparison's store,
progress bar and reports stay here. Each run's workflow id is named from the run folder and the
run, so running the command again attaches to the runs still going instead of starting them again.`,
		Example: `  planner compare --suite demo --config configs/react.yaml --config configs/plan_execute.yaml --llm sim:noisy
  planner compare --suite ../shared/data/gsm8k/test.jsonl --limit 20 --llm sim --config configs/react.yaml --config configs/rewoo.yaml
  planner compare --suite demo --limit 5 --config configs/cot.yaml --llm openai:gpt-4o-mini --concurrency 2 --out runs/cot   # needs OPENAI_API_KEY
  planner compare --suite recorded.jsonl --llm scripted --config configs/react.yaml   # needs recorded.jsonl (tasks with "replies")
  planner compare --suite demo --config configs/react.yaml --llm anthropic:claude-3-5-haiku-latest --max-cost-usd 0.50   # needs ANTHROPIC_API_KEY
  planner compare --temporal localhost:7233 --suite demo --llm sim --config configs/react.yaml   # needs Temporal and planner workers (planner worker --temporal)`,
		Args: exactArgs(0, "no arguments (use --suite and --config)"),
		RunE: func(c *cobra.Command, _ []string) error {
			return runCompare(c, p, f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.suite, "suite", "demo", "task suite: demo, mixed, sorting (sorting32, sorting64), or a file path")
	fl.StringVar(&f.format, "format", "auto", "suite format: auto, jsonl, gsm8k, game24, hotpotqa, parallelqa, sorting")
	fl.IntVar(&f.limit, "limit", 0, "use only the first N tasks, N at least 1 (after --slice; default all)")
	fl.StringVar(&f.slice, "slice", "", "task range a:b (0-based, end exclusive), e.g. 900:1000")
	fl.StringVar(&f.tasks, "tasks", "", "use only these tasks (after --slice and --limit): odd or even (every other task, counted from 1 in the suite's order; the halves planner autopilot fit --tasks learns from) or task ids separated by commas (default all)")
	fl.StringArrayVarP(&f.configs, "config", "c", nil, "pipeline YAML (repeat for each config)")
	fl.StringArrayVar(&f.llms, "llm", nil, "model for every config (e.g. sim:noisy, openai:gpt-4o-mini, scripted for each task's own replies), or a models file (FILE.yaml: models: a list of llm blocks, each with an optional label); repeat it to compare several models, a row per (config, model); default: each config's llm block")
	fl.IntVar(&f.repeats, "repeats", 1, "run each (config, model, task) N times, repeat r with seed --seed + r; reports then give intervals over tasks with their repeats, pass@k and pass^k (raising it later runs only the new repeats)")
	fl.IntVar(&f.concurrency, "concurrency", 8, "runs in flight, at least 1")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "time limit per run, more than 0s")
	fl.Uint64Var(&f.seed, "seed", 1, "seed (recorded with results; seeds the sim model's faults)")
	fl.StringVar(&f.baseline, "baseline", "", "the config (pipeline name) every other is compared with task by task: wins/ties/losses and McNemar p; best: the fixed config (no autopilot or router) with the highest success rate, fewer tokens breaking a tie (default the first --config)")
	fl.StringVar(&f.out, "out", defaultRunFolder, "run folder for results.db, traces and reports, used as given; by default one per comparison, named from the suite, model, seed and a hash of the rest")
	fl.StringVar(&f.scorer, "scorer", "", "the scorer that decides success: em, contains, numeric, numeric:TOL, game24, sorting, choice:A|B (default: the suite format's), or any --score spec (judge, code:FILE.star, exec:CMD), which then also gets its own column")
	fl.BoolVar(&f.json, "json", false, "print report.json to stdout instead of the table")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	fl.Float64Var(&f.maxCostUSD, "max-cost-usd", 0, "stop the comparison once its runs have spent this many US dollars (priced from the price table; 0: no bound)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "stop the comparison once its runs have used this many prompt plus completion tokens (0: no bound)")
	fl.IntVar(&f.maxModelCalls, "max-model-calls", 0, "stop the comparison once its runs have made this many model calls (0: no bound)")
	fl.StringArrayVar(&f.scores, "score", nil, "a further scorer, its own column (repeatable): em, contains, numeric[:TOL], choice:A|B, game24, sorting, judge or judge:RUBRIC.tmpl (a model grades each answer against the reference; needs --judge-llm), code:FILE.star (def score(question, answer, reference)), exec:'COMMAND ARGS' (JSON in on stdin, out on stdout)")
	fl.StringVar(&f.judgeLLM, "judge-llm", "", "the model judge scorers call (e.g. openai:gpt-4o), pinned apart from --llm; its calls are counted and costed apart from the runs'")
	fl.StringVar(&f.judgeCache, "judge-cache", "", "the file judge verdicts are cached in (SQLite), shared by comparisons that name it (default: judge.db in the run folder)")
	fl.BoolVar(&f.stop, "stop-when-decided", false, "stop running a config once an always-valid interval of its success difference from the baseline lies below 0, checked after every paired run (tasks in an order drawn from the seed); its remaining runs are skipped and the report says after how many")
	fl.StringVar(&f.cache, "cache", "", "answer model calls from a response cache in this folder, shared by configs, models and re-runs (a sampled call hits only the same repeat); hits count as if live and are marked in traces and reports with what they saved (default: no cache)")
	fl.BoolVar(&f.threads, "threads", false, "journal each run as a thread in the run folder's threads.db, so a stopped comparison resumes inside unfinished runs without repeating their model and tool calls")
	f.temporal.add(c, "run each (config, task) as a Temporal workflow on the planner workers (planner worker) of this Temporal frontend, HOST:PORT")
	return c
}

// loadSuite loads the --suite tasks (with their gold solutions, for the
// simulator), sliced and limited, and the scorer that judges them:
// --scorer, or the suite format's default.
func loadSuite(c *cobra.Command, f *compareFlags) ([]suite.Task, verify.Scorer, error) {
	var opts []suite.Option
	if f.slice != "" {
		a, b, err := suite.ParseSlice(f.slice)
		if err != nil {
			return nil, nil, &usageError{cmd: "compare", err: fmt.Errorf("--slice: %w", err)}
		}
		opts = append(opts, suite.WithSlice(a, b))
	}
	if f.limit > 0 {
		opts = append(opts, suite.WithLimit(f.limit))
	}
	var tasks []suite.Task
	format := suite.FormatJSONL
	var err error
	if all, bf, ok, berr := suite.Builtin(f.suite); ok {
		if berr != nil {
			return nil, nil, berr
		}
		format = bf
		tasks, err = suite.Select(all, opts...)
	} else {
		ff, perr := suite.ParseFormat(f.format)
		if perr != nil {
			return nil, nil, &usageError{cmd: "compare", err: perr}
		}
		tasks, format, err = suite.LoadFormat(c.Context(), f.suite, append(opts, suite.WithFormat(ff))...)
	}
	if errors.Is(err, suite.ErrEmptySlice) {
		return nil, nil, &usageError{cmd: "compare", err: fmt.Errorf("--slice: %w", err)}
	}
	if err != nil {
		return nil, nil, err
	}
	if tasks, err = selectTasks(tasks, f.tasks); err != nil {
		return nil, nil, &usageError{cmd: "compare", err: fmt.Errorf("--tasks: %w", err)}
	}
	if f.scorer != "" && !f.scorerIsExtra() {
		sc, err := verify.ByName(f.scorer)
		if err != nil {
			return nil, nil, &usageError{cmd: "compare", err: err}
		}
		return tasks, sc, nil
	}
	sc, err := suite.DefaultScorer(format)
	if err != nil {
		return nil, nil, err
	}
	return tasks, sc, nil
}

// scorerIsExtra reports whether --scorer names a scorer of package
// eval/score that the built-in ones (verify.ByName) are not: a judge, a
// Starlark or an external command.
func (f *compareFlags) scorerIsExtra() bool {
	kind, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(f.scorer)), ":")
	return kind == "judge" || kind == "code" || kind == "exec"
}

// scorers builds the --score scorers, with --scorer's first when it is
// not a built-in one, and says which one decides success ("" for the
// built-in --scorer). The judge's model is --judge-llm, built by a's
// providers; its verdicts are cached in --judge-cache or judge.db in dir.
func (f *compareFlags) scorers(c *cobra.Command, a *app.App, dir string) ([]score.Scorer, string, error) {
	specs := slices.Clone(f.scores)
	success := ""
	if f.scorerIsExtra() {
		specs = append([]string{f.scorer}, specs...)
	}
	if len(specs) == 0 {
		return nil, "", nil
	}
	if f.judgeLLM == "" && slices.ContainsFunc(specs, func(s string) bool {
		kind, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
		return kind == "judge"
	}) {
		return nil, "", &usageError{cmd: "compare", err: errors.New("a judge scorer needs the model that judges: add --judge-llm SPEC (e.g. --judge-llm openai:gpt-4o), pinned apart from --llm")}
	}
	opts := score.Options{JudgeCache: f.judgeCache}
	if opts.JudgeCache == "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, "", err
		}
		opts.JudgeCache = filepath.Join(dir, "judge.db")
	}
	if f.judgeLLM != "" {
		cfg, err := app.ParseSpec(f.judgeLLM)
		if err != nil {
			return nil, "", &usageError{cmd: "compare", err: fmt.Errorf("--judge-llm %s: %w", f.judgeLLM, err)}
		}
		m, err := a.Engine.Models().Model(c.Context(), cfg, "")
		if err != nil {
			return nil, "", &usageError{cmd: "compare", err: fmt.Errorf("--judge-llm %s: %w", f.judgeLLM, err)}
		}
		opts.JudgeModel, opts.JudgeModelName = m.LLM, compare.ModelSpec(cfg)
		if m.Pricer != nil {
			opts.Price = func(u usage.Usage) float64 {
				usd, _ := m.Pricer.Cost(u.PromptTokens, u.CompletionTokens)
				return usd
			}
		}
	}
	scs, err := score.ParseAll(c.Context(), specs, opts)
	if err != nil {
		if errors.Is(err, score.ErrBadSpec) {
			err = &usageError{cmd: "compare", err: err}
		}
		return nil, "", err
	}
	if f.scorerIsExtra() {
		success = scs[0].Name()
	}
	return scs, success, nil
}

// checkCompareFlags refuses numeric flags out of their range.
func checkCompareFlags(c *cobra.Command, f *compareFlags) error {
	var err error
	switch {
	case c.Flags().Changed("limit") && f.limit < 1:
		err = fmt.Errorf("--limit must be at least 1 (the number of tasks to use; leave it out for all), got %d", f.limit)
	case f.repeats < 1:
		err = fmt.Errorf("--repeats must be at least 1 (runs of each config on each task), got %d", f.repeats)
	case f.concurrency < 1:
		err = fmt.Errorf("--concurrency must be at least 1 (the number of runs in flight), got %d", f.concurrency)
	case f.timeout <= 0:
		err = fmt.Errorf("--timeout must be more than 0s (the time limit per run, e.g. 30s or 2m), got %s", f.timeout)
	case f.maxCostUSD < 0 || math.IsNaN(f.maxCostUSD) || math.IsInf(f.maxCostUSD, 0):
		err = fmt.Errorf("--max-cost-usd must be 0 (no bound) or more, in US dollars, e.g. 0.50, got %v", f.maxCostUSD)
	case f.maxTokens < 0:
		err = fmt.Errorf("--max-tokens must be 0 (no bound) or more, got %d", f.maxTokens)
	case f.maxModelCalls < 0:
		err = fmt.Errorf("--max-model-calls must be 0 (no bound) or more, got %d", f.maxModelCalls)
	case strings.TrimSpace(f.out) == "":
		err = errors.New("--out must name a folder (leave it out for one per comparison under out/compare)")
	}
	if err != nil {
		return &usageError{cmd: "compare", err: err}
	}
	return nil
}

// selection describes the --slice and --limit flags for compare.Identity.
func (f *compareFlags) selection() string {
	var parts []string
	if f.slice != "" {
		parts = append(parts, "slice "+f.slice)
	}
	if f.tasks != "" {
		parts = append(parts, "tasks "+f.tasks)
	}
	if f.limit > 0 {
		parts = append(parts, fmt.Sprintf("limit %d", f.limit))
	}
	if !suite.IsBuiltin(f.suite) {
		parts = append(parts, "format "+f.format)
	}
	return strings.Join(parts, ", ")
}

// hasHave is the verb "has" for one subject and "have" for several.
func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

// idsWord is "id" for one and "ids" for several.
func idsWord(n int) string {
	if n == 1 {
		return "id"
	}
	return "ids"
}

// idList joins ids with ", ": the first n of them, and how many more.
func idList(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:n], ", "), len(ids)-n)
}

func runCompare(c *cobra.Command, p process, f *compareFlags) error {
	if len(f.configs) == 0 {
		return &usageError{cmd: "compare", err: errors.New("give at least one --config")}
	}
	if err := checkCompareFlags(c, f); err != nil {
		return err
	}
	var expanded []string
	for _, pat := range f.configs {
		m, err := filepath.Glob(pat)
		if err != nil || len(m) == 0 {
			expanded = append(expanded, pat)
			continue
		}
		expanded = append(expanded, m...)
	}
	tasks, sc, err := loadSuite(c, f)
	if err != nil {
		return err
	}
	var llmCfg config.LLM
	var models []config.LLM
	var labels []string
	for _, spec := range f.llms {
		if config.IsModelsFile(spec) {
			list, err := config.LoadModels(spec)
			if err != nil {
				return &usageError{cmd: "compare", err: fmt.Errorf("--llm: %w", err)}
			}
			for _, m := range list {
				if m.LLM.Script != "" && !filepath.IsAbs(m.LLM.Script) {
					m.LLM.Script = filepath.Join(filepath.Dir(spec), m.LLM.Script)
				}
				if m.LLM.Script != "" {
					m.LLM.Script, _ = filepath.Abs(m.LLM.Script)
				}
				models, labels = append(models, m.LLM), append(labels, m.Label)
			}
			continue
		}
		m, err := app.ParseSpec(spec)
		if err != nil {
			return &usageError{cmd: "compare", err: fmt.Errorf("--llm %s: %w", spec, err)}
		}
		if m.Script != "" {
			m.Script, _ = filepath.Abs(m.Script)
		}
		models, labels = append(models, m), append(labels, "")
	}
	if len(models) == 1 {
		llmCfg, models, labels = models[0], nil, nil
	}
	var digests map[string]string
	var cfgDigests map[string]map[string]string
	scriptedTasks := app.PlaysTaskReplies(llmCfg)
	for _, m := range models {
		scriptedTasks = scriptedTasks || app.PlaysTaskReplies(m)
	}
	if scriptedTasks {
		if missing := app.WithoutReplies(tasks); len(missing) > 0 {
			return &usageError{cmd: "compare", err: fmt.Errorf("--llm scripted without a file plays each task's own \"replies\"; %d of the %d tasks %s none (%s %s); "+
				"give them replies, select tasks that have some (--slice, --limit), or pass a script: --llm scripted:FILE",
				len(missing), len(tasks), hasHave(len(missing)), idsWord(len(missing)), idList(missing, 5))}
		}
		if digests, cfgDigests, err = app.ConfigReplyDigests(tasks); err != nil {
			return err
		}
	}
	a, err := app.New(append([]app.Option{app.WithTasks(tasks)}, p.otel.appOptions()...)...)
	if err != nil {
		return err
	}
	dir := f.out
	if !c.Flags().Changed("out") {
		id := compare.Identity{Suite: f.suite, Selection: f.selection(), Configs: expanded, LLM: llmCfg, LLMs: models, Seed: f.seed}
		dir = filepath.Join("out", "compare", id.DirName())
	}
	opts := compare.Options{Configs: expanded, LLM: llmCfg, LLMs: models, ModelLabels: labels, Repeats: f.repeats, StopWhenDecided: f.stop, Concurrency: f.concurrency, Timeout: f.timeout,
		Seed: f.seed, OutDir: dir, Scorer: sc, Baseline: f.baseline, Suite: f.suite, Threads: f.threads, TaskDigests: digests, ConfigTaskDigests: cfgDigests,
		MaxModelCalls: f.maxModelCalls, MaxTokens: f.maxTokens, MaxCostUSD: f.maxCostUSD}
	opts.Gold = suite.GoldOf(tasks)
	if opts.Scorers, opts.SuccessScorer, err = f.scorers(c, a, dir); err != nil {
		return err
	}
	defer func() { _ = score.Close(opts.Scorers...) }()
	if f.cache != "" {
		if opts.Cache, err = respcache.Open(f.cache); err != nil {
			return &usageError{cmd: "compare", err: fmt.Errorf("--cache: %w", err)}
		}
	}
	if !f.quiet && !f.json && isTerminal(c.ErrOrStderr()) { // its "\r" frames would litter a log
		opts.Progress = c.ErrOrStderr()
	}
	if f.temporal.hostPort != "" {
		closeTemporal, err := useTemporal(c, f, &opts)
		if err != nil {
			return err
		}
		defer closeTemporal()
	}
	fmt.Fprintf(c.ErrOrStderr(), "compare: run folder %s (running the same command again resumes there)\n", dir)
	rep, err := compare.Run(c.Context(), a, suite.AgentTasks(tasks), opts)
	if errors.Is(err, compare.ErrInterrupted) {
		fmt.Fprintf(c.ErrOrStderr(), "planner: compare stopped; the runs finished so far are saved in %s. Re-run the same command to resume: finished runs are not run again.\n", dir)
	}
	if err != nil {
		return err
	}
	html, err := rep.WriteFiles(dir)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	if f.json {
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, string(b))
		return budgetStopped(c, rep, dir)
	}
	if err := rep.WriteTableWidth(out, terminalWidth(out)); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nreports: %s (also report.md, report.json; traces in %s)\n", html, filepath.Join(dir, "traces"))
	return budgetStopped(c, rep, dir)
}

// budgetStopped says on stderr what a spent compare budget stopped and
// returns an *incompleteError (exit code 4), or nil when the budget
// stopped nothing. The comparison is then incomplete, as a run with a
// best-effort answer is: its report holds runs cut short, and leaves out
// runs never started, so it does not compare the configs on the same
// tasks and should not pass for a finished comparison in a script.
func budgetStopped(c *cobra.Command, rep *compare.Report, dir string) error {
	b := rep.Budget
	if b == nil || !b.Spent || (b.NotRun == 0 && b.CutShort == 0) {
		return nil
	}
	fmt.Fprintf(c.ErrOrStderr(), "planner: compare stopped by its budget: %s; %s cut short, %d not started. "+
		"The finished runs are saved in %s: run the same command again (raise the --max-* limit to go further) to run the rest.\n",
		b.Reason, textutil.Count(b.CutShort, "run", "runs"), b.NotRun, dir)
	return &incompleteError{reason: b.Reason}
}

// selectTasks keeps the tasks that spec (--tasks: odd, even, all or ids)
// selects, in order.
func selectTasks(tasks []suite.Task, spec string) ([]suite.Task, error) {
	sel, err := fit.ParseSelection(spec)
	if err != nil {
		return nil, err
	}
	order := make([]string, len(tasks))
	for i, t := range tasks {
		order[i] = t.ID
	}
	keep, err := sel.Pick(order)
	if err != nil {
		return nil, err
	}
	out := tasks[:0:0]
	for _, t := range tasks {
		if keep[t.ID] {
			out = append(out, t)
		}
	}
	return out, nil
}
