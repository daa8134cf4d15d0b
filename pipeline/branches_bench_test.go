package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// wideYAML fans out from START to n direct nodes joined by a collect.
func wideYAML(n int) string {
	prompts := make([]string, n)
	for i := range prompts {
		prompts[i] = fmt.Sprintf("say %d", i)
	}
	y := fanYAML(", merge: collect, into: 'var:all'", prompts, nil)
	return strings.Replace(y, "limits: {max_parallel: 4}", fmt.Sprintf("limits: {max_parallel: %d, max_steps: %d}", n, n+10), 1)
}

// chainYAML runs n direct nodes one after the other.
func chainYAML(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: chain\nllm: {provider: fake}\nlimits: {max_steps: %d}\nnodes:\n", n+10)
	for i := range n {
		fmt.Fprintf(&b, "  - {id: n%d, type: direct, prompt: \"say %d\"}\n", i, i)
	}
	b.WriteString("edges:\n  - {from: START, to: n0}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - {from: n%d, to: n%d}\n", i-1, i)
	}
	fmt.Fprintf(&b, "  - {from: n%d, to: END}\n", n-1)
	return b.String()
}

func benchRun(b *testing.B, yaml string, m llms.Model) {
	b.Helper()
	p, _, err := buildWith(b, yaml, m)
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Run(context.Background(), state.Task{Question: "q"}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFanOut64x100ms runs 64 branches, each one 100 ms model call:
// the critical path is 100 ms; x-critical-path is the wall over it.
func BenchmarkFanOut64x100ms(b *testing.B) { benchCriticalPath(b, wideYAML(64)) }

// benchCriticalPath runs yaml, whose graph's critical path is one 100 ms
// model call, and reports its wall time and the wall over that path.
func benchCriticalPath(b *testing.B, yaml string) {
	b.Helper()
	m := &llmtest.Latency{Delay: 100 * time.Millisecond, Model: &sayer{}}
	p, _, err := buildWith(b, yaml, m)
	require.NoError(b, err)
	var total time.Duration
	n := 0
	for b.Loop() {
		began := time.Now()
		if _, err := p.Run(context.Background(), state.Task{Question: "q"}, nil); err != nil {
			b.Fatal(err)
		}
		total += time.Since(began)
		n++
	}
	b.ReportMetric(float64(total.Microseconds())/float64(n)/1000, "wall-ms")
	b.ReportMetric(float64(total)/float64(n)/float64(100*time.Millisecond), "x-critical-path")
}

// BenchmarkFanOut64Instant and BenchmarkChain64Instant run 64 node
// executions with an instant model, as branches of one fan-out and as a
// sequence: per op / 64 is the engine's cost of a branch and of a plain
// sequential step.
func BenchmarkFanOut64Instant(b *testing.B) { benchRun(b, wideYAML(64), &sayer{}) }

// BenchmarkChain64Instant: see BenchmarkFanOut64Instant.
func BenchmarkChain64Instant(b *testing.B) { benchRun(b, chainYAML(64), &sayer{}) }

// mapYAMLOf maps n items through an inline one-node graph, all at once.
func mapYAMLOf(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf("%q", fmt.Sprint(i))
	}
	return fmt.Sprintf(`name: mapbench
llm: {provider: fake}
nodes:
  - {id: items, type: set, assign: {qs: 'toJSON([%s])'}}
  - id: each
    type: map
    over: var:qs
    max_parallel: %d
    graph:
      nodes: [{id: say, type: direct, prompt: "say {{.Question}}"}]
      edges: [{from: START, to: say}, {from: say, to: END}]
edges:
  - {from: START, to: items}
  - {from: items, to: each}
  - {from: each, to: END}
`, strings.Join(items, ", "), n)
}

// BenchmarkMap64Instant runs 64 map items of one node each with an
// instant model: per op / 64 is the engine's cost of a map item (a nested
// run), against BenchmarkChain64Instant's plain sequential step.
func BenchmarkMap64Instant(b *testing.B) { benchRun(b, mapYAMLOf(64), &sayer{}) }

// BenchmarkMap64x100ms runs 64 map items, each one 100 ms model call, all
// at once: x-critical-path is the wall over the 100 ms critical path.
func BenchmarkMap64x100ms(b *testing.B) { benchCriticalPath(b, mapYAMLOf(64)) }
