package compare_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFaultKindNamesWhatARunMetAndGotPast(t *testing.T) {
	guard := func(data map[string]any) trace.Event { return trace.Event{Kind: trace.KindGuard, Data: data} }
	tests := []struct {
		name string
		e    trace.Event
		want string
	}{
		{"a parse failure fed back", trace.Event{Kind: trace.KindParseError, Text: "Invalid Format: Missing 'Action:'"}, compare.FaultParse},
		{"a provider retry", trace.Event{Kind: trace.KindRetry, Text: "HTTP 429; retrying in 1ms"}, compare.FaultRetry},
		{"an unknown tool", guard(map[string]any{"guard": "unknown_tool", "tool": "teleport"}), compare.FaultUnknownTool},
		{"a repeated call", guard(map[string]any{"guard": "repeat", "step": 3}), compare.FaultRepeat},
		{"a tool error", guard(map[string]any{"guard": "tool_error", "tool": "calculator"}), compare.FaultToolError},
		{"an empty reply asked again", guard(map[string]any{"guard": "empty_reply"}), compare.FaultEmptyReply},
		{"an invented observation cut", guard(map[string]any{"guard": "invented_observation"}), compare.FaultInventedObservation},
		{"a rejected plan", guard(map[string]any{"attempt": 1, "retries_left": 2}), compare.FaultRejected},
		{"a loop stopped and finalized", guard(map[string]any{"guard": "loop", "failure": "loop", "finalize": true}), state.FailureLoop},
		{"a budget run out and finalized", guard(map[string]any{"guard": "budget", "failure": "budget"}), state.FailureBudget},
		{"a model call failed for good", trace.Event{Kind: trace.KindError, Text: "model call failed: HTTP 500"}, compare.FaultProvider},
		{"another node error", trace.Event{Kind: trace.KindError, Text: "tool search: boom"}, compare.FaultError},
		{"compaction is routine", guard(map[string]any{"guard": "compaction"}), ""},
		{"a truncated observation is routine", guard(map[string]any{"guard": "observation_truncated"}), ""},
		{"an unknown failure is not trusted", guard(map[string]any{"guard": "x", "failure": "leak sk-123"}), ""},
		{"an observation", trace.Event{Kind: trace.KindObservation, Text: "42"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, compare.FaultKind(tt.e))
		})
	}
}

// faultsInTrace counts the fault kinds of the events on the lines a
// record's Trace names.
func faultsInTrace(t *testing.T, out string, r compare.Record) map[string]int {
	t.Helper()
	path, span, ok := strings.Cut(r.Trace, ":")
	require.True(t, ok, r.Trace)
	a, b, ok := strings.Cut(span, "-")
	require.True(t, ok, r.Trace)
	first, err := strconv.Atoi(a)
	require.NoError(t, err)
	last, err := strconv.Atoi(b)
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(out, filepath.FromSlash(path)))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var counts map[string]int
	for line := 1; sc.Scan() && line <= last; line++ {
		if line < first {
			continue
		}
		var e trace.Event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "%s line %d", path, line)
		if kind := compare.FaultKind(e); kind != "" {
			if counts == nil {
				counts = map[string]int{}
			}
			counts[kind]++
		}
	}
	require.NoError(t, sc.Err())
	return counts
}

// TestCorrectRunsAreCountedAsRecoveredFromTheFaultsTheirTracesHold runs
// ReAct and Plan-and-Execute with faults the engine can work around, and
// checks that each result counts the faults its trace holds, and that the
// summary counts them, per kind, for the runs that still answered
// correctly.
func TestCorrectRunsAreCountedAsRecoveredFromTheFaultsTheirTracesHold(t *testing.T) {
	tests := []struct {
		config string
		faults map[string]float64
		want   []string // kinds some correct run must have recovered from
	}{
		{"react", map[string]float64{sim.FaultMalformedAction: 0.2, sim.FaultUnknownTool: 0.15, sim.FaultRepeatedAction: 0.15, sim.FaultHTTP429: 0.2,
			sim.FaultEmptyReply: 0.1, sim.FaultInventedObservation: 0.1},
			[]string{compare.FaultParse, compare.FaultUnknownTool, compare.FaultRepeat, compare.FaultRetry, compare.FaultEmptyReply, compare.FaultInventedObservation}},
		{"plan_execute", map[string]float64{sim.FaultMalformedAction: 0.2, sim.FaultHTTP429: 0.2},
			[]string{compare.FaultParse, compare.FaultRetry}},
	}
	for _, tt := range tests {
		t.Run(tt.config, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			prof := sim.Profile{Name: "faulty", Faults: tt.faults}
			rep, err := compare.Run(context.Background(), newLoader(prof), demoTasks(t), compare.Options{
				Configs: configPaths(tt.config), LLM: config.LLM{Provider: "sim", Profile: "faulty"}, OutDir: out, Scorer: verify.ExactMatch{},
			})
			require.NoError(t, err)
			records := storedRecords(t, out, 1)
			require.Len(t, records, len(demoTasks(t)))

			recovered, events, runs := map[string]int{}, map[string]int{}, 0
			for _, r := range records {
				assert.Equal(t, faultsInTrace(t, out, r), r.Faults, "%s: the stored counts are those of its trace", r.TaskID)
				if !compare.Succeeded(r) {
					continue
				}
				met := map[string]bool{}
				if r.Failure != "" {
					met[r.Failure] = true
				}
				for kind, n := range r.Faults {
					met[kind] = true
					events[kind] += n
				}
				for kind := range met {
					recovered[kind]++
				}
				if len(met) > 0 {
					runs++
				}
			}
			require.Len(t, rep.Configs, 1)
			s := rep.Configs[0]
			assert.Equal(t, recovered, s.Recovered)
			assert.Equal(t, events, s.RecoveryEvents)
			assert.Equal(t, runs, s.RecoveredRuns)
			for _, kind := range tt.want {
				assert.Positive(t, s.Recovered[kind], "no correct run recovered from %q: %v", kind, s.Recovered)
			}
			assert.Positive(t, s.SuccessRate)
		})
	}
}

// TestTheNoisySimProfileShowsRecoveries is the comparison of make run:
// under sim:noisy, ReAct's parse failures and guards show as recovered.
func TestTheNoisySimProfileShowsRecoveries(t *testing.T) {
	profiles, err := sim.Profiles()
	require.NoError(t, err)
	noisy, ok := profiles["noisy"]
	require.True(t, ok)
	noisy.Latency = sim.Latency{} // the faults, not the waits
	rep, err := compare.Run(context.Background(), newLoader(noisy), demoTasks(t), compare.Options{
		Configs: configPaths("react"), LLM: config.LLM{Provider: "sim", Profile: "noisy"}, OutDir: t.TempDir(), Scorer: verify.ExactMatch{}, NoTraces: true,
	})
	require.NoError(t, err)
	require.Len(t, rep.Configs, 1)
	s := rep.Configs[0]
	assert.Positive(t, s.RecoveredRuns, "faults are counted with or without trace files")
	assert.NotEqual(t, "-", s.RecoveredList())
	assert.Equal(t, "sim:noisy", s.ModelSpec)
	assert.Equal(t, "sim:noisy", rep.ModelSpec)
}

func TestEstimatedTokenCountsAreFlaggedPerConfig(t *testing.T) {
	records := []compare.Record{
		{Config: "a", PromptTokens: 10, Estimated: true},
		{Config: "a", PromptTokens: 10},
		{Config: "a", PromptTokens: 10, Estimated: true},
		{Config: "b", PromptTokens: 10},
	}
	rep := compare.Summarize(records, []string{"a", "b"})
	require.Len(t, rep.Configs, 2)
	assert.True(t, rep.Configs[0].Estimated)
	assert.Equal(t, 2, rep.Configs[0].EstimatedRuns)
	assert.False(t, rep.Configs[1].Estimated)
	assert.Zero(t, rep.Configs[1].EstimatedRuns)

	b, err := json.Marshal(rep.Configs[0])
	require.NoError(t, err)
	var js map[string]any
	require.NoError(t, json.Unmarshal(b, &js))
	assert.Equal(t, true, js["tokens_estimated"])
	assert.EqualValues(t, 2, js["estimated_runs"])
}

func TestSummarizeCountsEachFaultKindOncePerCorrectRun(t *testing.T) {
	faults := func(f map[string]int) func(*compare.Record) { return func(r *compare.Record) { r.Faults = f } }
	records := []compare.Record{
		rec(1, correct, faults(map[string]int{"parse": 3, "retry": 1})),
		rec(1, correct, faults(map[string]int{"parse": 1}), failure("tool")),
		rec(1, correct),
		rec(1, wrong, failure("parse"), faults(map[string]int{"parse": 4})),
	}
	s := compare.Summarize(records, []string{"c"}).Configs[0]
	assert.Equal(t, map[string]int{"parse": 2, "retry": 1, "tool": 1}, s.Recovered)
	assert.Equal(t, map[string]int{"parse": 4, "retry": 1}, s.RecoveryEvents, "events of correct runs only")
	assert.Equal(t, 2, s.RecoveredRuns)
	assert.Equal(t, map[string]int{"parse": 1}, s.Failures, "a failed run counts under its failure, as before")
}
