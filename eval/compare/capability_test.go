package compare_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sim's capability profiles make one-reply paradigms fail what they
// cannot see: every demo task needs a lookup, so direct and chain of
// thought, which have no search, answer none of them under sim:perfect,
// while ReAct, which searches, and the planners, whose finalizers and
// solvers read the step results, answer all of them.
func TestOneReplyParadigmsFailLookupsThatReActSolves(t *testing.T) {
	tasks := demoSuite(t)
	for _, task := range tasks {
		lookups := 0
		for _, s := range task.Gold.Steps {
			if s.Tool != "calculator" {
				lookups++
			}
		}
		require.Positive(t, lookups, "%s: every demo task needs a lookup", task.ID)
	}
	names := []string{"direct", "cot", "react", "plan_execute", "rewoo", "llmcompiler"}
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}), suite.AgentTasks(tasks), compare.Options{
		Configs: configPaths(names...), LLM: config.LLM{Provider: "sim"}, OutDir: t.TempDir(), Scorer: verify.ExactMatch{}, NoTraces: true,
	})
	require.NoError(t, err)
	require.Len(t, rep.Configs, len(names))
	want := map[string]float64{"direct": 0, "cot": 0, "react": 1, "plan_execute": 1, "rewoo": 1, "llmcompiler": 1}
	for _, s := range rep.Configs {
		assert.Equal(t, len(tasks), s.Scored, s.Config)
		assert.InDelta(t, want[s.Config], s.SuccessRate, 1e-9, s.Config)
		if want[s.Config] == 0 {
			assert.Equal(t, map[string]int{compare.FailureWrong: len(tasks)}, s.Failures, "%s finishes, with wrong answers", s.Config)
		}
	}
}

// Every task of the mixed suite is consistent with its gold solution: the
// ReAct sim solves each one when it knows the facts of knowledge questions
// and solves puzzles in one go (their memory priors raised to 1), so the
// lookups' gold outputs are in the demo corpus where the gold searches
// find them, and the calculator's results match the gold ones.
func TestTheReActSimSolvesEveryMixedTask(t *testing.T) {
	tasks, err := suite.Mixed()
	require.NoError(t, err)
	caps, err := sim.Capabilities()
	require.NoError(t, err)
	for _, typ := range []string{suite.GoldKnowledge, suite.GoldPuzzle} {
		c := caps[typ]
		c.Memory = 1
		caps[typ] = c
	}
	rep, err := compare.Run(context.Background(), newLoader(sim.Profile{Name: "perfect"}, withTasks(tasks), withSimOptions(sim.WithCapabilities(caps))),
		suite.AgentTasks(tasks), compare.Options{
			Configs: configPaths("react"), LLM: config.LLM{Provider: "sim"}, OutDir: t.TempDir(), Scorer: verify.ExactMatch{}, NoTraces: true,
		})
	require.NoError(t, err)
	require.Len(t, rep.Configs, 1)
	assert.Equal(t, len(tasks), rep.Configs[0].Correct, "failures: %v", rep.Configs[0].Failures)
}
