package usage_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/planner-engine/planner/llm/usage"
	"github.com/stretchr/testify/require"
)

// countBenchSizes are the text sizes of BenchmarkCountNoSpaces and
// BenchmarkCountProse.
var countBenchSizes = []struct {
	name string
	n    int
}{{"32KB", 32 << 10}, {"64KB", 64 << 10}, {"128KB", 128 << 10}, {"1MB", 1 << 20}}

// BenchmarkCountNoSpaces counts one character repeated, as from a model
// stuck in a loop: the text is a single pre-tokenisation piece.
func BenchmarkCountNoSpaces(b *testing.B) {
	benchmarkCountUncached(b, "a")
}

// BenchmarkCountNoSpacesRandomLetters counts random lower-case letters: a
// single piece, like BenchmarkCountNoSpaces, but without repeats, so that
// every chunk is merged. It is the worst case for the merge.
func BenchmarkCountNoSpacesRandomLetters(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	letters := make([]byte, 1<<20)
	for i := range letters {
		letters[i] = byte('a' + rng.IntN(26))
	}
	benchmarkCountUncached(b, string(letters))
}

// BenchmarkCountBase64 counts random base64, text without spaces that
// splits into many short pieces.
func BenchmarkCountBase64(b *testing.B) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	rng := rand.New(rand.NewPCG(3, 4))
	text := make([]byte, 1<<20)
	for i := range text {
		text[i] = alphabet[rng.IntN(len(alphabet))]
	}
	benchmarkCountUncached(b, string(text))
}

// BenchmarkCountProse counts English prose with punctuation and digits.
func BenchmarkCountProse(b *testing.B) {
	benchmarkCountUncached(b, "The quick brown fox jumps over the lazy dog. Thought: I need the diameter of Jupiter (142,984 km); "+
		"Action: search[\"Jupiter diameter\"]. Observation: it's 11.2 times Earth's.\n")
}

// benchmarkCountUncached measures Count without the cache, at each of
// countBenchSizes, on copies of unit (ASCII) cut to size. It uses only the
// exported API so that it also runs against earlier versions.
func benchmarkCountUncached(b *testing.B, unit string) {
	est, err := usage.NewEstimator(usage.WithCacheSize(0))
	require.NoError(b, err)
	for _, size := range countBenchSizes {
		text := strings.Repeat(unit, size.n/len(unit)+1)[:size.n]
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				est.Count(text)
			}
		})
	}
}
