package planner

import (
	"errors"
	"fmt"

	dgraph "github.com/dominikbraun/graph"
	"github.com/planner-engine/planner/agent"
)

// checkDependencies reports dependencies on missing steps and dependency
// cycles. The plan is built as a DAG with dominikbraun/graph, whose
// PreventCycles trait refuses the edge that would close a cycle.
func checkDependencies(steps []agent.Step, ids, known map[string]bool) []error {
	var problems []error
	g := dgraph.New(dgraph.StringHash, dgraph.Directed(), dgraph.PreventCycles())
	for _, s := range steps {
		// A duplicate id is reported by the caller; adding it once is enough.
		if err := g.AddVertex(s.ID); err != nil && !errors.Is(err, dgraph.ErrVertexAlreadyExists) {
			problems = append(problems, fmt.Errorf("%w: step %q: %w", ErrMalformedPlan, s.ID, err))
		}
	}
	for _, s := range steps {
		for _, d := range Dependencies(s) {
			switch {
			case d == s.ID:
				problems = append(problems, fmt.Errorf("%w: step %q depends on itself", ErrPlanCycle, s.ID))
			case known[d] && !ids[d]:
				// A finished step outside the plan: always satisfied.
			case !ids[d]:
				problems = append(problems, fmt.Errorf("%w: step %q depends on step %q, which is not in the plan", ErrDanglingDependency, s.ID, d))
			default:
				err := g.AddEdge(d, s.ID)
				switch {
				case err == nil, errors.Is(err, dgraph.ErrEdgeAlreadyExists):
				case errors.Is(err, dgraph.ErrEdgeCreatesCycle):
					problems = append(problems, fmt.Errorf("%w: step %q depends on step %q, which already depends on %q directly or through other steps; break the cycle", ErrPlanCycle, s.ID, d, s.ID))
				default:
					problems = append(problems, fmt.Errorf("%w: step %q: %w", ErrMalformedPlan, s.ID, err))
				}
			}
		}
	}
	return problems
}

// Order returns the ids of steps in the order a sequential executor runs
// them: plan order, except that a step waits for its dependencies (at each
// point the earliest step in the plan whose dependencies have all been
// placed comes next). Dependencies outside steps are ignored. It fails
// with ErrPlanCycle or ErrDuplicateStep, which ValidatePlan would have
// reported; cycles are found by building the plan with dominikbraun/graph.
func Order(steps []agent.Step) ([]string, error) {
	pos := map[string]int{}
	g := dgraph.New(dgraph.StringHash, dgraph.Directed(), dgraph.PreventCycles())
	for i, s := range steps {
		if _, dup := pos[s.ID]; dup {
			return nil, fmt.Errorf("%w: %q", ErrDuplicateStep, s.ID)
		}
		pos[s.ID] = i
		if err := g.AddVertex(s.ID); err != nil {
			return nil, fmt.Errorf("%w: step %q: %w", ErrMalformedPlan, s.ID, err)
		}
	}
	waits := make([][]int, len(steps))
	for i, s := range steps {
		for _, d := range Dependencies(s) {
			k, ok := pos[d]
			if !ok {
				continue
			}
			if k == i {
				return nil, fmt.Errorf("%w: step %q depends on itself", ErrPlanCycle, s.ID)
			}
			if err := g.AddEdge(d, s.ID); err != nil && !errors.Is(err, dgraph.ErrEdgeAlreadyExists) {
				if errors.Is(err, dgraph.ErrEdgeCreatesCycle) {
					return nil, fmt.Errorf("%w: through steps %q and %q", ErrPlanCycle, d, s.ID)
				}
				return nil, fmt.Errorf("%w: %w", ErrMalformedPlan, err)
			}
			waits[i] = append(waits[i], k)
		}
	}
	placed := make([]bool, len(steps))
	order := make([]string, 0, len(steps))
	for len(order) < len(steps) {
		for i := range steps {
			if placed[i] || !allPlaced(waits[i], placed) {
				continue
			}
			placed[i] = true
			order = append(order, steps[i].ID)
			break
		}
	}
	return order, nil
}

func allPlaced(idx []int, placed []bool) bool {
	for _, k := range idx {
		if !placed[k] {
			return false
		}
	}
	return true
}
