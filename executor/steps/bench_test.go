package steps_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
)

// sleepTool sleeps for a fixed time, like a slow API call.
type sleepTool time.Duration

func (sleepTool) Name() string        { return "sleep" }
func (sleepTool) Description() string { return "sleeps" }
func (s sleepTool) Call(ctx context.Context, in string) (string, error) {
	select {
	case <-time.After(time.Duration(s)):
		return in, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// BenchmarkParallelSteps runs N independent steps whose tool sleeps 100 ms
// with the parallel strategy, and reports wall time divided by the critical
// path (100 ms per wave of max_concurrency steps) as wall/critical; 1.00 is
// perfect overlap.
func BenchmarkParallelSteps(b *testing.B) {
	const sleep = 100 * time.Millisecond
	reg, err := tools.NewRegistry([]tools.Tool{sleepTool(sleep)})
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct{ n, limit int }{{1, 1}, {4, 4}, {16, 16}, {64, 64}, {64, steps.DefaultMaxConcurrency}}
	for _, tc := range cases {
		b.Run(fmt.Sprintf("N=%d/max_concurrency=%d", tc.n, tc.limit), func(b *testing.B) {
			built, err := steps.NewExecute(nodekind.Env{Tools: reg}, nodekind.Spec{ID: "execute", Type: "execute",
				Settings: map[string]any{"strategy": "parallel", "max_concurrency": tc.limit}})
			if err != nil {
				b.Fatal(err)
			}
			pl := make([]plan.Step, tc.n)
			for i := range pl {
				pl[i] = plan.Step{ID: fmt.Sprint(i + 1), Description: "sleep", Tool: "sleep", Input: fmt.Sprint(i), Status: plan.StatusPending}
			}
			waves := (tc.n + tc.limit - 1) / tc.limit
			critical := time.Duration(waves) * sleep
			var wall time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st := hookedState(state.Task{Question: "q"})
				st.Plan = append([]plan.Step(nil), pl...)
				began := time.Now()
				if _, err := built.Node.Run(context.Background(), st); err != nil {
					b.Fatal(err)
				}
				wall += time.Since(began)
				if st.Plan[tc.n-1].Status != plan.StatusDone {
					b.Fatalf("step %d: %s", tc.n, st.Plan[tc.n-1].Status)
				}
			}
			b.ReportMetric(float64(wall)/float64(b.N)/float64(critical), "wall/critical")
		})
	}
}
