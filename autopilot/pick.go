package autopilot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/planner-engine/planner/tools/keyword"
)

// tieTolerance is how close two utilities must be to count as a tie, so
// that rounding in sums that are equal on paper does not decide a pick.
const tieTolerance = 1e-12

// NewIndex checks p (Validate) and indexes its tasks' texts with ix for
// neighbour search. The policy must not change while the index is in use.
// Close the index when done.
//
// Neighbours are found by the keyword index's ranking (BM25 with
// search.Keywords); each task's text is both the title and the body of
// its document, so nothing but the text (not the task id) is matched.
// Embeddings are not used: a policy is meant to be fitted and applied
// offline, without an embedding model.
func NewIndex(ctx context.Context, p *Policy, ix keyword.Indexer) (Index, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if ix == nil {
		return nil, errors.New("autopilot: no keyword indexer (pass search.Keywords{})")
	}
	docs := make([]keyword.Document, len(p.Tasks))
	byID := make(map[string]*Task, len(p.Tasks))
	for i := range p.Tasks {
		t := &p.Tasks[i]
		docs[i] = keyword.Document{ID: t.ID, Title: t.Text, Text: t.Text}
		byID[t.ID] = t
	}
	kx, err := ix.Index(ctx, docs)
	if err != nil {
		return nil, fmt.Errorf("autopilot: indexing the policy's %d tasks: %w", len(docs), err)
	}
	return &index{p: p, kx: kx, byID: byID}, nil
}

// index is NewIndex's Index.
type index struct {
	p    *Policy
	kx   keyword.Index
	byID map[string]*Task
}

// Close implements Index.
func (x *index) Close() error { return x.kx.Close() }

// Pick implements Index. For each available candidate c it reads the
// top-k neighbours n of text (k: o.Neighbours, else the policy's) and
// estimates, with the prior weight P and c's rate r and cost m over all
// the policy's tasks:
//
//	success = (Σn successes(n,c) + P·r) / (Σn runs(n,c) + P)
//	cost    = (Σn runs(n,c)·cost(n,c) + P·m) / (Σn runs(n,c) + P)
//	utility = success − cost_weight·cost
//
// (r and m alone when the neighbours hold no run of c and P is 0). Of the
// top k, the neighbours scoring below the policy's Relevance times the
// best one's score are dropped: a puzzle with three close matches is
// judged by them, not by five word problems that share "each". The kept
// neighbours count alike: BM25 scores are not calibrated, and the prior
// keeps a few neighbours' runs from deciding alone. The
// best utility wins; a tie goes to the candidate listed first in the
// policy, which is the cheaper one. A text that shares no word with any
// past task gets no neighbours, so the candidates' overall figures decide.
func (x *index) Pick(ctx context.Context, text string, o PickOptions) (Choice, error) {
	p := x.p
	cands, err := p.available(o.Available)
	if err != nil {
		return Choice{}, err
	}
	w := p.CostWeight
	if o.CostWeight != nil {
		w = *o.CostWeight
	}
	if !finite(w) || w < 0 {
		return Choice{}, fmt.Errorf("autopilot: cost weight %v: want a number of 0 or more", w)
	}
	k := p.Neighbours
	if o.Neighbours > 0 {
		k = o.Neighbours
	}
	if k <= 0 {
		k = DefaultNeighbours
	}
	var neighbours []Neighbour
	if strings.TrimSpace(text) != "" {
		hits, err := x.kx.Search(ctx, text, k, 0)
		if err != nil {
			return Choice{}, fmt.Errorf("autopilot: finding the tasks like this one: %w", err)
		}
		for _, h := range hits {
			t, ok := x.byID[h.ID]
			if !ok {
				continue // cannot happen: the index holds the policy's tasks only
			}
			if len(neighbours) > 0 && h.Score < p.Relevance*neighbours[0].Score {
				break // hits come best first
			}
			neighbours = append(neighbours, Neighbour{ID: t.ID, Text: t.Text, Score: h.Score, Outcomes: t.Outcomes})
		}
	}
	ests := make([]Estimate, len(cands))
	for i, c := range cands {
		ests[i] = estimate(c, neighbours, p.PriorWeight, w)
	}
	// Stable: equal utilities keep the policy's order, cheapest first.
	slices.SortStableFunc(ests, func(a, b Estimate) int {
		if a.Utility > b.Utility+tieTolerance || a.Utility < b.Utility-tieTolerance {
			return cmp.Compare(b.Utility, a.Utility)
		}
		return 0
	})
	return Choice{
		Candidate: ests[0].Name, Estimates: ests, Neighbours: neighbours, CostWeight: w,
		PriorWeight: p.PriorWeight, Relevance: p.Relevance, CostUnit: p.CostUnit, Model: p.Model, Simulated: p.Simulated,
	}, nil
}

// estimate is c's Estimate over the neighbours (see Pick).
func estimate(c Candidate, neighbours []Neighbour, prior, costWeight float64) Estimate {
	var runs, succ int
	var cost float64
	for _, n := range neighbours {
		o := n.Outcomes[c.Name]
		runs += o.Runs
		succ += o.Successes
		cost += float64(o.Runs) * o.Cost
	}
	e := Estimate{Name: c.Name, Runs: runs, Success: c.Rate(), Cost: c.Cost}
	if den := float64(runs) + prior; den > 0 {
		e.Success = (float64(succ) + prior*c.Rate()) / den
		e.Cost = (cost + prior*c.Cost) / den
	}
	e.Utility = e.Success - costWeight*e.Cost
	return e
}

// available returns the policy's candidates named in names, in the
// policy's order; all of them for nil names. Names the policy does not
// know are left out; ErrNoCandidates when none is left.
func (p *Policy) available(names []string) ([]Candidate, error) {
	if names == nil {
		return p.Candidates, nil
	}
	var out []Candidate
	for _, c := range p.Candidates {
		if slices.Contains(names, c.Name) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: it knows %s, the pick may choose from %s (refit the policy on a comparison of these configs, or offer one it knows)",
			ErrNoCandidates, quoteList(p.CandidateNames()), quoteList(names))
	}
	return out, nil
}

// CandidateNames returns the names of p's candidates, cheapest first.
func (p *Policy) CandidateNames() []string {
	out := make([]string, len(p.Candidates))
	for i, c := range p.Candidates {
		out[i] = c.Name
	}
	return out
}

// quoteList writes names as "a", "b"; "none" for no names.
func quoteList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
