package autopilot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Defaults of a policy's settings.
const (
	// DefaultNeighbours is how many similar past tasks a pick reads when
	// the policy does not say.
	DefaultNeighbours = 8
	// DefaultPriorWeight is the prior's strength, in runs, when the
	// policy file does not say.
	DefaultPriorWeight = 2.0
	// DefaultRelevance is the fraction of the best neighbour's score below
	// which a neighbour is dropped, when the policy file does not say.
	DefaultRelevance = 0.25
)

// Cost units.
const (
	// UnitUSD counts dollars per run.
	UnitUSD = "usd"
	// UnitKTokens counts thousands of tokens (prompt and completion) per
	// run.
	UnitKTokens = "ktokens"
)

// refit is the fix most errors about a policy file name.
const refit = "refit it with planner autopilot fit"

// Load reads and checks the policy file at path (see Read).
func Load(path string) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w (give the file planner autopilot fit wrote with -o)", ErrBadPolicy, err)
	}
	defer f.Close()
	p, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Read decodes a policy from r, fills in the defaults of the settings the
// file leaves out (neighbours: DefaultNeighbours; prior_weight:
// DefaultPriorWeight) and checks it (Validate). Unknown fields are an
// error, so a misspelt setting is not silently ignored. Every error wraps
// ErrBadPolicy.
func Read(r io.Reader) (*Policy, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: reading: %w", ErrBadPolicy, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: the file is empty (%s)", ErrBadPolicy, refit)
	}
	// prior_weight 0 is a valid setting (no smoothing): a pointer tells it
	// from a file that leaves it out.
	var file struct {
		Policy
		PriorWeight *float64 `json:"prior_weight"`
		Relevance   *float64 `json:"relevance"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("%w: not a policy file: %w (%s)", ErrBadPolicy, err, refit)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: more than one JSON value in the file (%s)", ErrBadPolicy, refit)
	}
	p := file.Policy
	p.PriorWeight = DefaultPriorWeight
	if file.PriorWeight != nil {
		p.PriorWeight = *file.PriorWeight
	}
	p.Relevance = DefaultRelevance
	if file.Relevance != nil {
		p.Relevance = *file.Relevance
	}
	if p.Neighbours == 0 {
		p.Neighbours = DefaultNeighbours
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Write encodes p as indented JSON, fields in a fixed order and outcomes
// sorted by candidate name, so the same policy always gives the same
// bytes.
func (p *Policy) Write(w io.Writer) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("autopilot: encoding the policy: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("autopilot: writing the policy: %w", err)
	}
	return nil
}

// Validate checks that p is a policy this package can apply: its version,
// its cost unit, settings that are finite and not negative (Neighbours 0
// means DefaultNeighbours), named and distinct candidates, tasks with an
// id, a text and outcomes for known candidates only, and outcomes with no
// more successes than runs. The error wraps ErrBadPolicy and says what is
// wrong and how to fix it; it joins every problem found.
func (p *Policy) Validate() error {
	if p == nil {
		return fmt.Errorf("%w: no policy", ErrBadPolicy)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	if p.Version != Version {
		bad("version %d: this planner reads version %d (%s)", p.Version, Version, refit)
	}
	if p.CostUnit != UnitUSD && p.CostUnit != UnitKTokens {
		bad("cost_unit %q: want %q or %q (%s)", p.CostUnit, UnitUSD, UnitKTokens, refit)
	}
	if !finite(p.CostWeight) || p.CostWeight < 0 {
		bad("cost_weight %v: want a number of 0 or more (0: success only)", p.CostWeight)
	}
	if p.Neighbours < 0 {
		bad("neighbours %d: want 1 or more (0 or left out: %d)", p.Neighbours, DefaultNeighbours)
	}
	if !finite(p.Relevance) || p.Relevance < 0 || p.Relevance > 1 {
		bad("relevance %v: want a fraction from 0 (keep every neighbour) to 1 (left out: %v)", p.Relevance, DefaultRelevance)
	}
	if !finite(p.PriorWeight) || p.PriorWeight < 0 {
		bad("prior_weight %v: want a number of 0 or more (left out: %v)", p.PriorWeight, DefaultPriorWeight)
	}
	known := make(map[string]bool, len(p.Candidates))
	if len(p.Candidates) == 0 {
		bad("no candidates (%s on a comparison of at least one config)", refit)
	}
	for i, c := range p.Candidates {
		switch {
		case c.Name == "":
			bad("candidate %d has no name (%s)", i+1, refit)
		case known[c.Name]:
			bad("candidate %q is listed twice (%s)", c.Name, refit)
		}
		known[c.Name] = true
		if err := c.Outcome.check(); err != nil {
			bad("candidate %q: %w (%s)", c.Name, err, refit)
		}
	}
	if len(p.Tasks) == 0 {
		bad("no tasks (%s on a comparison with runs)", refit)
	}
	ids := make(map[string]bool, len(p.Tasks))
	for i, t := range p.Tasks {
		name := t.ID
		switch {
		case t.ID == "":
			name = fmt.Sprintf("%d", i+1)
			bad("task %d has no id (%s)", i+1, refit)
		case ids[t.ID]:
			bad("task %q is listed twice (%s)", t.ID, refit)
		}
		ids[t.ID] = true
		if t.Text == "" {
			bad("task %s has no text: neighbours are found by it (%s with the suite, --suite)", name, refit)
		}
		for c, o := range t.Outcomes {
			if !known[c] {
				bad("task %s has an outcome for %q, which is not a candidate (%s)", name, c, refit)
			}
			if err := o.check(); err != nil {
				bad("task %s, candidate %q: %w (%s)", name, c, err, refit)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrBadPolicy, errors.Join(errs...))
	}
	return nil
}

// check reports an outcome that cannot be.
func (o Outcome) check() error {
	switch {
	case o.Runs < 0 || o.Successes < 0:
		return fmt.Errorf("negative counts (%d runs, %d successes)", o.Runs, o.Successes)
	case o.Successes > o.Runs:
		return fmt.Errorf("%d successes out of %d runs", o.Successes, o.Runs)
	case !finite(o.Cost) || o.Cost < 0:
		return fmt.Errorf("cost %v: want a number of 0 or more", o.Cost)
	}
	return nil
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
