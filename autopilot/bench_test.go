package autopilot_test

import (
	"fmt"
	"testing"

	"github.com/planner-engine/planner/autopilot"
	"github.com/planner-engine/planner/tools/search"
	"github.com/stretchr/testify/require"
)

// BenchmarkPick is one learned pick over a policy of 2,000 past tasks and
// 7 candidates: the BM25 neighbour search and the estimates. Every query
// differs, so no query cache answers it.
func BenchmarkPick(b *testing.B) {
	words := []string{"Pluto", "Jupiter", "muffins", "marbles", "train", "capital", "diameter", "discovered", "telescope", "orbit",
		"boxes", "kilometres", "hours", "puzzle", "numbers", "author", "moon", "launched", "rows", "dollars"}
	names := []string{"direct", "cot", "cot_sc", "tot", "rewoo", "react", "plan_execute"}
	p := &autopilot.Policy{Version: autopilot.Version, CostUnit: autopilot.UnitKTokens, Neighbours: 8, PriorWeight: 2, Relevance: 0.25}
	for i, n := range names {
		p.Candidates = append(p.Candidates, autopilot.Candidate{Name: n, Outcome: autopilot.Outcome{Runs: 2000, Successes: 1000 + 100*i, Cost: float64(i + 1)}})
	}
	for i := range 2000 {
		out := map[string]autopilot.Outcome{}
		for j, n := range names {
			out[n] = autopilot.Outcome{Runs: 1, Successes: (i + j) % 2, Cost: float64(j + 1)}
		}
		text := fmt.Sprintf("What about the %s and the %s of %s, number %d?", words[i%20], words[(i/20)%20], words[(i*7)%20], i)
		p.Tasks = append(p.Tasks, autopilot.Task{ID: fmt.Sprintf("t%d", i), Text: text, Outcomes: out})
	}
	ix, err := autopilot.NewIndex(b.Context(), p, search.Keywords{})
	require.NoError(b, err)
	defer ix.Close()
	c, err := ix.Pick(b.Context(), "How far did the train travel in Pluto hours?", autopilot.PickOptions{})
	require.NoError(b, err)
	require.NotEmpty(b, c.Neighbours, "the benchmark's queries find neighbours")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := ix.Pick(b.Context(), fmt.Sprintf("How far did the train travel in %s hours, number %d?", words[i%20], i), autopilot.PickOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
