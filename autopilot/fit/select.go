package fit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/planner-engine/planner/state"
)

// Halves of a suite, for Selection.Half.
const (
	// Odd is the suite's 1st, 3rd, 5th... tasks.
	Odd = "odd"
	// Even is the suite's 2nd, 4th, 6th... tasks.
	Even = "even"
)

// Selection picks tasks of a suite, in the suite's order: to fit a policy
// on one half of a comparison's tasks (Half: Odd) and to evaluate it on
// the other (Other). The zero value selects every task.
type Selection struct {
	// Half is Odd or Even to keep one half of the tasks, counted from 1 in
	// the suite's order; "" keeps them all.
	Half string
	// IDs, when not empty, keeps only these tasks.
	IDs []string
	// Exclude leaves these tasks out.
	Exclude []string
}

// ParseSelection reads the command line's --tasks: "odd", "even", "all"
// (or "") or a comma-separated list of task ids.
func ParseSelection(s string) (Selection, error) {
	switch s = strings.TrimSpace(s); s {
	case "", "all":
		return Selection{}, nil
	case Odd, Even:
		return Selection{Half: s}, nil
	}
	var ids []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return Selection{}, fmt.Errorf("%w: %q names no task (want odd, even, all or task ids separated by commas)", ErrSelection, s)
	}
	return Selection{IDs: ids}, nil
}

// Other is the selection of the tasks s leaves out: the other half, or
// every task but s's IDs (and then s's Exclude are left out too).
func (s Selection) Other() Selection {
	switch {
	case s.Half == Odd:
		return Selection{Half: Even, IDs: s.IDs, Exclude: s.Exclude}
	case s.Half == Even:
		return Selection{Half: Odd, IDs: s.IDs, Exclude: s.Exclude}
	case len(s.IDs) > 0:
		return Selection{Exclude: slices.Concat(s.IDs, s.Exclude)}
	default:
		return Selection{IDs: s.Exclude}
	}
}

// String writes s as --tasks reads it, where it can.
func (s Selection) String() string {
	var parts []string
	if s.Half != "" {
		parts = append(parts, s.Half)
	}
	if len(s.IDs) > 0 {
		parts = append(parts, strings.Join(s.IDs, ","))
	}
	if len(s.Exclude) > 0 {
		parts = append(parts, "not "+strings.Join(s.Exclude, ","))
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, " ")
}

// all reports whether s selects every task.
func (s Selection) all() bool { return s.Half == "" && len(s.IDs) == 0 && len(s.Exclude) == 0 }

// Pick returns the ids of order (a suite's task ids, in its order) that s
// selects. It fails with ErrSelection for an unknown half, an id of IDs
// that order does not hold, or a selection of nothing.
func (s Selection) Pick(order []string) (map[string]bool, error) {
	if s.Half != "" && s.Half != Odd && s.Half != Even {
		return nil, fmt.Errorf("%w: half %q: want %q or %q", ErrSelection, s.Half, Odd, Even)
	}
	for _, id := range s.IDs {
		if !slices.Contains(order, id) {
			return nil, fmt.Errorf("%w: no task %q in the comparison (its tasks: %s)", ErrSelection, id, sample(order))
		}
	}
	keep := map[string]bool{}
	for i, id := range order {
		switch {
		case s.Half == Odd && i%2 == 1, s.Half == Even && i%2 == 0:
		case len(s.IDs) > 0 && !slices.Contains(s.IDs, id):
		case slices.Contains(s.Exclude, id):
		default:
			keep[id] = true
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("%w: tasks %s selects none of the comparison's %d tasks", ErrSelection, s, len(order))
	}
	return keep, nil
}

// Filter returns the tasks of a suite that s selects, in the suite's
// order: the tasks to run an evaluation on (s.Other() for the half a
// policy was not fitted on).
func (s Selection) Filter(tasks []state.Task) ([]state.Task, error) {
	order := make([]string, len(tasks))
	for i, t := range tasks {
		order[i] = t.ID
	}
	keep, err := s.Pick(order)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(slices.Clone(tasks), func(t state.Task) bool { return !keep[t.ID] }), nil
}

// sample names the first few ids of a list.
func sample(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	if len(ids) <= 4 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s ... %s, %d in all", strings.Join(ids[:3], ", "), ids[len(ids)-1], len(ids))
}
