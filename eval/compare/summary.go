package compare

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/planner-engine/planner/eval/stats"
	"github.com/planner-engine/planner/eval/trajectory"
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
	rows := make([]Row, len(order))
	base := 0
	for i, name := range order {
		rows[i] = Row{Config: name, Label: name}
		if name == baseline {
			base = i
		}
	}
	return SummarizeRows(records, rows, base)
}

// Row is one row of a report: a config, run with one model.
type Row struct {
	// Config is the pipeline's name.
	Config string
	// Model is the model's spec; "" matches a record of any model.
	Model string
	// Label names the row in reports: Config, or "Config @ Model" in a
	// comparison of several models.
	Label string
	// entry is the comparison's entry the row shows, plus 1 (0: match
	// records by Config and Model).
	entry int
}

// matches reports whether r is one of row's runs.
func (row Row) matches(r Record) bool {
	if row.entry != 0 {
		return r.entry == row.entry
	}
	return r.Config == row.Config && (row.Model == "" || r.Model == row.Model)
}

// SummarizeRows is Summarize over rows, in order, comparing each with
// rows[baseline] task by task (ConfigSummary.VsBaseline; the first row
// when baseline is out of range). A task run several times (repeats)
// counts once in every per-task statistic: its runs are averaged, and
// intervals resample tasks with their repeats together.
func SummarizeRows(records []Record, rows []Row, baseline int) *Report {
	return summarizeRows(records, rows, baseline, nil)
}

// summarizeRows is SummarizeRows, with each config's summary of the
// scorers named scorers (Record.Scores).
func summarizeRows(records []Record, rows []Row, baseline int, scorers []string) *Report {
	rep := &Report{}
	byRow := make([][]Record, len(rows))
	for _, r := range records {
		for i, row := range rows {
			if row.matches(r) {
				byRow[i] = append(byRow[i], r)
				break
			}
		}
	}
	tasks := make([]tasksOf, len(rows)) // each row's runs by task
	for i, row := range rows {
		tasks[i] = perTask(byRow[i])
		s := summarizeRow(byRow[i], tasks[i])
		s.Scores = scoreSummaries(scorers, tasks[i])
		s.Trajectory = trajectories(byRow[i])
		s.Routes = routesOf(byRow[i])
		s.Config, s.Label = row.Config, row.Label
		if s.Label == row.Config {
			s.Label = ""
		}
		rep.Configs = append(rep.Configs, s)
		rep.Repeats = max(rep.Repeats, s.Repeats)
	}
	if len(rows) > 0 {
		if baseline < 0 || baseline >= len(rows) {
			baseline = 0
		}
		for i := range rep.Configs {
			rep.Configs[i].VsBaseline = paired(rep.Configs[baseline].name(), tasks[baseline], tasks[i], i == baseline)
		}
	}
	return rep
}

// bootstrapResamples and bootstrapSeed fix the reports' bootstrap
// intervals: the same results always give the same intervals.
const (
	bootstrapResamples = 2000
	bootstrapSeed      = 1
)

// summarizeRow aggregates one row's records rs, grouped by task in tasks.
func summarizeRow(rs []Record, tasks tasksOf) ConfigSummary {
	s := ConfigSummary{Runs: len(rs), Failures: map[string]int{}, Recovered: map[string]int{}, RecoveryEvents: map[string]int{}}
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
		s.CacheHits += r.CacheHits
		s.CacheSavedUSD += r.CacheSavedUSD
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
	s.Tasks = len(tasks.ids)
	for _, g := range tasks.runs {
		s.Repeats = max(s.Repeats, len(g))
	}
	s.CI = intervals(tasks)
	s.SuccessCI = s.CI.Success
	s.PassAtK, s.PassHatK = passAtK(tasks)
	return s
}

// trajectories averages the trajectory metrics of rs (Record.Path), or
// nil when none of them was scored against gold steps.
func trajectories(rs []Record) *trajectory.Summary {
	ms := make([]trajectory.Metrics, 0, len(rs))
	for _, r := range rs {
		if r.Path != nil {
			ms = append(ms, *r.Path)
		}
	}
	s := trajectory.Summarize(ms)
	if s.Scored == 0 {
		return nil
	}
	return &s
}

// scorePaths scores each record's trajectory against its task's gold
// steps (Options.Gold), setting Record.Path; a record without a stored
// trajectory (run by an earlier version) or whose task has no gold steps
// is left unscored.
func (c *comparison) scorePaths(recs []Record) {
	for i := range recs {
		g := c.opts.Gold[recs[i].TaskID]
		if g == nil || len(g.Steps) == 0 || len(recs[i].Trajectory) == 0 {
			continue
		}
		var t trajectory.Trajectory
		if err := json.Unmarshal(recs[i].Trajectory, &t); err != nil {
			continue // stored by this package: only a damaged store gets here
		}
		m := trajectory.ScoreGold(t, g)
		recs[i].Path = &m
	}
}

// tasksOf are a row's runs grouped by task, tasks in id order, each
// task's runs in repeat order.
type tasksOf struct {
	ids  []string
	runs [][]Record
	at   map[string]int // task id -> index
}

// perTask groups rs by task.
func perTask(rs []Record) tasksOf {
	t := tasksOf{at: map[string]int{}}
	sorted := slices.Clone(rs)
	slices.SortStableFunc(sorted, func(a, b Record) int {
		return cmp.Or(strings.Compare(a.TaskID, b.TaskID), cmp.Compare(a.Repeat, b.Repeat))
	})
	for _, r := range sorted {
		i, ok := t.at[r.TaskID]
		if !ok {
			i = len(t.ids)
			t.at[r.TaskID] = i
			t.ids = append(t.ids, r.TaskID)
			t.runs = append(t.runs, nil)
		}
		t.runs[i] = append(t.runs[i], r)
	}
	return t
}

// success returns the task's success rate over its scored runs, and
// whether it had any.
func success(runs []Record) (float64, bool) {
	n, c := 0, 0
	for _, r := range runs {
		if r.Scored {
			n++
			if Succeeded(r) {
				c++
			}
		}
	}
	if n == 0 {
		return 0, false
	}
	return float64(c) / float64(n), true
}

// intervals computes a row's 95% intervals. Success: Wilson's when each
// task ran once, else a bootstrap that resamples tasks with their repeats
// (stats.BootstrapMeanClustered); the means of EM, F1, cost, latency,
// tokens and calls: the same clustered bootstrap (with one run per task,
// a plain bootstrap).
func intervals(t tasksOf) Intervals {
	var ci Intervals
	var success, em, f1, cost, lat, tok, calls [][]float64
	repeated := false
	for _, runs := range t.runs {
		repeated = repeated || len(runs) > 1
		var sg, eg, fg []float64
		for _, r := range runs {
			if r.Scored {
				sg, eg = append(sg, b2f(Succeeded(r))), append(eg, r.EM)
				if r.HasF1 {
					fg = append(fg, r.F1)
				}
			}
		}
		success, em, f1 = appendGroup(success, sg), appendGroup(em, eg), appendGroup(f1, fg)
		cost = append(cost, values(runs, func(r Record) float64 { return r.CostUSD }))
		lat = append(lat, values(runs, func(r Record) float64 { return r.LatencyMS }))
		tok = append(tok, values(runs, func(r Record) float64 { return float64(r.PromptTokens + r.CompletionTokens) }))
		calls = append(calls, values(runs, func(r Record) float64 { return float64(r.ModelCalls) }))
	}
	boot := func(groups [][]float64) *stats.Interval {
		iv, err := stats.BootstrapMeanClustered(groups, 0.95, bootstrapResamples, bootstrapSeed)
		if err != nil {
			return nil // no values
		}
		return &iv
	}
	if !repeated {
		n, c := 0, 0
		for _, g := range success {
			n++
			c += int(g[0])
		}
		if n > 0 {
			if iv, err := stats.Wilson(c, n, 0.95); err == nil {
				ci.Success = &iv
			}
		}
	} else {
		ci.Success = boot(success)
	}
	ci.EM, ci.F1, ci.CostUSD, ci.LatencyMS, ci.Tokens, ci.ModelCalls = boot(em), boot(f1), boot(cost), boot(lat), boot(tok), boot(calls)
	return ci
}

// appendGroup appends g to groups unless it is empty.
func appendGroup(groups [][]float64, g []float64) [][]float64 {
	if len(g) == 0 {
		return groups
	}
	return append(groups, g)
}

// values is f of each run.
func values(runs []Record, f func(Record) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = f(r)
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// passAtK returns, for k from 1 to the fewest scored runs of any task
// (when at least 2), the mean over tasks of pass@k and pass^k
// (stats.PassAtK, stats.PassHatK); nil without repeats.
func passAtK(t tasksOf) (at, hat map[int]float64) {
	type nc struct{ n, c int }
	var per []nc
	least := math.MaxInt
	for _, runs := range t.runs {
		var x nc
		for _, r := range runs {
			if r.Scored {
				x.n++
				if Succeeded(r) {
					x.c++
				}
			}
		}
		if x.n > 0 {
			per = append(per, x)
			least = min(least, x.n)
		}
	}
	if len(per) == 0 || least < 2 {
		return nil, nil
	}
	at, hat = map[int]float64{}, map[int]float64{}
	for k := 1; k <= least; k++ {
		for _, x := range per {
			a, _ := stats.PassAtK(x.n, x.c, k) // 1 <= k <= n: no error
			h, _ := stats.PassHatK(x.n, x.c, k)
			at[k] += a
			hat[k] += h
		}
		at[k] /= float64(len(per))
		hat[k] /= float64(len(per))
	}
	return at, hat
}

// paired compares a row's tasks with the baseline's on the tasks both
// scored. A task's outcome is its success rate over its scored runs (0 or
// 1 without repeats): the row wins a task whose rate is higher than the
// baseline's. McNemar's test counts a task as solved when more than half
// its runs succeeded. The paired bootstrap intervals resample the common
// tasks (each task's mean over its runs on each side).
func paired(baseline string, base, cfg tasksOf, self bool) *PairedSummary {
	p := &PairedSummary{Baseline: baseline, McNemarP: 1, Self: self}
	var a, b []float64
	var ca, cb [][]float64 // each common task's run costs
	discordantWins, discordantLosses := 0, 0
	for i, id := range cfg.ids {
		j, both := base.at[id]
		if !both {
			continue
		}
		x, okx := success(cfg.runs[i])
		y, oky := success(base.runs[j])
		if okx && oky {
			p.Tasks++
			switch {
			case x > y:
				p.Wins++
			case x < y:
				p.Losses++
			default:
				p.Ties++
			}
			switch {
			case x > 0.5 && y <= 0.5:
				discordantWins++
			case x <= 0.5 && y > 0.5:
				discordantLosses++
			}
			a, b = append(a, x), append(b, y)
		}
		cost := func(r Record) float64 { return r.CostUSD }
		ca, cb = append(ca, values(cfg.runs[i], cost)), append(cb, values(base.runs[j], cost))
	}
	if pv, err := stats.McNemarExact(discordantWins, discordantLosses); err == nil {
		p.McNemarP = pv
	}
	if self {
		return p
	}
	if d, err := stats.PairedBootstrap(a, b, 0.95, bootstrapResamples, bootstrapSeed); err == nil {
		p.SuccessDiff, p.SuccessDiffCI = d.MeanDiff, &d.Diff
		if n, err := stats.TasksToDetect(mean(b), mean(a), 0.05, 0.8); err == nil {
			p.TasksToDetect = n
		}
	}
	if d, err := stats.BootstrapPairedClustered(ca, cb, 0.95, bootstrapResamples, bootstrapSeed); err == nil {
		p.CostDiffUSD, p.CostDiffCI = d.MeanDiff, &d.Diff
	}
	return p
}

// mean is the mean of xs (0 for none).
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
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
	rows := make([]Row, len(c.cfgs.entries))
	for i, e := range c.cfgs.entries {
		rows[i] = Row{Config: e.name, Model: e.spec, Label: e.label, entry: i + 1}
	}
	c.scorePaths(mine)
	usages, err := c.applyScorers(ctx, mine)
	if err != nil {
		return nil, err
	}
	adaptives := make([]bool, len(c.cfgs.entries))
	for i, e := range c.cfgs.entries {
		adaptives[i] = len(e.pipes) > 0 && e.pipes[0] != nil && adaptive(e.pipes[0].Kinds())
	}
	base := c.cfgs.baseline(o.Baseline)
	if base < 0 && o.Baseline == BaselineBest {
		base = bestFixed(mine, rows, adaptives)
	}
	rep := summarizeRows(mine, rows, max(0, base), scorerNames(usages))
	rep.Scorers = usages
	defer func() { // once the report says what produced it
		g := c.grid(rep, mine)
		rep.grid = &g
	}()
	for i := range rep.Configs {
		rep.Configs[i].ModelSpec = o.Scrubber.String(c.cfgs.entries[i].spec)
		rep.Configs[i].Label = o.Scrubber.String(rep.Configs[i].Label)
		rep.Configs[i].NotRun = ran.notRun[i]
		if ran.stopped != nil {
			rep.Configs[i].Stopped = ran.stopped[i]
		}
	}
	rep.setFrontier(adaptives)
	rep.Repeats = o.Repeats
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
	rep.Reused = c.runs() - ran.jobs
	for _, s := range rep.Configs {
		if s.Stopped != nil {
			rep.Reused -= s.Stopped.Skipped
		}
	}
	rep.WallSeconds = ran.wall.Seconds()
	rep.GeneratedAt = time.Now().UTC()
	return rep, nil
}

// records returns the stored results of this comparison (its entries,
// tasks, fingerprints and model specs, under its repeats' seeds), with
// their repeat index and entry, scrubbed and judged.
func (c *comparison) records(ctx context.Context) ([]Record, error) {
	all, err := c.store.All(ctx, c.seeds()...)
	if err != nil {
		return nil, err
	}
	var mine []Record
	for _, r := range all {
		t, isTask := c.ids[r.TaskID]
		if e := c.cfgs.entryOf(r); isTask && e >= 0 {
			r.Repeat, r.entry = int(r.Seed-c.opts.Seed), e+1
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
	var distinct, labels []string
	simulated, scriptedRuns, taskReplies := false, false, true
	for _, e := range c.cfgs.entries {
		if slices.Contains(distinct, e.spec) {
			continue
		}
		distinct = append(distinct, e.spec)
		labels = append(labels, loader.ModelLabel(e.model.Provider))
		kind := loader.ModelKind(e.model.Provider)
		simulated = simulated || kind == llm.KindSimulated
		scriptedRuns = scriptedRuns || kind == llm.KindScripted
		taskReplies = taskReplies && scripted.PlaysTaskReplies(e.model)
	}
	rep.ModelSpec = o.Scrubber.String(strings.Join(distinct, ", "))
	rep.Models = make([]string, 0, c.cfgs.models)
	for _, e := range c.cfgs.entries[:c.cfgs.models] {
		rep.Models = append(rep.Models, o.Scrubber.String(cmp.Or(e.modelLabel, e.spec)))
	}
	rep.Model = o.Scrubber.String(strings.Join(slices.Compact(labels), "; "))
	rep.Simulated = simulated
	rep.Scripted = scriptedRuns
	rep.TaskReplies = scriptedRuns && taskReplies
}

// routesOf counts rs by Record.Route; nil when no run took a route.
func routesOf(rs []Record) map[string]int {
	var out map[string]int
	for _, r := range rs {
		if r.Route == "" {
			continue
		}
		if out == nil {
			out = map[string]int{}
		}
		out[r.Route]++
	}
	return out
}
