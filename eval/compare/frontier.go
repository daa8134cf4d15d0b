package compare

import (
	"cmp"
	"fmt"
	"image/color"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// AdaptiveKinds are the node kinds that choose, task by task, what runs: a
// pipeline with one of them is an adaptive config, drawn against the
// frontier of the fixed ones rather than on it.
func AdaptiveKinds() []string { return []string{"autopilot", "router"} }

// adaptive reports whether a pipeline whose nodes have kinds (by node id)
// chooses per task.
func adaptive(kinds map[string]string) bool {
	for _, k := range kinds {
		if slices.Contains(AdaptiveKinds(), k) {
			return true
		}
	}
	return false
}

// BaselineBest is the Options.Baseline (--baseline best) that compares
// every config with the best fixed one: the highest success rate, the
// fewer tokens per run breaking a tie.
const BaselineBest = "best"

// bestFixed returns the index of the row that BaselineBest names among
// records: the non-adaptive row with the highest success rate over its
// runs, the fewer tokens per run breaking a tie, the earlier row a full
// tie; 0 when no fixed row has runs.
func bestFixed(records []Record, rows []Row, adaptives []bool) int {
	type tally struct{ runs, ok, tokens int }
	t := make([]tally, len(rows))
	for _, r := range records {
		for i, row := range rows {
			if row.matches(r) {
				t[i].runs++
				t[i].tokens += r.PromptTokens + r.CompletionTokens
				if Succeeded(r) {
					t[i].ok++
				}
				break
			}
		}
	}
	best := -1
	for i, x := range t {
		if x.runs == 0 || (i < len(adaptives) && adaptives[i]) {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := t[best]
		// Compare ok/runs with cross products, exactly.
		lhs, rhs := x.ok*b.runs, b.ok*x.runs
		if lhs > rhs || (lhs == rhs && x.tokens*b.runs < b.tokens*x.runs) {
			best = i
		}
	}
	return max(best, 0)
}

// Cost units of FrontierPoint.
const (
	// CostUnitUSD is dollars per task, when every config's runs were priced.
	CostUnitUSD = "$/task"
	// CostUnitTokens is tokens per task, when some config's were not.
	CostUnitTokens = "tokens/task"
)

// FrontierPoint places a config on the cost/accuracy plane against the
// fixed configs' Pareto frontier: the fixed configs that no other fixed
// config beats, that is none has a success rate at least as high at a cost
// no higher, one of the two strictly.
type FrontierPoint struct {
	// Cost is the config's mean cost per run, in Unit.
	Cost float64 `json:"cost"`
	// Unit is CostUnitUSD or CostUnitTokens, the same for every config.
	Unit string `json:"unit"`
	// Adaptive is true for a config that chooses per task (a pipeline with
	// an autopilot or router node; AdaptiveKinds).
	Adaptive bool `json:"adaptive,omitempty"`
	// On is true when no fixed config beats this one: a fixed config on
	// the frontier, or an adaptive one on or beyond it.
	On bool `json:"on"`
	// DominatedBy names the fixed configs that beat this one, cheapest
	// first; empty when On.
	DominatedBy []string `json:"dominated_by,omitempty"`
}

// setFrontier places every config of r against the frontier of its fixed
// configs (FrontierPoint); adaptive[i] says whether config i chooses per
// task. Configs without runs are left out.
func (r *Report) setFrontier(adaptive []bool) {
	unit := CostUnitUSD
	for _, s := range r.Configs {
		if s.Runs > 0 && s.CostUSD <= 0 {
			unit = CostUnitTokens
		}
	}
	for i := range r.Configs {
		s := &r.Configs[i]
		if s.Runs == 0 {
			s.Frontier = nil
			continue
		}
		cost := s.meanFloat(s.CostUSD)
		if unit == CostUnitTokens {
			cost = s.MeanTokens()
		}
		s.Frontier = &FrontierPoint{Cost: cost, Unit: unit, Adaptive: i < len(adaptive) && adaptive[i]}
	}
	for i := range r.Configs {
		p := r.Configs[i].Frontier
		if p == nil {
			continue
		}
		type beat struct {
			name string
			cost float64
		}
		var by []beat
		for j, o := range r.Configs {
			q := o.Frontier
			if j == i || q == nil || q.Adaptive {
				continue
			}
			if dominates(o.SuccessRate, q.Cost, r.Configs[i].SuccessRate, p.Cost) {
				by = append(by, beat{o.name(), q.Cost})
			}
		}
		slices.SortStableFunc(by, func(a, b beat) int { return cmp.Compare(a.cost, b.cost) })
		p.On = len(by) == 0
		for _, b := range by {
			p.DominatedBy = append(p.DominatedBy, b.name)
		}
	}
}

// dominates reports whether success rate s1 at cost c1 beats s2 at c2: at
// least as good on both and strictly better on one. Rates closer than
// half a run in a million count as equal, so that sums of floats do not
// decide.
func dominates(s1, c1, s2, c2 float64) bool {
	const eps = 1e-9
	ge := s1 >= s2-eps && c1 <= c2*(1+eps)+eps
	gt := s1 > s2+eps || c1 < c2*(1-eps)-eps
	return ge && gt
}

// frontierCell is the frontier column's cell.
func frontierCell(s ConfigSummary) string {
	p := s.Frontier
	switch {
	case p == nil:
		return "-"
	case p.On && p.Adaptive:
		return "adaptive, on/above"
	case p.On:
		return "on"
	}
	prefix := "below: "
	if p.Adaptive {
		prefix = "adaptive, below: "
	}
	by := p.DominatedBy
	if len(by) > 3 {
		by = append(slices.Clone(by[:3]), fmt.Sprintf("+%d", len(p.DominatedBy)-3))
	}
	return prefix + strings.Join(by, ", ")
}

// hasFrontier reports whether some config has a frontier point.
func (r *Report) hasFrontier() bool {
	for _, s := range r.Configs {
		if s.Frontier != nil {
			return true
		}
	}
	return false
}

// frontierSVG draws success against cost per run: each config's point,
// numbered as in the success/tokens chart, the fixed configs' Pareto
// frontier as a step line through its points, and the adaptive configs
// (autopilot, router) as larger starred points. "" when no config ran.
func (r *Report) frontierSVG() (string, error) {
	if !r.hasFrontier() {
		return "", nil
	}
	unit := ""
	p := newPlot("cost/accuracy frontier (fixed configs; adaptive starred)")
	p.Y.Label.Text = "success (0 to 1)"
	labels := pointLabels{style: p.X.Tick.Label, radius: glyphStyle(0).Radius}
	labels.style.Color = color.Gray{Y: 0x33}
	p.Add(plotter.NewGrid())
	var front plotter.XYs
	var xs, ys []float64
	for i, s := range r.Configs {
		f := s.Frontier
		if f == nil {
			continue
		}
		unit = f.Unit
		pt := plotter.XY{X: f.Cost, Y: s.SuccessRate}
		xs, ys = append(xs, pt.X), append(ys, pt.Y)
		sc, err := plotter.NewScatter(plotter.XYs{pt})
		if err != nil {
			return "", err
		}
		sc.GlyphStyle = glyphStyle(i)
		if f.Adaptive {
			sc.GlyphStyle.Shape = thick{draw.PlusGlyph{}}
			sc.GlyphStyle.Radius = vg.Points(7)
			ring, err := plotter.NewScatter(plotter.XYs{pt})
			if err != nil {
				return "", err
			}
			ring.GlyphStyle = draw.GlyphStyle{Color: sc.GlyphStyle.Color, Shape: thick{draw.RingGlyph{}}, Radius: vg.Points(7)}
			p.Add(ring)
		} else if f.On {
			front = append(front, pt)
		}
		p.Add(sc)
		labels.xys, labels.keys = append(labels.xys, pt), append(labels.keys, strconv.Itoa(i+1))
	}
	if len(front) > 0 {
		slices.SortFunc(front, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		var steps plotter.XYs
		for i, pt := range front {
			if i > 0 {
				steps = append(steps, plotter.XY{X: pt.X, Y: front[i-1].Y})
			}
			steps = append(steps, pt)
		}
		line, err := plotter.NewLine(steps)
		if err != nil {
			return "", err
		}
		line.Color = color.Gray{Y: 0x66}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		line.Width = vg.Points(1.2)
		p.Add(line)
	}
	p.Add(labels)
	p.X.Label.Text = "cost per run (" + unit + ")"
	lo, hi, _ := spread(xs)
	p.X.Min, p.X.Max = padded(lo, hi, 0.08, 0)
	if hi == lo {
		p.X.Min, p.X.Max = padded(lo, hi, 0.08, max(hi*0.2, 1e-9))
	}
	p.X.Min = max(p.X.Min, 0)
	lo, hi, _ = spread(ys)
	p.Y.Min, p.Y.Max = padded(lo, hi, 0.08, 0.1)
	p.Y.Tick.Marker = within{lo: 0, hi: 1}
	return svgOf(p)
}

// frontierLines are the markdown report's lines on the frontier: which
// fixed configs make it and where each adaptive config stands.
func (r *Report) frontierLines() []string {
	if !r.hasFrontier() {
		return nil
	}
	var on, lines []string
	unit := ""
	for _, s := range r.Configs {
		if f := s.Frontier; f != nil {
			unit = f.Unit
			if f.On && !f.Adaptive {
				on = append(on, s.name())
			}
		}
	}
	lines = append(lines, fmt.Sprintf("Cost/accuracy frontier (success against cost in %s): %s.", unit, strings.Join(on, ", ")))
	for _, s := range r.Configs {
		f := s.Frontier
		if f == nil || !f.Adaptive {
			continue
		}
		if f.On {
			lines = append(lines, fmt.Sprintf("Adaptive %s: success %.3f at %s, on or beyond the frontier (no fixed config is at least as good for at most its cost).",
				s.name(), s.SuccessRate, costText(f.Cost, f.Unit)))
			continue
		}
		lines = append(lines, fmt.Sprintf("Adaptive %s: success %.3f at %s, below the frontier (beaten by %s).",
			s.name(), s.SuccessRate, costText(f.Cost, f.Unit), strings.Join(f.DominatedBy, ", ")))
	}
	return lines
}

// costText formats a cost in unit.
func costText(c float64, unit string) string {
	if unit == CostUnitUSD {
		return fmt.Sprintf("$%.4g/run", c)
	}
	return fmt.Sprintf("%.0f tokens/run", c)
}
