package compare_test

import (
	"fmt"
	"testing"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rec builds a record of config "c" with the given latency.
func rec(latency float64, mods ...func(*compare.Record)) compare.Record {
	r := compare.Record{Config: "c", LatencyMS: latency}
	for _, m := range mods {
		m(&r)
	}
	return r
}

func correct(r *compare.Record) { r.Scored, r.Correct, r.EM = true, true, 1 }
func wrong(r *compare.Record)   { r.Scored, r.Correct, r.EM = true, false, 0 }
func f1(v float64) func(*compare.Record) {
	return func(r *compare.Record) { r.HasF1, r.F1 = true, v }
}
func failure(kind string) func(*compare.Record) {
	return func(r *compare.Record) { r.Failure = kind }
}

func latencies(vs ...float64) []compare.Record {
	out := make([]compare.Record, len(vs))
	for i, v := range vs {
		out[i] = rec(v, correct)
	}
	return out
}

func TestSummarizeAggregatesEachConfig(t *testing.T) {
	tests := []struct {
		name      string
		records   []compare.Record
		success   float64
		em, f1    float64
		hasF1     bool
		scored    int
		p50, p95  float64
		failures  map[string]int
		recovered map[string]int
	}{
		{
			name:    "success rate and EM average over scored runs only",
			records: []compare.Record{rec(1, correct), rec(1, correct), rec(1, wrong, failure("wrong")), rec(1)},
			success: 2.0 / 3, em: 2.0 / 3, scored: 3, p50: 1, p95: 1,
			failures: map[string]int{"wrong": 1}, recovered: map[string]int{},
		},
		{
			name: "EM is averaged as given, not derived from Correct",
			records: []compare.Record{rec(1, correct), rec(1, wrong, func(r *compare.Record) { r.EM = 0.5 }),
				rec(1, func(r *compare.Record) { r.EM = 1 })},
			success: 0.5, em: 0.75, scored: 2, p50: 1, p95: 1,
			failures: map[string]int{}, recovered: map[string]int{},
		},
		{
			name:    "F1 averages over runs whose scorer gives F1",
			records: []compare.Record{rec(1, correct, f1(1)), rec(1, wrong, f1(0.5)), rec(1, correct), rec(1, f1(0))},
			success: 2.0 / 3, em: 2.0 / 3, f1: 0.75, hasF1: true, scored: 3, p50: 1, p95: 1,
			failures: map[string]int{}, recovered: map[string]int{},
		},
		{
			name:    "nearest-rank percentiles of 20 latencies",
			records: latencies(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1),
			success: 1, em: 1, scored: 20, p50: 10, p95: 19,
			failures: map[string]int{}, recovered: map[string]int{},
		},
		{
			name:    "nearest-rank percentiles round the rank up",
			records: latencies(30, 10, 20),
			success: 1, em: 1, scored: 3, p50: 20, p95: 30,
			failures: map[string]int{}, recovered: map[string]int{},
		},
		{
			name:    "one run is every percentile",
			records: latencies(7.5),
			success: 1, em: 1, scored: 1, p50: 7.5, p95: 7.5,
			failures: map[string]int{}, recovered: map[string]int{},
		},
		{
			name: "failures count unsuccessful runs; correct runs that met one are recovered",
			records: []compare.Record{
				rec(1, wrong, failure("parse")), rec(1, wrong, failure("parse")), rec(1, correct, failure("tool")),
				rec(1, correct, failure("parse")), rec(1, failure("provider")), rec(1, wrong, failure("wrong")), rec(1, correct),
			},
			success: 3.0 / 6, em: 3.0 / 6, scored: 6, p50: 1, p95: 1,
			failures:  map[string]int{"parse": 2, "provider": 1, "wrong": 1},
			recovered: map[string]int{"tool": 1, "parse": 1},
		},
		{
			name:     "a config without runs has zeros, not NaN",
			records:  nil,
			failures: map[string]int{}, recovered: map[string]int{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := compare.Summarize(tt.records, []string{"c"})
			require.Len(t, rep.Configs, 1)
			s := rep.Configs[0]
			assert.Equal(t, "c", s.Config)
			assert.Equal(t, len(tt.records), s.Runs)
			assert.Equal(t, tt.scored, s.Scored)
			assert.InDelta(t, tt.success, s.SuccessRate, 1e-9)
			assert.InDelta(t, tt.em, s.EM, 1e-9)
			assert.InDelta(t, tt.f1, s.F1, 1e-9)
			assert.Equal(t, tt.hasF1, s.HasF1)
			assert.InDelta(t, tt.p50, s.LatencyP50MS, 1e-9)
			assert.InDelta(t, tt.p95, s.LatencyP95MS, 1e-9)
			assert.Equal(t, tt.failures, s.Failures)
			assert.Equal(t, tt.recovered, s.Recovered)
		})
	}
}

func TestSummarizeTotalsUsageAndKeepsConfigOrder(t *testing.T) {
	records := []compare.Record{
		{Config: "b", ModelCalls: 2, PromptTokens: 100, CompletionTokens: 10, ToolCalls: 1, CostUSD: 0.5, Complete: true},
		{Config: "a", ModelCalls: 1, PromptTokens: 40, CompletionTokens: 4, Estimated: true},
		{Config: "b", ModelCalls: 3, PromptTokens: 200, CompletionTokens: 20, ToolCalls: 2, CostUSD: 0.25},
		{Config: "other", ModelCalls: 99},
	}
	rep := compare.Summarize(records, []string{"b", "a"})
	require.Len(t, rep.Configs, 2)
	b, a := rep.Configs[0], rep.Configs[1]
	assert.Equal(t, "b", b.Config)
	assert.Equal(t, "a", a.Config)
	assert.Equal(t, 5, b.ModelCalls)
	assert.Equal(t, 300, b.PromptTokens)
	assert.Equal(t, 30, b.CompletionTokens)
	assert.Equal(t, 3, b.ToolCalls)
	assert.InDelta(t, 0.75, b.CostUSD, 1e-12)
	assert.Equal(t, 1, b.Completed)
	assert.False(t, b.Estimated)
	assert.True(t, a.Estimated)
	assert.InDelta(t, 165, b.MeanTokens(), 1e-9)
}

func TestFailureListsAreSortedAndDashWhenEmpty(t *testing.T) {
	s := compare.ConfigSummary{Failures: map[string]int{"wrong": 1, "parse": 3, "loop": 0}, Recovered: map[string]int{}}
	assert.Equal(t, "parse:3 wrong:1", s.FailureList())
	assert.Equal(t, "-", s.RecoveredList())
}

func TestSucceededNeedsAScoredCorrectAnswer(t *testing.T) {
	tests := []struct {
		name string
		rec  compare.Record
		want bool
	}{
		{"scored and correct", compare.Record{Scored: true, Correct: true}, true},
		{"scored and wrong", compare.Record{Scored: true}, false},
		{"unscored", compare.Record{Correct: true}, false},
		{"correct with a failure kind", compare.Record{Scored: true, Correct: true, Failure: "tool"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, compare.Succeeded(tt.rec))
		})
	}
}

// Every config gets a Wilson interval, and each one after the first a
// task-by-task comparison with the first: wins, ties, losses and the exact
// McNemar p-value of the discordant tasks.
func TestSummarizePairsEachConfigWithTheFirst(t *testing.T) {
	var records []compare.Record
	// base right on t0..t3 (4 of 10); b right on t1..t9 (9 of 10): b wins
	// t4..t9 (6), loses t0 (1), ties t1..t3 (both right), none both wrong.
	for i := range 10 {
		id := fmt.Sprintf("t%d", i)
		records = append(records,
			compare.Record{Config: "base", TaskID: id, Scored: true, Correct: i < 4},
			compare.Record{Config: "b", TaskID: id, Scored: true, Correct: i >= 1})
	}
	rep := compare.Summarize(records, []string{"base", "b"})
	require.Len(t, rep.Configs, 2)
	b := rep.Configs[1].VsBaseline
	require.NotNil(t, b)
	// 2·P[X ≤ 1], X ~ Bin(7, ½) = 2·(1 + 7)/128
	assert.InDelta(t, 0.125, b.McNemarP, 1e-12)
	// The paired difference: 0.9 - 0.4; its bootstrap interval resamples
	// the ten per-task differences (six +1, one -1, three 0: standard
	// error about 0.21), so it holds 0.5 and excludes 0.
	assert.InDelta(t, 0.5, b.SuccessDiff, 1e-12)
	require.NotNil(t, b.SuccessDiffCI)
	assert.True(t, b.SuccessDiffCI.Contains(0.5) && b.SuccessDiffCI.Lo > 0 && b.SuccessDiffCI.Hi < 1, "%+v", *b.SuccessDiffCI)
	// Fleiss's size for 0.4 against 0.9, python3: from statistics import NormalDist as N; import math;
	// za=N().inv_cdf(.975); zb=N().inv_cdf(.8); pb=.65
	// math.ceil((za*math.sqrt(2*pb*(1-pb))+zb*math.sqrt(.4*.6+.9*.1))**2/.25) == 14
	assert.Equal(t, 14, b.TasksToDetect)
	b.McNemarP, b.SuccessDiff, b.SuccessDiffCI, b.CostDiffCI, b.TasksToDetect = 0, 0, nil, nil, 0
	assert.Equal(t, compare.PairedSummary{Baseline: "base", Tasks: 10, Wins: 6, Ties: 3, Losses: 1}, *b)
	self := rep.Configs[0].VsBaseline
	assert.Equal(t, compare.PairedSummary{Baseline: "base", Self: true, Tasks: 10, Ties: 10, McNemarP: 1}, *self)
	// Wilson 95% for 9 of 10, python3: from statistics import NormalDist; z=NormalDist().inv_cdf(.975);
	// p=.9; n=10; c=(p+z*z/2/n)/(1+z*z/n); h=z*((p*(1-p)/n+z*z/4/n/n)**.5)/(1+z*z/n); print(c-h, c+h)
	ci := rep.Configs[1].SuccessCI
	require.NotNil(t, ci)
	assert.InDelta(t, 0.5958499739, ci.Lo, 1e-6)
	assert.InDelta(t, 0.9821237869, ci.Hi, 1e-6)
}

// A named baseline is the one every config is paired with.
func TestSummarizeAgainstANamedBaseline(t *testing.T) {
	var records []compare.Record
	for i := range 4 {
		id := fmt.Sprintf("t%d", i)
		records = append(records,
			compare.Record{Config: "a", TaskID: id, Scored: true, Correct: true},
			compare.Record{Config: "b", TaskID: id, Scored: true, Correct: i == 0})
	}
	rep := compare.SummarizeAgainst(records, []string{"a", "b"}, "b")
	a := *rep.Configs[0].VsBaseline
	assert.InDelta(t, 0.25, a.McNemarP, 1e-12, "2·P[X ≤ 0], X ~ Bin(3, ½) = 2/8")
	assert.InDelta(t, 0.75, a.SuccessDiff, 1e-12, "1 - 1/4")
	assert.Equal(t, 6, a.TasksToDetect, "Fleiss's size for 0.25 against 1, as in the test above")
	a.McNemarP, a.SuccessDiff, a.SuccessDiffCI, a.CostDiffCI, a.TasksToDetect = 0, 0, nil, nil, 0
	assert.Equal(t, compare.PairedSummary{Baseline: "b", Tasks: 4, Wins: 3, Ties: 1}, a)
	assert.True(t, rep.Configs[1].VsBaseline.Self)
	assert.Equal(t, "b", rep.Configs[1].VsBaseline.Baseline)
	assert.Equal(t, 4, rep.Configs[1].VsBaseline.Ties)
	unknown := compare.SummarizeAgainst(records, []string{"a", "b"}, "zzz")
	assert.Equal(t, "a", unknown.Configs[1].VsBaseline.Baseline, "an unknown name falls back to the first config")
}

// With repeats, a task counts once: pass@k and pass^k average over tasks,
// wins and losses compare each task's success rate, and McNemar counts a
// task as solved when most of its runs succeeded.
func TestSummarizeWithRepeatsCountsEachTaskOnce(t *testing.T) {
	runs := func(cfg, task string, outcomes ...bool) []compare.Record {
		var out []compare.Record
		for r, ok := range outcomes {
			out = append(out, compare.Record{Config: cfg, TaskID: task, Repeat: r, Scored: true, Correct: ok})
		}
		return out
	}
	var records []compare.Record
	records = append(records, runs("base", "t1", true, false, true)...)   // 2 of 3: solved
	records = append(records, runs("base", "t2", false, false, false)...) // 0 of 3
	records = append(records, runs("base", "t3", true, true, true)...)    // 3 of 3
	records = append(records, runs("b", "t1", true, true, true)...)       // better than 2/3: a win, both solved
	records = append(records, runs("b", "t2", true, true, false)...)      // a win, only b solved
	records = append(records, runs("b", "t3", true, true, true)...)       // a tie
	rep := compare.Summarize(records, []string{"base", "b"})
	base, b := rep.Configs[0], rep.Configs[1]
	assert.Equal(t, 3, base.Tasks)
	assert.Equal(t, 3, base.Repeats)
	assert.Equal(t, 3, rep.Repeats)
	// pass@k = 1 - C(n-c,k)/C(n,k) per task (n=3): t1 (c=2): k=1 2/3, k=2 1, k=3 1;
	// t2 (c=0): 0; t3 (c=3): 1. Means: k=1 (2/3+0+1)/3 = 5/9, k=2 and k=3 2/3.
	assert.InDelta(t, 5.0/9, base.PassAtK[1], 1e-12)
	assert.InDelta(t, 2.0/3, base.PassAtK[2], 1e-12)
	assert.InDelta(t, 2.0/3, base.PassAtK[3], 1e-12)
	// pass^k = C(c,k)/C(n,k): t1 k=1 2/3, k=2 1/3, k=3 0; t2 0; t3 1.
	// Means: k=1 5/9, k=2 (1/3+1)/3 = 4/9, k=3 1/3.
	assert.InDelta(t, 5.0/9, base.PassHatK[1], 1e-12)
	assert.InDelta(t, 4.0/9, base.PassHatK[2], 1e-12)
	assert.InDelta(t, 1.0/3, base.PassHatK[3], 1e-12)
	v := b.VsBaseline
	assert.Equal(t, []int{2, 1, 0}, []int{v.Wins, v.Ties, v.Losses})
	// One discordant task (t2, solved by b only): 2·P[X ≤ 0], X ~ Bin(1, ½) = 1.
	assert.InDelta(t, 1, v.McNemarP, 1e-12)
	// Per-task differences 1/3, 2/3, 0: mean 1/3.
	assert.InDelta(t, 1.0/3, v.SuccessDiff, 1e-12)
	// Success over 9 runs each: 5/9 and 8/9; the interval is a bootstrap
	// over the 3 tasks (not Wilson over 9 runs), so it holds the rate.
	assert.InDelta(t, 5.0/9, base.SuccessRate, 1e-12)
	require.NotNil(t, base.SuccessCI)
	assert.True(t, base.SuccessCI.Contains(5.0/9))
}
