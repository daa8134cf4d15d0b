package compare_test

import (
	"context"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEachSimFaultIsSurvivedOrReportedWithItsFailureKind runs the demo
// suite end to end (sim model, retry middleware, real pipelines and tools)
// with one fault injected at a high rate, and checks the failure kinds the
// records carry: only kinds that fit the fault, and the expected kind where
// the fault cannot be survived.
func TestEachSimFaultIsSurvivedOrReportedWithItsFailureKind(t *testing.T) {
	const none = ""
	tests := []struct {
		name    string
		fault   string
		rate    float64
		config  string
		allowed []string // kinds a record may carry; none = no failure
		want    []string // kinds at least one record must carry
		success *float64 // exact success rate, when the fault fixes it
		least   float64  // lowest acceptable success rate
		latency time.Duration
		timeout time.Duration
		tasks   int // first n demo tasks; 0 = all
	}{
		{name: "malformed actions end in parse failures", fault: sim.FaultMalformedAction, rate: 1, config: "react",
			allowed: []string{none, state.FailureParse}, want: []string{state.FailureParse}},
		{name: "malformed actions in plan steps", fault: sim.FaultMalformedAction, rate: 1, config: "plan_execute",
			allowed: []string{none, state.FailureParse}},
		{name: "full-width colons are parsed", fault: sim.FaultFullwidthColon, rate: 1, config: "react",
			allowed: []string{none}, success: ptr(1)},
		{name: "invented observations are cut off", fault: sim.FaultInventedObservation, rate: 1, config: "react",
			allowed: []string{none}, success: ptr(1)},
		{name: "unknown tools are answered, not fatal", fault: sim.FaultUnknownTool, rate: 1, config: "react",
			allowed: []string{none, state.FailureLoop, state.FailureBudget}},
		// A run that repeats its first lookup instead of making the next
		// one lacks that evidence and answers wrong.
		{name: "repeated actions are survived, stopped as loops, or end wrong without the skipped evidence", fault: sim.FaultRepeatedAction, rate: 1, config: "react",
			allowed: []string{none, state.FailureLoop, state.FailureWrong}},
		{name: "repeated actions in plan steps", fault: sim.FaultRepeatedAction, rate: 1, config: "plan_execute",
			allowed: []string{none, state.FailureLoop}},
		{name: "early wrong answers are wrong", fault: sim.FaultEarlyWrongAnswer, rate: 1, config: "react",
			allowed: []string{compare.FailureWrong}, want: []string{compare.FailureWrong}, success: ptr(0)},
		{name: "early wrong answers in plan steps", fault: sim.FaultEarlyWrongAnswer, rate: 1, config: "plan_execute",
			allowed: []string{none, compare.FailureWrong}},
		{name: "empty replies to ReAct end in parse failures", fault: sim.FaultEmptyReply, rate: 1, config: "react",
			allowed: []string{state.FailureParse}, want: []string{state.FailureParse}},
		{name: "empty direct answers are parse failures", fault: sim.FaultEmptyReply, rate: 1, config: "direct",
			allowed: []string{state.FailureParse}, want: []string{state.FailureParse}, success: ptr(0)},
		{name: "HTTP 500 on every call is a provider failure", fault: sim.FaultHTTP500, rate: 1, config: "react",
			allowed: []string{state.FailureProvider}, want: []string{state.FailureProvider}, success: ptr(0)},
		{name: "HTTP 500 on every call fails plans too", fault: sim.FaultHTTP500, rate: 1, config: "plan_execute",
			allowed: []string{state.FailureProvider}, want: []string{state.FailureProvider}, success: ptr(0)},
		{name: "HTTP 429 on every call is a provider failure", fault: sim.FaultHTTP429, rate: 1, config: "react",
			allowed: []string{state.FailureProvider}, want: []string{state.FailureProvider}, success: ptr(0)},
		// Three attempts leave 0.3³ ≈ 2.7% of calls failing, about 10% of
		// runs of 3–4 calls; without working retries it is about 70%.
		{name: "HTTP 429 on 30% of calls is mostly absorbed by retries", fault: sim.FaultHTTP429, rate: 0.3, config: "react",
			allowed: []string{none, state.FailureProvider}, least: 0.8},
		{name: "HTTP 429 on 30% of calls is mostly absorbed by retries in plans", fault: sim.FaultHTTP429, rate: 0.3, config: "plan_execute",
			allowed: []string{none, state.FailureProvider}, least: 0.75},
		{name: "a run over its time limit is a timeout", config: "direct", latency: 500 * time.Millisecond, timeout: 20 * time.Millisecond, tasks: 4,
			allowed: []string{state.FailureTimeout}, want: []string{state.FailureTimeout}, success: ptr(0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prof := sim.Profile{Name: tt.name, Latency: sim.Latency{Base: tt.latency}}
			if tt.fault != "" {
				prof.Faults = map[string]float64{tt.fault: tt.rate}
			}
			tasks := demoTasks(t)
			if tt.tasks > 0 {
				tasks = tasks[:tt.tasks]
			}
			out := t.TempDir()
			rep, err := compare.Run(context.Background(), newLoader(prof), tasks, compare.Options{
				Configs: configPaths(tt.config), LLM: config.LLM{Provider: "sim"}, OutDir: out,
				Scorer: verify.ExactMatch{}, Timeout: tt.timeout, NoTraces: true,
			})
			require.NoError(t, err)
			records := storedRecords(t, out, 1)
			require.Len(t, records, len(tasks))

			seen := map[string]int{}
			failed, recovered := map[string]int{}, map[string]int{}
			for _, r := range records {
				seen[r.Failure]++
				if r.Failure != "" && compare.Succeeded(r) {
					recovered[r.Failure]++
				} else if r.Failure != "" {
					failed[r.Failure]++
				}
				assert.Contains(t, tt.allowed, r.Failure, "%s: answer %q, error %q", r.TaskID, r.Answer, r.Error)
				if r.Failure == state.FailureProvider || r.Failure == state.FailureTimeout {
					assert.NotEmpty(t, r.Error, r.TaskID)
				}
			}
			for _, kind := range tt.want {
				assert.Positive(t, seen[kind], "no record failed with %q (saw %v)", kind, seen)
			}

			require.Len(t, rep.Configs, 1)
			s := rep.Configs[0]
			if tt.success != nil {
				assert.InDelta(t, *tt.success, s.SuccessRate, 1e-9)
			}
			assert.GreaterOrEqual(t, s.SuccessRate, tt.least)
			for kind, n := range failed {
				assert.Equal(t, n, s.Failures[kind], "kind %q", kind)
			}
			for kind, n := range recovered {
				assert.GreaterOrEqual(t, s.Recovered[kind], n, "kind %q: a correct run's failure kind counts as recovered", kind)
			}
		})
	}
}

func ptr(f float64) *float64 { return &f }
