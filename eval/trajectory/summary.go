package trajectory

// Summary is the mean of runs' Metrics, each over the runs it applies to.
// A mean over no runs is 0: read it with its count.
type Summary struct {
	// Runs counts every run given; Scored those with gold steps.
	Runs   int `json:"runs"`
	Scored int `json:"scored"`
	// ToolRecall to StepsRatio are means over the Scored runs.
	ToolRecall     float64 `json:"tool_recall"`
	ToolPrecision  float64 `json:"tool_precision"`
	InputRecall    float64 `json:"input_recall"`
	InputPrecision float64 `json:"input_precision"`
	OrderLCS       float64 `json:"order_lcs"`
	StepsRatio     float64 `json:"steps_ratio"`
	// Planned counts the scored runs that made a plan; PlanRecall and
	// PlanPrecision are means over them.
	Planned       int     `json:"planned"`
	PlanRecall    float64 `json:"plan_recall"`
	PlanPrecision float64 `json:"plan_precision"`
	// WithEdges counts the planned runs whose gold steps have dependency
	// edges; DepRecall is the mean over them.
	WithEdges int     `json:"with_edges"`
	DepRecall float64 `json:"dep_recall"`
}

// Summarize averages ms: unscored runs (no gold steps) count in Runs
// only, runs without a plan do not count in the plan means, and runs
// whose gold has no dependency edge do not count in DepRecall's.
func Summarize(ms []Metrics) Summary {
	s := Summary{Runs: len(ms)}
	for _, m := range ms {
		if !m.Scored {
			continue
		}
		s.Scored++
		s.ToolRecall += m.ToolRecall
		s.ToolPrecision += m.ToolPrecision
		s.InputRecall += m.InputRecall
		s.InputPrecision += m.InputPrecision
		s.OrderLCS += m.OrderLCS
		s.StepsRatio += m.StepsRatio
		if !m.HasPlan {
			continue
		}
		s.Planned++
		s.PlanRecall += m.PlanRecall
		s.PlanPrecision += m.PlanPrecision
		if m.GoldEdges > 0 {
			s.WithEdges++
			s.DepRecall += m.DepRecall
		}
	}
	div := func(sum float64, n int) float64 {
		if n == 0 {
			return 0
		}
		return sum / float64(n)
	}
	s.ToolRecall = div(s.ToolRecall, s.Scored)
	s.ToolPrecision = div(s.ToolPrecision, s.Scored)
	s.InputRecall = div(s.InputRecall, s.Scored)
	s.InputPrecision = div(s.InputPrecision, s.Scored)
	s.OrderLCS = div(s.OrderLCS, s.Scored)
	s.StepsRatio = div(s.StepsRatio, s.Scored)
	s.PlanRecall = div(s.PlanRecall, s.Planned)
	s.PlanPrecision = div(s.PlanPrecision, s.Planned)
	s.DepRecall = div(s.DepRecall, s.WithEdges)
	return s
}
