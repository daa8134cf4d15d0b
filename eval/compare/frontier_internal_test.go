package compare

import (
	"slices"
	"strings"
	"testing"

	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frontierReport has four fixed configs and one adaptive one, with runs of
// 10 tasks each: costs per run 0.001, 0.002, 0.004, 0.004 dollars.
func frontierReport(costs []float64, rates []float64) *Report {
	r := &Report{}
	names := []string{"direct", "cot", "react", "plan_execute", "autopilot"}
	for i := range costs {
		r.Configs = append(r.Configs, ConfigSummary{Config: names[i], Runs: 10, SuccessRate: rates[i], CostUSD: costs[i] * 10,
			PromptTokens: int(costs[i] * 1e6), CompletionTokens: 0})
	}
	return r
}

func TestFrontierMarksTheFixedConfigsNoneBeatsAndPlacesAdaptiveOnes(t *testing.T) {
	// direct 0.3 @ 1, cot 0.5 @ 2, react 0.8 @ 4, plan_execute 0.7 @ 4 (beaten by react: same cost, lower success),
	// autopilot 0.8 @ 2.5 (adaptive: nothing fixed is as good for as little).
	r := frontierReport([]float64{0.001, 0.002, 0.004, 0.004, 0.0025}, []float64{0.3, 0.5, 0.8, 0.7, 0.8})
	r.setFrontier([]bool{false, false, false, false, true})
	for _, s := range r.Configs {
		require.NotNil(t, s.Frontier, s.Config)
		assert.Equal(t, CostUnitUSD, s.Frontier.Unit)
	}
	assert.True(t, r.Configs[0].Frontier.On)
	assert.True(t, r.Configs[1].Frontier.On)
	assert.True(t, r.Configs[2].Frontier.On)
	assert.False(t, r.Configs[3].Frontier.On)
	assert.Equal(t, []string{"react"}, r.Configs[3].Frontier.DominatedBy)
	assert.InDelta(t, 0.004, r.Configs[3].Frontier.Cost, 1e-12)
	ap := r.Configs[4].Frontier
	assert.True(t, ap.Adaptive)
	assert.True(t, ap.On, "react costs more; cot succeeds less")
	assert.Equal(t, "adaptive, on/above", frontierCell(r.Configs[4]))
	assert.Equal(t, "below: react", frontierCell(r.Configs[3]))
	assert.Equal(t, "on", frontierCell(r.Configs[0]))

	lines := r.frontierLines()
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], "direct, cot, react.")
	assert.Contains(t, lines[1], "Adaptive autopilot: success 0.800 at $0.0025/run, on or beyond")

	svg, err := r.frontierSVG()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(svg, "<svg"), svg[:min(len(svg), 40)])
	assert.Contains(t, svg, "cost per run ($/task)")
}

func TestAnAdaptiveConfigBelowTheFrontierNamesWhoBeatsIt(t *testing.T) {
	// The adaptive config costs as much as react and succeeds less; cot
	// is cheaper and as good: both beat it, cheapest first. It does not
	// itself push any fixed config off the frontier.
	r := frontierReport([]float64{0.001, 0.002, 0.004, 0.004}, []float64{0.3, 0.6, 0.8, 0.6})
	r.setFrontier([]bool{false, false, false, true})
	p := r.Configs[3].Frontier
	assert.False(t, p.On)
	assert.Equal(t, []string{"cot", "react"}, p.DominatedBy)
	assert.Equal(t, "adaptive, below: cot, react", frontierCell(r.Configs[3]))
	assert.True(t, r.Configs[1].Frontier.On)
	assert.Contains(t, r.frontierLines()[1], "below the frontier (beaten by cot, react)")
}

func TestFrontierFallsBackToTokensWhenARunIsUnpricedAndSkipsConfigsWithoutRuns(t *testing.T) {
	r := frontierReport([]float64{0.001, 0.002}, []float64{0.5, 0.5})
	r.Configs[1].CostUSD = 0 // unpriced
	r.Configs = append(r.Configs, ConfigSummary{Config: "never"})
	r.setFrontier(nil)
	assert.Equal(t, CostUnitTokens, r.Configs[0].Frontier.Unit)
	assert.InDelta(t, 100, r.Configs[0].Frontier.Cost, 1e-9, "1000 tokens over 10 runs")
	assert.True(t, r.Configs[0].Frontier.On)
	assert.Equal(t, []string{"direct"}, r.Configs[1].Frontier.DominatedBy, "same success, more tokens")
	assert.Nil(t, r.Configs[2].Frontier)
	assert.Equal(t, "-", frontierCell(r.Configs[2]))
}

func TestDominatesNeedsOneStrictImprovement(t *testing.T) {
	assert.False(t, dominates(0.5, 1, 0.5, 1), "equal points do not beat each other")
	assert.True(t, dominates(0.5, 1, 0.5, 2))
	assert.True(t, dominates(0.6, 1, 0.5, 1))
	assert.False(t, dominates(0.6, 2, 0.5, 1), "better but dearer")
	assert.False(t, dominates(0.5+1e-12, 1, 0.5, 1), "float noise is no improvement")
}

func TestBestFixedIsTheMostSuccessfulNonAdaptiveRowFewerTokensBreakingTies(t *testing.T) {
	rows := []Row{{Config: "direct"}, {Config: "react"}, {Config: "rewoo"}, {Config: "autopilot"}}
	var recs []Record
	add := func(cfg string, ok bool, tokens int) {
		recs = append(recs, Record{Config: cfg, Scored: true, Correct: ok, PromptTokens: tokens})
	}
	// direct 1/2; react 2/2 at 300 a run; rewoo 2/2 at 200; autopilot 2/2 at 10 but adaptive.
	add("direct", true, 10)
	add("direct", false, 10)
	add("react", true, 300)
	add("react", true, 300)
	add("rewoo", true, 200)
	add("rewoo", true, 200)
	add("autopilot", true, 10)
	add("autopilot", true, 10)
	assert.Equal(t, 2, bestFixed(recs, rows, []bool{false, false, false, true}))
	// Without rewoo's second run it has 1/1, as good a rate with fewer tokens.
	assert.Equal(t, 2, bestFixed(recs[:5], rows, []bool{false, false, false, true}))
	// With rewoo at 2/3, react (2/2) wins on the rate, whatever its tokens.
	recs = append(recs, Record{Config: "rewoo", Scored: true, Correct: false, PromptTokens: 1})
	assert.Equal(t, 1, bestFixed(recs, rows, []bool{false, false, false, true}))
	assert.Equal(t, 0, bestFixed(nil, rows, nil), "no runs: the first row")
}

func TestTheRouteOfARunIsTheLastAutopilotCandidateElseTheRoutersRoute(t *testing.T) {
	check := func(c string) trace.Event {
		return trace.Event{Kind: trace.KindDecision, Data: map[string]any{"autopilot": "check", "candidate": c, "pass": c == "react"}}
	}
	r := &routeCollector{}
	r.Emit(trace.Event{Kind: trace.KindDecision, Data: map[string]any{"route": "lookup"}})
	assert.Equal(t, "lookup", r.route())
	r.Emit(trace.Event{Kind: trace.KindDecision, Data: map[string]any{"autopilot": "plan", "candidate": "direct"}})
	assert.Equal(t, "lookup", r.route(), "a plan is no answer")
	r.Emit(check("direct"))
	r.Emit(check("react"))
	r.Emit(trace.Event{Kind: trace.KindDecision, Data: map[string]any{"route": "inside react"}})
	r.Emit(trace.Event{Kind: trace.KindAnswer, Data: map[string]any{"route": "x"}})
	assert.Equal(t, "react", r.route(), "the autopilot's last check wins over routes")
	assert.Empty(t, (&routeCollector{}).route())

	recs := []Record{{Route: "react"}, {Route: "direct"}, {Route: "react"}, {}}
	assert.Equal(t, map[string]int{"react": 2, "direct": 1}, routesOf(recs))
	assert.Nil(t, routesOf(recs[3:]))

	rep := frontierReport([]float64{0.001, 0.002}, []float64{0.5, 0.6})
	rep.Configs[1].Routes = routesOf(recs)
	rep.setFrontier([]bool{false, true})
	head, rows := rep.cells()
	i := slices.Index(head, "answered by")
	require.Positive(t, i, head)
	assert.Equal(t, "frontier", head[i-1])
	assert.Equal(t, "-", rows[0][i])
	assert.Equal(t, "direct:1 react:2", rows[1][i])
}
