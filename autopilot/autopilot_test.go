package autopilot_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/autopilot"
	"github.com/planner-engine/planner/tools/keyword"
	"github.com/planner-engine/planner/tools/search"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testPolicy has two candidates: cot, cheap (cost 1 per run) and right on
// half the tasks, and react, dear (cost 3) and right on three of four.
//
//	task   cot        react
//	pluto1 0/1 @1     1/1 @3
//	pluto2 0/1 @1     1/1 @3
//	jup    1/1 @1     1/1 @3
//	mars   1/1 @1     0/1 @3
//	all    2/4 @1     3/4 @3
func testPolicy() *autopilot.Policy {
	out := func(s int, cost float64) autopilot.Outcome {
		return autopilot.Outcome{Runs: 1, Successes: s, Cost: cost}
	}
	return &autopilot.Policy{
		Version: autopilot.Version, Sources: []string{"runs/a"}, Model: "sim:noisy", Simulated: true,
		CostUnit: autopilot.UnitKTokens, Neighbours: 8, PriorWeight: 2,
		Candidates: []autopilot.Candidate{
			{Name: "cot", Outcome: autopilot.Outcome{Runs: 4, Successes: 2, Cost: 1}},
			{Name: "react", Outcome: autopilot.Outcome{Runs: 4, Successes: 3, Cost: 3}},
		},
		Tasks: []autopilot.Task{
			{ID: "pluto1", Text: "In what year did Clyde Tombaugh discover Pluto?", Outcomes: map[string]autopilot.Outcome{"cot": out(0, 1), "react": out(1, 3)}},
			{ID: "pluto2", Text: "Who suggested the name Pluto for the new planet?", Outcomes: map[string]autopilot.Outcome{"cot": out(0, 1), "react": out(1, 3)}},
			{ID: "jup", Text: "What is the equatorial diameter of Jupiter in kilometres?", Outcomes: map[string]autopilot.Outcome{"cot": out(1, 1), "react": out(1, 3)}},
			{ID: "mars", Text: "How many moons does Mars have?", Outcomes: map[string]autopilot.Outcome{"cot": out(1, 1), "react": out(0, 3)}},
		},
	}
}

// fakeIndexer answers each query with fixed hits, so the pick's
// arithmetic is tested apart from BM25.
type fakeIndexer struct{ hits map[string][]keyword.Hit }

func (f fakeIndexer) Index(context.Context, []keyword.Document) (keyword.Index, error) {
	return fakeIndex(f), nil
}

type fakeIndex struct{ hits map[string][]keyword.Hit }

func (f fakeIndex) Search(_ context.Context, q string, k, _ int) ([]keyword.Hit, error) {
	h := f.hits[q]
	return h[:min(k, len(h))], nil
}

func (fakeIndex) Close() error { return nil }

func newFakeIndex(t *testing.T, p *autopilot.Policy) autopilot.Index {
	t.Helper()
	ix, err := autopilot.NewIndex(t.Context(), p, fakeIndexer{hits: map[string][]keyword.Hit{
		"pluto": {{ID: "pluto1", Score: 2}, {ID: "pluto2", Score: 1.5}},
	}})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, ix.Close()) })
	return ix
}

func weight(w float64) *float64 { return &w }

func estimates(c autopilot.Choice) map[string]autopilot.Estimate {
	out := map[string]autopilot.Estimate{}
	for _, e := range c.Estimates {
		out[e.Name] = e
	}
	return out
}

func TestPickSmoothsTheNeighboursWithTheOverallRates(t *testing.T) {
	t.Parallel()
	ix := newFakeIndex(t, testPolicy())

	// Neighbours pluto1 and pluto2, prior weight 2:
	//   cot:   success (0+0 + 2×0.5)/(2+2) = 0.25,  cost (1+1 + 2×1)/(2+2) = 1
	//   react: success (1+1 + 2×0.75)/(2+2) = 0.875, cost (3+3 + 2×3)/(2+2) = 3
	c, err := ix.Pick(t.Context(), "pluto", autopilot.PickOptions{})
	require.NoError(t, err)
	assert.Equal(t, "react", c.Candidate, "success only: 0.875 > 0.25")
	e := estimates(c)
	assert.InDelta(t, 0.25, e["cot"].Success, 1e-12)
	assert.InDelta(t, 1.0, e["cot"].Cost, 1e-12)
	assert.InDelta(t, 0.875, e["react"].Success, 1e-12)
	assert.InDelta(t, 3.0, e["react"].Cost, 1e-12)
	assert.Equal(t, 2, e["react"].Runs)
	assert.Equal(t, []string{"react", "cot"}, []string{c.Estimates[0].Name, c.Estimates[1].Name}, "best utility first")
	require.Len(t, c.Neighbours, 2)
	assert.Equal(t, "pluto1", c.Neighbours[0].ID)
	assert.InDelta(t, 2.0, c.Neighbours[0].Score, 1e-12)
	assert.Equal(t, autopilot.Outcome{Runs: 1, Successes: 1, Cost: 3}, c.Neighbours[0].Outcomes["react"])
	assert.True(t, c.Simulated)
	assert.Equal(t, autopilot.UnitKTokens, c.CostUnit)

	// Cost weight 0.5: cot 0.25 − 0.5×1 = −0.25 beats react 0.875 − 0.5×3 = −0.625.
	c, err = ix.Pick(t.Context(), "pluto", autopilot.PickOptions{CostWeight: weight(0.5)})
	require.NoError(t, err)
	assert.Equal(t, "cot", c.Candidate)
	assert.InDelta(t, -0.25, estimates(c)["cot"].Utility, 1e-12)
	assert.InDelta(t, -0.625, estimates(c)["react"].Utility, 1e-12)
	assert.InDelta(t, 0.5, c.CostWeight, 0)

	// One neighbour (pluto1):
	//   cot:   (0 + 2×0.5)/(1+2) = 1/3;  react: (1 + 2×0.75)/(1+2) = 2.5/3
	c, err = ix.Pick(t.Context(), "pluto", autopilot.PickOptions{Neighbours: 1})
	require.NoError(t, err)
	require.Len(t, c.Neighbours, 1)
	assert.InDelta(t, 1.0/3, estimates(c)["cot"].Success, 1e-12)
	assert.InDelta(t, 2.5/3, estimates(c)["react"].Success, 1e-12)
}

func TestPickBreaksATieForTheCheaperCandidate(t *testing.T) {
	t.Parallel()
	ix := newFakeIndex(t, testPolicy())
	// With w = 0.3125: cot 0.25 − 0.3125×1 = −0.0625 and react 0.875 − 0.3125×3 = −0.0625.
	c, err := ix.Pick(t.Context(), "pluto", autopilot.PickOptions{CostWeight: weight(0.3125)})
	require.NoError(t, err)
	e := estimates(c)
	require.InDelta(t, e["cot"].Utility, e["react"].Utility, 1e-12, "a tie")
	assert.Equal(t, "cot", c.Candidate, "the tie goes to the cheaper, first in the policy")
	assert.Equal(t, "cot", c.Estimates[0].Name)
}

func TestPickWithoutNeighboursUsesTheOverallRates(t *testing.T) {
	t.Parallel()
	ix := newFakeIndex(t, testPolicy())
	for _, text := range []string{"nothing in common", "", "  "} {
		c, err := ix.Pick(t.Context(), text, autopilot.PickOptions{})
		require.NoError(t, err)
		assert.Empty(t, c.Neighbours)
		e := estimates(c)
		assert.InDelta(t, 0.5, e["cot"].Success, 1e-12, "2/4")
		assert.InDelta(t, 0.75, e["react"].Success, 1e-12, "3/4")
		assert.InDelta(t, 3.0, e["react"].Cost, 1e-12)
		assert.Zero(t, e["react"].Runs)
		assert.Equal(t, "react", c.Candidate)
	}
	// Prior weight 0 and no neighbour: the overall figures still decide.
	p := testPolicy()
	p.PriorWeight = 0
	c, err := newFakeIndex(t, p).Pick(t.Context(), "nothing", autopilot.PickOptions{CostWeight: weight(1)})
	require.NoError(t, err)
	assert.InDelta(t, 0.5-1, estimates(c)["cot"].Utility, 1e-12)
	assert.Equal(t, "cot", c.Candidate, "0.5 − 1 beats 0.75 − 3")
}

func TestPickAmongTheAvailableCandidates(t *testing.T) {
	t.Parallel()
	ix := newFakeIndex(t, testPolicy())
	c, err := ix.Pick(t.Context(), "pluto", autopilot.PickOptions{Available: []string{"cot", "tot"}})
	require.NoError(t, err)
	assert.Equal(t, "cot", c.Candidate, "react is not offered; tot is unknown and ignored")
	require.Len(t, c.Estimates, 1)

	for _, avail := range [][]string{{"tot", "lats"}, {}} {
		_, err = ix.Pick(t.Context(), "pluto", autopilot.PickOptions{Available: avail})
		require.ErrorIs(t, err, autopilot.ErrNoCandidates)
		assert.Contains(t, err.Error(), `it knows "cot", "react"`)
	}
	_, err = ix.Pick(t.Context(), "pluto", autopilot.PickOptions{CostWeight: weight(-1)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cost weight -1")
}

func TestPickFindsNeighboursByBM25(t *testing.T) {
	t.Parallel()
	ix, err := autopilot.NewIndex(t.Context(), testPolicy(), search.Keywords{})
	require.NoError(t, err)
	defer ix.Close()

	c, err := ix.Pick(t.Context(), "When did Tombaugh discover Pluto?", autopilot.PickOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, c.Neighbours)
	assert.Equal(t, "pluto1", c.Neighbours[0].ID, "shares tombaugh, discover and pluto")
	for i, n := range c.Neighbours {
		assert.Positive(t, n.Score, n.ID)
		if i > 0 {
			assert.LessOrEqual(t, n.Score, c.Neighbours[i-1].Score, "most similar first")
		}
		assert.NotEqual(t, "jup", n.ID, "shares no word")
	}

	c, err = ix.Pick(t.Context(), "zebra xylophone", autopilot.PickOptions{})
	require.NoError(t, err)
	assert.Empty(t, c.Neighbours)

	// The task ids are not indexed: "jup" is no word of any text.
	c, err = ix.Pick(t.Context(), "jup", autopilot.PickOptions{})
	require.NoError(t, err)
	assert.Empty(t, c.Neighbours)
}

func TestNewIndexRefusesABadPolicy(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	p.Tasks = nil
	_, err := autopilot.NewIndex(t.Context(), p, search.Keywords{})
	require.ErrorIs(t, err, autopilot.ErrBadPolicy)
	_, err = autopilot.NewIndex(t.Context(), testPolicy(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "search.Keywords")
}

func TestWriteThenLoadGivesThePolicyBack(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	var b1, b2 bytes.Buffer
	require.NoError(t, p.Write(&b1))
	require.NoError(t, p.Write(&b2))
	assert.Equal(t, b1.String(), b2.String(), "the same bytes every time")
	assert.True(t, strings.HasPrefix(b1.String(), "{\n  \"version\": 1,\n"), "indented:\n%s", b1.String())
	assert.Less(t, strings.Index(b1.String(), `"cot": {`), strings.Index(b1.String(), `"react": {`), "outcomes sorted by name")

	path := filepath.Join(t.TempDir(), "policy.json")
	require.NoError(t, os.WriteFile(path, b1.Bytes(), 0o600))
	got, err := autopilot.Load(path)
	require.NoError(t, err)
	assert.Equal(t, p, got)
}

func TestReadFillsInTheDefaults(t *testing.T) {
	t.Parallel()
	const base = `{"version":1,"sources":[],"cost_unit":"usd","cost_weight":0,
		"candidates":[{"name":"a","runs":1,"successes":1,"cost":0.5}],
		"tasks":[{"id":"t","text":"a question","outcomes":{"a":{"runs":1,"successes":1,"cost":0.5}}}]`
	p, err := autopilot.Read(strings.NewReader(base + "}"))
	require.NoError(t, err)
	assert.Equal(t, autopilot.DefaultNeighbours, p.Neighbours)
	assert.InDelta(t, autopilot.DefaultPriorWeight, p.PriorWeight, 0)

	p, err = autopilot.Read(strings.NewReader(base + `,"prior_weight":0,"neighbours":3}`))
	require.NoError(t, err)
	assert.Zero(t, p.PriorWeight, "an explicit 0 turns the prior off")
	assert.Equal(t, 3, p.Neighbours)
}

func TestReadRefusesBadFiles(t *testing.T) {
	t.Parallel()
	good := func(edit func(p *autopilot.Policy)) string {
		p := testPolicy()
		edit(p)
		var b bytes.Buffer
		require.NoError(t, p.Write(&b))
		return b.String()
	}
	tests := []struct {
		name, file, want string
	}{
		{"empty", "  \n", "the file is empty (refit it with planner autopilot fit)"},
		{"not JSON", "policy: yes", "not a policy file"},
		{"unknown field", `{"version":1,"costweight":1}`, `unknown field "costweight"`},
		{"two values", good(func(*autopilot.Policy) {}) + "{}", "more than one JSON value"},
		{"newer version", good(func(p *autopilot.Policy) { p.Version = 2 }), "version 2: this planner reads version 1 (refit it with planner autopilot fit)"},
		{"cost unit", good(func(p *autopilot.Policy) { p.CostUnit = "eur" }), `cost_unit "eur": want "usd" or "ktokens"`},
		{"negative cost weight", good(func(p *autopilot.Policy) { p.CostWeight = -1 }), "cost_weight -1"},
		{"negative neighbours", good(func(p *autopilot.Policy) { p.Neighbours = -2 }), "neighbours -2: want 1 or more"},
		{"negative prior", good(func(p *autopilot.Policy) { p.PriorWeight = -1 }), "prior_weight -1"},
		{"no candidates", good(func(p *autopilot.Policy) { p.Candidates = nil; p.Tasks = p.Tasks[:0] }), "no candidates"},
		{"twice the same candidate", good(func(p *autopilot.Policy) { p.Candidates[1].Name = "cot" }), `candidate "cot" is listed twice`},
		{"a nameless candidate", good(func(p *autopilot.Policy) { p.Candidates[0].Name = "" }), "candidate 1 has no name"},
		{"more successes than runs", good(func(p *autopilot.Policy) { p.Candidates[0].Successes = 9 }), `candidate "cot": 9 successes out of 4 runs`},
		{"no tasks", good(func(p *autopilot.Policy) { p.Tasks = nil }), "no tasks"},
		{"a task without text", good(func(p *autopilot.Policy) { p.Tasks[2].Text = "" }), "task jup has no text"},
		{"a task without id", good(func(p *autopilot.Policy) { p.Tasks[2].ID = "" }), "task 3 has no id"},
		{"twice the same task", good(func(p *autopilot.Policy) { p.Tasks[1].ID = "pluto1" }), `task "pluto1" is listed twice`},
		{"an unknown candidate's outcome", good(func(p *autopilot.Policy) {
			p.Tasks[0].Outcomes["tot"] = autopilot.Outcome{Runs: 1}
		}), `task pluto1 has an outcome for "tot", which is not a candidate`},
		{"a negative cost", good(func(p *autopilot.Policy) {
			p.Tasks[0].Outcomes["cot"] = autopilot.Outcome{Runs: 1, Cost: -1}
		}), `task pluto1, candidate "cot": cost -1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := autopilot.Read(strings.NewReader(tt.file))
			require.ErrorIs(t, err, autopilot.ErrBadPolicy)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := autopilot.Load(filepath.Join(dir, "missing.json"))
	require.ErrorIs(t, err, autopilot.ErrBadPolicy)
	assert.Contains(t, err.Error(), "missing.json")

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"version":7}`), 0o600))
	_, err = autopilot.Load(bad)
	require.ErrorIs(t, err, autopilot.ErrBadPolicy)
	assert.Contains(t, err.Error(), bad+": ")
	assert.Contains(t, err.Error(), "version 7")
}

func TestExplainShowsTheEstimatesAndTheNeighbours(t *testing.T) {
	t.Parallel()
	c, err := newFakeIndex(t, testPolicy()).Pick(t.Context(), "pluto", autopilot.PickOptions{})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, c.Explain(&b))
	out := b.String()
	assert.True(t, strings.HasPrefix(out, "SIMULATED: this policy was fitted on runs of the offline simulator (sim:noisy)"), out)
	assert.Contains(t, out, "chosen: react\n")
	assert.Contains(t, out, "+ 2 × overall rate) / (neighbours' runs + 2)")
	assert.Regexp(t, `(?m)^candidate\s+success\s+cost \(ktokens\)\s+utility\s+runs`, out)
	assert.Regexp(t, `(?m)^react\s+0\.875\s+3\s+0\.8750\s+2\s+<- chosen$`, out)
	assert.Regexp(t, `(?m)^cot\s+0\.250\s+1\s+0\.2500\s+2\s*$`, out)
	assert.Regexp(t, `(?m)^1\s+pluto1\s+2\.000\s+1/1, 3\s+0/1, 1\s+In what year did Clyde Tombaugh discover Pluto\?`, out)

	c, err = newFakeIndex(t, testPolicy()).Pick(t.Context(), "zebra", autopilot.PickOptions{})
	require.NoError(t, err)
	c.Simulated = false
	b.Reset()
	require.NoError(t, c.Explain(&b))
	assert.NotContains(t, b.String(), "SIMULATED")
	assert.Contains(t, b.String(), "neighbours: none")
}

func TestPickDropsNeighboursFarBelowTheBestOne(t *testing.T) {
	t.Parallel()
	hits := fakeIndexer{hits: map[string][]keyword.Hit{
		"q": {{ID: "pluto1", Score: 4}, {ID: "pluto2", Score: 3}, {ID: "jup", Score: 1.9}, {ID: "mars", Score: 1}},
	}}
	pick := func(relevance float64) autopilot.Choice {
		p := testPolicy()
		p.Relevance = relevance
		ix, err := autopilot.NewIndex(t.Context(), p, hits)
		require.NoError(t, err)
		c, err := ix.Pick(t.Context(), "q", autopilot.PickOptions{})
		require.NoError(t, err)
		return c
	}
	// Relevance 0.5: 1.9 and 1 are below half of 4, so only the Pluto
	// tasks count: cot (0 + 2 × 0.5) / (2 + 2) = 0.25.
	c := pick(0.5)
	require.Len(t, c.Neighbours, 2)
	assert.Equal(t, "pluto2", c.Neighbours[1].ID)
	assert.InDelta(t, 0.25, estimates(c)["cot"].Success, 1e-12)
	assert.InDelta(t, 0.5, c.Relevance, 0)
	// Relevance 0 keeps all four: cot (2 + 1) / (4 + 2) = 0.5.
	c = pick(0)
	require.Len(t, c.Neighbours, 4)
	assert.InDelta(t, 0.5, estimates(c)["cot"].Success, 1e-12)

	p := testPolicy()
	p.Relevance = 1.5
	require.ErrorIs(t, p.Validate(), autopilot.ErrBadPolicy)
	assert.ErrorContains(t, p.Validate(), "relevance 1.5")
}
