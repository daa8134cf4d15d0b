package compare_test

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/score"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answering is a RunFunc that answers each config's runs right (the
// task's answer) or wrong, as right says, counting the runs by config.
func answering(right map[string]func(i int) bool, runs map[string]*atomic.Int64) func(context.Context, compare.RunSpec) (*planner.Result, error) {
	return func(_ context.Context, run compare.RunSpec) (*planner.Result, error) {
		runs[run.Config].Add(1)
		var i int
		_, _ = fmt.Sscanf(run.Task.ID, "t%d", &i)
		answer := "wrong"
		if right[run.Config](i) {
			answer = run.Task.Answer
		}
		return &planner.Result{Answer: answer, Complete: true}, nil
	}
}

// With StopWhenDecided a config that loses nearly every task to the
// baseline is stopped long before the suite ends, a config as good as the
// baseline is not stopped, and the report says after how many pairs and how many runs
// were skipped.
func TestStopWhenDecidedStopsOnlyTheBeatenConfig(t *testing.T) {
	var tasks []state.Task
	for i := range 200 {
		tasks = append(tasks, state.Task{ID: fmt.Sprintf("t%d", i), Question: "q", Answer: "a"})
	}
	runs := map[string]*atomic.Int64{"cot": {}, "react": {}, "rewoo": {}}
	right := map[string]func(int) bool{
		"cot":   func(i int) bool { return i%10 != 5 }, // the baseline
		"react": func(int) bool { return false },       // loses every task the baseline solves
		"rewoo": func(i int) bool { return i%10 != 0 }, // loses one task in ten and wins one: no difference
	}
	opts := compare.Options{Configs: configPaths("cot", "react", "rewoo"), LLM: config.LLM{Provider: "sim"}, OutDir: t.TempDir(),
		NoTraces: true, Concurrency: 1, StopWhenDecided: true, RunFunc: answering(right, runs)}
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks, opts)
	require.NoError(t, err)
	cot, react, rewoo := rep.Configs[0], rep.Configs[1], rep.Configs[2]
	assert.Nil(t, cot.Stopped, "the baseline is never stopped")
	require.NotNil(t, react.Stopped)
	// Nine pairs in ten are -1; the always-valid interval needs a few
	// pairs to exclude 0 (the stats package's tests give 16 for all ones
	// at 5%).
	assert.Less(t, react.Stopped.Pairs, 40)
	assert.Less(t, react.Stopped.Diff.Hi, 0.0)
	assert.Equal(t, int64(react.Stopped.Pairs), runs["react"].Load(), "one run at a time: none after the decision")
	assert.Equal(t, 200-react.Stopped.Pairs, react.Stopped.Skipped)
	assert.Equal(t, react.Stopped.Pairs, react.Runs)
	assert.Nil(t, rewoo.Stopped, "no difference: %+v", rewoo.Stopped)
	assert.Equal(t, int64(200), runs["rewoo"].Load())
	assert.Equal(t, 200+200+react.Stopped.Pairs, rep.Ran)
	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	assert.Contains(t, table.String(), fmt.Sprintf("after %d: [", react.Stopped.Pairs))

	// A rerun feeds the stored results first: the config stays stopped
	// and nothing new runs for it.
	before := runs["react"].Load()
	rep, err = compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks, opts)
	require.NoError(t, err)
	assert.Equal(t, before, runs["react"].Load())
	require.NotNil(t, rep.Configs[1].Stopped)
}

// exactly is a scorer that passes an answer only when it is the reference
// character for character.
type exactly struct{}

func (exactly) Name() string { return "exactly" }

func (exactly) Score(_ context.Context, in score.Input) (score.Verdict, error) {
	ok := in.Answer == in.Reference
	return score.Verdict{Pass: ok, Score: map[bool]float64{true: 1}[ok]}, nil
}

// With a success scorer, the stopping rule follows its verdicts: a config
// the built-in scorer finds right on every task, but the success scorer
// wrong, is stopped.
func TestStopWhenDecidedFollowsTheSuccessScorer(t *testing.T) {
	var tasks []state.Task
	for i := range 60 {
		tasks = append(tasks, state.Task{ID: fmt.Sprintf("t%d", i), Question: "q", Answer: "a"})
	}
	runs := map[string]*atomic.Int64{"cot": {}, "react": {}}
	opts := compare.Options{Configs: configPaths("cot", "react"), LLM: config.LLM{Provider: "sim"}, OutDir: t.TempDir(), NoTraces: true,
		Concurrency: 1, StopWhenDecided: true, Scorers: []score.Scorer{exactly{}}, SuccessScorer: "exactly",
		RunFunc: func(_ context.Context, run compare.RunSpec) (*planner.Result, error) {
			runs[run.Config].Add(1)
			answer := "a"
			if run.Config == "react" {
				answer = "A." // exact match after normalising; not exactly the reference
			}
			return &planner.Result{Answer: answer, Complete: true}, nil
		}}
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks, opts)
	require.NoError(t, err)
	react := rep.Configs[1]
	require.NotNil(t, react.Stopped, "react fails every task by the success scorer")
	assert.Less(t, runs["react"].Load(), int64(60))
	assert.InDelta(t, 1, react.EM, 1e-12, "the built-in scorer finds it right")
	assert.Zero(t, react.Correct)
}
