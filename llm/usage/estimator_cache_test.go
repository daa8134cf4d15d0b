package usage_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/llm/usage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCachedCountsEqualUncachedCounts(t *testing.T) {
	cached, err := usage.NewEstimator()
	require.NoError(t, err)
	plain, err := usage.NewEstimator(usage.WithCacheSize(0))
	require.NoError(t, err)
	texts := []string{"short", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40), "Thought: I need the diameter of Jupiter.\nAction: search\nAction Input: Jupiter diameter " + strings.Repeat("x", 80)}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, s := range texts {
				assert.Equal(t, plain.Count(s), cached.Count(s))
			}
		}()
	}
	wg.Wait()
}

func BenchmarkCountRepeatedPrompt(b *testing.B) {
	for _, size := range []int{0, usage.DefaultCacheSize} {
		e, err := usage.NewEstimator(usage.WithCacheSize(size))
		require.NoError(b, err)
		text := strings.Repeat("Observation: [search] Jupiter is the fifth planet from the Sun. ", 30)
		name := "uncached"
		if size > 0 {
			name = "cached"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				e.Count(text)
			}
		})
	}
}
