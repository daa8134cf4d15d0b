package plan_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/planner-engine/planner/plan"
)

// fullDeps returns n steps where step i depends on every earlier step: the
// densest acyclic plan, n(n-1)/2 dependency entries.
func fullDeps(n int) []plan.Step {
	steps := make([]plan.Step, n)
	for i := range steps {
		deps := make([]string, i)
		for k := range deps {
			deps[k] = strconv.Itoa(k + 1)
		}
		steps[i] = plan.Step{ID: strconv.Itoa(i + 1), Description: "do it", DependsOn: deps}
	}
	return steps
}

// BenchmarkCheckFullDeps validates fully dependent plans without a step
// limit (all the dependency analysis runs) and with MaxSteps 8 (the plan is
// rejected for its size before any).
func BenchmarkCheckFullDeps(b *testing.B) {
	for _, bc := range []struct{ n, max int }{{100, 0}, {200, 0}, {400, 0}, {3000, 0}, {3000, 8}} {
		b.Run(fmt.Sprintf("steps=%d/max=%d", bc.n, bc.max), func(b *testing.B) {
			steps := fullDeps(bc.n)
			rules := plan.Rules{MaxSteps: bc.max}
			b.ReportAllocs()
			for b.Loop() {
				_ = rules.Check(steps)
			}
		})
	}
}

// BenchmarkOrder orders fully dependent plans.
func BenchmarkOrder(b *testing.B) {
	for _, n := range []int{100, 200, 400, 3000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			steps := fullDeps(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := plan.Order(steps); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseNumbered parses numbered lists of n lines.
func BenchmarkParseNumbered(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			var text strings.Builder
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&text, "%d. Do part %d\n", i, i)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := plan.Parse(text.String()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStreamLongLine streams one plan whose steps are 2,000-byte
// lines in 5-byte chunks, as a model streams tokens: the cost of each
// chunk must not grow with the open line.
func BenchmarkStreamLongLine(b *testing.B) {
	text := ""
	for i := 1; i <= 3; i++ {
		text += fmt.Sprintf("%d. Search for %s\n", i, strings.Repeat("word ", 400))
	}
	for b.Loop() {
		s := plan.NewStream()
		got := 0
		for j := 0; j < len(text); j += 5 {
			got += len(s.Write(text[j:min(j+5, len(text))]))
		}
		if got += len(s.Close()); got != 3 {
			b.Fatalf("%d steps", got)
		}
	}
}
