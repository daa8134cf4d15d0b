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
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/score"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/respcache"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
)

// Loader builds pipelines and says what their models are; *app.App
// implements it.
type Loader interface {
	// LoadWith builds the pipeline at path; llm, when its Provider is set,
	// replaces the pipeline's llm block. Each run of the comparison goes
	// through the pipeline's Run, with its Engine's run defaults.
	LoadWith(ctx context.Context, path string, llm config.LLM, maxSteps int) (*planner.Pipeline, error)
	// ModelLabel says what a provider's model is, for reports.
	ModelLabel(provider string) string
	// ModelKind says what kind of model a provider builds; a simulated or
	// scripted one is announced as such by every report.
	ModelKind(provider string) llm.Kind
	// Scrubber is the scrubber of the pipelines' Engine
	// (planner.Engine.Scrubber): Options.Scrubber's default. Nil scrubs
	// nothing.
	Scrubber() trace.Scrubber
}

// Options configure a comparison.
type Options struct {
	// Configs are pipeline YAML paths. Required; names must be unique.
	Configs []string
	// LLM replaces every pipeline's llm block when Provider is set.
	LLM config.LLM
	// LLMs, when set, are several models every config runs with, each
	// replacing the pipeline's llm block in turn: the report has a row per
	// (config, model), on the same tasks and seeds. LLM is then ignored.
	// Default: LLM alone.
	LLMs []config.LLM
	// ModelLabels name the models of LLMs in reports, by index; an empty
	// or missing label means the model's spec (ModelSpec). Two models
	// with the same spec (one model at two temperatures) need labels to
	// tell them apart. Default: none.
	ModelLabels []string
	// Repeats runs each (config, model, task) this many times, repeat r
	// with seed SeedOf(Seed, r), recorded with its result; the report's
	// intervals then resample tasks with their repeats together, and it
	// gives pass@k and pass^k. Raising Repeats and running again runs only
	// the new repeats. Default 1; negative is invalid.
	Repeats int
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
	// Gold holds the gold solutions of the tasks that have one, by task id
	// (suite.Task.Gold). Each run's tool calls and plans are recorded from
	// its trace events (package eval/trajectory, stored with the result)
	// and, for a task with gold steps, scored against them when the
	// report is built: tool recall and precision, order, steps used
	// against gold steps, and for plan-based configs the recall of plan
	// steps and dependencies (ConfigSummary.Trajectory). Default none.
	Gold map[string]*suite.Gold
	// Scorers are further scorers (package eval/score: a model judge,
	// Starlark code, an external command, the built-in ones), each a
	// column of the report with its mean score, interval and pass rate.
	// They judge every stored run when the report is built; a judge's
	// verdicts are cached in its own file, so building it again costs
	// nothing, and its calls are counted apart from the runs'
	// (Report.Scorers). The caller closes them (score.Close). Default
	// none.
	Scorers []score.Scorer
	// SuccessScorer names one of Scorers whose verdict (Pass) decides
	// success in place of Scorer's, for answers no built-in scorer can
	// judge (open-ended ones, with a judge). Success, the paired columns,
	// StopWhenDecided (which scores each run as it ends) and the failure
	// "wrong" then follow it. Default "": Scorer decides.
	SuccessScorer string
	// Baseline names the config (its pipeline's name) every other config
	// is compared with task by task (ConfigSummary.VsBaseline), or is
	// BaselineBest: the fixed config (no autopilot or router node) with the
	// highest success rate, the fewer tokens per run breaking a tie,
	// chosen once the runs are in (not with StopWhenDecided, which needs
	// the baseline while it runs). A config named "best" is that config.
	// Default: the first config.
	Baseline string
	// Suite names the task suite in reports.
	Suite string
	// Progress receives a progress bar; nil shows none.
	Progress io.Writer
	// NoTraces skips writing the runs' JSONL traces. Default false.
	NoTraces bool
	// Scrubber removes secrets from the traces, the stored results and so
	// the reports, after the scrubber of the pipelines' Engine (see
	// planner.WithScrubber) scrubbed the runs' events and answers: it
	// catches what a worker's engine or a RunFunc left. Default: the
	// Loader's (Loader.Scrubber), the Engine's own.
	Scrubber trace.Scrubber
	// TaskDigests holds, by task id, a digest of what a task's runs
	// depend on besides the task, the config and the model spec: the
	// task's own scripted replies when the scripted model plays them
	// (--llm scripted). A stored result is reused only for the same
	// digest, so editing a task's replies runs it again. Default: none.
	TaskDigests map[string]string
	// ConfigTaskDigests holds, by config (pipeline name) and then task id,
	// a digest of what that config's runs of the task depend on besides
	// the task, the config and the model spec: the replies recorded for
	// that config (a suite's per-config "replies"). Where it has a digest
	// for a (config, task) it is used in place of TaskDigests'. Default:
	// none.
	ConfigTaskDigests map[string]map[string]string
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
	// StopWhenDecided stops running a config once it is shown beaten by
	// the baseline: for each config an always-valid confidence sequence
	// (stats.ConfidenceSequence, at level 1 - StopAlpha) follows its
	// success minus the baseline's over the runs both made of the same
	// task and repeat, checked after every such pair, and once it lies
	// below zero the config's remaining runs are skipped (not stored; the
	// report says how many, and on how many pairs the decision rests).
	// Unlike a fixed-size test repeated after every task, the sequence
	// keeps its error rate however often it is looked at. Runs go in an
	// order of tasks drawn from the seed (a sequence assumes the pairs
	// share one mean, which a suite sorted by difficulty breaks); results
	// stored by an earlier invocation are fed first. It pays with a
	// budget to spare (MaxCostUSD...) or costly models. Default false.
	StopWhenDecided bool
	// StopAlpha is the error rate of StopWhenDecided's decisions, in (0,
	// 1). Default 0.05.
	StopAlpha float64
	// Cache, when set, answers model calls from a response cache shared by
	// the comparison's runs, configs, models and invocations (package
	// llm/respcache): a call made before with the same request (and, for
	// a sampled call, the same repeat index) gets the stored reply without
	// a provider request. Cached calls count in every figure as if made
	// live (the reply's usage and cost as measured when it was), so runs
	// compare alike; the hits are marked in the runs' traces, and counted
	// with what they cost when live in Record.CacheHits and CacheSavedUSD.
	// Runs of RunFunc do not use it. Default nil: no cache.
	Cache *respcache.Cache
	// RunFunc, when set, runs each (config, task) in place of the pipeline
	// loaded in this process: `planner compare --temporal` submits each run
	// to a Temporal workflow and waits for its result. It gets the run's
	// description and returns what planner.Pipeline.Run returns for it: the
	// Result's Answer, Complete, Failure, Usage and Steps make the run's
	// record, and its Trace, the run's events stamped with run.RunID and
	// numbered from 1, goes to the run's trace (scrubbed with Scrubber) and
	// counts its faults. A nil result with an error counts as a failed run.
	// The pipelines are still loaded here, for their names, models and
	// fingerprints, and results are stored, resumed and reported as usual.
	// Threads and the compare budget (MaxModelCalls, MaxTokens, MaxCostUSD)
	// do not reach into its runs. Default nil: every run runs in this
	// process.
	RunFunc func(ctx context.Context, run RunSpec) (*planner.Result, error)
}

// RunSpec describes one run of a comparison, for Options.RunFunc.
type RunSpec struct {
	// ConfigPath is the pipeline's YAML file, as Options.Configs gives
	// it; Config is the pipeline's name.
	ConfigPath, Config string
	// Task is the task to run.
	Task state.Task
	// LLM is the llm block that replaces the pipeline's (the run's model
	// of Options.LLMs or Options.LLM, with the run's seed); zero when the
	// pipeline runs with its own.
	LLM config.LLM
	// Seed is the run's seed: SeedOf(Options.Seed, Repeat).
	Seed uint64
	// Repeat is the run's repeat index, from 0 (Options.Repeats).
	Repeat int
	// Model is the run's model spec and Fingerprint its fingerprint, under
	// which its result is stored; RunID is its trace run id (RunID).
	Model, Fingerprint, RunID string
	// Timeout is the run's time limit (Options.Timeout), for RunFunc to
	// apply where the run runs: RunFunc's context has no deadline of its
	// own, since the run may wait in a queue before it starts.
	Timeout time.Duration
}

// check returns an error wrapping ErrOptions when o or tasks are invalid.
func (o Options) check(tasks []state.Task) error {
	switch {
	case len(o.Configs) == 0 || o.OutDir == "":
		return fmt.Errorf("%w: need at least one config and an output folder", ErrOptions)
	case len(tasks) == 0:
		return fmt.Errorf("%w: no tasks to run", ErrOptions)
	case o.StopAlpha < 0 || o.StopAlpha >= 1 || math.IsNaN(o.StopAlpha):
		return fmt.Errorf("%w: the stopping rule's error rate must be in (0, 1) (0 for the default, 0.05), got %v", ErrOptions, o.StopAlpha)
	case o.SuccessScorer != "" && !slices.ContainsFunc(o.Scorers, func(s score.Scorer) bool { return s.Name() == o.SuccessScorer }):
		return fmt.Errorf("%w: the success scorer %q is not one of the comparison's scorers", ErrOptions, o.SuccessScorer)
	case o.Repeats < 0:
		return fmt.Errorf("%w: repeats must be at least 1 (0 for the default), got %d", ErrOptions, o.Repeats)
	case o.Concurrency < 0:
		return fmt.Errorf("%w: concurrency must be at least 1 (0 for the default), got %d", ErrOptions, o.Concurrency)
	case o.Timeout < 0:
		return fmt.Errorf("%w: the timeout must be positive (0 for the default), got %s", ErrOptions, o.Timeout)
	case o.MaxModelCalls < 0 || o.MaxTokens < 0 || o.MaxCostUSD < 0 || math.IsNaN(o.MaxCostUSD):
		return fmt.Errorf("%w: the compare budget's limits must not be negative (0 for none), got %d model calls, %d tokens, $%g",
			ErrOptions, o.MaxModelCalls, o.MaxTokens, o.MaxCostUSD)
	}
	return nil
}

// withDefaults returns o with the documented defaults in place of its
// zero values.
func (o Options) withDefaults() Options {
	if o.Concurrency == 0 {
		o.Concurrency = 4
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Repeats == 0 {
		o.Repeats = 1
	}
	if o.StopAlpha == 0 {
		o.StopAlpha = 0.05
	}
	if o.Scorer == nil {
		o.Scorer = verify.ExactMatch{}
	}
	return o
}

// noScrub is the scrubber of a comparison whose engine scrubs nothing
// (planner.WithScrubber(nil)).
type noScrub struct{}

func (noScrub) String(s string) string { return s }

// models are the llm blocks that replace the pipelines' own, one per
// model of the comparison: LLMs, else LLM; a single zero block when each
// pipeline runs with its own.
func (o Options) models() []config.LLM {
	if len(o.LLMs) > 0 {
		return o.LLMs
	}
	return []config.LLM{o.LLM}
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
	// LLMs are the models of a comparison of several (Options.LLMs); LLM
	// is then ignored.
	LLMs []config.LLM
	// Seed is the comparison's seed.
	Seed uint64
}

// DirName names the comparison's run folder:
// "<suite>-<model>-seed<seed>-<hash>", where <suite> is the suite file's
// base name without extension ("demo" for the built-in suite), <model> the
// override's ModelSpec made safe for a file name ("sim_noisy"; "own-llm"
// when each config uses its own llm block; the first model and how many
// more, "sim_noisy+1", for several) and <hash> 8 hex digits of
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
		LLMs             []config.LLM `json:",omitempty"`
	}{id.Suite, id.Selection, id.Configs, id.LLM, id.Seed, id.LLMs})
	h.Write(js)
	base := filepath.Base(id.Suite)
	suiteName := safeName(strings.TrimSuffix(base, filepath.Ext(base)))
	model := "own-llm"
	switch {
	case len(id.LLMs) > 1:
		model = fmt.Sprintf("%s+%d", modelSlug(id.LLMs[0]), len(id.LLMs)-1)
	case len(id.LLMs) == 1:
		model = modelSlug(id.LLMs[0])
	case id.LLM.Provider != "":
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

// Run executes the comparison and returns the report. Results already in
// OutDir's store for the same seed are reused, not re-run. It goes in
// four stages: load the pipelines and open the run folder (open), plan
// the runs the store does not hold yet (plan), run them on a bounded pool
// while a writer stores their results (execute), and report every stored
// result of this comparison (report).
func Run(ctx context.Context, loader Loader, tasks []state.Task, opts Options) (*Report, error) {
	c, err := open(ctx, loader, tasks, opts)
	if err != nil {
		return nil, err
	}
	defer c.close()
	jobs, err := c.plan(ctx)
	if err != nil {
		return nil, err
	}
	ran, err := c.execute(ctx, jobs)
	if err != nil {
		return nil, err
	}
	return c.report(ctx, loader, ran)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName turns a config name into a file name.
func safeName(s string) string { return unsafeName.ReplaceAllString(s, "_") }
