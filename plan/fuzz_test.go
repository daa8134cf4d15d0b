package plan_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/planner-engine/planner/plan"
)

// FuzzParsePlan checks that any text either yields steps that all have an
// id, or a malformed-plan error, and that validation and ordering keep
// their contracts (see checkPlan).
func FuzzParsePlan(f *testing.F) {
	for _, seed := range []string{
		goodPlan,
		"```json\n{\"steps\":[{\"id\":1,\"depends_on\":[\"#E2\"]}]}\n```",
		"Plan: a\n#E1 = search[x [y]]\nPlan: b\n#E2 = calculator[#E1 + 1]",
		"1. a\n2) b\nStep 3: c",
		`[{"id":"1","input":{"q":[1,2]}},{"id":"1"}]`,
		`{"steps":[{"id":" ","description":"blank id"}]}`,
		`{"steps":[{"id":"a","description":"x","depends_on":["b"]},{"id":"b","description":"y","input":"#Ea"}]}`,
		"{", "[]", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		steps, err := plan.Parse(text)
		if err != nil {
			if !errors.Is(err, plan.ErrMalformedPlan) {
				t.Fatalf("error does not wrap ErrMalformedPlan: %v", err)
			}
			return
		}
		if len(steps) == 0 {
			t.Fatal("no error and no steps")
		}
		for _, s := range steps {
			if s.ID == "" {
				t.Fatalf("step without id: %+v", s)
			}
		}
		checkPlan(t, steps)
	})
}

// FuzzPlanShape builds plans of up to 5,000 steps from a few numbers (size,
// dependency shape, text format, random seed), writes them the way a model
// would, and checks that Parse reads every step back and that
// validation and ordering keep their contracts (see checkPlan).
func FuzzPlanShape(f *testing.F) {
	for shape := range byte(shapes) {
		for format := range byte(formats) {
			f.Add(uint16(40+int(shape)*7), shape, format, uint64(shape)*31+uint64(format)+1)
		}
	}
	// Seeds that are multiples of bigEvery give large plans.
	f.Add(uint16(4999), byte(shapeFull), byte(formatObject), uint64(0))
	f.Add(uint16(4999), byte(shapeCycles), byte(formatArray), uint64(bigEvery))
	f.Add(uint16(4999), byte(shapeMixed), byte(formatReWOO), uint64(2*bigEvery))
	f.Add(uint16(4999), byte(shapeDuplicates), byte(formatNumbered), uint64(3*bigEvery))
	f.Add(uint16(199), byte(shapeReferences), byte(formatObject), uint64(mediumEvery))
	f.Fuzz(func(t *testing.T, size uint16, shape, format byte, seed uint64) {
		n := 1 + int(size)%shapedSteps(seed)
		text := shapedPlan(n, shape, format, seed)
		steps, err := plan.Parse(text)
		if err != nil {
			t.Fatalf("a generated plan (%d steps, shape %d, format %d) does not parse: %v", n, shape%shapes, format%formats, err)
		}
		if len(steps) != n {
			t.Fatalf("parsed %d steps, want %d (shape %d, format %d)", len(steps), n, shape%shapes, format%formats)
		}
		checkPlan(t, steps)
	})
}

// The dependency shapes and text formats of FuzzPlanShape.
const (
	shapeFull       = iota // each step depends on every earlier one (within a budget), then a chain
	shapeChain             // each step depends on the one before
	shapeDAG               // up to three random earlier steps
	shapeCycles            // up to three random steps anywhere, itself included
	shapeDuplicates        // ids drawn from a small pool, chained
	shapeDangling          // dependencies on ids that may not exist
	shapeReferences        // #E references in inputs, now and then to later steps
	shapeMixed             // each step picks one of the above
	shapes
)

const (
	formatObject   = iota // {"steps": [...]} with loosely written dependencies
	formatArray           // a bare array, ids and dependencies as numbers
	formatReWOO           // "Plan:" / "#E1 = tool[input]" lines
	formatNumbered        // "1. description" lines
	formats
)

const (
	// fullBudget bounds the dependency entries of shapeFull, so that one
	// fuzz input stays fast (well under the fuzzer's 10 s limit on one
	// input, even on a busy machine): the first steps depend on every
	// earlier one up to this many entries.
	fullBudget = 12000
	// One seed in bigEvery gives plans of up to 5,000 steps, one in
	// mediumEvery up to 200, the others up to 24: a large plan takes a
	// thousand times longer to build and parse than a small one, and the
	// fuzzer must still get through a million inputs in reasonable time.
	bigEvery    = 997
	mediumEvery = 61
)

// shapedSteps returns the bound on a fuzzed plan's length for seed.
func shapedSteps(seed uint64) int {
	switch {
	case seed%bigEvery == 0:
		return 5000
	case seed%mediumEvery == 0:
		return 200
	default:
		return 24
	}
}

// shapedPlan writes an n-step plan with the given dependency shape in the
// given format.
func shapedPlan(n int, shape, format byte, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	shape %= shapes
	format %= formats
	pool := max(1, n/8)
	type step struct {
		id    int
		deps  []int // ids
		input string
	}
	steps := make([]step, n)
	entries := 0
	for i := range steps {
		s := step{id: i + 1}
		kind := shape
		if kind == shapeMixed {
			kind = byte(rng.IntN(shapeMixed))
		}
		switch kind {
		case shapeFull:
			if entries+i <= fullBudget {
				for k := range i {
					s.deps = append(s.deps, k+1)
				}
				entries += i
			} else if i > 0 {
				s.deps = []int{i}
			}
		case shapeChain:
			if i > 0 {
				s.deps = []int{i}
			}
		case shapeDAG:
			for range rng.IntN(4) {
				if i > 0 {
					s.deps = append(s.deps, 1+rng.IntN(i))
				}
			}
		case shapeCycles:
			for range rng.IntN(4) {
				s.deps = append(s.deps, 1+rng.IntN(n))
			}
		case shapeDuplicates:
			s.id = 1 + rng.IntN(pool)
			if i > 0 {
				s.deps = []int{steps[i-1].id}
			}
		case shapeDangling:
			for range rng.IntN(3) {
				s.deps = append(s.deps, 1+rng.IntN(2*n))
			}
		case shapeReferences:
			var in []string
			for range rng.IntN(4) {
				k := 1 + rng.IntN(i+1)
				if rng.IntN(16) == 0 {
					k = 1 + rng.IntN(n)
				}
				in = append(in, "#E"+strconv.Itoa(k))
			}
			s.input = strings.Join(in, " + ")
		}
		steps[i] = s
	}
	var b strings.Builder
	switch format {
	case formatObject, formatArray:
		type jsonStep struct {
			ID        any    `json:"id"`
			Desc      string `json:"description"`
			Tool      string `json:"tool,omitempty"`
			Input     string `json:"input,omitempty"`
			DependsOn []any  `json:"depends_on,omitempty"`
		}
		out := make([]jsonStep, n)
		for i, s := range steps {
			js := jsonStep{ID: strconv.Itoa(s.id), Desc: "step " + strconv.Itoa(i+1), Input: s.input}
			if s.input != "" {
				js.Tool = "calculator"
			}
			for _, d := range s.deps {
				// Dependencies written as "3", "#E3", "E3" or "step 3" all
				// resolve to step "3".
				spelled := []any{strconv.Itoa(d), "#E" + strconv.Itoa(d), "E" + strconv.Itoa(d), "step " + strconv.Itoa(d)}[rng.IntN(4)]
				if format == formatArray {
					spelled = d
				}
				js.DependsOn = append(js.DependsOn, spelled)
			}
			if format == formatArray {
				js.ID = s.id
			}
			out[i] = js
		}
		var v any = map[string]any{"steps": out}
		if format == formatArray {
			v = out
		}
		raw, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(raw)
	case formatReWOO:
		for i, s := range steps {
			refs := []string{s.input}
			for _, d := range s.deps {
				refs = append(refs, "#E"+strconv.Itoa(d))
			}
			fmt.Fprintf(&b, "Plan: step %d\n#E%d = calculator[%s]\n", i+1, s.id, strings.Join(refs, " "))
		}
	case formatNumbered:
		for i, s := range steps {
			fmt.Fprintf(&b, "%d. step %d %s\n", s.id, i+1, s.input)
		}
	}
	return b.String()
}

// checkPlan checks what Check and Order promise about any parsed plan:
// every problem Check reports wraps a sentinel, its message stays short
// however large the plan, a plan over the step limit is rejected for its
// length alone, Order succeeds exactly when Check finds no cycle and no
// duplicate id, and Order's result is a permutation of the plan in which
// every step comes after its dependencies.
func checkPlan(t *testing.T, steps []plan.Step) {
	t.Helper()
	sentinels := []error{plan.ErrMalformedPlan, plan.ErrDuplicateStep, plan.ErrDanglingDependency,
		plan.ErrPlanCycle, plan.ErrTooManySteps, plan.ErrUnknownTool, plan.ErrMissingTool}
	longest := 0
	deps := make([][]string, len(steps))
	for i, s := range steps {
		deps[i] = plan.Dependencies(s)
		longest = max(longest, len(s.ID))
		for _, d := range deps[i] {
			longest = max(longest, len(d))
		}
	}

	checkErr := plan.Rules{}.Check(steps)
	if checkErr != nil {
		problems := []error{checkErr}
		if joined, ok := checkErr.(interface{ Unwrap() []error }); ok {
			problems = joined.Unwrap()
		}
		for _, p := range problems {
			if !wrapsAny(p, sentinels) {
				t.Fatalf("a problem wraps no sentinel: %v", p)
			}
		}
		// At most 11 lines for each of 7 kinds, each naming at most ten ids.
		if bound := 7 * 11 * (300 + 10*longest); len(checkErr.Error()) > bound {
			t.Fatalf("the error has %d bytes, more than %d", len(checkErr.Error()), bound)
		}
	}

	if limit := len(steps) / 2; limit > 0 {
		err := plan.Rules{MaxSteps: limit}.Check(steps)
		if !errors.Is(err, plan.ErrTooManySteps) {
			t.Fatalf("%d steps with at most %d allowed: %v", len(steps), limit, err)
		}
		if wrapsAny(err, []error{plan.ErrPlanCycle, plan.ErrDanglingDependency, plan.ErrUnknownTool}) {
			t.Fatalf("an overlong plan was analysed further: %v", err)
		}
	}

	order, orderErr := plan.Order(steps)
	cycle := errors.Is(checkErr, plan.ErrPlanCycle)
	dup := errors.Is(checkErr, plan.ErrDuplicateStep)
	switch {
	case orderErr != nil && !cycle && !dup:
		t.Fatalf("Order failed on a plan whose only problems are %v: %v", checkErr, orderErr)
	case orderErr != nil:
		if !wrapsAny(orderErr, []error{plan.ErrPlanCycle, plan.ErrDuplicateStep}) {
			t.Fatalf("Order's error wraps no sentinel: %v", orderErr)
		}
		if errors.Is(orderErr, plan.ErrPlanCycle) && !cycle || errors.Is(orderErr, plan.ErrDuplicateStep) && !dup {
			t.Fatalf("Order says %v, Check says %v", orderErr, checkErr)
		}
	case cycle || dup:
		t.Fatalf("Order succeeded where Check says %v", checkErr)
	default:
		placedAt := make(map[string]int, len(order))
		for i, id := range order {
			placedAt[id] = i
		}
		if len(order) != len(steps) || len(placedAt) != len(steps) {
			t.Fatalf("Order returned %d ids for %d steps", len(placedAt), len(steps))
		}
		for i, s := range steps {
			at, ok := placedAt[s.ID]
			if !ok {
				t.Fatalf("Order left out step %q", s.ID)
			}
			for _, d := range deps[i] {
				if k, in := placedAt[d]; in && k >= at {
					t.Fatalf("Order places %q (at %d) before its dependency %q (at %d)", s.ID, at, d, k)
				}
			}
		}
	}
}

func wrapsAny(err error, targets []error) bool {
	for _, s := range targets {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// goodPlan is a valid three-step plan in JSON.
const goodPlan = `{"steps":[{"id":"1","description":"Find the birth year","tool":"search","input":"Clyde Tombaugh born"},{"id":"2","description":"Find the discovery year","tool":"search","input":"Pluto discovered"},{"id":"3","description":"Subtract","tool":"calculator","input":"#E2 - #E1","depends_on":["1","2"]}]}`
