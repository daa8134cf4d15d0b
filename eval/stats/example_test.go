package stats_test

import (
	"fmt"

	"github.com/planner-engine/planner/eval/stats"
)

// Stop running two configurations once one is shown better: feed the paired
// per-task differences into an always-valid confidence sequence over
// [-1, 1] and check it after every task.
func ExampleConfidenceSequence() {
	// Pass (1) or fail (0) of configurations A and B on the same tasks, in
	// the (random) order they were run.
	a := []float64{1, 1, 0, 1, 1, 1, 0, 1, 1, 1}
	b := []float64{0, 1, 0, 0, 1, 0, 0, 1, 0, 0}
	cs, err := stats.NewConfidenceSequence(0.05, -1, 1)
	if err != nil {
		panic(err)
	}
	for task := range 200 {
		if err := cs.Add(a[task%10] - b[task%10]); err != nil {
			panic(err)
		}
		if cs.Above(0) || cs.Below(0) {
			break
		}
	}
	iv := cs.Interval()
	fmt.Printf("after %d tasks: A-B in [%.3f, %.3f] at %.0f%%, mean %.2f, A better: %v\n",
		cs.N(), iv.Lo, iv.Hi, 100*iv.Level, cs.Mean(), cs.Above(0))
	// Output: after 34 tasks: A-B in [0.009, 0.989] at 95%, mean 0.50, A better: true
}
