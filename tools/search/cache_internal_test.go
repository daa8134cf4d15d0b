package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/corpus"
)

func demoIndex(tb testing.TB) *Index {
	tb.Helper()
	idx, err := NewIndex(context.Background(), FromFS(corpus.Demo()))
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = idx.Close() })
	return idx
}

// TestCachedSearchEqualsUncached checks that a repeated search gets
// exactly the hits (scores,
// snippets) that an index without a cache returns, and that changing the
// returned slice does not change the cache.
func TestCachedSearchEqualsUncached(t *testing.T) {
	ctx := context.Background()
	cached, fresh := demoIndex(t), demoIndex(t)
	fresh.cache.off = true
	queries := []string{"Who discovered Titan?", "who DISCOVERED titan", "Voyager 2 Neptune flyby", "Ganymede diameter", "first asteroid ever found", "zzzz-no-match"}
	for _, k := range []int{1, 3, 10} {
		for round := range 3 {
			for _, q := range queries {
				want, err := fresh.Search(ctx, q, k)
				require.NoError(t, err)
				got, err := cached.Search(ctx, q, k)
				require.NoError(t, err)
				require.Equal(t, len(want), len(got), "%q k=%d round %d", q, k, round)
				for i := range want {
					assert.Equal(t, want[i].Doc, got[i].Doc)
					assert.Equal(t, want[i].Score, got[i].Score)
					assert.Equal(t, located(want[i].matches), located(got[i].matches))
					assert.Equal(t, want[i].Snippet(120), got[i].Snippet(120))
				}
				if len(got) > 0 {
					got[0] = Hit{} // the caller's copy
				}
			}
		}
	}
	assert.Zero(t, fresh.cache.len())
	assert.NotZero(t, cached.cache.len())
}

// located drops the match ids, which number a hit's terms in map order.
func located(ms []match) []match {
	out := make([]match, len(ms))
	for i, m := range ms {
		m.id = 0
		out[i] = m
	}
	return out
}

func TestClosedIndexDoesNotServeCachedHits(t *testing.T) {
	ctx := context.Background()
	idx, err := NewIndex(ctx, FromFS(corpus.Demo()))
	require.NoError(t, err)
	hits, err := idx.Search(ctx, "Titan", 3)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	require.NoError(t, idx.Close())
	_, err = idx.Search(ctx, "Titan", 3)
	assert.ErrorIs(t, err, ErrClosed)
}

func TestHitCacheIsBounded(t *testing.T) {
	var c hitCache
	for i := range cacheSize + 10 {
		c.put(hitKey{query: fmt.Sprint(i), k: 1}, []Hit{{Score: float64(i)}})
	}
	assert.Equal(t, cacheSize, c.len())
	_, ok := c.get(hitKey{query: "0", k: 1})
	assert.False(t, ok, "the oldest entry was evicted")
	h, ok := c.get(hitKey{query: fmt.Sprint(cacheSize + 9), k: 1})
	require.True(t, ok)
	assert.Equal(t, float64(cacheSize+9), h[0].Score)
}

// BenchmarkSearchUncached is BenchmarkSearch without the hit cache: every
// call runs the BM25 query and cuts the snippets.
func BenchmarkSearchUncached(b *testing.B) {
	ctx := context.Background()
	idx := demoIndex(b)
	idx.cache.off = true
	tool, err := NewTool(idx)
	require.NoError(b, err)
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
