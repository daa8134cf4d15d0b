package compare_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModelsNeverMixInOneRunFolder runs one config with two sim profiles
// into the same folder: each profile's results, traces and report stay its
// own, and every run has a run id of its own.
func TestModelsNeverMixInOneRunFolder(t *testing.T) {
	tasks := demoTasks(t)[:6]
	out := t.TempDir()
	opts := func(profile string) compare.Options {
		return compare.Options{Configs: configPaths("direct", "react"), LLM: config.LLM{Provider: "sim", Profile: profile}, OutDir: out, Scorer: verify.ExactMatch{}}
	}
	perfect := newLoader(sim.Profile{Name: "perfect"})
	wrongAnswers := newLoader(sim.Profile{Name: "wrong", Faults: map[string]float64{sim.FaultEarlyWrongAnswer: 1}})

	first, err := compare.Run(context.Background(), perfect, tasks, opts("perfect"))
	require.NoError(t, err)
	second, err := compare.Run(context.Background(), wrongAnswers, tasks, opts("wrong"))
	require.NoError(t, err)
	assert.Equal(t, 2*len(tasks), second.Ran, "another profile reuses nothing")
	assert.Zero(t, second.Reused)

	assert.Equal(t, "sim:perfect", first.ModelSpec)
	assert.Equal(t, "sim:wrong", second.ModelSpec)
	assert.Equal(t, out, second.Dir)
	for i, rep := range []*compare.Report{first, second} {
		require.Len(t, rep.Configs, 2)
		for _, s := range rep.Configs {
			assert.Equal(t, rep.ModelSpec, s.ModelSpec, s.Config)
			assert.Equal(t, len(tasks), s.Runs, "%s: only the runs of its own model", s.Config)
		}
		assert.InDelta(t, float64(1-i), rep.Configs[1].SuccessRate, 1e-9, "react: perfect solves all, early wrong answers none")
	}

	records := storedRecords(t, out, 1)
	require.Len(t, records, 4*len(tasks))
	ids := map[string]bool{}
	for _, r := range records {
		assert.Contains(t, []string{"sim:perfect", "sim:wrong"}, r.Model)
		slug := strings.ReplaceAll(r.Model, ":", "_")
		assert.True(t, strings.HasPrefix(r.Trace, "traces/"+slug+"/"+r.Config+".jsonl:"), r.Trace)
		id := compare.RunID(r.Config, r.Model, r.TaskID, r.Seed, r.Fingerprint)
		assert.False(t, ids[id], "run id %s used twice", id)
		ids[id] = true
	}
	assertTracesPointAtTheirRuns(t, out, records)

	// Resuming the first comparison reuses its own results only.
	again, err := compare.Run(context.Background(), perfect, tasks, opts("perfect"))
	require.NoError(t, err)
	assert.Zero(t, again.Ran)
	assert.Equal(t, 2*len(tasks), again.Reused)
	assert.InDelta(t, 1, again.Configs[1].SuccessRate, 1e-9)

	// Every report file carries the full spec.
	_, err = second.WriteFiles(out)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	var js struct {
		ModelSpec string `json:"model_spec"`
		Configs   []struct {
			ModelSpec string `json:"model_spec"`
		} `json:"configs"`
	}
	require.NoError(t, json.Unmarshal(b, &js))
	assert.Equal(t, "sim:wrong", js.ModelSpec)
	require.Len(t, js.Configs, 2)
	assert.Equal(t, "sim:wrong", js.Configs[0].ModelSpec)
}

func TestWithoutAnOverrideEachConfigReportsItsOwnModel(t *testing.T) {
	dir := t.TempDir()
	withBlock := func(name, profile string) string {
		b, err := os.ReadFile(configPath("direct"))
		require.NoError(t, err)
		text := strings.Replace(string(b), "name: direct", "name: "+name, 1)
		require.Contains(t, text, "name: "+name)
		path := filepath.Join(dir, name+".yaml")
		require.NoError(t, os.WriteFile(path, []byte(text+"\nllm:\n  provider: sim\n  profile: "+profile+"\n"), 0o644))
		return path
	}
	configs := []string{withBlock("quiet", "perfect"), withBlock("loud", "noisy")}
	out := t.TempDir()
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), demoTasks(t)[:2], compare.Options{
		Configs: configs, OutDir: out, Scorer: verify.ExactMatch{}})
	require.NoError(t, err)
	assert.Equal(t, "sim:perfect, sim:noisy", rep.ModelSpec)
	require.Len(t, rep.Configs, 2)
	assert.Equal(t, "sim:perfect", rep.Configs[0].ModelSpec)
	assert.Equal(t, "sim:noisy", rep.Configs[1].ModelSpec)
	assert.DirExists(t, filepath.Join(out, "traces", "sim_perfect"))
	assert.DirExists(t, filepath.Join(out, "traces", "sim_noisy"))
}

func TestModelSpecWritesWhatLLMTakes(t *testing.T) {
	tests := []struct {
		llm  config.LLM
		want string
	}{
		{config.LLM{Provider: "sim", Profile: "noisy"}, "sim:noisy"},
		{config.LLM{Provider: "sim"}, "sim"},
		{config.LLM{Provider: "openai", Model: "gpt-4o-mini"}, "openai:gpt-4o-mini"},
		{config.LLM{Provider: "scripted", Script: "/tmp/s.yaml"}, "scripted:/tmp/s.yaml"},
		{config.LLM{Provider: "replay", Script: "c.jsonl"}, "replay:c.jsonl"},
		{config.LLM{}, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, compare.ModelSpec(tt.llm))
	}
}

func TestDirNameIsOnePerComparison(t *testing.T) {
	base := compare.Identity{Suite: "demo", Configs: []string{"configs/react.yaml", "configs/cot.yaml"},
		LLM: config.LLM{Provider: "sim", Profile: "noisy"}, Seed: 1}
	name := base.DirName()
	assert.Regexp(t, `^demo-sim_noisy-seed1-[0-9a-f]{8}$`, name)
	assert.Equal(t, name, base.DirName(), "the same comparison finds its folder again")

	changes := map[string]func(*compare.Identity){
		"suite":     func(id *compare.Identity) { id.Suite = "../shared/data/gsm8k/test.jsonl" },
		"selection": func(id *compare.Identity) { id.Selection = "slice 0:10" },
		"configs":   func(id *compare.Identity) { id.Configs = id.Configs[:1] },
		"order":     func(id *compare.Identity) { id.Configs = []string{"configs/cot.yaml", "configs/react.yaml"} },
		"model":     func(id *compare.Identity) { id.LLM.Profile = "flaky-api" },
		"seed":      func(id *compare.Identity) { id.Seed = 2 },
		"no --llm":  func(id *compare.Identity) { id.LLM = config.LLM{} },
	}
	seen := map[string]string{name: "base"}
	for what, change := range changes {
		id := base
		id.Configs = append([]string(nil), base.Configs...)
		change(&id)
		got := id.DirName()
		assert.NotContains(t, seen, got, "another %s gets a folder of its own (same as %s)", what, seen[got])
		seen[got] = what
		assert.Regexp(t, regexp.MustCompile(`^[A-Za-z0-9._-]+$`), got, "a plain file name")
	}
	gsm := base
	gsm.Suite = "../shared/data/gsm8k/test.jsonl"
	gsm.LLM = config.LLM{}
	assert.Regexp(t, `^test-own-llm-seed1-[0-9a-f]{8}$`, gsm.DirName())
	scripted := base
	scripted.LLM = config.LLM{Provider: "scripted", Script: "/very/long/path/to/script.yaml"}
	assert.Regexp(t, `^demo-scripted_script.yaml-seed1-[0-9a-f]{8}$`, scripted.DirName())
}
