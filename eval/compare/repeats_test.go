package compare_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/respcache"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// counting wraps a model and counts the calls that reach it.
func counting(n *atomic.Int64) func(llms.Model) llms.Model {
	return func(m llms.Model) llms.Model {
		return middleware.Wrap(m, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
			n.Add(1)
			return m.GenerateContent(ctx, msgs, opts...)
		})
	}
}

// Repeats run each (config, task) with seeds seed, seed+1, ...; the report
// groups a task's repeats, gives pass@k and pass^k, and raising the count
// runs only the new repeats.
func TestRepeatsRunWithTheirOwnSeedsAndResume(t *testing.T) {
	ctx := context.Background()
	tasks := demoTasks(t)[:6]
	dir := t.TempDir()
	var calls atomic.Int64
	loader := newLoader(sim.Profile{Name: "perfect"}, withOracle(), withWrapper(counting(&calls)))
	opts := compare.Options{Configs: configPaths("cot", "react"), LLM: config.LLM{Provider: "sim"}, Seed: 7, Repeats: 2, OutDir: dir, NoTraces: true}
	rep, err := compare.Run(ctx, loader, tasks, opts)
	require.NoError(t, err)
	assert.Equal(t, 2*6*2, rep.Ran)
	assert.Equal(t, 2, rep.Repeats)
	for _, s := range rep.Configs {
		assert.Equal(t, 12, s.Runs, s.Config)
		assert.Equal(t, 6, s.Tasks, s.Config)
		assert.Equal(t, 2, s.Repeats, s.Config)
		// The oracle sim solves every task: every pass@k and pass^k is 1.
		assert.Equal(t, map[int]float64{1: 1, 2: 1}, s.PassAtK, s.Config)
		assert.Equal(t, map[int]float64{1: 1, 2: 1}, s.PassHatK, s.Config)
		require.NotNil(t, s.CI.Success)
		require.NotNil(t, s.CI.ModelCalls)
	}
	seeds := map[uint64]int{}
	for _, r := range storedRecords(t, dir, 7) {
		seeds[r.Seed]++
	}
	for _, r := range storedRecords(t, dir, 8) {
		seeds[r.Seed]++
	}
	assert.Equal(t, map[uint64]int{7: 12, 8: 12}, seeds, "repeat r is stored with seed 7 + r")

	before := calls.Load()
	opts.Repeats = 3
	rep, err = compare.Run(ctx, loader, tasks, opts)
	require.NoError(t, err)
	assert.Equal(t, 12, rep.Ran, "only the third repeat runs")
	assert.Equal(t, 24, rep.Reused)
	assert.Positive(t, calls.Load()-before)
	assert.Len(t, storedRecords(t, dir, 9), 12)
}

// The simulator draws its faults from its seed, so repeats of a noisy
// profile are different samples: some task comes out differently in two
// repeats.
func TestRepeatsOfTheSimulatorAreDistinctSamples(t *testing.T) {
	tasks := demoTasks(t)
	profiles, err := sim.Profiles()
	require.NoError(t, err)
	rep, err := compare.Run(context.Background(), newLoader(profiles["noisy"]), tasks,
		compare.Options{Configs: configPaths("react"), LLM: config.LLM{Provider: "sim"}, Repeats: 4, OutDir: t.TempDir(), NoTraces: true})
	require.NoError(t, err)
	s := rep.Configs[0]
	require.Equal(t, 4, s.Repeats)
	// A fault is drawn from (seed, call): were every repeat drawn alike,
	// each task's repeats would meet the same faults, and the fault count
	// would be a multiple of 4 for each kind.
	differs := false
	for _, n := range s.RecoveryEvents {
		differs = differs || n%4 != 0
	}
	assert.True(t, differs, "faults by kind %v: the repeats drew the same faults", s.RecoveryEvents)
}

// Several models make a row per (config, model), on the same tasks, and
// --baseline picks a row by its label.
func TestSeveralModelsMakeARowPerConfigAndModel(t *testing.T) {
	tasks := demoTasks(t)[:5]
	opts := compare.Options{Configs: configPaths("cot", "react"), LLMs: []config.LLM{{Provider: "sim", Profile: "perfect"}, {Provider: "sim", Profile: "noisy"}},
		OutDir: t.TempDir(), NoTraces: true, Baseline: "react @ sim:noisy"}
	rep, err := compare.Run(context.Background(), engineLoaderWithSim(t), tasks, opts)
	require.NoError(t, err)
	var labels []string
	for _, s := range rep.Configs {
		labels = append(labels, s.Label)
		assert.Equal(t, 5, s.Runs, s.Label)
		assert.Equal(t, "react @ sim:noisy", s.VsBaseline.Baseline)
	}
	assert.Equal(t, []string{"cot @ sim:perfect", "cot @ sim:noisy", "react @ sim:perfect", "react @ sim:noisy"}, labels)
	assert.True(t, rep.Configs[3].VsBaseline.Self)
	assert.Equal(t, []string{"sim:perfect", "sim:noisy"}, rep.Models)

	opts.Baseline = "react @ openai:x"
	_, err = compare.Run(context.Background(), engineLoaderWithSim(t), tasks, opts)
	require.ErrorIs(t, err, compare.ErrOptions)
	assert.Contains(t, err.Error(), "cot @ sim:perfect, cot @ sim:noisy")
	opts.Baseline, opts.LLMs = "", []config.LLM{{Provider: "sim", Profile: "noisy"}, {Provider: "sim", Profile: "noisy"}}
	_, err = compare.Run(context.Background(), engineLoaderWithSim(t), tasks, opts)
	require.ErrorIs(t, err, compare.ErrOptions, "the same model twice")
}

// engineLoaderWithSim is a loader whose "sim" provider plays the profile
// its llm block names on the demo suite, as the command line's does.
func engineLoaderWithSim(t *testing.T) compare.Loader {
	t.Helper()
	tasks := demoSuite(t)
	build := func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		return sim.New(cfg.Profile, sim.WithSeed(cfg.Seed), sim.WithTasks(tasks))
	}
	return engineLoader(planner.WithOfflineProvider("sim", sim.Label, build, llm.AsKind(llm.KindSimulated)))
}

// readFile returns the text of the file at rel under dir.
func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	require.NoError(t, err)
	return string(b)
}

// The response cache answers a second comparison's calls without the
// model, marks the hits, and counts them in every figure as if live.
func TestTheResponseCacheAnswersARerunWithoutTheModel(t *testing.T) {
	ctx := context.Background()
	tasks := demoTasks(t)[:4]
	cache, err := respcache.Open(t.TempDir())
	require.NoError(t, err)
	var calls atomic.Int64
	loader := newLoader(sim.Profile{Name: "perfect"}, withWrapper(counting(&calls)))
	opts := compare.Options{Configs: configPaths("react"), LLM: config.LLM{Provider: "sim"}, OutDir: t.TempDir(), Cache: cache}
	first, err := compare.Run(ctx, loader, tasks, opts)
	require.NoError(t, err)
	live := calls.Load()
	require.Positive(t, live)
	assert.Zero(t, first.Configs[0].CacheHits)

	opts.OutDir = t.TempDir() // another comparison: nothing reused from a store
	second, err := compare.Run(ctx, loader, tasks, opts)
	require.NoError(t, err)
	assert.Equal(t, live, calls.Load(), "every call came from the cache")
	a, b := first.Configs[0], second.Configs[0]
	assert.Equal(t, a.ModelCalls, b.CacheHits)
	assert.Equal(t, a.ModelCalls, b.ModelCalls, "cached calls count as calls")
	assert.Equal(t, a.PromptTokens, b.PromptTokens, "and their tokens as measured live")
	assert.Equal(t, a.Correct, b.Correct)
	traces := readFile(t, opts.OutDir, "traces/sim/react.jsonl")
	assert.Contains(t, traces, `"cache":"hit"`)

	opts.OutDir, opts.Seed = t.TempDir(), 2
	_, err = compare.Run(ctx, loader, tasks, opts)
	require.NoError(t, err)
	assert.Greater(t, calls.Load(), live, "the sim's replies depend on its seed: another seed misses")
}

// Two models of one spec (one model at two temperatures) are told apart
// by their labels and their fingerprints: a row each, with runs of its own.
func TestLabelledModelsOfOneSpecGetARowEach(t *testing.T) {
	zero, half := 0.0, 0.5
	tasks := demoTasks(t)[:4]
	opts := compare.Options{Configs: configPaths("cot"), OutDir: t.TempDir(), NoTraces: true,
		LLMs:        []config.LLM{{Provider: "sim", Profile: "noisy", Temperature: &zero}, {Provider: "sim", Profile: "noisy", Temperature: &half}},
		ModelLabels: []string{"greedy", "sampled"}}
	rep, err := compare.Run(context.Background(), engineLoaderWithSim(t), tasks, opts)
	require.NoError(t, err)
	require.Len(t, rep.Configs, 2)
	assert.Equal(t, "cot @ greedy", rep.Configs[0].Label)
	assert.Equal(t, "cot @ sampled", rep.Configs[1].Label)
	assert.Equal(t, []string{"greedy", "sampled"}, rep.Models)
	for _, s := range rep.Configs {
		assert.Equal(t, 4, s.Runs, s.Label)
	}
	again, err := compare.Run(context.Background(), engineLoaderWithSim(t), tasks, opts)
	require.NoError(t, err)
	assert.Equal(t, 8, again.Reused, "each row finds its own stored runs")

	opts.ModelLabels = nil
	_, err = compare.Run(context.Background(), engineLoaderWithSim(t), tasks, opts)
	require.ErrorIs(t, err, compare.ErrOptions, "without labels the two rows cannot be told apart")
}
