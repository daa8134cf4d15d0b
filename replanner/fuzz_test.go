package replanner_test

import (
	"errors"
	"testing"

	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/replanner"
)

// FuzzParseDecision checks that any text yields a finish, a replan with
// steps, or a typed error.
func FuzzParseDecision(f *testing.F) {
	for _, seed := range []string{
		`{"action":"finish","answer":"24"}`,
		"```\n{\"action\":\"replan\",\"steps\":[{\"id\":\"4\",\"tool\":\"search\"}]}\n```",
		"Final Answer: 3", `{"answer": {"x": 1}}`, `{"action":"replan","steps":{}}`, "", "{",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		d, err := replanner.ParseDecision(text)
		if err != nil {
			if !errors.Is(err, replanner.ErrMalformedDecision) && !errors.Is(err, plan.ErrMalformedPlan) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		switch d.Action {
		case replanner.ActionFinish:
		case replanner.ActionReplan:
			if len(d.Steps) == 0 {
				t.Fatal("replan without steps")
			}
		default:
			t.Fatalf("unknown action %q", d.Action)
		}
	})
}
