package usage

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// palette holds runes of every class the patterns distinguish, plus the
// characters they name literally and a few whose case mapping or class is a
// known trap (long s, Kelvin sign, dotted I, zero-width space, BOM).
var palette = []rune{
	// lower and upper case ASCII, including the contraction letters
	'a', 's', 't', 'r', 'e', 'v', 'm', 'l', 'd', 'x',
	'A', 'S', 'T', 'R', 'E', 'V', 'M', 'L', 'D', 'X',
	'0', '7', // Nd
	'\'', '/', '.', ',', '-', '!', '"', '(', '_', '#', '\x00', '\x1f', '~',
	' ', '\t', '\n', '\r', '\v', '\f', '\u0085', '\u00a0', '\u1680', '\u2000', '\u2028', '\u2029', '\u202f', '\u3000',
	'é', 'É', 'ß', 'σ', 'Σ', 'б', 'Б',
	'ǅ',      // Lt
	'ʰ', 'ー', // Lm
	'日', 'あ', 'ا', // Lo
	'ſ', 'K', 'İ', // case-mapping traps
	'\u0301', '\u0903', '\u20dd', // Mn, Mc, Me
	'²', 'Ⅳ', '٣', '½', // No, Nl, Nd, No
	'€', '🚀', '。', '—', '\ufffd', '\u200b', '\ufeff', // symbols and format characters
}

// randomText builds a text of up to maxRunes runes from palette, in runs of
// one to four equal runes so that every kind of run occurs.
func randomText(rng *rand.Rand, maxRunes int) string {
	var b strings.Builder
	for n := rng.IntN(maxRunes) + 1; n > 0; {
		r := palette[rng.IntN(len(palette))]
		for k := rng.IntN(4) + 1; k > 0 && n > 0; k-- {
			b.WriteRune(r)
			n--
		}
	}
	return b.String()
}

// regexpPieces splits text as tiktoken-go does: with regexp2 and the
// encoding's pattern.
func regexpPieces(t testing.TB, re *regexp2.Regexp, text string) []string {
	t.Helper()
	var pieces []string
	m, err := re.FindStringMatch(text)
	require.NoError(t, err)
	for m != nil {
		pieces = append(pieces, m.String())
		m, err = re.FindNextMatch(m)
		require.NoError(t, err)
	}
	return pieces
}

func splitterPieces(end func(string, int) int, text string) []string {
	var pieces []string
	for i := 0; i < len(text); {
		j := end(text, i)
		pieces = append(pieces, text[i:j])
		i = j
	}
	return pieces
}

func compiledPatterns(t testing.TB) map[string]*regexp2.Regexp {
	t.Helper()
	res := map[string]*regexp2.Regexp{}
	for name, pats := range encodingPatterns {
		re, err := regexp2.Compile(strings.Join(pats, "|"), regexp2.None)
		require.NoError(t, err)
		res[name] = re
	}
	return res
}

func TestPieceSplittersMatchRegexp(t *testing.T) {
	fixed := append([]string{
		"", "'s", "'S", "'ſ", "x'LL", "ab'Re", "AB'vE", "A'd", "'", "''s", "don't", "DON'T", "I'm",
		"  x", " x", "  ", " \n ", "\n\n  \t\n x", "a \u00a0b", "\u3000\u3000日", " !!", " !\n\n/x", "!/\n/", "a/b",
		"12345678", "1²3Ⅳ5", "ǅemo", "ʰa", "Aʰ", "AAb", "aBC", "ABCdef", "\u0301\u0301a", "a\u0301\u0301", "É\u0301É",
		"x\r\n\r\ny", "x \r\n", "\t\tx", "\u0085x", "K'K", "İ's",
	}, corpus...)
	rng := rand.New(rand.NewPCG(1, 2))
	for name, re := range compiledPatterns(t) {
		end := pieceEnds[name]
		t.Run(name, func(t *testing.T) {
			for _, text := range fixed {
				assert.Equal(t, regexpPieces(t, re, text), splitterPieces(end, text), "text %q", text)
			}
			for n := 0; n < 3000; n++ {
				text := randomText(rng, 24)
				if !assert.Equal(t, regexpPieces(t, re, text), splitterPieces(end, text), "text %q", text) {
					return
				}
			}
		})
	}
}

func FuzzPieceSplittersMatchRegexp(f *testing.F) {
	for _, s := range corpus {
		f.Add(s)
	}
	f.Add("x'LL  \u3000日本\u0301 12345 !!/\n\n")
	res := compiledPatterns(f)
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			t.Skip("Count replaces invalid bytes before splitting")
		}
		for name, re := range res {
			assert.Equal(t, regexpPieces(t, re, text), splitterPieces(pieceEnds[name], text), "%s: text %q", name, text)
		}
	})
}

func TestValidUTF8ReplacesEachInvalidByte(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "valid text is unchanged", in: "héllo 日本", want: "héllo 日本"},
		{name: "a lone continuation byte", in: "a\x80b", want: "a\ufffdb"},
		{name: "a truncated sequence gives one replacement per byte", in: "\xe6\x97", want: "\ufffd\ufffd"},
		{name: "an encoded surrogate is three invalid bytes", in: "\xed\xa0\x80", want: "\ufffd\ufffd\ufffd"},
		{name: "a literal replacement character stays", in: "\ufffd", want: "\ufffd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, validUTF8(tt.in))
			assert.Equal(t, string([]rune(tt.in)), validUTF8(tt.in), "must agree with Go's []rune conversion, which tiktoken-go uses")
		})
	}
}
