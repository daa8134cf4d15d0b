package compare

import (
	"context"
	"github.com/planner-engine/planner/eval/stats"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
)

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

// scrubRecord removes secrets from the free text of a record: its answer,
// error and failure kind. The fields that key the store (config, task id,
// fingerprint) are left alone, so a resume still finds the record. The
// answer is scrubbed before it is judged, so a fresh record and the same
// record read back from the store get the same verdict.
func scrubRecord(s trace.Scrubber, r Record) Record {
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
	return SummarizeAgainst(records, order, "")
}

// SummarizeAgainst is Summarize, comparing each config task by task with
// the config named baseline (the first of order when "" or not in order).
func SummarizeAgainst(records []Record, order []string, baseline string) *Report {
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
		if s.Scored > 0 {
			if ci, err := stats.Wilson(s.Correct, s.Scored, 0.95); err == nil {
				s.SuccessCI = &ci
			}
		}
		rep.Configs = append(rep.Configs, s)
	}
	if len(order) > 0 {
		if !slices.Contains(order, baseline) {
			baseline = order[0]
		}
		base := outcomes(by[baseline])
		for i := range rep.Configs {
			rep.Configs[i].VsBaseline = paired(baseline, base, outcomes(by[order[i]]))
		}
	}
	return rep
}

// outcomes maps the task ids of rs that were scored to whether the run
// succeeded.
func outcomes(rs []Record) map[string]bool {
	out := make(map[string]bool, len(rs))
	for _, r := range rs {
		if r.Scored {
			out[r.TaskID] = Succeeded(r)
		}
	}
	return out
}

// paired compares a config's outcomes with the baseline's on the tasks
// both scored.
func paired(baseline string, base, cfg map[string]bool) *PairedSummary {
	p := &PairedSummary{Baseline: baseline, McNemarP: 1}
	for id, ok := range cfg {
		b, both := base[id]
		if !both {
			continue
		}
		p.Tasks++
		switch {
		case ok && !b:
			p.Wins++
		case !ok && b:
			p.Losses++
		default:
			p.Ties++
		}
	}
	if pv, err := stats.McNemarExact(p.Wins, p.Losses); err == nil {
		p.McNemarP = pv
	}
	return p
}

// report builds the comparison's report from every result the store
// holds for it, those reused and those just run, each scored again with
// Options.Scorer, and what ran says of the runs just made.
func (c *comparison) report(ctx context.Context, loader Loader, ran ran) (*Report, error) {
	mine, err := c.records(ctx)
	if err != nil {
		return nil, err
	}
	o := c.opts
	rep := SummarizeAgainst(mine, c.cfgs.names, o.Baseline)
	for i := range rep.Configs {
		rep.Configs[i].ModelSpec = o.Scrubber.String(c.cfgs.specs[i])
		rep.Configs[i].NotRun = ran.notRun[i]
	}
	rep.Budget = budgetSummary(ran)
	c.describeModel(rep, loader)
	rep.Dir = o.OutDir
	rep.Suite = o.Scrubber.String(o.Suite)
	rep.Seed = o.Seed
	rep.Tasks = len(c.tasks)
	rep.Ran = ran.jobs
	if rep.Budget != nil {
		rep.Ran -= rep.Budget.NotRun
	}
	rep.Reused = len(c.tasks)*len(c.cfgs.pipes) - ran.jobs
	rep.WallSeconds = ran.wall.Seconds()
	rep.GeneratedAt = time.Now().UTC()
	return rep, nil
}

// records returns the stored results of this comparison (its configs,
// tasks, fingerprints and model specs, under its seed), scrubbed and
// judged.
func (c *comparison) records(ctx context.Context) ([]Record, error) {
	all, err := c.store.All(ctx, c.opts.Seed)
	if err != nil {
		return nil, err
	}
	cfg := make(map[string]int, len(c.cfgs.names)) // config name -> index
	for i, name := range c.cfgs.names {
		cfg[name] = i
	}
	var mine []Record
	for _, r := range all {
		t, isTask := c.ids[r.TaskID]
		i, isConfig := cfg[r.Config]
		if isTask && isConfig && c.cfgs.printOf(i, r.TaskID) == r.Fingerprint && c.cfgs.specs[i] == r.Model {
			mine = append(mine, judge(scrubRecord(c.opts.Scrubber, r), c.tasks[t], c.opts.Scorer))
		}
	}
	return mine, nil
}

// budgetSummary says what the compare budget allowed and stopped, or nil
// when the comparison had none.
func budgetSummary(ran ran) *BudgetSummary {
	if ran.budget == nil {
		return nil
	}
	b := ran.budget.Limits()
	bs := &BudgetSummary{MaxModelCalls: b.MaxModelCalls, MaxTokens: b.MaxTokens, MaxCostUSD: b.MaxCostUSD, CutShort: ran.cutShort}
	bs.ModelCalls, bs.Tokens, bs.CostUSD = ran.budget.Spent()
	if err := ran.budget.Exhausted(); err != nil {
		bs.Spent, bs.Reason = true, err.Error()
	}
	for _, n := range ran.notRun {
		bs.NotRun += n
	}
	return bs
}

// describeModel sets what rep says of the model: its specs, its label
// and whether it is simulated, scripted and playing each task's own
// replies.
func (c *comparison) describeModel(rep *Report, loader Loader) {
	o := c.opts
	rep.ModelSpec = o.Scrubber.String(ModelSpec(o.LLM))
	provider := o.LLM.Provider
	if provider == "" {
		var distinct []string
		for _, s := range c.cfgs.specs {
			if !slices.Contains(distinct, s) {
				distinct = append(distinct, s)
			}
		}
		rep.ModelSpec = o.Scrubber.String(strings.Join(distinct, ", "))
		provider = c.cfgs.pipes[0].Config().LLM.Provider
	}
	rep.Model = o.Scrubber.String(loader.ModelLabel(provider))
	kind := loader.ModelKind(provider)
	rep.Simulated = kind == llm.KindSimulated
	rep.Scripted = kind == llm.KindScripted
	rep.TaskReplies = rep.Scripted && slices.IndexFunc(c.cfgs.models, func(m config.LLM) bool { return !scripted.PlaysTaskReplies(m) }) < 0
}
