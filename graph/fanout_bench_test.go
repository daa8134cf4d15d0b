package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/planner-engine/planner/graph"
)

// BenchmarkFanOut64Noop and BenchmarkChain64Noop run 64 executions of a
// node that sets one value, as the branches of one fan-out (a fork of the
// state each, a goroutine each, a join) and as a sequence: per op / 64
// compares the runtime's cost of a branch with that of a plain step.
func BenchmarkFanOut64Noop(b *testing.B) {
	g := graph.New[*fstate]()
	ids := make([]string, 64)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%d", i)
		g.AddNode(ids[i], put(ids[i], "out", ids[i])).AddEdge(ids[i], "join")
	}
	c, err := g.AddNode("join", &tjoin{}).AddFanOut(graph.START, ids...).AddEdge("join", graph.END).Compile()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Run(context.Background(), newFState(), graph.WithMaxParallel(64), graph.WithMaxSteps(100)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChain64Noop: see BenchmarkFanOut64Noop.
func BenchmarkChain64Noop(b *testing.B) {
	g := graph.New[*fstate]().AddEdge(graph.START, "n0")
	for i := range 64 {
		id := fmt.Sprintf("n%d", i)
		g.AddNode(id, put(id, "out", id))
		if i > 0 {
			g.AddEdge(fmt.Sprintf("n%d", i-1), id)
		}
	}
	c, err := g.AddEdge("n63", graph.END).Compile()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Run(context.Background(), newFState(), graph.WithMaxSteps(100)); err != nil {
			b.Fatal(err)
		}
	}
}
