package compare_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// TestReportsSayWhatKindOfModelTheLoaderBuilds runs the same simulator under
// a provider name that says nothing, registered as each kind: the report's
// flags and banner follow the kind the loader reports, never the name, and
// the comparison's seed reaches the provider.
func TestReportsSayWhatKindOfModelTheLoaderBuilds(t *testing.T) {
	tasks := demoSuite(t)[:2]
	tests := []struct {
		kind                llm.Kind
		simulated, scripted bool
		banner              string
	}{
		{llm.KindSimulated, true, false, "SIMULATED: these numbers come from the sim oracle model"},
		{llm.KindScripted, false, true, "SCRIPTED: these numbers come from a scripted model"},
		{llm.KindReplayed, false, false, "Model: oracle label"},
		{llm.KindReal, false, false, "Model: oracle label"},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			var seeds []uint64 // the builder runs while the pipelines load, one at a time
			build := func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
				seeds = append(seeds, cfg.Seed)
				return sim.New("perfect", sim.WithSeed(cfg.Seed), sim.WithTasks(tasks))
			}
			loader := engineLoader(planner.WithProvider("oracle", "oracle label", build, llm.AsKind(tt.kind)))
			rep, err := compare.Run(context.Background(), loader, suite.AgentTasks(tasks), compare.Options{
				// react looks the facts up; a one-reply config would fail the
				// lookups the sim does not know.
				Configs: configPaths("react"), LLM: config.LLM{Provider: "oracle"}, Seed: 7, OutDir: t.TempDir(), NoTraces: true,
			})
			require.NoError(t, err)
			assert.Equal(t, tt.simulated, rep.Simulated)
			assert.Equal(t, tt.scripted, rep.Scripted)
			var table bytes.Buffer
			require.NoError(t, rep.WriteTable(&table))
			assert.Contains(t, table.String(), tt.banner)
			require.NotEmpty(t, seeds)
			for _, s := range seeds {
				assert.Equal(t, uint64(7), s, "the comparison's seed reaches the provider, whatever its name")
			}
			require.Len(t, rep.Configs, 1)
			assert.InDelta(t, 1.0, rep.Configs[0].SuccessRate, 1e-9, "the perfect simulator plays the suite's tasks")
		})
	}
}
