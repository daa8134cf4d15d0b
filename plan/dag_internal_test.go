package plan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linkedPlan returns n steps with ids "1".."n"; step i (from 0) depends on
// the steps at the positions deps(i) returns.
func linkedPlan(n int, deps func(i int) []int) []Step {
	steps := make([]Step, n)
	for i := range steps {
		s := Step{ID: strconv.Itoa(i + 1), Description: "do it"}
		for _, k := range deps(i) {
			s.DependsOn = append(s.DependsOn, strconv.Itoa(k+1))
		}
		steps[i] = s
	}
	return steps
}

// everyEarlier makes each step depend on all the steps before it.
func everyEarlier(i int) []int {
	out := make([]int, i)
	for k := range out {
		out[k] = k
	}
	return out
}

// previous makes each step depend on the one before it.
func previous(i int) []int {
	if i == 0 {
		return nil
	}
	return []int{i - 1}
}

// size returns a plan's vertices and dependency entries: V and E.
func size(steps []Step) (v, e int) {
	for _, s := range steps {
		e += len(Dependencies(s))
	}
	return len(steps), e
}

func TestCheckRejectsAnOverlongPlanWithoutDependencyWork(t *testing.T) {
	cases := []struct {
		name  string
		steps []Step
		also  []error
	}{
		{"3,000 steps each depending on every earlier one", linkedPlan(3000, everyEarlier), nil},
		{"3,000 steps in one cycle, each also depending on a missing step", func() []Step {
			steps := linkedPlan(3000, func(i int) []int { return []int{(i + 1) % 3000} })
			for i := range steps {
				steps[i].DependsOn = append(steps[i].DependsOn, "missing")
			}
			return steps
		}(), nil},
		{"2,000 steps sharing one id", func() []Step {
			steps := linkedPlan(2000, everyEarlier)
			for i := range steps {
				steps[i].ID = "1"
			}
			return steps
		}(), []error{ErrDuplicateStep}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var work workCounter
			err := Rules{MaxSteps: 8}.check(tc.steps, &work)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrTooManySteps)
			assert.Contains(t, err.Error(), fmt.Sprintf("the plan has %d steps but at most 8 are allowed", len(tc.steps)))
			for _, want := range tc.also {
				assert.ErrorIs(t, err, want)
			}
			assert.NotErrorIs(t, err, ErrPlanCycle)
			assert.NotErrorIs(t, err, ErrDanglingDependency)
			assert.Equal(t, workCounter{}, work, "no dependency work for a plan rejected for its length")
		})
	}
}

// workBound is the constant c in the bound c·(V+E) on the dependency work.
const workBound = 6

func TestDependencyWorkIsLinearInTheSizeOfThePlan(t *testing.T) {
	cases := []struct {
		name      string
		steps     []Step
		checkErr  error // nil: the plan is valid
		orderFail bool
	}{
		{"2,000 steps each depending on every earlier one", linkedPlan(2000, everyEarlier), nil, false},
		{"a chain of 20,000 steps", linkedPlan(20000, previous), nil, false},
		{"2,000 fully dependent steps closed into one cycle", linkedPlan(2000, func(i int) []int {
			if i == 0 {
				return []int{1999}
			}
			return everyEarlier(i)
		}), ErrPlanCycle, true},
		{"5,000 two-step cycles", linkedPlan(10000, func(i int) []int { return []int{i ^ 1} }), ErrPlanCycle, true},
		{"a long cycle every step of which waits for the next", linkedPlan(20000, func(i int) []int { return []int{(i + 1) % 20000} }), ErrPlanCycle, true},
		{"fully dependent steps that also depend on missing steps", func() []Step {
			steps := linkedPlan(1000, everyEarlier)
			for i := range steps {
				steps[i].DependsOn = append(steps[i].DependsOn, "missing"+strconv.Itoa(i))
			}
			return steps
		}(), ErrDanglingDependency, false},
		{"#E references to every earlier step", func() []Step {
			steps := linkedPlan(400, func(int) []int { return nil })
			for i := range steps {
				var in strings.Builder
				for k := range i {
					fmt.Fprintf(&in, "#E%d ", k+1)
				}
				steps[i].Input = in.String()
			}
			return steps
		}(), nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, e := size(tc.steps)

			var work workCounter
			err := Rules{}.check(tc.steps, &work)
			if tc.checkErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.checkErr)
			}
			assert.Positive(t, work.vertices)
			assert.LessOrEqual(t, work.vertices+work.edges, workBound*(v+e), "Check: V=%d E=%d work=%+v", v, e, work)

			work = workCounter{}
			order, err := order(tc.steps, &work)
			if tc.orderFail {
				require.ErrorIs(t, err, ErrPlanCycle)
			} else {
				require.NoError(t, err)
				assert.Len(t, order, len(tc.steps))
			}
			assert.LessOrEqual(t, work.vertices+work.edges, workBound*(v+e), "Order: V=%d E=%d work=%+v", v, e, work)
		})
	}
}

func TestCheckNamesTheStepsOfACycle(t *testing.T) {
	step := func(id string, deps ...string) Step {
		return Step{ID: id, Description: "do " + id, DependsOn: deps}
	}
	cases := []struct {
		name     string
		steps    []Step
		contains []string
		absent   []string
	}{
		{"three steps", []Step{step("1", "3"), step("2", "1"), step("3", "2")},
			[]string{`step "1" depends on "3", which depends on "2", which depends on "1"; break the cycle`}, nil},
		{"two separate cycles", []Step{step("a", "b"), step("b", "a"), step("c", "d"), step("d", "c")},
			[]string{`step "a" depends on "b", which depends on "a"`, `step "c" depends on "d", which depends on "c"`}, nil},
		{"a step waiting for a cycle is not on it", []Step{step("3", "1"), step("1", "2"), step("2", "1")},
			[]string{`step "1" depends on "2", which depends on "1"`}, []string{`"3"`}},
		{"a cycle through an #E reference", []Step{{ID: "1", Tool: "calculator", Input: "#E2 + 1"}, step("2", "1")},
			[]string{`step "1" depends on "2", which depends on "1"`}, nil},
		{"self dependency", []Step{step("1", "1")}, []string{`step "1" depends on itself`}, []string{"which depends on"}},
		{"a long cycle is cut short", linkedPlan(1000, func(i int) []int { return []int{(i + 1) % 1000} }),
			[]string{`step "1" depends on "2", which depends on "3", `, `"9", which depends on 991 more steps in turn, the last of which depends on "1"`},
			[]string{`"10"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Rules{}.Check(tc.steps)
			require.ErrorIs(t, err, ErrPlanCycle)
			for _, want := range tc.contains {
				assert.Contains(t, err.Error(), want)
			}
			for _, not := range tc.absent {
				assert.NotContains(t, err.Error(), not)
			}
			_, err = Order(tc.steps)
			require.ErrorIs(t, err, ErrPlanCycle)
			assert.Contains(t, err.Error(), strings.TrimSuffix(tc.contains[0], "; break the cycle"))
		})
	}
}

func TestCheckListsAtMostTenProblemsOfAKind(t *testing.T) {
	sameID := linkedPlan(2000, func(int) []int { return nil })
	for i := range sameID {
		sameID[i].ID = "dup"
	}
	pairs := linkedPlan(2000, func(int) []int { return nil })
	for i := range pairs {
		pairs[i].ID = strconv.Itoa(i / 2)
	}
	dangling := linkedPlan(2000, func(int) []int { return nil })
	for i := range dangling {
		dangling[i].DependsOn = []string{"missing" + strconv.Itoa(i)}
	}
	unknownTools := linkedPlan(2000, func(int) []int { return nil })
	for i := range unknownTools {
		unknownTools[i].Tool = "nope"
	}
	empty, err := tools.NewRegistry(nil)
	require.NoError(t, err)
	cases := []struct {
		name     string
		steps    []Step
		rules    Rules
		sentinel error
		each     string // appears once per listed problem
		listed   int
		more     string
	}{
		{"2,000 steps sharing one id", sameID, Rules{}, ErrDuplicateStep, "is used by more than one step", 1, ""},
		{"1,000 ids used twice", pairs, Rules{}, ErrDuplicateStep, "is used by more than one step", 10, "duplicate step id: and 990 more of this kind"},
		{"2,000 dangling dependencies", dangling, Rules{}, ErrDanglingDependency, "which is not in the plan", 10, "dependency on a missing step: and 1990 more of this kind"},
		{"2,000 unknown tools", unknownTools, Rules{Tools: empty}, ErrUnknownTool, `uses "nope"`, 10, "and 1990 more of this kind"},
		{"1,000 two-step cycles", linkedPlan(2000, func(i int) []int { return []int{i ^ 1} }), Rules{}, ErrPlanCycle, "break the cycle", 10, "dependency cycle: and 990 more of this kind"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rules.Check(tc.steps)
			require.ErrorIs(t, err, tc.sentinel)
			msg := err.Error()
			assert.Equal(t, tc.listed, strings.Count(msg, tc.each), msg)
			if tc.more == "" {
				assert.NotContains(t, msg, "more of this kind")
			} else {
				assert.Contains(t, msg, tc.more)
			}
			assert.Less(t, len(msg), 2000, "the message does not grow with the plan")
		})
	}
}

// placeEarliestReady is Order's rule written out directly: repeatedly place
// the first unplaced step, in plan order, whose dependencies are all
// placed. ok is false when no step can be placed (a cycle).
func placeEarliestReady(steps []Step) (order []string, ok bool) {
	pos := map[string]int{}
	for i, s := range steps {
		pos[s.ID] = i
	}
	placed := make([]bool, len(steps))
	for len(order) < len(steps) {
		next := -1
		for i, s := range steps {
			if placed[i] {
				continue
			}
			ready := true
			for _, d := range Dependencies(s) {
				if k, in := pos[d]; in && !placed[k] {
					ready = false
					break
				}
			}
			if ready {
				next = i
				break
			}
		}
		if next < 0 {
			return nil, false
		}
		placed[next] = true
		order = append(order, steps[next].ID)
	}
	return order, true
}

func TestOrderPlacesTheEarliestReadyStepFirst(t *testing.T) {
	cases := []struct {
		name      string
		forwardOK bool // dependencies on later steps allowed (cycles likely)
	}{
		{"acyclic plans in any order", false},
		{"plans that may have cycles", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			for range 500 {
				n := 1 + rng.IntN(40)
				// Shuffle positions so dependencies point anywhere in the
				// plan while the graph stays acyclic when forwardOK is false.
				rank := rng.Perm(n)
				steps := linkedPlan(n, func(i int) []int {
					var deps []int
					for range rng.IntN(4) {
						k := rng.IntN(n)
						if k != i && (tc.forwardOK || rank[k] < rank[i]) {
							deps = append(deps, k)
						}
					}
					return deps
				})
				if rng.IntN(4) == 0 {
					steps[rng.IntN(n)].DependsOn = append(steps[rng.IntN(n)].DependsOn, "outside")
				}
				want, ok := placeEarliestReady(steps)
				got, err := Order(steps)
				if !ok {
					require.ErrorIs(t, err, ErrPlanCycle, "%+v", steps)
					assert.ErrorIs(t, Rules{}.Check(steps), ErrPlanCycle)
					continue
				}
				require.NoError(t, err, "%+v", steps)
				require.Equal(t, want, got, "%+v", steps)
			}
		})
	}
}

func TestParsedNumberedListHasLinearDependencies(t *testing.T) {
	list := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%d. Do part %d\n", i, i)
		}
		return b.String()
	}
	ids := func(from, to int) []string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, strconv.Itoa(i))
		}
		return out
	}
	cases := []struct {
		name string
		n    int
		// want maps a step's position (from 1) to its dependencies.
		want map[int][]string
	}{
		{"a short list waits for every earlier step", 17, map[int][]string{1: nil, 3: ids(1, 2), 17: ids(1, 16)}},
		{"a longer list waits for the last 16 steps", 40, map[int][]string{18: ids(2, 17), 40: ids(24, 39)}},
		{"10,000 lines", 10000, map[int][]string{2: {"1"}, 10000: ids(9984, 9999)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := Parse(list(tc.n))
			require.NoError(t, err)
			require.Len(t, steps, tc.n)
			for at, deps := range tc.want {
				assert.Equal(t, deps, steps[at-1].DependsOn, "step %d", at)
			}
			v, e := size(steps)
			assert.LessOrEqual(t, e, numberedWindow*v)
			for i, s := range steps[1:] {
				assert.Contains(t, s.DependsOn, steps[i].ID, "each step waits for the one before")
			}
			var work workCounter
			require.NoError(t, Rules{}.check(steps, &work))
			assert.LessOrEqual(t, work.vertices+work.edges, workBound*(v+e))
			order, err := Order(steps)
			require.NoError(t, err)
			assert.Equal(t, ids(1, tc.n), order, "the list's order")
		})
	}
}

func TestDependenciesListsDependsOnThenNewReferences(t *testing.T) {
	cases := []struct {
		name string
		step Step
		want []string
	}{
		{"none", Step{ID: "1"}, nil},
		{"depends_on only, repeats kept", Step{DependsOn: []string{"2", "1", "2"}}, []string{"2", "1", "2"}},
		{"references not listed are appended once", Step{DependsOn: []string{"2"}, Input: "#E2 #E3 #E1 #E3"}, []string{"2", "3", "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Dependencies(tc.step))
			var stopped []string
			for d := range dependencies(tc.step) {
				stopped = append(stopped, d)
				break
			}
			if len(tc.want) > 0 {
				assert.Equal(t, tc.want[:1], stopped, "the sequence stops when asked")
			}
		})
	}
}

func TestCheckStillReportsEveryKindOfProblemTogether(t *testing.T) {
	steps := []Step{
		{ID: "1", Description: "a", DependsOn: []string{"2", "9"}},
		{ID: "2", Description: "b", DependsOn: []string{"1"}},
		{ID: "2", Description: "again"},
		{ID: "3", Description: "c", DependsOn: []string{"3"}},
		{ID: ""},
	}
	err := Rules{}.Check(steps)
	for _, want := range []error{ErrPlanCycle, ErrDanglingDependency, ErrDuplicateStep, ErrMalformedPlan} {
		assert.ErrorIs(t, err, want)
	}
	var joined interface{ Unwrap() []error }
	require.True(t, errors.As(err, &joined))
	assert.Len(t, joined.Unwrap(), 5, err.Error())
}
