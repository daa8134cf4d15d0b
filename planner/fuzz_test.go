package planner_test

import (
	"errors"
	"testing"

	"github.com/planner-engine/planner/planner"
)

// FuzzParsePlan checks that any text either yields steps that all have an
// id, or a malformed-plan error, and that validation never panics.
func FuzzParsePlan(f *testing.F) {
	for _, seed := range []string{
		goodPlan,
		"```json\n{\"steps\":[{\"id\":1,\"depends_on\":[\"#E2\"]}]}\n```",
		"Plan: a\n#E1 = search[x [y]]\nPlan: b\n#E2 = calculator[#E1 + 1]",
		"1. a\n2) b\nStep 3: c",
		`[{"id":"1","input":{"q":[1,2]}},{"id":"1"}]`,
		`{"steps":[{"id":" ","description":"blank id"}]}`,
		"{", "[]", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		steps, err := planner.ParsePlan(text)
		if err != nil {
			if !errors.Is(err, planner.ErrMalformedPlan) {
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
		_ = planner.ValidatePlan(steps, nil, 8)
		_, _ = planner.Order(steps)
	})
}
