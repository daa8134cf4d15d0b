package usage

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mib = 1 << 20

// mergeProbe records what an Estimator hands to the byte-pair merge.
type mergeProbe struct {
	merges  int // pieces and chunks merged
	bytes   int // their total length
	longest int // the length of the longest
}

// probed returns a copy of e without a cache whose merges are recorded in
// the returned probe; maxPiece > 0 replaces e's maximum piece length.
func probed(e *Estimator, maxPiece int) (*Estimator, *mergeProbe) {
	c := *e
	c.cache = nil
	if maxPiece > 0 {
		c.maxPiece = maxPiece
	}
	p := &mergeProbe{}
	c.onMerge = func(piece string) {
		p.merges++
		p.bytes += len(piece)
		p.longest = max(p.longest, len(piece))
	}
	return &c, p
}

// proseUnit mixes English, code, JSON, a URL, other scripts, digits,
// punctuation, tabs and line breaks. It ends with a line break and starts
// with a letter, so that its copies tokenise independently.
var proseUnit = strings.Join(append([]string{
	"Thought: I need the diameter of Jupiter and the distance to Saturn (1,433,530,000 km) before I answer.",
	"Action: search\nAction Input: {\"query\": \"Jupiter diameter\", \"max_results\": 5, \"lang\": \"en-GB\"}",
	"Observation: [1] https://en.wikipedia.org/wiki/Jupiter — Jupiter's equatorial diameter is 142,984 km; it's 11.2× Earth's.",
	"func main() {\n\tfor i := 0; i < 10; i++ {\n\t\tfmt.Printf(\"%d: %v\\n\", i, xs[i])\n\t}\n}",
	"| model | tokens | cost |\n|-------|-------:|-----:|\n| gpt-4o | 1,234 | $0.01 |",
	"Übergrößenträger naïve café — «déjà vu». Москва́ — столица России. 東京は日本の首都です。",
	"We'll see; they'd said THEY'LL come at 10:30pm.\r\nEnd.",
}, corpus...), "\n") + "\n"

// prose returns about n bytes of copies of proseUnit and the copy count.
func prose(n int) (string, int) {
	k := n / len(proseUnit)
	return strings.Repeat(proseUnit, k), k
}

func randomBase64(rng *rand.Rand, n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// scaledSampleCount is the reference for a run of one repeated unit: the
// exact count, uncut, of a 64 KiB run of the unit, scaled to len(text).
func scaledSampleCount(e *Estimator, unit, text string) float64 {
	sample := strings.Repeat(unit, (64<<10)/len(unit))
	exact, _ := probed(e, len(sample))
	return float64(exact.Count(sample)) * float64(len(text)) / float64(len(sample))
}

// cutTolerance is the relative error allowed where long runs are cut. The
// measured error at the default 8 KiB is 0 for these runs and at most
// 0.03 % for others (a 3-byte pattern: one token per cut).
const cutTolerance = 0.001

// TestCountBoundsTheMergedPieceLength feeds 1 MiB texts of the shapes that
// made Count quadratic: without the bound, a run of one character reaches
// the merge as one 1 MiB piece. It asserts on the work done, not on time:
// no merged piece is longer than the bound, and every byte is merged at
// most once.
func TestCountBoundsTheMergedPieceLength(t *testing.T) {
	est, err := sharedEstimator()
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(9, 10))
	proseText, copies := prose(mib)
	base64 := randomBase64(rng, mib)
	type testCase struct {
		name string
		text string
		// want is the reference count.
		want func(t *testing.T) float64
		// tolerance is the relative error allowed; 0 means exact.
		tolerance float64
	}
	// scaled is a run of unit repeated n times, compared with an exact
	// count of a 64 KiB sample of it scaled up.
	scaled := func(what, unit string, n int) testCase {
		text := strings.Repeat(unit, n)
		return testCase{name: what + ": within tolerance of a scaled exact sample", text: text,
			want: func(*testing.T) float64 { return scaledSampleCount(est, unit, text) }, tolerance: cutTolerance}
	}
	tests := []testCase{
		scaled("one letter repeated", "a", mib),
		scaled("a two-letter pattern", "ab", mib/2),
		scaled("spaces", " ", mib),
		scaled("CJK full stops", "。", mib/3),
		{
			name: "digits are exact: every group of up to three digits is one token",
			text: strings.Repeat("0123456789", mib/10),
			want: func(t *testing.T) float64 {
				require.Len(t, reference(t, est).EncodeOrdinary(strings.Repeat("0123456789", 30)), 100)
				return float64((mib/10*10 + 2) / 3)
			},
		},
		{
			name: "random base64 is exact: it splits into short pieces",
			text: base64,
			want: func(t *testing.T) float64 {
				sample := base64[:4<<10]
				require.Len(t, reference(t, est).EncodeOrdinary(sample), est.Count(sample))
				uncut, _ := probed(est, len(base64))
				return float64(uncut.Count(base64))
			},
		},
		{
			name: "mixed prose is exact",
			text: proseText,
			want: func(t *testing.T) float64 {
				four := strings.Repeat(proseUnit, 4)
				require.Len(t, reference(t, est).EncodeOrdinary(four), 4*len(reference(t, est).EncodeOrdinary(proseUnit)), "copies of proseUnit must tokenise independently")
				return float64(copies * len(reference(t, est).EncodeOrdinary(proseUnit)))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter, probe := probed(est, 0)
			got := counter.Count(tt.text)
			assert.LessOrEqual(t, probe.longest, DefaultMaxPieceBytes, "longest piece handed to the merge")
			assert.LessOrEqual(t, probe.bytes, len(tt.text), "bytes handed to the merge")
			want := tt.want(t)
			if tt.tolerance == 0 {
				assert.Equal(t, int(want), got)
			} else {
				assert.InEpsilon(t, want, float64(got), tt.tolerance)
			}
		})
	}
}

func TestCountOfProseIsExactlyTiktokens(t *testing.T) {
	texts := append([]string{proseUnit, strings.Repeat(proseUnit, 3)}, strings.Split(proseUnit, "\n")...)
	for name, build := range map[string]func() (*Estimator, error){EncodingO200k: sharedEstimator, EncodingCL100k: sharedCL100k} {
		t.Run(name, func(t *testing.T) {
			est, err := build()
			require.NoError(t, err)
			// A small bound must not change prose either: its pieces are short.
			small, probe := probed(est, 64)
			for _, text := range texts {
				want := len(reference(t, est).EncodeOrdinary(text))
				assert.Equal(t, want, est.Count(text), "text %q", text)
				assert.Equal(t, want, small.Count(text), "text %q", text)
			}
			assert.LessOrEqual(t, probe.longest, 64)
		})
	}
}

func TestCountCutsPiecesLongerThanTheBound(t *testing.T) {
	est, err := sharedEstimator()
	require.NoError(t, err)
	tests := []struct {
		name     string
		text     string
		maxPiece int
	}{
		{name: "a letter run after a word", text: "Say " + strings.Repeat("a", 1000), maxPiece: 64},
		{name: "a run of multi-byte runes is cut at rune boundaries", text: strings.Repeat("。", 500), maxPiece: 64},
		{name: "a bound that splits a rune backs off to its start", text: strings.Repeat("日本", 300), maxPiece: MinMaxPieceBytes + 1},
		{name: "white space before a word", text: strings.Repeat(" ", 3000) + "x", maxPiece: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter, probe := probed(est, tt.maxPiece)
			got := counter.Count(tt.text)
			assert.LessOrEqual(t, probe.longest, tt.maxPiece)
			exact := len(reference(t, est).EncodeOrdinary(tt.text))
			cuts := len(tt.text) / (tt.maxPiece - MinMaxPieceBytes + 1)
			assert.InDelta(t, exact, got, float64(2*cuts), "at most two tokens per cut")
		})
	}
}

func TestCountMemoisesLongTexts(t *testing.T) {
	est, err := sharedEstimator()
	require.NoError(t, err)
	counter, probe := probed(est, 0)
	counter.cache, err = newCountCache(16)
	require.NoError(t, err)
	text := strings.Repeat("ab", mib/2)
	first := counter.Count(text)
	merges := probe.merges
	require.Positive(t, merges)
	assert.Equal(t, first, counter.Count(text))
	assert.Equal(t, merges, probe.merges, "the second count must come from the cache")
}

func TestNewEstimatorChecksMaxPieceBytes(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		wantErr bool
	}{
		{name: "negative is rejected", n: -1, wantErr: true},
		{name: "zero is rejected", n: 0, wantErr: true},
		{name: "shorter than a rune is rejected", n: MinMaxPieceBytes - 1, wantErr: true},
		{name: "over the maximum is rejected", n: MaxMaxPieceBytes + 1, wantErr: true},
		{name: "the minimum is accepted", n: MinMaxPieceBytes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			est, err := NewEstimator(WithMaxPieceBytes(tt.n), WithCacheSize(0))
			if tt.wantErr {
				assert.ErrorIs(t, err, ErrInvalidOption)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.n, est.maxPiece)
			assert.Equal(t, 2, est.Count("hello world"))
		})
	}
}
