package search_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/tools/search"
)

// BenchmarkIndex measures building (and closing) an index of the demo corpus.
func BenchmarkIndex(b *testing.B) {
	ctx := context.Background()
	docs, err := search.FromFS(corpus.Demo()).Documents(ctx)
	if err != nil {
		b.Fatal(err)
	}
	src := search.FromDocuments(docs...)
	b.ReportAllocs()
	for b.Loop() {
		idx, err := search.NewIndex(ctx, src)
		if err != nil {
			b.Fatal(err)
		}
		if err := idx.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(docs)), "docs")
}

// BenchmarkSearch measures one tool call (search plus formatting) on the demo
// corpus, cycling through four queries: after the first round the index's
// hit cache answers them (BenchmarkSearchUncached runs the query every time).
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	tool := demoTool(b)
	queries := []string{"Who discovered Titan?", "Voyager 2 Neptune flyby", "Ganymede diameter", "first asteroid ever found"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := tool.Call(ctx, queries[i%len(queries)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
