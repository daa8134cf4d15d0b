package compare

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/planner-engine/planner/eval/stats"
	"github.com/planner-engine/planner/eval/trajectory"
	"github.com/planner-engine/planner/eval/viewer"
	"github.com/planner-engine/planner/internal/textutil"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Report is a comparison's result.
type Report struct {
	// Model says which model produced the numbers, labelled by kind.
	Model string `json:"model"`
	// ModelSpec is the full spec of the model every config ran with, as
	// --llm takes it, profile included ("sim:noisy", "openai:gpt-4o-mini");
	// without --llm, the configs' own specs, distinct, joined by ", ". Each
	// config's is in ConfigSummary.ModelSpec.
	ModelSpec string `json:"model_spec"`
	// Dir is the run folder holding results.db, the traces and the
	// report files.
	Dir string `json:"dir"`
	// Simulated is true when a simulated model (llm.KindSimulated, the
	// oracle of package eval/sim) produced them.
	Simulated bool `json:"simulated"`
	// Scripted is true when a scripted model (llm.KindScripted) produced
	// them.
	Scripted bool `json:"scripted"`
	// TaskReplies is true when the scripted model played each task's own
	// replies (--llm scripted without a file, the suite's "replies"): the
	// runs replay recorded model outputs, and success says the engine
	// reproduced the recorded answers.
	TaskReplies bool `json:"task_replies"`
	// Suite names the task suite.
	Suite string `json:"suite"`
	// Seed is the comparison's seed; repeat r ran with seed Seed + r.
	Seed uint64 `json:"seed"`
	// Repeats is how many times each (config, model, task) ran
	// (Options.Repeats).
	Repeats int `json:"repeats"`
	// Models are the specs of the comparison's models, in order: one per
	// model of a comparison of several (Options.LLMs), each config's own
	// otherwise (distinct).
	Models []string `json:"models"`
	// Tasks is the number of tasks in the suite.
	Tasks int `json:"tasks"`
	// Ran counts runs executed by this invocation.
	Ran int `json:"ran"`
	// Reused counts results taken from the store of an earlier invocation.
	Reused int `json:"reused"`
	// WallSeconds is the wall time of this invocation's runs, from the first
	// start to the last result stored, in seconds.
	WallSeconds float64 `json:"wall_seconds"`
	// GeneratedAt is when the report was built (UTC).
	GeneratedAt time.Time `json:"generated_at"`
	// Configs holds one summary per config, in the order given.
	Configs []ConfigSummary `json:"configs"`
	// Scorers says what each scorer of Options.Scorers did: its verdicts,
	// its model calls and their cost (apart from the runs'), its cache
	// hits and failures; nil without scorers.
	Scorers []ScorerUsage `json:"scorers,omitempty"`
	// grid is the per-task viewer's data, written to tasks.html by
	// WriteFiles; nil for a report built by Summarize.
	grid *viewer.Data
	// Budget is what the compare budget (Options.MaxModelCalls,
	// MaxTokens, MaxCostUSD) allowed and what this invocation's runs spent
	// of it; nil without one.
	Budget *BudgetSummary `json:"budget,omitempty"`
}

// BudgetSummary says what a comparison's budget allowed, what this
// invocation's runs spent of it, and what it stopped.
type BudgetSummary struct {
	// MaxModelCalls, MaxTokens and MaxCostUSD are the limits; 0 sets
	// none.
	MaxModelCalls int     `json:"max_model_calls,omitempty"`
	MaxTokens     int     `json:"max_tokens,omitempty"`
	MaxCostUSD    float64 `json:"max_cost_usd,omitempty"`
	// ModelCalls, Tokens and CostUSD are what this invocation's runs
	// spent (results reused from the store cost nothing), finalizers'
	// calls made after the budget was spent included.
	ModelCalls int     `json:"model_calls"`
	Tokens     int     `json:"tokens"`
	CostUSD    float64 `json:"cost_usd"`
	// Spent is true when a limit was reached; Reason then names it.
	Spent  bool   `json:"spent"`
	Reason string `json:"reason,omitempty"`
	// CutShort counts the runs that were refused a model call: they
	// ended early with failure "budget" (a ReAct loop's finalizer
	// answering from the work so far) and are stored like any result.
	CutShort int `json:"cut_short"`
	// NotRun counts the runs not started because the budget was spent:
	// not stored, not counted in any rate; running the comparison again
	// runs them. ConfigSummary.NotRun has them per config.
	NotRun int `json:"not_run"`
}

// Line says in one sentence what the budget stopped, or "" when it was
// not spent.
func (b *BudgetSummary) Line() string {
	if b == nil || !b.Spent {
		return ""
	}
	return fmt.Sprintf("Stopped by %s: %s. %s cut short (failure budget, answered from the work so far), "+
		"%d not started (not counted in any figure; running the same command again runs them, with a budget of its own).",
		CompareBudgetName, strings.TrimPrefix(b.Reason, CompareBudgetName+" is spent: "), textutil.Count(b.CutShort, "run", "runs"), b.NotRun)
}

// FailureLegend explains the failure kinds and how reports count them.
const FailureLegend = "Failure kinds: parse (unparseable model output), loop (repeat breaker or step limit), " +
	"budget (iteration budget ran out; answer from the finalizer), tool (a tool call failed), " +
	"provider (model call failed after retries), timeout, plan (no valid plan after retries), " +
	"error (unclassified run error), wrong (finished normally with a wrong answer). " +
	"failures counts only runs that did not succeed; a run that met one of these but still " +
	"answered correctly (for example a solver answering despite a failed step) is counted under " +
	"recovered instead."

// ConfigSummary aggregates one config's runs. Token, call and cost figures
// are totals; the report tables show them per task (see PerTask), and
// report.json has both.
type ConfigSummary struct {
	// Config is the pipeline name.
	Config string `json:"config"`
	// Label names the row where Config alone does not: "Config @ Model"
	// in a comparison of several models; "" otherwise.
	Label string `json:"label,omitempty"`
	// Tasks counts the tasks the config ran; Repeats the most runs of one
	// task.
	Tasks   int `json:"tasks"`
	Repeats int `json:"repeats"`
	// ModelSpec is the full spec of the model the config ran with
	// ("sim:noisy"); see Report.ModelSpec.
	ModelSpec string `json:"model_spec"`
	// Runs counts the config's results.
	Runs int `json:"runs"`
	// Scored counts results the scorer could judge.
	Scored int `json:"scored"`
	// Correct counts scored results judged correct.
	Correct int `json:"correct"`
	// Completed counts runs whose engine state was complete.
	Completed int `json:"completed"`
	// SuccessRate is Correct / Scored (0 when nothing was scored).
	SuccessRate float64 `json:"success_rate"`
	// EM is the mean exact match over scored results.
	EM float64 `json:"em"`
	// F1 is the mean token F1 over results whose scorer gives F1.
	F1 float64 `json:"f1"`
	// HasF1 is true when any result has an F1.
	HasF1 bool `json:"has_f1"`
	// ModelCalls is the total number of model calls.
	ModelCalls int `json:"model_calls"`
	// PromptTokens is the total of prompt tokens.
	PromptTokens int `json:"prompt_tokens"`
	// CompletionTokens is the total of completion tokens.
	CompletionTokens int `json:"completion_tokens"`
	// CachedPromptTokens is the part of PromptTokens the provider served
	// from its prompt cache (0 when it reported none).
	CachedPromptTokens int `json:"cached_prompt_tokens"`
	// ToolCalls is the total number of tool calls.
	ToolCalls int `json:"tool_calls"`
	// NotRun counts the config's runs that the spent compare budget kept
	// from starting (see BudgetSummary); Runs does not count them.
	NotRun int `json:"not_run"`
	// Estimated is true when some token counts are tokenizer estimates
	// (agent.Usage.Estimated): the config's token figures, and the cost
	// computed from them, are then to be marked as estimated.
	Estimated bool `json:"tokens_estimated"`
	// EstimatedRuns counts the runs whose token counts include tokenizer
	// estimates (Estimated is EstimatedRuns > 0).
	EstimatedRuns int `json:"estimated_runs"`
	// CostUSD is the total estimated cost in US dollars.
	CostUSD float64 `json:"cost_usd"`
	// LatencyP50MS is the median run latency in milliseconds.
	LatencyP50MS float64 `json:"latency_p50_ms"`
	// LatencyP95MS is the 95th percentile run latency in milliseconds.
	LatencyP95MS float64 `json:"latency_p95_ms"`
	// SuccessCI is the 95% interval of SuccessRate (CI.Success): Wilson's
	// score interval when each task ran once, else a bootstrap resampling
	// tasks with their repeats; nil when nothing was scored.
	SuccessCI *stats.Interval `json:"success_ci,omitempty"`
	// CI holds the 95% intervals of the config's means (see Intervals).
	CI Intervals `json:"ci"`
	// PassAtK and PassHatK map k, from 1 to the fewest scored runs of a
	// task, to the mean over tasks of pass@k (some of k runs succeeds;
	// Chen et al. 2021) and pass^k (all k succeed; Yao et al. 2024); nil
	// without repeats.
	PassAtK  map[int]float64 `json:"pass_at_k,omitempty"`
	PassHatK map[int]float64 `json:"pass_hat_k,omitempty"`
	// Trajectory averages the runs' trajectory scores against their
	// tasks' gold steps (Options.Gold; package eval/trajectory): tool
	// recall and precision, order, steps used against gold steps, and
	// for runs that made a plan, plan step and dependency recall; nil
	// when no run was scored.
	Trajectory *trajectory.Summary `json:"trajectory,omitempty"`
	// Scores summarises each scorer's verdicts (Options.Scorers), by
	// name; nil without scorers.
	Scores map[string]*ScoreSummary `json:"scores,omitempty"`
	// Stopped says why the comparison stopped running the config
	// (Options.StopWhenDecided): it was shown beaten by the baseline; nil
	// when it was not.
	Stopped *Stopped `json:"stopped,omitempty"`
	// CacheHits counts the model calls answered from the response cache
	// (--cache) and CacheSavedUSD what they cost when made live, not paid
	// again; CostUSD counts them as if live.
	CacheHits     int     `json:"cache_hits,omitempty"`
	CacheSavedUSD float64 `json:"cache_saved_usd,omitempty"`
	// VsBaseline compares the config with the comparison's first config
	// task by task (the first config against itself: all ties).
	VsBaseline *PairedSummary `json:"vs_baseline,omitempty"`
	// Frontier places the config against the cost/accuracy frontier of
	// the comparison's fixed configs (FrontierPoint); nil when it has no
	// runs or the report was not built by a comparison.
	Frontier *FrontierPoint `json:"frontier,omitempty"`
	// Routes counts the runs of an adaptive config by the way they went
	// (Record.Route): the autopilot candidate that answered, or the
	// router's route; nil for a fixed config.
	Routes map[string]int `json:"routes,omitempty"`
	// Failures counts unsuccessful runs by failure kind.
	Failures map[string]int `json:"failures"`
	// Recovered counts the successful runs that met each kind of fault or
	// failure on the way (a run counts once per kind): the kinds of its
	// trace events (FaultKind: parse, retry, unknown_tool, repeat,
	// tool_error...; see FaultLegend) and the failure kind of a part of
	// the run that failed while the run still answered correctly.
	Recovered map[string]int `json:"recovered"`
	// RecoveredRuns counts the successful runs that met at least one.
	RecoveredRuns int `json:"recovered_runs"`
	// RecoveryEvents counts, by fault kind, the trace events of the
	// successful runs (three parse failures fed back in one run count 3).
	RecoveryEvents map[string]int `json:"recovery_events"`
}

// Intervals are 95% confidence intervals of a config's means. Each is a
// percentile bootstrap that resamples tasks, a task's repeats drawn
// together (stats.BootstrapMeanClustered), except Success without repeats
// (Wilson's). A nil interval had no values.
type Intervals struct {
	Success    *stats.Interval `json:"success,omitempty"`
	EM         *stats.Interval `json:"em,omitempty"`
	F1         *stats.Interval `json:"f1,omitempty"`
	CostUSD    *stats.Interval `json:"cost_usd,omitempty"`
	LatencyMS  *stats.Interval `json:"latency_ms,omitempty"`
	Tokens     *stats.Interval `json:"tokens,omitempty"`
	ModelCalls *stats.Interval `json:"model_calls,omitempty"`
}

// PairedSummary compares a config with the baseline (--baseline, default
// the first config) task by task, on the tasks both ran.
type PairedSummary struct {
	// Baseline is the baseline's name (its label in a comparison of
	// several models); Self is true for the baseline's own row. Tasks
	// counts the tasks both scored.
	Baseline string `json:"baseline"`
	Self     bool   `json:"self,omitempty"`
	Tasks    int    `json:"tasks"`
	// Wins counts tasks the config did better on than the baseline (its
	// success rate over the task's runs is higher: right where the
	// baseline was wrong, without repeats), Losses the reverse, Ties the
	// tasks both did alike.
	Wins   int `json:"wins"`
	Ties   int `json:"ties"`
	Losses int `json:"losses"`
	// McNemarP is the two-sided exact McNemar test's p-value on the
	// discordant tasks, a task counting as solved when more than half its
	// runs succeeded (without repeats: Wins against Losses): the chance
	// of a split at least this uneven if the two configs were equally
	// good.
	McNemarP float64 `json:"mcnemar_p"`
	// SuccessDiff is the mean over common tasks of the config's success
	// rate minus the baseline's, and SuccessDiffCI its 95% paired
	// bootstrap interval (resampling tasks); an interval that excludes 0
	// is a difference at the 5% level.
	SuccessDiff   float64         `json:"success_diff"`
	SuccessDiffCI *stats.Interval `json:"success_diff_ci,omitempty"`
	// CostDiffUSD is the mean per-task cost difference (config minus
	// baseline), with its paired bootstrap interval.
	CostDiffUSD float64         `json:"cost_diff_usd"`
	CostDiffCI  *stats.Interval `json:"cost_diff_ci,omitempty"`
	// TasksToDetect is the number of tasks each config would need for a
	// two-sided test at α = 0.05 to detect the observed difference of
	// success rates with power 0.8 (stats.TasksToDetect, a conservative
	// unpaired size); 0 when the rates are equal.
	TasksToDetect int `json:"tasks_to_detect,omitempty"`
}

// name is the row's name in reports: its label, else its config.
func (s ConfigSummary) name() string { return cmp.Or(s.Label, s.Config) }

func (s ConfigSummary) mean(total int) float64 {
	if s.Runs == 0 {
		return 0
	}
	return float64(total) / float64(s.Runs)
}

func (s ConfigSummary) meanFloat(total float64) float64 {
	if s.Runs == 0 {
		return 0
	}
	return total / float64(s.Runs)
}

// MeanTokens is the mean prompt+completion tokens per run.
func (s ConfigSummary) MeanTokens() float64 { return s.mean(s.PromptTokens + s.CompletionTokens) }

// PerTask holds a config's means per task (per run: every task runs once
// per config). The report tables show these, not the totals.
type PerTask struct {
	// ModelCalls is the mean number of model calls.
	ModelCalls float64 `json:"model_calls"`
	// PromptTokens is the mean of prompt tokens.
	PromptTokens float64 `json:"prompt_tokens"`
	// CompletionTokens is the mean of completion tokens.
	CompletionTokens float64 `json:"completion_tokens"`
	// CachedPromptTokens is the mean of the prompt tokens served from the
	// provider's prompt cache.
	CachedPromptTokens float64 `json:"cached_prompt_tokens"`
	// ToolCalls is the mean number of tool calls.
	ToolCalls float64 `json:"tool_calls"`
	// CostUSD is the mean estimated cost in US dollars.
	CostUSD float64 `json:"cost_usd"`
}

// PerTask returns the config's means per task.
func (s ConfigSummary) PerTask() PerTask {
	return PerTask{ModelCalls: s.mean(s.ModelCalls), PromptTokens: s.mean(s.PromptTokens), CompletionTokens: s.mean(s.CompletionTokens),
		CachedPromptTokens: s.mean(s.CachedPromptTokens), ToolCalls: s.mean(s.ToolCalls), CostUSD: s.meanFloat(s.CostUSD)}
}

// MarshalJSON writes the summary with its means per task added under
// "per_task", the values the report tables show.
func (s ConfigSummary) MarshalJSON() ([]byte, error) {
	type plain ConfigSummary // without this method
	return json.Marshal(struct {
		plain
		PerTask PerTask `json:"per_task"`
	}{plain: plain(s), PerTask: s.PerTask()})
}

// FailureList renders Failures as "kind:n" sorted by kind, or "-".
func (s ConfigSummary) FailureList() string { return countList(s.Failures) }

// RecoveredList renders Recovered as "kind:n" sorted by kind, or "-".
func (s ConfigSummary) RecoveredList() string { return countList(s.Recovered) }

func countList(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k, n := range counts {
		if n > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, counts[k])
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// EstimatedMark prefixes a figure that rests on tokenizer estimates.
const EstimatedMark = "~"

// column is one column of the report tables. The terminal table, report.md
// and report.html print the same header and the same cell text; field
// names the report.json value under configs[i] that the column shows.
type column struct {
	head, field, doc string
	left             bool // text, left-aligned; numbers align right
	cell             func(s ConfigSummary) string
}

// estimated marks v with EstimatedMark when s's token counts include
// estimates.
func estimated(s ConfigSummary, v string) string {
	if s.Estimated {
		return EstimatedMark + v
	}
	return v
}

// cachedColumn shows the prompt tokens served from the provider's prompt
// cache; reports where some run reported any have it, after the prompt
// tokens.
var cachedColumn = column{head: "cached tok/task", field: "per_task.cached_prompt_tokens",
	doc:  "prompt tokens per task served from the provider's prompt cache (part of prompt tok/task, priced at the cached rate)",
	cell: func(s ConfigSummary) string { return fmt.Sprintf("%.0f", s.PerTask().CachedPromptTokens) }}

// notRunColumn counts the runs the spent compare budget kept from
// starting; reports where it kept any have it, after the config.
var notRunColumn = column{head: "not run", field: "not_run",
	doc:  "runs not started because the compare budget was spent (not counted in any other column)",
	cell: func(s ConfigSummary) string { return strconv.Itoa(s.NotRun) }}

// columns lists the columns of r's tables: those of every report
// (columns); pass@k and pass^k where r has repeats (passColumns); and
// cachedColumn, notRunColumn and cacheColumns where r has such figures.
func (r *Report) columns() []column {
	cols := columns()
	var cached, notRun, cacheHits bool
	for _, s := range r.Configs {
		cached = cached || s.CachedPromptTokens > 0
		notRun = notRun || s.NotRun > 0
		cacheHits = cacheHits || s.CacheHits > 0
	}
	if r.Repeats > 1 {
		i := slices.IndexFunc(cols, func(c column) bool { return c.field == "success_ci" })
		cols = slices.Insert(cols, i+1, passColumns(r.Repeats)...)
	}
	if slices.ContainsFunc(r.Configs, func(s ConfigSummary) bool { return s.Trajectory != nil }) {
		cols = append(cols, trajectoryColumns()...)
	}
	cols = append(cols, scorerColumns(scorerNames(r.Scorers))...)
	if cacheHits {
		cols = append(cols, cacheColumns()...)
	}
	if slices.ContainsFunc(r.Configs, func(s ConfigSummary) bool { return s.Stopped != nil }) {
		cols = slices.Insert(cols, 1, stoppedColumn)
	}
	if cached {
		i := slices.IndexFunc(cols, func(c column) bool { return c.field == "per_task.prompt_tokens" })
		cols = slices.Insert(cols, i+1, cachedColumn)
	}
	if notRun {
		cols = slices.Insert(cols, 1, notRunColumn)
	}
	if r.hasFrontier() {
		i := slices.IndexFunc(cols, func(c column) bool { return c.field == "vs_baseline" })
		if i < 0 {
			i = len(cols)
		}
		cols = slices.Insert(cols, i, frontierColumn)
		if slices.ContainsFunc(r.Configs, func(s ConfigSummary) bool { return len(s.Routes) > 0 }) {
			cols = slices.Insert(cols, i+1, routesColumn)
		}
	}
	return cols
}

// routesColumn says which way the adaptive configs' runs went.
var routesColumn = column{head: "answered by", field: "routes", left: true,
	doc:  "for an adaptive config, its runs by the candidate that gave the answer (autopilot) or the route taken (router), by name",
	cell: func(s ConfigSummary) string { return countList(s.Routes) }}

// frontierColumn places each config against the fixed configs' frontier.
var frontierColumn = column{head: "frontier", field: "frontier", left: true,
	doc:  "against the cost/accuracy frontier of the fixed configs (no fixed config has a success rate at least as high for a cost per run no higher, one strictly): on, or below and beaten by which; adaptive configs (autopilot, router) are placed against the fixed ones",
	cell: frontierCell}

// columns lists the columns every report's tables have, in order.
func columns() []column {
	return []column{
		{head: "config", field: "config", doc: "the pipeline's name (with its model, label, in a comparison of several models)", left: true,
			cell: func(s ConfigSummary) string { return s.name() }},
		{head: "success", field: "success_rate", doc: "share of scored runs judged correct, 0 to 1",
			cell: func(s ConfigSummary) string { return fmt.Sprintf("%.3f", s.SuccessRate) }},
		{head: "EM", field: "em", doc: "mean exact match over scored runs, 0 to 1",
			cell: func(s ConfigSummary) string { return fmt.Sprintf("%.3f", s.EM) }},
		{head: "F1", field: "f1", doc: "mean token F1, 0 to 1 (- when the scorer gives none)",
			cell: func(s ConfigSummary) string {
				if !s.HasF1 {
					return "-"
				}
				return fmt.Sprintf("%.3f", s.F1)
			}},
		{head: "failures", field: "failures", doc: "unsuccessful runs by failure kind", left: true,
			cell: func(s ConfigSummary) string { return s.FailureList() }},
		{head: "recovered", field: "recovered", doc: "correct runs that met a fault or failure on the way, by kind (a run counts once per kind)", left: true,
			cell: func(s ConfigSummary) string { return s.RecoveredList() }},
		{head: "calls/task", field: "per_task.model_calls", doc: "model calls per task",
			cell: func(s ConfigSummary) string { return fmt.Sprintf("%.1f", s.PerTask().ModelCalls) }},
		{head: "tools/task", field: "per_task.tool_calls", doc: "tool calls per task",
			cell: func(s ConfigSummary) string { return fmt.Sprintf("%.1f", s.PerTask().ToolCalls) }},
		{head: "prompt tok/task", field: "per_task.prompt_tokens", doc: "prompt tokens per task",
			cell: func(s ConfigSummary) string { return estimated(s, fmt.Sprintf("%.0f", s.PerTask().PromptTokens)) }},
		{head: "compl tok/task", field: "per_task.completion_tokens", doc: "completion tokens per task",
			cell: func(s ConfigSummary) string { return estimated(s, fmt.Sprintf("%.0f", s.PerTask().CompletionTokens)) }},
		{head: "cost $/task", field: "per_task.cost_usd", doc: "estimated cost per task in US dollars",
			cell: func(s ConfigSummary) string { return estimated(s, fmt.Sprintf("%.5f", s.PerTask().CostUSD)) }},
		{head: "p50 ms", field: "latency_p50_ms", doc: "median run latency in milliseconds",
			cell: func(s ConfigSummary) string { return fmt.Sprintf("%.0f", s.LatencyP50MS) }},
		{head: "p95 ms", field: "latency_p95_ms", doc: "95th percentile run latency in milliseconds",
			cell: func(s ConfigSummary) string { return fmt.Sprintf("%.0f", s.LatencyP95MS) }},
		{head: "success 95% CI", field: "success_ci", doc: "the 95% interval of success: Wilson's score interval, or with repeats a bootstrap resampling tasks with their repeats", left: true,
			cell: func(s ConfigSummary) string {
				if s.SuccessCI == nil {
					return "-"
				}
				return fmt.Sprintf("%.3f-%.3f", s.SuccessCI.Lo, s.SuccessCI.Hi)
			}},
		{head: "vs baseline W/T/L", field: "vs_baseline", doc: "tasks this config did better on, alike and worse on than the baseline (--baseline, default the first config): right where it was wrong, both alike, wrong where it was right (with repeats, by each task's success rate)", left: true,
			cell: func(s ConfigSummary) string {
				v := s.VsBaseline
				if v == nil || v.Self {
					return "baseline"
				}
				return fmt.Sprintf("%d/%d/%d", v.Wins, v.Ties, v.Losses)
			}},
		{head: "McNemar p", field: "vs_baseline.mcnemar_p", doc: "two-sided exact McNemar p-value of the tasks only this config solved against those only the baseline solved (with repeats, solved: more than half its runs succeeded); below 0.05, a difference unlikely to be noise",
			cell: func(s ConfigSummary) string {
				if s.VsBaseline == nil || s.VsBaseline.Self {
					return "-"
				}
				return fmt.Sprintf("%.3g", s.VsBaseline.McNemarP)
			}},
		{head: "Δsuccess 95% CI", field: "vs_baseline.success_diff_ci", doc: "mean per-task success difference from the baseline with its 95% paired bootstrap interval (resampling tasks); an interval that excludes 0 is a difference at the 5% level", left: true,
			cell: func(s ConfigSummary) string {
				v := s.VsBaseline
				if v == nil || v.Self || v.SuccessDiffCI == nil {
					return "-"
				}
				return fmt.Sprintf("%+.3f [%+.3f, %+.3f]", v.SuccessDiff, v.SuccessDiffCI.Lo, v.SuccessDiffCI.Hi)
			}},
		{head: "Δcost $/task 95% CI", field: "vs_baseline.cost_diff_ci", doc: "mean per-task cost difference from the baseline in US dollars, with its 95% paired bootstrap interval", left: true,
			cell: func(s ConfigSummary) string {
				v := s.VsBaseline
				if v == nil || v.Self || v.CostDiffCI == nil {
					return "-"
				}
				return estimated(s, fmt.Sprintf("%+.5f [%+.5f, %+.5f]", v.CostDiffUSD, v.CostDiffCI.Lo, v.CostDiffCI.Hi))
			}},
		{head: "tasks to detect", field: "vs_baseline.tasks_to_detect", doc: "tasks per config a comparison needs to detect the observed success difference from the baseline (two-sided α 0.05, power 0.8; conservative, unpaired); - when the rates are equal",
			cell: func(s ConfigSummary) string {
				v := s.VsBaseline
				if v == nil || v.Self || v.TasksToDetect == 0 {
					return "-"
				}
				return strconv.Itoa(v.TasksToDetect)
			}},
	}
}

// passColumns show pass@k and pass^k for k the report's repeats; reports
// with repeats have them, after the success interval.
func passColumns(k int) []column {
	at := func(m map[int]float64) string {
		v, ok := m[k]
		if !ok {
			return "-"
		}
		return fmt.Sprintf("%.3f", v)
	}
	return []column{
		{head: fmt.Sprintf("pass@%d", k), field: fmt.Sprintf("pass_at_k.%d", k), doc: "mean over tasks of the chance that at least one of k runs succeeds (unbiased estimator, Chen et al. 2021)",
			cell: func(s ConfigSummary) string { return at(s.PassAtK) }},
		{head: fmt.Sprintf("pass^%d", k), field: fmt.Sprintf("pass_hat_k.%d", k), doc: "mean over tasks of the chance that all of k runs succeed (Yao et al. 2024): reliability",
			cell: func(s ConfigSummary) string { return at(s.PassHatK) }},
	}
}

// trajectoryColumns show how the runs' tool calls and plans match their
// tasks' gold steps; reports where some run was scored have them.
func trajectoryColumns() []column {
	return []column{
		{head: "tool R/P", field: "trajectory.tool_recall", doc: "mean recall and precision of the gold steps' tools among the run's tool calls (repeated and failed calls lower precision)", left: true,
			cell: func(s ConfigSummary) string {
				if s.Trajectory == nil {
					return "-"
				}
				return fmt.Sprintf("%.2f/%.2f", s.Trajectory.ToolRecall, s.Trajectory.ToolPrecision)
			}},
		{head: "order", field: "trajectory.order_lcs", doc: "mean longest common subsequence of the run's tool sequence and the gold one, over the gold steps",
			cell: func(s ConfigSummary) string {
				if s.Trajectory == nil {
					return "-"
				}
				return fmt.Sprintf("%.2f", s.Trajectory.OrderLCS)
			}},
		{head: "steps/gold", field: "trajectory.steps_ratio", doc: "mean tool calls per gold step (1 is the gold solution's length)",
			cell: func(s ConfigSummary) string {
				if s.Trajectory == nil {
					return "-"
				}
				return fmt.Sprintf("%.2f", s.Trajectory.StepsRatio)
			}},
		{head: "plan R/dep R", field: "trajectory.plan_recall", doc: "for runs that made a plan: mean recall of the gold steps among the final plan's steps, and of the gold dependencies among its dependencies", left: true,
			cell: func(s ConfigSummary) string {
				if s.Trajectory == nil || s.Trajectory.Planned == 0 {
					return "-"
				}
				dep := "-"
				if s.Trajectory.WithEdges > 0 {
					dep = fmt.Sprintf("%.2f", s.Trajectory.DepRecall)
				}
				return fmt.Sprintf("%.2f/%s", s.Trajectory.PlanRecall, dep)
			}},
	}
}

// stoppedColumn says which configs the stopping rule stopped
// (Options.StopWhenDecided); reports where it stopped any have it, after
// the config.
var stoppedColumn = column{head: "stopped", field: "stopped", left: true,
	doc: "beaten by the baseline, shown by an always-valid interval of the success difference (--stop-when-decided): after how many paired runs, the interval, and the runs skipped (not counted in any other column)",
	cell: func(s ConfigSummary) string {
		if s.Stopped == nil {
			return "-"
		}
		return fmt.Sprintf("after %d: [%+.2f, %+.2f], %d skipped", s.Stopped.Pairs, s.Stopped.Diff.Lo, s.Stopped.Diff.Hi, s.Stopped.Skipped)
	}}

// cacheColumns show the response cache's hits; reports where some call
// was answered from the cache have them, at the end.
func cacheColumns() []column {
	return []column{
		{head: "cache hits", field: "cache_hits", doc: "model calls answered from the response cache (--cache); counted in every other column as if made live",
			cell: func(s ConfigSummary) string { return strconv.Itoa(s.CacheHits) }},
		{head: "cache saved $", field: "cache_saved_usd", doc: "what the calls answered from the response cache cost when they were made live, not paid again",
			cell: func(s ConfigSummary) string { return estimated(s, fmt.Sprintf("%.5f", s.CacheSavedUSD)) }},
	}
}

// PerTaskNote says what the tables' per-task figures are.
const PerTaskNote = "Per task: the mean over the config's runs (each task runs once per config, or --repeats times); " +
	"report.json also keeps the totals (model_calls, prompt_tokens, completion_tokens, tool_calls, cost_usd)."

// EstimatedNote explains EstimatedMark.
const EstimatedNote = EstimatedMark + " marks token counts (and the cost computed from them) that include " +
	"tokenizer estimates, for calls where the model reported no usage; report.json says so in tokens_estimated " +
	"and counts those runs in estimated_runs."

// ColumnDoc is one entry of report.json's "columns": a column header of
// the tables, the JSON field under configs[i] it shows and what it means.
type ColumnDoc struct {
	// Column is the header the terminal table, report.md and report.html
	// print.
	Column string `json:"column"`
	// Field is the report.json field under configs[i], dotted for nested
	// fields.
	Field string `json:"field"`
	// Meaning says what the value is, with its unit.
	Meaning string `json:"meaning"`
}

// Columns documents the columns every report's tables have, in order. A
// report adds "cached tok/task" (after "prompt tok/task") when some run
// reported prompt tokens served from the provider's prompt cache, and "not
// run" (after "config") when the compare budget kept runs from starting;
// Report.Columns lists a report's own.
func Columns() []ColumnDoc { return docsOf(columns()) }

// Columns documents the columns of r's tables, in order: Columns(), and
// the columns r adds (see there). report.json's "columns" lists them.
func (r *Report) Columns() []ColumnDoc { return docsOf(r.columns()) }

func docsOf(cols []column) []ColumnDoc {
	docs := make([]ColumnDoc, len(cols))
	for i, c := range cols {
		docs[i] = ColumnDoc{Column: c.head, Field: c.field, Meaning: c.doc}
	}
	return docs
}

// anyEstimated reports whether some config's token counts include
// estimates.
func (r *Report) anyEstimated() bool {
	for _, s := range r.Configs {
		if s.Estimated {
			return true
		}
	}
	return false
}

// modelSpec is ModelSpec, or "-" when the report does not say.
func (r *Report) modelSpec() string {
	if r.ModelSpec == "" {
		return "-"
	}
	return r.ModelSpec
}

// scorerLines describe what each scorer of the comparison did.
func (r *Report) scorerLines() []string {
	lines := make([]string, len(r.Scorers))
	for i, u := range r.Scorers {
		lines[i] = u.Line()
	}
	return lines
}

// repeatsNote says how many repeats each run had, or "" for one.
func (r *Report) repeatsNote() string {
	if r.Repeats <= 1 {
		return ""
	}
	return fmt.Sprintf(" (repeats %d: seeds %d to %d)", r.Repeats, r.Seed, r.Seed+uint64(r.Repeats)-1)
}

// Banner is the line that says what produced the numbers.
func (r *Report) Banner() string {
	switch {
	case r.Simulated:
		return "SIMULATED: these numbers come from the sim oracle model, which follows each task's gold solution and injects faults. They measure the engine's recovery and cost structure, not the quality of any language model."
	case r.Scripted && r.TaskReplies:
		return "SCRIPTED: these numbers come from a scripted model replaying each task's own recorded replies (the suite's \"replies\"), " +
			"not a real language model. They say whether the engine reproduces the recorded runs' answers, not how good any model is."
	case r.Scripted:
		return "SCRIPTED: these numbers come from a scripted model replaying fixed replies, not a real language model."
	}
	return "Model: " + r.Model
}

// MarshalJSON writes the report with its banner first, so report.json
// says what produced the numbers as plainly as the other outputs do, and
// with "columns", which maps the tables' column headers to the fields of
// configs[i].
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report // without this method
	return json.Marshal(struct {
		Banner string `json:"banner"`
		plain
		Columns []ColumnDoc `json:"columns"`
	}{Banner: r.Banner(), plain: plain(r), Columns: r.Columns()})
}

// Cells returns the tables' header row and one row per config, the text
// the terminal table, report.md and report.html print in each cell (see
// Columns for what each column holds).
func (r *Report) Cells() (head []string, rows [][]string) { return r.cells() }

// cells returns the header row and one row per config.
func (r *Report) cells() (head []string, rows [][]string) {
	cols := r.columns()
	head = make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.head
	}
	for _, s := range r.Configs {
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = c.cell(s)
		}
		rows = append(rows, row)
	}
	return head, rows
}

// WriteTable writes the terminal table, however wide it is.
func (r *Report) WriteTable(w io.Writer) error { return r.WriteTableWidth(w, 0) }

// WriteTableWidth writes the terminal table for a terminal width columns
// wide. Width 0 (output that is not a terminal) writes the whole table.
// A table wider than width is split into tables of fewer columns, each
// starting with the config column; where even that does not fit, each
// config gets a block of "header value" pairs. Headers and cells are the
// same in every layout.
func (r *Report) WriteTableWidth(w io.Writer, width int) error {
	var b strings.Builder
	b.WriteString(wrap(r.Banner(), width) + "\n")
	b.WriteString(wrap(fmt.Sprintf("suite %s: %d tasks, model %s, seed %d%s, %d runs (%d reused from an earlier run), %.1fs",
		r.Suite, r.Tasks, r.modelSpec(), r.Seed, r.repeatsNote(), r.Ran+r.Reused, r.Reused, r.WallSeconds), width) + "\n")
	if line := r.Budget.Line(); line != "" {
		b.WriteString(wrap(line, width) + "\n")
	}
	for _, line := range r.scorerLines() {
		b.WriteString(wrap(line, width) + "\n")
	}
	b.WriteString("\n")
	b.WriteString(r.layout(width))
	notes := []string{PerTaskNote, "failures: unsuccessful runs by kind; recovered: correct runs that met a fault or failure on the way, by kind (see report.md)."}
	if r.anyEstimated() {
		notes = append(notes, EstimatedNote)
	}
	b.WriteString("\n")
	for _, n := range notes {
		b.WriteString(wrap(n, width) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tableGap separates the columns of the terminal table.
const tableGap = "  "

// layout renders the tables (or blocks) that fit width; see
// WriteTableWidth.
func (r *Report) layout(width int) string {
	cols := r.columns()
	head, rows := r.cells()
	widths := make([]int, len(cols))
	for _, row := range append([][]string{head}, rows...) {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	groups := splitColumns(widths, width)
	if groups == nil {
		return r.blocks(head, rows, width)
	}
	var b strings.Builder
	for g, group := range groups {
		if g > 0 {
			b.WriteString("\n")
		}
		for _, row := range append([][]string{head}, rows...) {
			line := make([]string, len(group))
			for j, i := range group {
				pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(row[i]))
				if cols[i].left {
					line[j] = row[i] + pad
				} else {
					line[j] = pad + row[i]
				}
			}
			b.WriteString(strings.TrimRight(strings.Join(line, tableGap), " ") + "\n")
		}
	}
	return b.String()
}

// splitColumns splits the columns after the first, whose widths are given,
// into as few tables as fit width, each led by the first column, and
// balances them so that the widest table is as narrow as it can be. Width
// 0 keeps one table; nil means one column does not fit next to the first.
func splitColumns(widths []int, width int) [][]int {
	n := len(widths)
	span := func(a, b int) int { // the table of column 0 and columns a..b-1
		w := widths[0]
		for i := a; i < b; i++ {
			w += len(tableGap) + widths[i]
		}
		return w
	}
	// prev[i] is the narrowest widest table when the tables so far hold
	// columns 1..i-1; cuts[k-1][i] is where the k-th of them starts.
	prev := make([]int, n+1)
	for i := range prev {
		prev[i] = math.MaxInt
	}
	prev[1] = 0
	var cuts [][]int
	for k := 1; k < n; k++ {
		cur, cut := make([]int, n+1), make([]int, n+1)
		for i := range cur {
			cur[i] = math.MaxInt
		}
		for i := 2; i <= n; i++ {
			for a := 1; a < i; a++ {
				if prev[a] == math.MaxInt {
					continue
				}
				if m := max(prev[a], span(a, i)); m < cur[i] {
					cur[i], cut[i] = m, a
				}
			}
		}
		cuts = append(cuts, cut)
		if width <= 0 || cur[n] <= width {
			groups := make([][]int, k)
			for j, end := k-1, n; j >= 0; j-- {
				a := cuts[j][end]
				groups[j] = []int{0}
				for c := a; c < end; c++ {
					groups[j] = append(groups[j], c)
				}
				end = a
			}
			return groups
		}
		prev = cur
	}
	return nil
}

// blocks renders one block per config: its name, then "header value"
// pairs packed into lines of at most width columns; a pair longer than a
// line is wrapped at its spaces.
func (r *Report) blocks(head []string, rows [][]string, width int) string {
	var b strings.Builder
	for i, row := range rows {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(row[0] + "\n")
		line := ""
		for j := 1; j < len(row); j++ {
			item := head[j] + " " + row[j]
			if line != "" && utf8.RuneCountInString(line)+3+utf8.RuneCountInString(item) > width {
				b.WriteString(line + "\n")
				line = ""
			}
			switch {
			case line != "":
				line += " · " + item
			case 2+utf8.RuneCountInString(item) > width: // a long list of failures
				b.WriteString("  " + strings.ReplaceAll(wrap(item, width-4), "\n", "\n    ") + "\n")
			default:
				line = "  " + item
			}
		}
		if line != "" {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// wrap breaks s into lines of at most width runes at spaces; width 0
// leaves it alone.
func wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line == "" {
			line = word
		} else {
			line += " " + word
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// WriteMarkdown writes report.md content.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Comparison report\n\n> %s\n\n", r.Banner())
	fmt.Fprintf(&b, "- model: %s (--llm %s)\n- suite: %s (%d tasks)\n- seed: %d%s\n- wall time: %.1fs (%d runs, %d reused)\n- generated: %s\n",
		r.Model, r.modelSpec(), r.Suite, r.Tasks, r.Seed, r.repeatsNote(), r.WallSeconds, r.Ran+r.Reused, r.Reused, r.GeneratedAt.Format(time.RFC3339))
	if r.Dir != "" {
		fmt.Fprintf(&b, "- run folder: %s\n", r.Dir)
	}
	if line := r.Budget.Line(); line != "" {
		b.WriteString("\n> " + line + "\n")
	}
	for _, line := range r.scorerLines() {
		b.WriteString("- " + line + "\n")
	}
	b.WriteString("\n")
	cols := r.columns()
	head, rows := r.cells()
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for _, c := range cols {
		if c.left {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, row := range rows {
		for i := range row {
			row[i] = strings.ReplaceAll(row[i], "|", `\|`)
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	b.WriteString("\n" + PerTaskNote + "\n")
	if lines := r.frontierLines(); len(lines) > 0 {
		b.WriteString("\n" + strings.Join(lines, "\n\n") + "\n")
	}
	if r.anyEstimated() {
		b.WriteString("\n" + EstimatedNote + "\n")
	}
	b.WriteString("\n" + FailureLegend + "\n\n" + FaultLegend + "\n\n## Columns\n\n| column | report.json field (configs[i]) | meaning |\n|---|---|---|\n")
	for _, c := range cols {
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", c.head, c.field, c.doc)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteFiles writes report.md, report.json, report.html and, for a report
// that Run built, the per-task viewer tasks.html (package eval/viewer)
// into dir, and returns the path of report.html.
func (r *Report) WriteFiles(dir string) (string, error) {
	if r.grid != nil {
		if _, err := viewer.WriteFile(dir, *r.grid); err != nil {
			return "", fmt.Errorf("writing %s: %w", viewer.FileName, err)
		}
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), md.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("writing report.md: %w", err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(js, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("writing report.json: %w", err)
	}
	page, err := r.HTML()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		return "", fmt.Errorf("writing report.html: %w", err)
	}
	return path, nil
}

// HTML renders a self-contained page: no scripts, no external assets; the
// charts are inline SVG drawn with gonum/plot.
func (r *Report) HTML() ([]byte, error) {
	scatter, err := r.scatterSVG()
	if err != nil {
		return nil, err
	}
	bars, err := r.latencySVG()
	if err != nil {
		return nil, err
	}
	front, err := r.frontierSVG()
	if err != nil {
		return nil, err
	}
	cols := r.columns()
	head, rows := r.cells()
	left := make([]bool, len(cols))
	for i, c := range cols {
		left[i] = c.left
	}
	notes := []string{PerTaskNote}
	if r.anyEstimated() {
		notes = append(notes, EstimatedNote)
	}
	notes = append(notes, FailureLegend, FaultLegend)
	var out bytes.Buffer
	err = pageTmpl.Execute(&out, map[string]any{
		"R": r, "Banner": r.Banner(), "Spec": r.modelSpec(), "Scatter": template.HTML(scatter), "Latency": template.HTML(bars), "Frontier": template.HTML(front), "FrontierLines": r.frontierLines(),
		"Head": head, "Rows": rows, "Left": left, "Notes": notes, "Columns": r.Columns(), "BudgetLine": r.Budget.Line(), "ScorerLines": r.scorerLines(), "Tasks": r.grid != nil,
	})
	if err != nil {
		return nil, fmt.Errorf("rendering report.html: %w", err)
	}
	return out.Bytes(), nil
}

// chartWidth and chartHeight are the size of each chart's plot area.
const (
	chartWidth  = 7 * vg.Inch
	chartHeight = 4.5 * vg.Inch
)

// newPlot returns a plot titled title whose text is set in Liberation
// Sans, which the page asks browsers for by its metric twins too (see
// svgDraw).
func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	for _, s := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		s.Font.Variant = "Sans"
	}
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.Title.Padding = vg.Points(8)
	return p
}

// svgOf renders a plot as an SVG element for inline use.
func svgOf(p *plot.Plot) (string, error) {
	return svgDraw(chartWidth, chartHeight, p.Draw)
}

// svgDraw renders what paint draws on a w × h canvas as an SVG element
// for inline use: no XML prolog and no namespace declarations, so the page
// holds no URL at all. Text asks for Liberation Sans or a font with the
// same metrics, so labels measured by gonum/plot fit where they are drawn.
func svgDraw(w, h vg.Length, paint func(draw.Canvas)) (string, error) {
	c := vgsvg.New(w, h)
	paint(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("drawing chart: %w", err)
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	if end := strings.IndexByte(s, '>'); end > 0 {
		s = svgNamespace.ReplaceAllString(s[:end], "") + s[end:]
	}
	return strings.ReplaceAll(s, "font-family:Liberation Sans;", "font-family:Liberation Sans,Arimo,Arial,Helvetica,sans-serif;"), nil
}

// svgNamespace matches the xmlns attributes of an <svg> start tag.
var svgNamespace = regexp.MustCompile(`\s+xmlns(:\w+)?="[^"]*"`)

// configColor is config i's colour: ten that stay apart on white
// (Okabe–Ito darkened, without its yellow, and four more), in turn.
func configColor(i int) color.Color {
	c := [...]uint32{0x0072B2, 0xD55E00, 0x009E73, 0x7B3294, 0xE69F00, 0x2A9FD6, 0x222222, 0x8C564B, 0xC2185B, 0x808000}[i%10]
	return color.RGBA{R: uint8(c >> 16), G: uint8(c >> 8), B: uint8(c), A: 255}
}

// configShape is config i's marker shape.
func configShape(i int) draw.GlyphDrawer {
	shapes := [...]draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, thick{draw.RingGlyph{}},
		thick{draw.SquareGlyph{}}, thick{draw.TriangleGlyph{}}, thick{draw.CrossGlyph{}}, thick{draw.PlusGlyph{}}}
	return shapes[(i+i/10)%len(shapes)]
}

// thick draws an outline glyph with lines at least 1.5 points wide, so
// it shows as well as the filled ones (gonum/plot draws them at 0.5).
type thick struct{ draw.GlyphDrawer }

// DrawGlyph implements draw.GlyphDrawer.
func (g thick) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	wide := *c
	wide.Canvas = minLineWidth{Canvas: c.Canvas, min: vg.Points(1.5)}
	g.GlyphDrawer.DrawGlyph(&wide, sty, pt)
}

// minLineWidth is a canvas whose lines are never thinner than min.
type minLineWidth struct {
	vg.Canvas
	min vg.Length
}

// SetLineWidth implements vg.Canvas.
func (c minLineWidth) SetLineWidth(w vg.Length) { c.Canvas.SetLineWidth(max(w, c.min)) }

// glyphStyle gives config i a colour and shape pair that no other of the
// first 80 configs shares: colours repeat every 10 configs and each repeat
// moves the shape on by 11 of 8 shapes.
func glyphStyle(i int) draw.GlyphStyle {
	return draw.GlyphStyle{Color: configColor(i), Shape: configShape(i), Radius: vg.Points(4.5)}
}

// scatterSVG draws success rate against tokens per task, one glyph per
// config, numbered next to the point (configs on the same spot share one
// label, "3,7") and keyed by number, glyph and name to the right of the
// plot. Both axes span the data with some padding; the tokens axis is
// logarithmic when the values spread over more than a factor of ten.
func (r *Report) scatterSVG() (string, error) {
	p, legend, legendWidth, err := r.scatterPlot()
	if err != nil {
		return "", err
	}
	titleHeight := p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding
	return svgDraw(chartWidth+legendWidth, chartHeight, func(c draw.Canvas) {
		p.Draw(draw.Crop(c, 0, -legendWidth, 0, 0))
		legend.Draw(draw.Crop(c, chartWidth+legend.TextStyle.Width(" "), 0, 0, -titleHeight))
	})
}

// scatterPlot builds scatterSVG's plot and its key, which is legendWidth
// wide.
func (r *Report) scatterPlot() (_ *plot.Plot, _ plot.Legend, legendWidth vg.Length, _ error) {
	p := newPlot("success vs tokens/task")
	p.Y.Label.Text = "success (0 to 1)"
	p.X.Label.Text = "tokens/task (prompt + completion)"
	legend := plot.NewLegend()
	legend.TextStyle.Font.Variant = "Sans"
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Points(3)
	labels := pointLabels{style: p.X.Tick.Label, radius: glyphStyle(0).Radius}
	labels.style.Color = color.Gray{Y: 0x33}
	p.Add(plotter.NewGrid())
	var xs, ys []float64
	for i, s := range r.Configs {
		pt := plotter.XY{X: s.MeanTokens(), Y: s.SuccessRate}
		xs, ys = append(xs, pt.X), append(ys, pt.Y)
		sc, err := plotter.NewScatter(plotter.XYs{pt})
		if err != nil {
			return nil, legend, 0, err
		}
		sc.GlyphStyle = glyphStyle(i)
		p.Add(sc)
		key := strconv.Itoa(i + 1)
		name := key + "  " + s.Config
		legend.Add(name, sc)
		legendWidth = max(legendWidth, legend.TextStyle.Width(name))
		labels.xys, labels.keys = append(labels.xys, pt), append(labels.keys, key)
	}
	p.Add(labels)
	if lo, hi, ok := spread(xs); ok && lo > 0 && hi/lo > 10 {
		pad := math.Pow(hi/lo, 0.06)
		p.X.Min, p.X.Max = lo/pad, hi*pad
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
		p.X.Label.Text += ", log scale"
	} else {
		p.X.Min, p.X.Max = padded(lo, hi, 0.08, 1)
		p.X.Min = max(p.X.Min, 0)
	}
	lo, hi, _ := spread(ys)
	p.Y.Min, p.Y.Max = padded(lo, hi, 0.08, 0.1)
	p.Y.Tick.Marker = within{lo: 0, hi: 1}
	if len(r.Configs) > 0 {
		legendWidth += legend.ThumbnailWidth + 2*legend.TextStyle.Width(" ")
	}
	return p, legend, legendWidth, nil
}

// spread returns the smallest and largest of vs; ok is false when vs is
// empty.
func spread(vs []float64) (lo, hi float64, ok bool) {
	if len(vs) == 0 {
		return 0, 0, false
	}
	return slices.Min(vs), slices.Max(vs), true
}

// padded widens [lo, hi] to at least minSpan around its middle, then by
// frac of its span on either side, so no point sits on the frame.
func padded(lo, hi, frac, minSpan float64) (float64, float64) {
	if span := hi - lo; span < minSpan {
		mid := (lo + hi) / 2
		lo, hi = mid-minSpan/2, mid+minSpan/2
	}
	pad := (hi - lo) * frac
	return lo - pad, hi + pad
}

// within is the default ticker without the ticks outside [lo, hi], for an
// axis padded past the values it can take.
type within struct{ lo, hi float64 }

// Ticks implements plot.Ticker.
func (w within) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for _, t := range (plainTicks{}).Ticks(min, max) {
		if t.Value >= w.lo-1e-9 && t.Value <= w.hi+1e-9 {
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// plainTicks is the default ticker with labels as short as their values
// allow ("25", not "25.00").
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ticks := (plot.DefaultTicks{}).Ticks(min, max)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = strconv.FormatFloat(math.Round(t.Value*1e6)/1e6, 'f', -1, 64)
		}
	}
	return ticks
}

// logTicks marks every integer multiple of a power of ten and labels 1, 2
// and 5 times each power (only the powers, when that is too many labels).
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	labelled := 0
	for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
		for m := 1.0; m < 10; m++ {
			v := m * math.Pow(10, e)
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
				labelled++
			}
			ticks = append(ticks, t)
		}
	}
	if labelled > 9 {
		for i, t := range ticks {
			if l := t.Label; l != "" && l[0] != '1' {
				ticks[i].Label = ""
			}
		}
	}
	return ticks
}

// pointLabels writes each point's key next to it, on the first side of
// right, left, above and below where it overlaps no other label or point
// and stays inside the plot. Points closer than a glyph share one label.
type pointLabels struct {
	xys    plotter.XYs
	keys   []string
	style  text.Style
	radius vg.Length
}

// Plot implements plot.Plotter.
func (l pointLabels) Plot(c draw.Canvas, p *plot.Plot) {
	groups, glyphs := l.group(p, c)
	sty := l.style
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	var placed []vg.Rectangle
	for _, g := range groups {
		txt := strings.Join(g.keys, ",")
		best := l.place(c, g.at, vg.Point{X: sty.Width(txt), Y: sty.Height(txt)}, append(slices.Clone(placed), glyphs...))
		placed = append(placed, best)
		c.FillText(sty, best.Min, txt)
	}
}

// labelGroup is the points, closer than a glyph to the first, that share
// one label.
type labelGroup struct {
	at   vg.Point
	keys []string
}

// group returns the points' label groups and the box of each point's
// glyph, on canvas c of plot p.
func (l pointLabels) group(p *plot.Plot, c draw.Canvas) ([]labelGroup, []vg.Rectangle) {
	trX, trY := p.Transforms(&c)
	var groups []labelGroup
	var glyphs []vg.Rectangle
	r := vg.Point{X: l.radius, Y: l.radius}
	for i, xy := range l.xys {
		at := vg.Point{X: trX(xy.X), Y: trY(xy.Y)}
		glyphs = append(glyphs, vg.Rectangle{Min: at.Sub(r), Max: at.Add(r)})
		g := slices.IndexFunc(groups, func(g labelGroup) bool {
			d := g.at.Sub(at)
			return math.Hypot(float64(d.X), float64(d.Y)) < float64(l.radius)
		})
		if g < 0 {
			groups = append(groups, labelGroup{at: at, keys: []string{l.keys[i]}})
			continue
		}
		groups[g].keys = append(groups[g].keys, l.keys[i])
	}
	return groups, glyphs
}

// place returns the box of a label of the given size next to the point
// at: the first spot around it (right, left, above, below, then the
// diagonals) that overlaps none of taken and stays inside c, else the one
// with the fewest overlaps, then staying inside.
func (l pointLabels) place(c draw.Canvas, at, size vg.Point, taken []vg.Rectangle) vg.Rectangle {
	gap := l.radius + vg.Points(2)
	spots := []vg.Point{
		{X: at.X + gap, Y: at.Y - size.Y/2},          // right
		{X: at.X - gap - size.X, Y: at.Y - size.Y/2}, // left
		{X: at.X - size.X/2, Y: at.Y + gap},          // above
		{X: at.X - size.X/2, Y: at.Y - gap - size.Y}, // below
		{X: at.X + gap, Y: at.Y + gap/2},             // above right
		{X: at.X + gap, Y: at.Y - gap/2 - size.Y},    // below right
		{X: at.X - gap - size.X, Y: at.Y + gap/2},    // above left
		{X: at.X - gap - size.X, Y: at.Y - gap/2 - size.Y},
	}
	best := vg.Rectangle{Min: spots[0], Max: spots[0].Add(size)}
	bestScore := -1
	for _, spot := range spots {
		box := vg.Rectangle{Min: spot, Max: spot.Add(size)}
		score := 0 // lower is better: overlaps, then leaving the plot
		for _, o := range taken {
			if overlap(box, o) {
				score += 2
			}
		}
		if box.Min.X < c.Min.X || box.Max.X > c.Max.X || box.Min.Y < c.Min.Y || box.Max.Y > c.Max.Y {
			score++
		}
		if bestScore < 0 || score < bestScore {
			best, bestScore = box, score
		}
		if score == 0 {
			break
		}
	}
	return best
}

// overlap reports whether two rectangles intersect.
func overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func (r *Report) latencySVG() (string, error) {
	p := newPlot("run latency: p50 ms and p95 ms")
	p.Y.Label.Text = "ms"
	var p50, p95 plotter.Values
	names := make([]string, len(r.Configs))
	for i, s := range r.Configs {
		p50 = append(p50, s.LatencyP50MS)
		p95 = append(p95, s.LatencyP95MS)
		names[i] = s.Config
	}
	if len(names) == 0 {
		return svgOf(p)
	}
	w := vg.Points(12)
	b50, err := plotter.NewBarChart(p50, w)
	if err != nil {
		return "", err
	}
	b50.Color = configColor(0)
	b50.LineStyle.Width = 0
	b50.Offset = -w / 2
	b95, err := plotter.NewBarChart(p95, w)
	if err != nil {
		return "", err
	}
	b95.Color = configColor(4)
	b95.LineStyle.Width = 0
	b95.Offset = w / 2
	p.Add(plotter.NewGrid(), b50, b95)
	p.Legend.Add("p50 ms", b50)
	p.Legend.Add("p95 ms", b95)
	p.Legend.Top = true
	p.Y.Min, p.Y.Max = 0, 1.15*max(slices.Max(p95), slices.Max(p50), 1) // room for the legend
	p.Y.Tick.Marker = plainTicks{}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.5
	p.X.Tick.Label.XAlign = draw.XRight
	return svgOf(p)
}

var pageTmpl = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>planner comparison report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}
.banner{padding:.8em 1em;border-left:6px solid #c77800;background:#fff4e0;margin-bottom:1em}
.table{overflow-x:auto}table{border-collapse:collapse;font-size:14px}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right;white-space:nowrap}
th{background:#f4f4f4;white-space:normal;vertical-align:bottom}.l{text-align:left}td.l{white-space:normal;min-width:6em}.notes{font-size:14px;max-width:60em}
.charts svg{display:block;max-width:100%;height:auto;margin:1.5em 0}
dl.columns{display:grid;grid-template-columns:max-content max-content auto;gap:.2em 1em;font-size:14px}dl.columns dt,dl.columns dd{margin:0}
</style></head><body>
<h1>Comparison report</h1>
<div class="banner">{{.Banner}}</div>
<p>Model: {{.R.Model}} (--llm {{.Spec}}) · suite: {{.R.Suite}} ({{.R.Tasks}} tasks) · seed {{.R.Seed}} · {{.R.Ran}} runs in {{printf "%.1f" .R.WallSeconds}} s, {{.R.Reused}} reused from an earlier run{{if .R.Dir}} · run folder {{.R.Dir}}{{end}}</p>
{{if .BudgetLine}}<p class="banner">{{.BudgetLine}}</p>{{end}}
{{range .ScorerLines}}<p>{{.}}</p>{{end}}
{{if .Tasks}}<p><a href="tasks.html">Task by task</a>: every run's answer, verdict, cost and time, the tasks where the configs disagree, and each run's trace as a timeline.</p>{{end}}
<div class="table"><table><tr>{{range $i, $h := .Head}}<th{{if index $.Left $i}} class="l"{{end}}>{{$h}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if index $.Left $i}} class="l"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table></div>
<div class="notes">{{range .Notes}}<p>{{.}}</p>{{end}}</div>
<h2>Charts</h2>
<p class="notes">Each point is a config, numbered as in the key on the right; configs on the same spot share a label ("9,11").
Higher is more correct answers, further left is fewer tokens per task.</p>
<div class="charts">{{.Scatter}}{{.Frontier}}{{.Latency}}</div>{{range .FrontierLines}}
<p>{{.}}</p>{{end}}
<h2>Columns</h2>
<dl class="columns">{{range .Columns}}<dt>{{.Column}}</dt><dd><code>{{.Field}}</code></dd><dd>{{.Meaning}}</dd>{{end}}</dl>
</body></html>
`))
