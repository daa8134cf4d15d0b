package usage

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tokensOf runs the Estimator's pipeline (validUTF8, pieceEnd, bpeCount) and
// returns the token ids instead of their number, reading the tokens off the
// parts bpeCount leaves in its scratch. It cuts nothing, so pieces must not
// be longer than e.maxPiece for Count to agree with it.
func tokensOf(e *Estimator, text string) []int {
	text = validUTF8(text)
	var sc bpeScratch
	var tokens []int
	for i := 0; i < len(text); {
		end := e.pieceEnd(text, i)
		piece := text[i:end]
		if r, ok := e.ranks[piece]; ok {
			tokens = append(tokens, r)
		} else {
			bpeCount(piece, e.ranks, &sc)
			for k := int32(0); k < int32(len(piece)); k = sc.next[k] {
				tokens = append(tokens, e.ranks[piece[k:sc.next[k]]])
			}
		}
		i = end
	}
	return tokens
}

// randomWord returns n random lower-case ASCII letters: a piece that is
// rarely a token, so that the merge does many steps.
func randomWord(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

func TestCountMatchesTiktokenTokenForToken(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var texts []string
	for n := 0; n < 400; n++ {
		texts = append(texts, randomText(rng, 60))
	}
	for n := 0; n < 40; n++ {
		texts = append(texts, randomWord(rng, 20+rng.IntN(300)), " "+randomWord(rng, 50)+"Q"+randomWord(rng, 80))
	}
	for _, unit := range []string{"a", "ab", "abc", " ", "。", "-", "\n", "A", "日", "x\u0301", "é"} {
		for _, n := range []int{1, 2, 3, 5, 17, 64, 255, 256, 257, 1000} {
			texts = append(texts, strings.Repeat(unit, n))
		}
	}
	// Invalid UTF-8: tiktoken-go counts each bad byte as U+FFFD.
	texts = append(texts, "a\x80b", "\xff\xfe hello", "日\xe6\x97本", "\xed\xa0\x80x", "ok\xc3")
	for name, build := range map[string]func() (*Estimator, error){EncodingO200k: sharedEstimator, EncodingCL100k: sharedCL100k} {
		t.Run(name, func(t *testing.T) {
			est, err := build()
			require.NoError(t, err)
			for _, text := range texts {
				want := reference(t, est).EncodeOrdinary(text)
				if !assert.Equal(t, want, tokensOf(est, text), "text %q", text) {
					return
				}
				assert.Equal(t, len(want), est.Count(text), "text %q", text)
			}
		})
	}
}

// TestMergeWorkIsLinearInThePieceLength bounds the work of one merge.
// tiktoken-go rescans all parts for every merge, n²/2 steps for n bytes of
// one character. bpeCount does one rank lookup per adjacent byte pair and at
// most two per merge, so at most 3n; every heap push follows a successful
// lookup and every pop removes a pushed candidate, so the heap does at most
// 3n operations of O(log n) each.
func TestMergeWorkIsLinearInThePieceLength(t *testing.T) {
	est, err := sharedEstimator()
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 8))
	const n = DefaultMaxPieceBytes
	tests := []struct {
		name  string
		piece string
	}{
		{"one letter repeated", strings.Repeat("a", n)},
		{"a two-letter pattern repeated", strings.Repeat("ab", n/2)},
		{"spaces", strings.Repeat(" ", n)},
		{"CJK full stops", strings.Repeat("。", n/3)},
		{"dashes", strings.Repeat("-", n)},
		{"random letters", randomWord(rng, n)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sc bpeScratch
			tokens := bpeCount(tt.piece, est.ranks, &sc)
			assert.Positive(t, tokens)
			assert.LessOrEqual(t, sc.lookups, 3*len(tt.piece))
		})
	}
}
