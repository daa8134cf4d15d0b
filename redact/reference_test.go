package redact_test

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/planner-engine/planner/redact"
	"github.com/stretchr/testify/require"
)

// reference is the scrubbing rule set stated plainly, as the cassette
// package applied it before package redact existed: every literal secret
// replaced in order (longest first), then each pattern's regexp over the
// whole text. String must give the same result for every input; its fast
// path only decides when this work can be skipped.
type reference struct {
	values, replacements []string
}

var (
	refBearer = regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}`)
	refOpenAI = regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`)
	refGoogle = regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)
)

func (r reference) scrub(v string) string {
	for i, val := range r.values {
		v = strings.ReplaceAll(v, val, r.replacements[i])
	}
	v = refBearer.ReplaceAllStringFunc(v, func(m string) string { return m[:len("bearer")] + " " + redact.Redacted })
	v = refOpenAI.ReplaceAllString(v, redact.Redacted)
	return refGoogle.ReplaceAllString(v, redact.Redacted)
}

// fixture is a scrubber and its reference: environment secrets sharing
// prefixes and overlapping one another, and a one-byte extra secret.
func fixture() (*redact.Scrubber, reference) {
	s := redact.New(redact.WithEnviron([]string{
		"A_KEY=abcdefgh", "B_KEY=abcdefghijkl", "C_TOKEN=ghijklmnop", "D_SECRET=sk-live-0123456789abcdef",
		"E_PASSWORD=pa ss wo rd", "F_KEY=short",
	}), redact.WithSecrets("#", "REDACTED"))
	ref := reference{
		values:       []string{"sk-live-0123456789abcdef", "abcdefghijkl", "ghijklmnop", "pa ss wo rd", "REDACTED", "abcdefgh", "#"},
		replacements: []string{"[REDACTED:D_SECRET]", "[REDACTED:B_KEY]", "[REDACTED:C_TOKEN]", "[REDACTED:E_PASSWORD]", "[REDACTED]", "[REDACTED:A_KEY]", "[REDACTED]"},
	}
	return s, ref
}

// fragments are the pieces random inputs are made of: secrets and near
// misses, pattern prefixes, key characters and separators.
var fragments = []string{
	"abcdefgh", "abcdefghijkl", "abcdefg", "ghijklmnop", "sk-live-0123456789abcdef", "pa ss wo rd", "#", "REDACTED",
	"Bearer", "bearer", "BEARER", "bEaReR", " ", "\t", "\n", "\v", "\f", "sk-", "sk", "AIza", "AI", "za", "x", "_", "-", ".", "/", "=",
	"0123456789", "ABCDEFGHIJ", "klmnopqrst", "Zz", "é", "[", "]", ":", "task", "0",
}

func randomInput(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(24) {
		b.WriteString(fragments[rng.IntN(len(fragments))])
	}
	return b.String()
}

func TestStringMatchesTheReferenceRules(t *testing.T) {
	s, ref := fixture()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		in := randomInput(rng)
		require.Equal(t, ref.scrub(in), s.String(in), "input %q", in)
	}
	var zero redact.Scrubber
	for range 1000 {
		in := randomInput(rng)
		require.Equal(t, reference{}.scrub(in), zero.String(in), "zero scrubber, input %q", in)
	}
}

func FuzzStringMatchesTheReferenceRules(f *testing.F) {
	for _, seed := range []string{
		"", "Bearer abcdefghijk", "xBearer abcdefghijk", "sk-abcdefghijklmnopqrstu", "AIza" + strings.Repeat("a", 35),
		"AIza" + strings.Repeat("a", 34) + "-", "AIza" + strings.Repeat("a", 34) + "--", "abcdefghijkl abcdefgh #",
	} {
		f.Add(seed)
	}
	s, ref := fixture()
	f.Fuzz(func(t *testing.T, in string) {
		if got, want := s.String(in), ref.scrub(in); got != want {
			t.Fatalf("String(%q) = %q, want %q", in, got, want)
		}
	})
}
