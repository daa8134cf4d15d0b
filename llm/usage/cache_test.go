package usage

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockFragments are the pieces of the texts of the block tests: line breaks
// before every kind of rune (white space, Unicode spaces, '/', punctuation,
// letters, digits, marks), other scripts, and an invalid byte.
var blockFragments = []string{
	"\n", "\n\n", "\r\n", " \n", "\n ", "\n\t", "\n/", "/", "//", "\n\u00a0", "\u00a0", "\n\u3000", "\u3000",
	"\n!", "!\n", "?!\n/", "\n'", "'s", "'LL", "\nThe", "Thought: I need the diameter of Jupiter.",
	"Observation: [search] Jupiter is 142,984 km across; it's 11.2× Earth's.", "12345678", "\n42",
	"日本語のテキスト", "Москва́ — столица", "naïve café", "e\u0301", "\n\u0301", "🚀🚀", "HTTPServer", "McDonald's",
	"    ", "\t\t", "\xff", "\n\xe2\x82", "<|endoftext|>", "{\"query\": \"x\"}\n", "path/to/file.go:42",
}

// blockTexts returns n texts of about size bytes drawn from blockFragments
// with a fixed seed.
func blockTexts(n, size int) []string {
	rng := rand.New(rand.NewPCG(7, 11))
	texts := make([]string, n)
	for i := range texts {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(blockFragments[rng.IntN(len(blockFragments))])
			if rng.IntN(3) == 0 {
				b.WriteString(" word")
			}
		}
		texts[i] = b.String()
	}
	return texts
}

func TestBlockedCountsMatchReference(t *testing.T) {
	texts := append(blockTexts(24, 3*blockBytes), corpus...)
	for name, build := range map[string]func() (*Estimator, error){EncodingO200k: sharedEstimator, EncodingCL100k: sharedCL100k} {
		t.Run(name, func(t *testing.T) {
			shared, err := build()
			require.NoError(t, err)
			est := *shared
			est.cache, err = newCountCache(DefaultCacheSize) // a fresh cache, so that every block is counted here
			require.NoError(t, err)
			ref := reference(t, shared)
			for _, text := range texts {
				want := len(ref.EncodeOrdinary(text))
				assert.Equal(t, want, est.count(text), "whole text %q", text)
				assert.Equal(t, want, est.Count(text), "in blocks %q", text)
				assert.Equal(t, want, est.Count(text), "from the cache %q", text)
			}
		})
	}
}

func TestBlockEndCutsOnlyAfterALineFeedBeforeText(t *testing.T) {
	for _, text := range blockTexts(64, 4*blockBytes) {
		for rest := text; rest != ""; {
			end := blockEnd(rest, blockBytes)
			if end < len(rest) {
				require.GreaterOrEqual(t, end, blockBytes)
				require.Equal(t, byte('\n'), rest[end-1])
				r, c, _ := runeAt(rest, end)
				require.NotEqual(t, '/', r)
				require.Zero(t, c&classSpace)
				require.True(t, utf8.RuneStart(rest[end]))
			}
			rest = rest[end:]
		}
	}
	assert.Equal(t, 5, blockEnd("short", blockBytes))
	long := strings.Repeat("x", blockBytes)
	assert.Equal(t, len(long)+1, blockEnd(long+"\nabc", blockBytes), "cut after the line feed")
	assert.Equal(t, len(long)+6, blockEnd(long+"\n /\n\n\nabc", blockBytes), "cut at the first line feed before text")
	assert.Equal(t, len(long)+1, blockEnd(long+"\n", blockBytes), "no cut at the end")
}

func TestGrowingPromptRetokenisesOnlyItsTail(t *testing.T) {
	est, err := sharedEstimator()
	require.NoError(t, err)
	counter, probe := probed(est, 0)
	counter.cache, err = newCountCache(DefaultCacheSize)
	require.NoError(t, err)
	var prompt strings.Builder
	for step := range 20 {
		prompt.WriteString("Thought: I still need more facts.\nAction: Search[body]\nObservation: ")
		prompt.WriteString(strings.Repeat("Jupiter is the fifth planet from the Sun and the largest. ", 20+step))
		prompt.WriteString("\n")
		before := probe.bytes
		text := prompt.String()
		assert.Equal(t, est.count(text), counter.Count(text))
		if step > 0 {
			// The new step is about 1.3-2.5 KB; the rest is cached.
			assert.Less(t, probe.bytes-before, 4*blockBytes, "step %d re-tokenised %d bytes", step, probe.bytes-before)
		}
	}
}

func TestConcurrentCountsMatchSequentialCounts(t *testing.T) {
	est, err := sharedEstimator()
	require.NoError(t, err)
	texts := blockTexts(16, 2*blockBytes)
	want := make([]int, len(texts))
	for i, text := range texts {
		want[i] = est.count(text)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range texts {
				j := (i + g) % len(texts)
				assert.Equal(t, want[j], est.Count(texts[j]))
			}
		})
	}
	wg.Wait()
}
