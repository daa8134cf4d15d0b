package nodes_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func noSleep(context.Context, time.Duration) error { return nil }

func demoTasks(t *testing.T, ids ...string) []suite.Task {
	t.Helper()
	all, err := suite.Demo()
	require.NoError(t, err)
	var out []suite.Task
	for _, id := range ids {
		for _, task := range all {
			if task.ID == id {
				out = append(out, task)
			}
		}
	}
	require.Len(t, out, len(ids))
	return out
}

func game24Task(t *testing.T, nums ...int) suite.Task {
	t.Helper()
	expr, steps, ok := verify.Solve24Steps(nums)
	require.True(t, ok)
	return suite.Task{Task: state.Task{ID: "g24", Question: suite.Game24Question(nums)}, Gold: &suite.Gold{Answer: expr, Reasoning: steps}}
}

// TestShippedParadigmsSolveWithTheSimOracleAndReportUsageAlike runs every
// paradigm config of this package on tasks with gold solutions, with the
// fault-free sim oracle playing each role in its real format, and checks
// that each run answers correctly and accounts for every model call the
// same way: usage, per-node usage and llm_call events agree with the calls
// the model served.
func TestShippedParadigmsSolveWithTheSimOracleAndReportUsageAlike(t *testing.T) {
	demo := demoTasks(t, "demo-01", "demo-21", "demo-29")
	g24 := []suite.Task{game24Task(t, 4, 5, 6, 10), game24Task(t, 1, 1, 4, 6)}
	sorting, err := suite.Sorting(16, 2)
	require.NoError(t, err)
	// Configs without tools cannot look the demo facts up, and the sim's
	// capability profiles make them fail (TestOneReplyParadigmsFail...
	// in eval/compare); here they play against the oracle profile
	// (sim.OracleCapabilities), which knows every fact and never slips,
	// so that their roles' formats and usage accounting are checked.
	cases := []struct {
		config string
		tasks  []suite.Task
		scorer verify.Scorer
		oracle bool
	}{
		{"cot_sc", demo, verify.ExactMatch{}, true},
		{"plan_solve", demo, verify.ExactMatch{}, true},
		{"least_to_most", demo, verify.ExactMatch{}, true},
		{"reflexion", demo, verify.ExactMatch{}, false},
		{"tot", demo[:2], verify.ExactMatch{}, true},
		{"tot_dfs", demo[:2], verify.ExactMatch{}, true},
		{"tot_game24", g24, verify.Game24{}, false},
		{"least_to_most", g24, verify.Game24{}, false},
		{"lats", demo, verify.ExactMatch{}, false},
		// Composed from general-purpose nodes (router) and paradigm nodes.
		{"router", demo, verify.ExactMatch{}, false},
		{"react_cot_sc", demo, verify.ExactMatch{}, false},
		{"cot_sc_react", demo, verify.ExactMatch{}, false},
		{"ensemble", demo, verify.ExactMatch{}, false},
		{"map_reduce", demo, verify.ExactMatch{}, true},
		{"got", sorting, verify.Sorting{}, false},
	}
	for _, tc := range cases {
		for _, task := range tc.tasks {
			t.Run(tc.config+"/"+task.ID, func(t *testing.T) {
				opts := []sim.Option{sim.WithSleeper(noSleep), sim.WithTasks([]suite.Task{task})}
				if tc.oracle {
					opts = append(opts, sim.WithCapabilities(sim.OracleCapabilities()))
				}
				m, err := sim.New("perfect", opts...)
				require.NoError(t, err)
				p := buildConfig(t, "../configs/"+tc.config+".yaml", m)
				st, rec := runTask(t, p, task.Task)
				v := tc.scorer.Score(st.Answer, task.Reference())
				assert.True(t, v.Correct, "answer %q: %s", st.Answer, v.Detail)
				assert.True(t, st.Complete, "reason: %s", st.Reason)

				u := st.Usage.Snapshot()
				assert.Equal(t, m.Calls(), u.ModelCalls, "every call is counted")
				assert.Len(t, rec.OfKind(trace.KindLLMCall), u.ModelCalls, "every call is traced")
				perNode := 0
				for _, n := range u.PerNode {
					perNode += n.ModelCalls
				}
				assert.Equal(t, u.ModelCalls, perNode)
				assert.Positive(t, u.PromptTokens)
				assert.Positive(t, u.CompletionTokens)
				answers := rec.OfKind(trace.KindAnswer)
				require.NotEmpty(t, answers)
				assert.Equal(t, st.Answer, answers[len(answers)-1].Text, "the last answer event is the answer")
				require.Len(t, rec.OfKind(trace.KindRunEnd), 1)
			})
		}
	}
}

// TestToTFollowsTheSimGame24GoldWithinThePaperBudget checks the cost shape
// of the Game of 24 setup: with a fault-free oracle the BFS finds the gold
// expression at depth 4 and never calls the evaluator for a leaf.
func TestToTFollowsTheSimGame24GoldWithinThePaperBudget(t *testing.T) {
	task := game24Task(t, 4, 5, 6, 10)
	m, err := sim.New("perfect", sim.WithSleeper(noSleep), sim.WithTasks([]suite.Task{task}))
	require.NoError(t, err)
	rec := newRecorder(m)
	p := buildConfig(t, "../configs/tot_game24.yaml", rec)
	st, tr := runTask(t, p, task.Task)
	require.True(t, st.Complete)
	assert.Equal(t, task.Gold.Answer, st.Answer)
	for _, r := range requests(rec, "evaluate") {
		assert.NotContains(t, r.prompt, "Candidate step: Answer:")
	}
	verified := 0
	for _, e := range tr.OfKind(trace.KindCandidate) {
		if e.Data["verdict"] == "verified" {
			verified++
			assert.Equal(t, 4, e.Data["depth"])
		}
	}
	assert.GreaterOrEqual(t, verified, 1)
}

// TestParadigmConfigsRunTheirScriptedDemos runs each paradigm config with
// its example script, as the scripts' comments tell users to.
func TestParadigmConfigsRunTheirScriptedDemos(t *testing.T) {
	farmer := state.Task{Question: "A farmer has 3 fields of 17 rows with 23 plants each. How many plants?", Answer: "1173"}
	jupiter := state.Task{Question: "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?", Answer: "22448"}
	puzzle := state.Task{Question: "Use 4 5 6 10 and + - * / to obtain 24, using each number exactly once."}
	cases := []struct {
		config, script string
		task           state.Task
		scorer         verify.Scorer
		calls          int
	}{
		{"cot_sc", "cot_sc_demo", farmer, verify.ExactMatch{}, 5},
		{"plan_solve", "plan_solve_demo", farmer, verify.ExactMatch{}, 1},
		{"least_to_most", "least_to_most_demo", farmer, verify.ExactMatch{}, 3},
		{"reflexion", "reflexion_demo", jupiter, verify.ExactMatch{}, 6},
		{"tot", "tot_demo", farmer, verify.ExactMatch{}, 11},
		{"tot_dfs", "tot_demo", farmer, verify.ExactMatch{}, 9},
		{"tot_game24", "tot_game24_demo", puzzle, verify.Game24{}, 10},
		{"lats", "lats_demo", jupiter, verify.ExactMatch{}, 11},
	}
	for _, tc := range cases {
		t.Run(tc.config, func(t *testing.T) {
			cfg, err := config.Load("../configs/" + tc.config + ".yaml")
			require.NoError(t, err)
			script, err := filepath.Abs("../examples/scripts/" + tc.script + ".yaml")
			require.NoError(t, err)
			p, err := pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Models: llm.NewFactory(llm.WithProvider("scripted", scripted.Label, scripted.Build)),
				Tools: builtin.Factory{}, LLM: config.LLM{Provider: "scripted", Script: script}})
			require.NoError(t, err)
			st, _ := runTask(t, p, tc.task)
			v := tc.scorer.Score(st.Answer, tc.task.Reference())
			assert.True(t, v.Correct, "answer %q: %s", st.Answer, v.Detail)
			assert.True(t, st.Complete, st.Reason)
			assert.Equal(t, tc.calls, st.Usage.Snapshot().ModelCalls)
		})
	}
}
