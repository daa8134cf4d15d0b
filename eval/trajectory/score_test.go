package trajectory_test

import (
	"testing"

	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/eval/trajectory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldDiff is a demo-suite shape: two searches, then a calculator step
// that needs both results.
var goldDiff = []suite.GoldStep{
	{ID: "1", Tool: "search", Input: "Clyde Tombaugh born"},
	{ID: "2", Tool: "search", Input: "Pluto discovered Clyde Tombaugh"},
	{ID: "3", Tool: "calculator", Input: "#E2 - #E1", DependsOn: []string{"1", "2"}},
}

func calls(pairs ...string) []trajectory.Call {
	var out []trajectory.Call
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, trajectory.Call{Tool: pairs[i], Input: pairs[i+1], Via: trajectory.ViaAction})
	}
	return out
}

func TestScoreTheGoldTrajectoryIsPerfect(t *testing.T) {
	m := trajectory.Score(trajectory.Trajectory{Tools: calls(
		"search", "Clyde Tombaugh born",
		"search", "Pluto discovered Clyde Tombaugh",
		"calculator", "1930 - 1906",
	)}, goldDiff)
	assert.True(t, m.Scored)
	assert.Equal(t, 3, m.GoldSteps)
	assert.Equal(t, 3, m.Calls)
	assert.InDelta(t, 1.0, m.ToolRecall, 1e-12)
	assert.InDelta(t, 1.0, m.ToolPrecision, 1e-12)
	assert.InDelta(t, 1.0, m.InputRecall, 1e-12, "#E2 - #E1 matches any 'x - y'")
	assert.InDelta(t, 1.0, m.InputPrecision, 1e-12)
	assert.InDelta(t, 1.0, m.OrderLCS, 1e-12)
	assert.InDelta(t, 1.0, m.StepsRatio, 1e-12)
	assert.False(t, m.HasPlan)
}

func TestScoreHandComputed(t *testing.T) {
	cases := []struct {
		name  string
		calls []trajectory.Call
		want  trajectory.Metrics
	}{
		{
			// calls: calculator, search(wrong input), search(right), search(dup of the right one).
			// names: gold {search:2, calculator:1}, calls {search:3, calculator:1}: 3 shared of 3 gold, 4 calls.
			// inputs: "Clyde Tombaugh born" unmatched; "Pluto discovered..." once; "#E2 - #E1" vs "1930 - 1906": 2 of 3, 2 of 4.
			// LCS of [s s c] and [c s s s] is "s s": 2/3. Steps 4/3.
			name: "order swapped, one wrong input, one repeat",
			calls: calls(
				"calculator", "1930 - 1906",
				"search", "Tombaugh birthday",
				"search", "pluto  discovered clyde tombaugh",
				"search", "Pluto discovered Clyde Tombaugh",
			),
			want: trajectory.Metrics{Scored: true, GoldSteps: 3, Calls: 4,
				ToolRecall: 1, ToolPrecision: 0.75, InputRecall: 2.0 / 3, InputPrecision: 0.5,
				OrderLCS: 2.0 / 3, StepsRatio: 4.0 / 3},
		},
		{
			// one search only, right input: 1 of 3 gold names, 1 of 1 call; LCS "s" 1/3; steps 1/3.
			name:  "stops after the first call",
			calls: calls("search", `{"query": "Clyde Tombaugh born"}`),
			want: trajectory.Metrics{Scored: true, GoldSteps: 3, Calls: 1,
				ToolRecall: 1.0 / 3, ToolPrecision: 1, InputRecall: 1.0 / 3, InputPrecision: 1,
				OrderLCS: 1.0 / 3, StepsRatio: 1.0 / 3},
		},
		{
			// an unknown tool and a wrong tool: no name shared; LCS 0; 2 calls of 3 gold.
			name:  "only wrong tools",
			calls: calls("google_search", "", "wikipedia", "Clyde Tombaugh born"),
			want:  trajectory.Metrics{Scored: true, GoldSteps: 3, Calls: 2, StepsRatio: 2.0 / 3},
		},
		{
			// tool names differ only in case and separators: all match after NormalizeName.
			// "#E2 - #E1" needs " - " between two texts: "1930-1906" has no spaces, so 2 of 3 inputs.
			name:  "names normalised, an input that breaks the reference pattern",
			calls: calls("Search", "Clyde Tombaugh born", "SEARCH", "Pluto discovered Clyde Tombaugh", "Calcu_lator", "1930-1906"),
			want: trajectory.Metrics{Scored: true, GoldSteps: 3, Calls: 3,
				ToolRecall: 1, ToolPrecision: 1, InputRecall: 2.0 / 3, InputPrecision: 2.0 / 3,
				OrderLCS: 1, StepsRatio: 1},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := trajectory.Score(trajectory.Trajectory{Tools: c.calls}, goldDiff)
			assertMetrics(t, c.want, got)
		})
	}
}

func assertMetrics(t *testing.T, want, got trajectory.Metrics) {
	t.Helper()
	assert.Equal(t, want.Scored, got.Scored, "Scored")
	assert.Equal(t, want.GoldSteps, got.GoldSteps, "GoldSteps")
	assert.Equal(t, want.Calls, got.Calls, "Calls")
	assert.Equal(t, want.HasPlan, got.HasPlan, "HasPlan")
	assert.Equal(t, want.PlanSteps, got.PlanSteps, "PlanSteps")
	assert.Equal(t, want.GoldEdges, got.GoldEdges, "GoldEdges")
	for _, f := range []struct {
		name      string
		want, got float64
	}{
		{"ToolRecall", want.ToolRecall, got.ToolRecall},
		{"ToolPrecision", want.ToolPrecision, got.ToolPrecision},
		{"InputRecall", want.InputRecall, got.InputRecall},
		{"InputPrecision", want.InputPrecision, got.InputPrecision},
		{"OrderLCS", want.OrderLCS, got.OrderLCS},
		{"StepsRatio", want.StepsRatio, got.StepsRatio},
		{"PlanRecall", want.PlanRecall, got.PlanRecall},
		{"PlanPrecision", want.PlanPrecision, got.PlanPrecision},
		{"DepRecall", want.DepRecall, got.DepRecall},
	} {
		assert.InDelta(t, f.want, f.got, 1e-12, f.name)
	}
}

func TestScoreLCSOnLongerSequences(t *testing.T) {
	gold := []suite.GoldStep{{ID: "1", Tool: "a"}, {ID: "2", Tool: "b"}, {ID: "3", Tool: "c"}, {ID: "4", Tool: "d"}, {ID: "5", Tool: "e"}}
	// calls b a c e d x: one LCS is "a c e" (or "b c d"), length 3 → 3/5.
	m := trajectory.Score(trajectory.Trajectory{Tools: calls("b", "", "a", "", "c", "", "e", "", "d", "", "x", "")}, gold)
	assert.InDelta(t, 0.6, m.OrderLCS, 1e-12)
	// names: a-e each once in both; x extra: recall 5/5, precision 5/6.
	assert.InDelta(t, 1.0, m.ToolRecall, 1e-12)
	assert.InDelta(t, 5.0/6, m.ToolPrecision, 1e-12)
}

func TestScoreInputMatchingIsOneToOne(t *testing.T) {
	// Two gold searches with the same input; three identical calls: only two can match.
	gold := []suite.GoldStep{{ID: "1", Tool: "search", Input: "x"}, {ID: "2", Tool: "search", Input: "x"}}
	m := trajectory.Score(trajectory.Trajectory{Tools: calls("search", "x", "search", "X", "search", " x ")}, gold)
	assert.InDelta(t, 1.0, m.InputRecall, 1e-12)
	assert.InDelta(t, 2.0/3, m.InputPrecision, 1e-12)
	assert.InDelta(t, 2.0/3, m.ToolPrecision, 1e-12, "a repeated call lowers precision")

	// The pattern gold step could take either call; the literal one only
	// "a": a maximum matching gives each its own.
	gold = []suite.GoldStep{{ID: "1", Tool: "s", Input: "#E9 a"}, {ID: "2", Tool: "s", Input: "b a"}}
	m = trajectory.Score(trajectory.Trajectory{Tools: calls("s", "b a", "s", "c a")}, gold)
	assert.InDelta(t, 1.0, m.InputRecall, 1e-12, "a greedy first pick would give the pattern 'b a' and leave the literal unmatched")
}

func TestScoreEdgeCases(t *testing.T) {
	t.Run("no gold", func(t *testing.T) {
		m := trajectory.Score(trajectory.Trajectory{Tools: calls("search", "x")}, nil)
		assertMetrics(t, trajectory.Metrics{Calls: 1}, m)
		assert.Equal(t, m, trajectory.ScoreGold(trajectory.Trajectory{Tools: calls("search", "x")}, nil), "a nil Gold is no gold")
		assert.Equal(t, m, trajectory.ScoreGold(trajectory.Trajectory{Tools: calls("search", "x")}, &suite.Gold{Answer: "y"}))
	})
	t.Run("no calls", func(t *testing.T) {
		m := trajectory.Score(trajectory.Trajectory{}, goldDiff)
		assertMetrics(t, trajectory.Metrics{Scored: true, GoldSteps: 3}, m)
	})
	t.Run("duplicate gold tools", func(t *testing.T) {
		gold := []suite.GoldStep{{ID: "1", Tool: "search", Input: "a"}, {ID: "2", Tool: "search", Input: "b"}, {ID: "3", Tool: "search", Input: "c"}}
		// one search: 1 of 3 names, 1 of 1 call; LCS 1/3.
		m := trajectory.Score(trajectory.Trajectory{Tools: calls("search", "b")}, gold)
		assert.InDelta(t, 1.0/3, m.ToolRecall, 1e-12)
		assert.InDelta(t, 1.0, m.ToolPrecision, 1e-12)
		assert.InDelta(t, 1.0/3, m.InputRecall, 1e-12)
		assert.InDelta(t, 1.0/3, m.OrderLCS, 1e-12)
	})
	t.Run("empty tool names match nothing", func(t *testing.T) {
		gold := []suite.GoldStep{{ID: "1", Tool: ""}}
		m := trajectory.Score(trajectory.Trajectory{Tools: calls("", "")}, gold)
		assert.Zero(t, m.ToolRecall)
		assert.Zero(t, m.OrderLCS)
		assert.Zero(t, m.InputRecall)
	})
	t.Run("empty plan", func(t *testing.T) {
		m := trajectory.Score(trajectory.Trajectory{Plans: []trajectory.Plan{{Node: "plan"}}}, goldDiff)
		assertMetrics(t, trajectory.Metrics{Scored: true, GoldSteps: 3, HasPlan: true, GoldEdges: 2}, m)
	})
}

// rewooPlan is the plan the shipped ReWOO config makes for goldDiff's
// task: a model-worker step reads each search's value for the calculator.
var rewooPlan = trajectory.Plan{Node: "plan", Steps: []trajectory.PlanStep{
	{ID: "1", Tool: "search", Input: "Clyde Tombaugh born"},
	{ID: "1_v", Tool: "llm", Input: "the value: #E1", DependsOn: []string{"1"}, Worker: true},
	{ID: "2", Tool: "search", Input: "Pluto discovered Clyde Tombaugh"},
	{ID: "2_v", Tool: "llm", Input: "the value: #E2", DependsOn: []string{"2"}, Worker: true},
	{ID: "3", Tool: "calculator", Input: "#E2_v - #E1_v", DependsOn: []string{"1_v", "2_v"}},
}}

func TestScorePlan(t *testing.T) {
	t.Run("dependencies through worker steps", func(t *testing.T) {
		m := trajectory.Score(trajectory.Trajectory{Plans: []trajectory.Plan{rewooPlan}}, goldDiff)
		// workers left out: 3 plan steps, all gold names; edges 1→3 and 2→3 both found through 1_v and 2_v.
		assertMetrics(t, trajectory.Metrics{Scored: true, GoldSteps: 3, HasPlan: true, PlanSteps: 3,
			PlanRecall: 1, PlanPrecision: 1, GoldEdges: 2, DepRecall: 1}, m)
	})
	t.Run("the final plan is scored", func(t *testing.T) {
		first := trajectory.Plan{Node: "plan", Steps: []trajectory.PlanStep{{ID: "1", Tool: "search", Input: "Tombaugh"}}}
		m := trajectory.Score(trajectory.Trajectory{Plans: []trajectory.Plan{first, rewooPlan}}, goldDiff)
		assert.InDelta(t, 1.0, m.PlanRecall, 1e-12)
		m = trajectory.Score(trajectory.Trajectory{Plans: []trajectory.Plan{rewooPlan, first}}, goldDiff)
		// final plan: one search of 3 gold steps; no calculator, so no edge.
		assert.InDelta(t, 1.0/3, m.PlanRecall, 1e-12)
		assert.InDelta(t, 1.0, m.PlanPrecision, 1e-12)
		assert.Zero(t, m.DepRecall)
	})
	t.Run("a missing and a wrong edge", func(t *testing.T) {
		// Plan: the calculator waits for step 2 only, and step 2 (wrongly) for step 1.
		// Mapping by input: gold 1→p1, 2→p2, 3→p3. Gold edges 1→3 (p3 does not depend on p1
		// directly: only through p2, which is not followed) and 2→3 (found): 1 of 2.
		// The plan's extra search (no gold left for it) lowers precision: 3 of 4.
		p := trajectory.Plan{Steps: []trajectory.PlanStep{
			{ID: "p1", Tool: "search", Input: "Clyde Tombaugh born"},
			{ID: "p2", Tool: "search", Input: "Pluto discovered Clyde Tombaugh", DependsOn: []string{"p1"}},
			{ID: "p3", Tool: "calculator", Input: "#Ep2 - 1906", DependsOn: []string{"p2"}},
			{ID: "p4", Tool: "search", Input: "Pluto"},
		}}
		m := trajectory.Score(trajectory.Trajectory{Plans: []trajectory.Plan{p}}, goldDiff)
		assertMetrics(t, trajectory.Metrics{Scored: true, GoldSteps: 3, HasPlan: true, PlanSteps: 4,
			PlanRecall: 1, PlanPrecision: 0.75, GoldEdges: 2, DepRecall: 0.5}, m)
	})
	t.Run("mapping prefers matching inputs over plan order", func(t *testing.T) {
		gold := []suite.GoldStep{
			{ID: "1", Tool: "search", Input: "Io diameter"},
			{ID: "2", Tool: "search", Input: "Europa diameter"},
			{ID: "3", Tool: "calculator", Input: "#E2 * 2"},
		}
		// The plan lists the searches in the other order. By input, gold 2 maps to a, on which c
		// depends: 1 of 1 edge. Mapping in plan order would give gold 2 the step b and find none.
		p := trajectory.Plan{Steps: []trajectory.PlanStep{
			{ID: "a", Tool: "search", Input: "Europa diameter"},
			{ID: "b", Tool: "search", Input: "Io diameter"},
			{ID: "c", Tool: "calculator", Input: "#Ea * 2", DependsOn: []string{"a"}},
		}}
		m := trajectory.Score(trajectory.Trajectory{Plans: []trajectory.Plan{p}}, gold)
		assert.Equal(t, 1, m.GoldEdges)
		assert.InDelta(t, 1.0, m.DepRecall, 1e-12)
	})
	t.Run("steps without tools", func(t *testing.T) {
		p := trajectory.Plan{Steps: []trajectory.PlanStep{{ID: "1"}, {ID: "2", DependsOn: []string{"1"}}}}
		m := trajectory.Score(trajectory.Trajectory{Plans: []trajectory.Plan{p}}, goldDiff)
		assertMetrics(t, trajectory.Metrics{Scored: true, GoldSteps: 3, HasPlan: true, PlanSteps: 2, GoldEdges: 2}, m)
	})
}

func TestSummarize(t *testing.T) {
	ms := []trajectory.Metrics{
		{Calls: 2}, // unscored: counts in Runs only
		{Scored: true, GoldSteps: 1, Calls: 1, ToolRecall: 1, ToolPrecision: 1, InputRecall: 1, InputPrecision: 1, OrderLCS: 1, StepsRatio: 1},
		{Scored: true, GoldSteps: 3, Calls: 6, ToolRecall: 0.5, ToolPrecision: 0.25, OrderLCS: 0.5, StepsRatio: 2,
			HasPlan: true, PlanRecall: 1, PlanPrecision: 0.5, GoldEdges: 0},
		{Scored: true, GoldSteps: 3, Calls: 3, HasPlan: true, PlanRecall: 0.5, PlanPrecision: 1, GoldEdges: 2, DepRecall: 0.5},
	}
	s := trajectory.Summarize(ms)
	assert.Equal(t, 4, s.Runs)
	assert.Equal(t, 3, s.Scored)
	assert.Equal(t, 2, s.Planned)
	assert.Equal(t, 1, s.WithEdges)
	assert.InDelta(t, 1.5/3, s.ToolRecall, 1e-12, "(1 + 0.5 + 0) / 3")
	assert.InDelta(t, 1.25/3, s.ToolPrecision, 1e-12, "(1 + 0.25 + 0) / 3")
	assert.InDelta(t, 1.0/3, s.InputRecall, 1e-12)
	assert.InDelta(t, 1.5/3, s.OrderLCS, 1e-12)
	assert.InDelta(t, 1.0, s.StepsRatio, 1e-12, "(1 + 2 + 0) / 3")
	assert.InDelta(t, 0.75, s.PlanRecall, 1e-12, "(1 + 0.5) / 2, runs with a plan only")
	assert.InDelta(t, 0.75, s.PlanPrecision, 1e-12)
	assert.InDelta(t, 0.5, s.DepRecall, 1e-12, "only the run whose gold has edges")

	empty := trajectory.Summarize(nil)
	require.Zero(t, empty.Runs)
	assert.Zero(t, empty.ToolRecall, "a mean over no runs is 0, not NaN")
}
