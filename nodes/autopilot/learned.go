package autopilot

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/planner-engine/planner/autopilot"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
)

// policy is a loaded policy file.
type policy struct {
	file string
	// order is the node's candidates in the policy's cost order, those it
	// does not know last, in their declared order.
	order   []string
	known   []string // the node's candidates the policy knows
	learned bool
	idx     autopilot.Index // set when learned
	weight  *float64
}

// loadPolicy loads s.PolicyFile for the candidates names.
func loadPolicy(env nodekind.Env, s Settings, names []string) (*policy, error) {
	path := s.PolicyFile
	if !filepath.IsAbs(path) && env.BaseDir != "" {
		path = filepath.Join(env.BaseDir, path)
	}
	p, err := autopilot.Load(path)
	if err != nil {
		return nil, &config.SettingError{Key: "policy_file", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
	}
	pol := &policy{file: s.PolicyFile, learned: s.Policy == PolicyLearned, weight: s.CostWeight}
	for _, c := range p.Candidates {
		if slices.Contains(names, c.Name) {
			pol.known = append(pol.known, c.Name)
		}
	}
	if len(pol.known) == 0 {
		return nil, config.SettingErrorf("policy_file", "the policy %s knows none of the candidates: it knows %s, the node has %s; "+
			"name the candidates as the configs the policy was fitted on (name:), or refit it on a comparison of these configs",
			s.PolicyFile, strings.Join(p.CandidateNames(), ", "), strings.Join(names, ", "))
	}
	pol.order = slices.Clone(pol.known)
	for _, name := range names {
		if !slices.Contains(pol.order, name) {
			pol.order = append(pol.order, name)
		}
	}
	if pol.learned {
		if pol.idx, err = autopilot.NewIndex(context.Background(), p, env.Keywords); err != nil {
			return nil, &config.SettingError{Key: "policy_file", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
		}
	}
	return pol, nil
}

// livePlan plans the candidates' order for question q: the declared
// order, the policy's cost order, or the learned pick first and then
// the cost order. A pick that fails for another reason than ctx's end
// falls back to the cost order, noted in the plan.
func (n *Node) livePlan(ctx context.Context, q string) (plan, error) {
	if n.pol == nil {
		return plan{Policy: PolicyCascade, Order: n.Candidates()}, nil
	}
	order := slices.Clone(n.pol.order)
	if !n.pol.learned {
		return plan{Policy: PolicyCascade, Order: order, PolicyFile: n.pol.file}, nil
	}
	ch, err := n.pol.idx.Pick(ctx, q, autopilot.PickOptions{Available: n.pol.known, CostWeight: n.pol.weight})
	if err != nil {
		if ctx.Err() != nil {
			return plan{}, context.Cause(ctx)
		}
		return plan{Policy: PolicyLearned, Order: order, PolicyFile: n.pol.file,
			Note: fmt.Sprintf("the pick failed (%s); cascading in cost order", clipLine(err.Error(), 200))}, nil
	}
	if _, ok := n.byName[ch.Candidate]; !ok {
		return plan{Policy: PolicyLearned, Order: order, PolicyFile: n.pol.file,
			Note: fmt.Sprintf("the policy picked %q, which is no candidate; cascading in cost order", ch.Candidate)}, nil
	}
	out := []string{ch.Candidate}
	for _, name := range order {
		if name != ch.Candidate {
			out = append(out, name)
		}
	}
	return plan{Policy: PolicyLearned, Order: out, PolicyFile: n.pol.file, Pick: &ch}, nil
}

// Close releases the learned policy's search index; the pipeline calls it
// from its own Close (nodes that implement io.Closer), once its runs have
// ended. A pick after Close fails, and the run cascades in cost order.
func (n *Node) Close() error {
	if n.pol == nil || n.pol.idx == nil {
		return nil
	}
	return n.pol.idx.Close()
}
