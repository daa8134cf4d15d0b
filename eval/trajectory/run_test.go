package trajectory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/eval/trajectory"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// faulty names a simulator profile without latency whose model calls
// often name a tool that does not exist, repeat the last action or write
// a malformed one (faultyProfile).
const faulty = "faulty"

func faultyProfile() sim.Profile {
	return sim.Profile{Name: faulty, Faults: map[string]float64{"unknown_tool": 0.3, "repeated_action": 0.2, "malformed_action": 0.1}}
}

// simEngine returns an Engine with every built-in tool and the offline
// simulator "sim", which follows the gold solution of the task a call's
// metadata names, among tasks.
func simEngine(t *testing.T, tasks []suite.Task) *planner.Engine {
	t.Helper()
	build := func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		if cfg.Profile == faulty {
			return sim.NewWithProfile(faultyProfile(), sim.WithSeed(max(cfg.Seed, 1)), sim.WithTasks(tasks))
		}
		return sim.New(cfg.Profile, sim.WithSeed(max(cfg.Seed, 1)), sim.WithTasks(tasks))
	}
	eng, err := planner.New(planner.WithTools(builtin.Factory{}), planner.WithKeywordIndex(search.Keywords{}),
		planner.WithOfflineProvider("sim", sim.Label, build, llm.AsKind(llm.KindSimulated)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close() })
	return eng
}

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

// run runs the shipped config name on task with the sim profile and
// returns the live Collector's trajectory and the run's result.
func run(t *testing.T, eng *planner.Engine, name, profile string, task suite.Task, opts ...planner.RunOption) (trajectory.Trajectory, *planner.Result) {
	t.Helper()
	ctx := context.Background()
	p, err := eng.Load(ctx, filepath.Join("..", "..", "configs", name+".yaml"), planner.WithLLMConfig(config.LLM{Provider: "sim", Profile: profile, Seed: 1}))
	require.NoError(t, err)
	c := trajectory.NewCollector(trajectory.Options{})
	res, err := p.Run(ctx, "", append([]planner.RunOption{planner.WithTask(task.Task), planner.WithTraceSink(c)}, opts...)...)
	require.NoError(t, err)
	return c.Trajectory(), res
}

// knownCalls counts the calls of tools that exist: what the run's usage
// counts as tool calls.
func knownCalls(tr trajectory.Trajectory) int {
	n := 0
	for _, c := range tr.Tools {
		if c.Via == trajectory.ViaAction || c.Via == trajectory.ViaStep {
			n++
		}
	}
	return n
}

// TestGoldFollowingRunsScorePerfectly drives real runs of the shipped
// paradigms (text and native ReAct, ReWOO, LLMCompiler, Plan-and-Execute,
// a map over sub-questions) with the perfect simulator, which makes
// exactly the gold calls: every ratio is 1, the calls are those the run's
// usage counts, and a JSONL round trip of the run's events gives the
// same trajectory.
func TestGoldFollowingRunsScorePerfectly(t *testing.T) {
	// one search; two hops; two searches and a calculator that needs both;
	// five steps, four of them independent.
	tasks := demoTasks(t, "demo-01", "demo-11", "demo-21", "demo-33")
	eng := simEngine(t, tasks)
	planned := map[string]bool{"rewoo": true, "llmcompiler": true, "plan_execute": true}
	for _, cfg := range []string{"react", "react_tools", "rewoo", "llmcompiler", "plan_execute"} {
		for _, task := range tasks {
			t.Run(cfg+"/"+task.ID, func(t *testing.T) {
				tr, res := run(t, eng, cfg, "perfect", task)
				require.True(t, res.Complete, "the perfect simulator finishes: %s", res.Reason)
				assert.Equal(t, res.Usage.ToolCalls, knownCalls(tr), "the calls are those the run's usage counts")

				m := trajectory.ScoreGold(tr, task.Gold)
				require.True(t, m.Scored)
				assert.Equal(t, len(task.Gold.Steps), m.Calls)
				for name, v := range map[string]float64{"tool recall": m.ToolRecall, "tool precision": m.ToolPrecision,
					"input recall": m.InputRecall, "input precision": m.InputPrecision, "order": m.OrderLCS, "steps": m.StepsRatio} {
					assert.InDelta(t, 1.0, v, 1e-12, name)
				}
				assert.Equal(t, planned[cfg], m.HasPlan)
				if planned[cfg] {
					assert.InDelta(t, 1.0, m.PlanRecall, 1e-12)
					assert.InDelta(t, 1.0, m.PlanPrecision, 1e-12)
					if m.GoldEdges > 0 {
						assert.InDelta(t, 1.0, m.DepRecall, 1e-12, "plan %+v", tr.Plans)
					}
				}

				// The same events read back from JSON, as a JSONL trace holds them.
				b, err := json.Marshal(res.Trace)
				require.NoError(t, err)
				var back []trace.Event
				require.NoError(t, json.Unmarshal(b, &back))
				assert.Equal(t, tr, trajectory.Collect(back, trajectory.Options{}))
			})
		}
	}
}

// TestNestedMapRunsCount: a map node runs a ReAct subgraph per
// sub-question, concurrently; every call of every item counts. (The
// graph events of an item carry the path "item N/act"; the calls' own
// events carry the inner node id, "act".)
func TestNestedMapRunsCount(t *testing.T) {
	tasks := demoTasks(t, "demo-33")
	eng := simEngine(t, tasks)
	tr, res := run(t, eng, "map_reduce", "perfect", tasks[0])
	items := map[string]bool{}
	actions := 0
	for _, e := range res.Trace {
		if e.Kind == trace.KindNodeStart && strings.HasPrefix(e.Node, "item ") {
			items[e.Node] = true
		}
		if e.Kind == trace.KindAction {
			actions++
		}
	}
	require.GreaterOrEqual(t, len(items), 2, "the map ran several items")
	assert.Equal(t, actions, len(tr.Tools))
	assert.Equal(t, res.Usage.ToolCalls, knownCalls(tr))
	m := trajectory.ScoreGold(tr, tasks[0].Gold)
	assertInRange(t, m)
	// The perfect simulator makes each gold search in its item, so every
	// gold step is recalled; items that repeat the final calculation add
	// calls beyond the gold, which precision counts.
	assert.InDelta(t, 1.0, m.ToolRecall, 1e-12, "calls %+v", tr.Tools)
	assert.InDelta(t, float64(len(tasks[0].Gold.Steps))/float64(len(tr.Tools)), m.ToolPrecision, 1e-12)
}

// TestFaultyRunsStayInRange runs a simulator that names unknown tools,
// repeats actions and writes malformed ones: the unknown tools' calls
// count (beyond the usage's count of known calls) and lower precision,
// and every metric is a number in range.
func TestFaultyRunsStayInRange(t *testing.T) {
	tasks := demoTasks(t, "demo-02", "demo-12", "demo-22", "demo-29", "demo-35", "demo-40")
	eng := simEngine(t, tasks)
	var ms []trajectory.Metrics
	unknownRuns := 0
	for _, cfg := range []string{"react", "react_tools", "plan_execute"} {
		for _, task := range tasks {
			tr, res := run(t, eng, cfg, faulty, task)
			assert.Equal(t, res.Usage.ToolCalls, knownCalls(tr), "%s/%s", cfg, task.ID)
			unknown := 0
			for _, c := range tr.Tools {
				if c.Via == trajectory.ViaUnknownTool {
					unknown++
					assert.NotEmpty(t, c.Tool)
				}
			}
			m := trajectory.ScoreGold(tr, task.Gold)
			assertInRange(t, m)
			assert.Equal(t, res.Usage.ToolCalls+unknown, m.Calls)
			if unknown > 0 {
				unknownRuns++
				assert.Less(t, m.ToolPrecision, 1.0, "%s/%s: an unknown tool is a wrong call", cfg, task.ID)
			}
			ms = append(ms, m)
		}
	}
	require.Positive(t, unknownRuns, "the profile's unknown-tool fault happened")
	s := trajectory.Summarize(ms)
	assert.Equal(t, len(ms), s.Scored)
	assert.Equal(t, len(tasks), s.Planned, "plan_execute's runs")
	assert.Less(t, s.ToolPrecision, 1.0)
}

// TestReadJSONLGivesTheLiveTrajectories writes several runs into one JSONL
// trace, as a comparison does, and reads each run's trajectory back.
func TestReadJSONLGivesTheLiveTrajectories(t *testing.T) {
	tasks := demoTasks(t, "demo-21", "demo-35")
	eng := simEngine(t, tasks)
	var buf bytes.Buffer
	sink := trace.NewJSONL(&buf)
	live := map[string]trajectory.Trajectory{}
	for _, cfg := range []string{"react_tools", "rewoo"} {
		for _, task := range tasks {
			id := cfg + "/" + task.ID
			tr, _ := run(t, eng, cfg, faulty, task, planner.WithRunID(id), planner.WithTraceSink(sink))
			require.NotEmpty(t, tr.Tools)
			live[id] = tr
		}
	}
	require.NoError(t, sink.Flush())
	got, err := trajectory.ReadJSONL(&buf, trajectory.Options{})
	require.NoError(t, err)
	assert.Equal(t, live, got)
}

func TestReadJSONLNamesABadEvent(t *testing.T) {
	in := `{"run_id":"a","kind":"action","data":{"tool":"search","input":"x"}}` + "\n\n" + `{"run_id":"a","kind":` + "\n"
	_, err := trajectory.ReadJSONL(strings.NewReader(in), trajectory.Options{})
	require.ErrorIs(t, err, trajectory.ErrTrace)
	assert.Contains(t, err.Error(), "event 2")

	_, err = trajectory.ReadJSONL(strings.NewReader("[1, 2]\n"), trajectory.Options{})
	require.ErrorIs(t, err, trajectory.ErrTrace, "a line that is no event object")

	got, err := trajectory.ReadJSONL(strings.NewReader(""), trajectory.Options{})
	require.NoError(t, err)
	assert.Empty(t, got)
}
