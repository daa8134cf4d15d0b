package compare

import (
	"context"
	"fmt"
	"slices"

	"github.com/planner-engine/planner/eval/score"
	"github.com/planner-engine/planner/eval/stats"
	"github.com/planner-engine/planner/internal/par"
)

// ScoreResult is one scorer's verdict on a run (Options.Scorers). It is
// computed when a report is built, not stored with the run: a judge's
// verdicts are cached apart (package eval/score).
type ScoreResult struct {
	// Score is in [0, 1]; Pass the yes/no verdict; Reason says why.
	Score  float64 `json:"score"`
	Pass   bool    `json:"pass"`
	Reason string  `json:"reason,omitempty"`
	// Unscorable is true when the scorer had nothing to judge against;
	// the run is left out of the scorer's averages.
	Unscorable bool `json:"unscorable,omitempty"`
	// Cached is true when the verdict came from the judge's cache.
	Cached bool `json:"cached,omitempty"`
	// Error is why the scorer failed on the run (the run is then left
	// out of its averages and counted in ScorerUsage.Errors).
	Error string `json:"error,omitempty"`
}

// ScoreSummary aggregates one scorer's verdicts on a config's runs.
type ScoreSummary struct {
	// Scored counts the runs the scorer judged (not unscorable, no error).
	Scored int `json:"scored"`
	// Mean is the mean score and PassRate the share that passed, over
	// the judged runs.
	Mean     float64 `json:"mean"`
	PassRate float64 `json:"pass_rate"`
	// CI is the 95% bootstrap interval of Mean, resampling tasks with
	// their repeats; nil without judged runs.
	CI *stats.Interval `json:"ci,omitempty"`
}

// ScorerUsage says what one scorer of Options.Scorers did for a report:
// what its model calls cost (a judge's; apart from the runs' own), how
// many verdicts came from its cache and what they saved, and how often it
// failed.
type ScorerUsage struct {
	Name             string  `json:"name"`
	Verdicts         int     `json:"verdicts"`
	Calls            int     `json:"calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	// Cached counts verdicts taken from the judge's cache and SavedUSD
	// what they cost when first made; Calls and CostUSD leave them out.
	Cached   int     `json:"cached"`
	SavedUSD float64 `json:"saved_usd"`
	// Errors counts the runs the scorer failed on; FirstError is the
	// first one's message.
	Errors     int    `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
}

// Line describes u in one sentence.
func (u ScorerUsage) Line() string {
	s := fmt.Sprintf("scorer %s: %d verdicts", u.Name, u.Verdicts)
	if u.Calls > 0 || u.Cached > 0 {
		s += fmt.Sprintf(", %d model calls (%d prompt + %d completion tokens, $%.5f, apart from the runs'), %d from its cache (saved $%.5f)",
			u.Calls, u.PromptTokens, u.CompletionTokens, u.CostUSD, u.Cached, u.SavedUSD)
	}
	if u.Errors > 0 {
		s += fmt.Sprintf(", %d failed (first: %s)", u.Errors, u.FirstError)
	}
	return s
}

// applyScorers runs every scorer of Options.Scorers on every record, at
// most Options.Concurrency at once, sets each record's Scores, and, when
// Options.SuccessScorer names one, its verdict as the record's success.
// It returns what each scorer did. Errors are the records' (a scorer
// failing on one run fails no other); only ctx ending stops it.
func (c *comparison) applyScorers(ctx context.Context, recs []Record) ([]ScorerUsage, error) {
	scs := c.opts.Scorers
	if len(scs) == 0 {
		return nil, nil
	}
	type verdict struct {
		v   score.Verdict
		err error
	}
	n := len(scs)
	out, errs := par.Map(ctx, c.opts.Concurrency, len(recs)*n, func(ctx context.Context, i int) (verdict, error) {
		r, sc := recs[i/n], scs[i%n]
		t := c.tasks[c.ids[r.TaskID]]
		v, err := sc.Score(ctx, score.Input{TaskID: r.TaskID, Question: t.Question, Answer: r.Answer, Reference: t.Answer})
		return verdict{v, err}, nil
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("compare: scoring: %w", err)
		}
	}
	usages := make([]ScorerUsage, n)
	for k, sc := range scs {
		usages[k].Name = sc.Name()
	}
	for i := range recs {
		recs[i].Scores = make(map[string]ScoreResult, n)
		for k, sc := range scs {
			v, u := out[i*n+k], &usages[k]
			res := ScoreResult{Score: v.v.Score, Pass: v.v.Pass, Reason: c.opts.Scrubber.String(v.v.Reason), Unscorable: v.v.Unscorable, Cached: v.v.Cached}
			if v.err != nil {
				res = ScoreResult{Error: c.opts.Scrubber.String(v.err.Error())}
				u.Errors++
				if u.FirstError == "" {
					u.FirstError = res.Error
				}
			} else {
				u.Verdicts++
			}
			if v.v.Cached {
				u.Cached++
				u.SavedUSD += v.v.Usage.CostUSD
			} else {
				u.Calls += v.v.Usage.Calls
				u.PromptTokens += v.v.Usage.PromptTokens
				u.CompletionTokens += v.v.Usage.CompletionTokens
				u.CostUSD += v.v.Usage.CostUSD
			}
			recs[i].Scores[sc.Name()] = res
			if sc.Name() == c.opts.SuccessScorer {
				recs[i] = judgeBy(recs[i], res)
			}
		}
	}
	return usages, nil
}

// judgeBy makes res the record's success verdict: a scorer of
// Options.Scorers named by Options.SuccessScorer, in place of
// Options.Scorer's.
func judgeBy(r Record, res ScoreResult) Record {
	if r.Failure == FailureWrong {
		r.Failure = ""
	}
	r.Scored = res.Error == "" && !res.Unscorable
	r.Correct = r.Scored && res.Pass
	if r.Failure == "" && r.Scored && !r.Correct {
		r.Failure = FailureWrong
	}
	return r
}

// scoreSummaries aggregates the verdicts of each of names on tasks' runs.
func scoreSummaries(names []string, t tasksOf) map[string]*ScoreSummary {
	if len(names) == 0 {
		return nil
	}
	out := make(map[string]*ScoreSummary, len(names))
	for _, name := range names {
		s := &ScoreSummary{}
		var groups [][]float64
		passed := 0
		for _, runs := range t.runs {
			var g []float64
			for _, r := range runs {
				v, ok := r.Scores[name]
				if !ok || v.Unscorable || v.Error != "" {
					continue
				}
				g = append(g, v.Score)
				if v.Pass {
					passed++
				}
			}
			if len(g) > 0 {
				groups = append(groups, g)
				s.Scored += len(g)
				for _, x := range g {
					s.Mean += x
				}
			}
		}
		if s.Scored > 0 {
			s.Mean /= float64(s.Scored)
			s.PassRate = float64(passed) / float64(s.Scored)
			if iv, err := stats.BootstrapMeanClustered(groups, 0.95, bootstrapResamples, bootstrapSeed); err == nil {
				s.CI = &iv
			}
		}
		out[name] = s
	}
	return out
}

// scorerColumns show each scorer's mean score with its interval and its
// pass rate, in the order of Options.Scorers, at the end of the tables.
func scorerColumns(names []string) []column {
	var cols []column
	for _, name := range names {
		cols = append(cols, column{head: name, field: "scores." + name + ".mean", left: true,
			doc: "mean score (0 to 1) the scorer " + name + " gave the config's runs, its 95% interval (bootstrap over tasks) and the share it passed",
			cell: func(s ConfigSummary) string {
				v := s.Scores[name]
				if v == nil || v.Scored == 0 {
					return "-"
				}
				ci := ""
				if v.CI != nil {
					ci = fmt.Sprintf(" [%.2f, %.2f]", v.CI.Lo, v.CI.Hi)
				}
				return fmt.Sprintf("%.3f%s pass %.2f", v.Mean, ci, v.PassRate)
			}})
	}
	return cols
}

// scorerNames are the names of usages, in order.
func scorerNames(usages []ScorerUsage) []string {
	names := make([]string, len(usages))
	for i, u := range usages {
		names[i] = u.Name
	}
	return slices.Clip(names)
}
