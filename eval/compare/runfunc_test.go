package compare_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/internal/par"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunFuncRunsEachRunInsteadOfThePipeline runs a comparison whose runs
// go through Options.RunFunc, which loads and runs each pipeline the way a
// remote worker would: the answers and counts equal the in-process
// comparison's, each RunSpec describes its run, the runs' events reach
// the traces, and a second comparison reuses the stored results without
// calling RunFunc.
func TestRunFuncRunsEachRunInsteadOfThePipeline(t *testing.T) {
	ctx := context.Background()
	loader := newLoader(sim.Profile{Name: "perfect"})
	tasks := demoTasks(t)
	base := compare.Options{Configs: configPaths("cot", "react"), LLM: config.LLM{Provider: "sim"}, Seed: 3}

	local := base
	local.OutDir = t.TempDir()
	want, err := compare.Run(ctx, loader, tasks, local)
	require.NoError(t, err)

	var mu sync.Mutex
	var specs []compare.RunSpec
	remote := base
	remote.OutDir = t.TempDir()
	remote.RunFunc = func(ctx context.Context, run compare.RunSpec) (*planner.Result, error) {
		mu.Lock()
		specs = append(specs, run)
		mu.Unlock()
		p, err := loader.LoadWith(ctx, run.ConfigPath, run.LLM, 0)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		return p.Run(ctx, "", planner.WithTask(run.Task), planner.WithRunID(run.RunID))
	}
	got, err := compare.Run(ctx, loader, tasks, remote)
	require.NoError(t, err)
	require.Len(t, specs, 2*len(tasks))
	for _, s := range specs {
		assert.Equal(t, uint64(3), s.LLM.Seed)
		assert.Equal(t, "sim", s.Model)
		assert.Equal(t, compare.RunID(s.Config, s.Model, s.Task.ID, 3, s.Fingerprint), s.RunID)
		assert.Equal(t, configPath(s.Config), s.ConfigPath)
		assert.Positive(t, s.Timeout)
	}
	require.Len(t, got.Configs, 2)
	for i := range want.Configs {
		w, g := want.Configs[i], got.Configs[i]
		assert.Equal(t, w.Config, g.Config)
		assert.Equal(t, w.Runs, g.Runs)
		assert.Equal(t, w.Correct, g.Correct)
		assert.Equal(t, w.ModelCalls, g.ModelCalls)
		assert.Equal(t, w.ToolCalls, g.ToolCalls)
	}
	answers := func(dir string) map[string]string {
		m := map[string]string{}
		for _, r := range storedRecords(t, dir, 3) {
			m[r.Config+"/"+r.TaskID] = r.Answer
			assert.NotEmpty(t, r.Trace, "the run's events reach its trace")
		}
		return m
	}
	assert.Equal(t, answers(local.OutDir), answers(remote.OutDir))

	specs = nil
	again, err := compare.Run(ctx, loader, tasks, remote)
	require.NoError(t, err)
	assert.Empty(t, specs, "stored results are reused")
	assert.Equal(t, 2*len(tasks), again.Reused)
}

// TestRunFuncErrorsAreStoredAsFailedRuns checks that a RunFunc that fails
// without a result gives a failed run, stored with its error.
func TestRunFuncErrorsAreStoredAsFailedRuns(t *testing.T) {
	opts := compare.Options{Configs: configPaths("direct"), LLM: config.LLM{Provider: "sim"}, OutDir: t.TempDir(), NoTraces: true,
		RunFunc: func(context.Context, compare.RunSpec) (*planner.Result, error) {
			return nil, errors.New("the worker is gone")
		}}
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), demoTasks(t)[:2], opts)
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Configs[0].Runs)
	assert.Equal(t, 0, rep.Configs[0].Correct)
	for _, r := range storedRecords(t, opts.OutDir, 1) {
		assert.Equal(t, compare.FailureError, r.Failure)
		assert.Equal(t, "the worker is gone", r.Error)
	}
}

// TestRunFuncEventsReachTheTraceScrubbedAndCountFaults checks that the
// events of a RunFunc's result go to the run's trace, scrubbed with the
// comparison's scrubber, and count its faults.
func TestRunFuncEventsReachTheTraceScrubbedAndCountFaults(t *testing.T) {
	t.Setenv("PLANNER_TEST_API_KEY", echoedKey)
	out := t.TempDir()
	opts := compare.Options{Configs: configPaths("direct"), LLM: config.LLM{Provider: "sim"}, OutDir: out,
		RunFunc: func(_ context.Context, run compare.RunSpec) (*planner.Result, error) {
			return &planner.Result{Answer: run.Task.Answer, Complete: true, Trace: []trace.Event{
				{RunID: run.RunID, Seq: 1, Kind: trace.KindRetry, Text: "retrying with key " + echoedKey},
				{RunID: run.RunID, Seq: 2, Kind: trace.KindRunEnd, Text: "done"},
			}}, nil
		}}
	tasks := demoTasks(t)[:1]
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks, opts)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Configs[0].Correct)
	recs := storedRecords(t, out, 1)
	require.Len(t, recs, 1)
	assert.Equal(t, map[string]int{compare.FaultRetry: 1}, recs[0].Faults)
	b, err := os.ReadFile(filepath.Join(out, "traces", "sim", "direct.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], echoedMarker)
	assert.NotContains(t, string(b), echoedKey)
	assert.Contains(t, lines[1], `"run_id":"`+compare.RunID("direct", "sim", tasks[0].ID, 1, recs[0].Fingerprint)+`"`)
}

// TestARunThatPanicsFailsTheComparison checks that a panic in a run ends
// the comparison with an error instead of the process, the other runs
// stored.
func TestARunThatPanicsFailsTheComparison(t *testing.T) {
	out := t.TempDir()
	tasks := demoTasks(t)[:3]
	opts := compare.Options{Configs: configPaths("direct"), LLM: config.LLM{Provider: "sim"}, OutDir: out, NoTraces: true, Concurrency: 1,
		RunFunc: func(_ context.Context, run compare.RunSpec) (*planner.Result, error) {
			if run.Task.ID == tasks[1].ID {
				panic("the worker broke")
			}
			return &planner.Result{Answer: run.Task.Answer, Complete: true}, nil
		}}
	_, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), tasks, opts)
	require.ErrorIs(t, err, par.ErrPanic)
	assert.Contains(t, err.Error(), "the worker broke")
	assert.Len(t, storedRecords(t, out, 1), 2, "the runs that did not panic are stored")
}

// A config that runs with its own simulated llm block sends the block with
// the repeat's seed to RunFunc for every repeat after the first, so
// remote repeats draw their own faults rather than the block's seed's.
func TestRunFuncRepeatsOfAnOwnSimBlockCarryTheirSeed(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(configPath("cot"))
	require.NoError(t, err)
	path := filepath.Join(dir, "cot_sim.yaml")
	require.NoError(t, os.WriteFile(path, append([]byte("llm: {provider: sim, profile: noisy}\n"), src...), 0o644))
	var mu sync.Mutex
	seeds := map[int]config.LLM{}
	opts := compare.Options{Configs: []string{path}, OutDir: t.TempDir(), NoTraces: true, Seed: 5, Repeats: 3,
		RunFunc: func(_ context.Context, run compare.RunSpec) (*planner.Result, error) {
			mu.Lock()
			seeds[run.Repeat] = run.LLM
			mu.Unlock()
			return &planner.Result{Answer: "x", Complete: true}, nil
		}}
	_, err = compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), demoTasks(t)[:1], opts)
	require.NoError(t, err)
	assert.Empty(t, seeds[0].Provider, "the first repeat runs the block as written")
	assert.Equal(t, config.LLM{Provider: "sim", Profile: "noisy", Seed: 6}, seeds[1])
	assert.Equal(t, config.LLM{Provider: "sim", Profile: "noisy", Seed: 7}, seeds[2])
}
