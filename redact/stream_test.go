package redact_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/planner-engine/planner/redact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamed feeds text to a new Stream of s in the given piece lengths and
// returns what it emitted, piece by piece, then at Flush.
func streamed(s *redact.Scrubber, text string, sizes func() int) (parts []string, all string) {
	st := s.NewStream()
	for len(text) > 0 {
		n := min(max(sizes(), 1), len(text))
		parts = append(parts, st.Write(text[:n]))
		text = text[n:]
	}
	parts = append(parts, st.Flush())
	return parts, strings.Join(parts, "")
}

func TestStreamScrubsSecretsSplitAcrossPiecesAsInTheWholeText(t *testing.T) {
	const envSecret = "plain value, with spaces: 0123456789!"
	s := redact.New(redact.WithEnviron([]string{"PLANNER_TEST_API_KEY=" + envSecret, "SHORT_TOKEN=zz@zz#zz"}),
		redact.WithSecrets("x1"))
	texts := []string{
		"the key is " + envSecret + ", keep it",
		envSecret + envSecret + " twice, and again:" + envSecret,
		"openai " + testKey + ". anthropic sk-ant-api03-abcdefghijklmnop\nok",
		"Authorization: Bearer abc.def-ghi_jkl+/= and BEARER \t\n  abcdefghijkl end",
		"google AIzaSyA-1234567890abcdefghijklmnopqrstu end; AIzaSyA-1234567890abcdefghijklmnopqrstuv too long",
		"the bearer of news, task-abcdefghijklmnopqrstuvwxyz and xsk-abcdefghijklmnopqrstuvwxyz stay",
		"ünïcödé — 日本語 " + testKey + " ✓ zz@zz#zz x1 éé",
		"ends with a key " + testKey,
		"ends with bearer ",
		"ends with a partial secret " + envSecret[:10],
		"",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, text := range texts {
		want := s.String(text)
		for _, sizes := range []func() int{
			func() int { return 1 },
			func() int { return 3 },
			func() int { return 1 + rng.IntN(12) },
			func() int { return len(text) },
		} {
			for range 20 {
				_, got := streamed(s, text, sizes)
				require.Equal(t, want, got, "text %q", text)
			}
		}
	}
}

func TestStreamEmitsEachWordOnceItEnds(t *testing.T) {
	s := redact.New(redact.WithEnviron([]string{"PLANNER_TEST_API_KEY=" + "abcdefghijkl"}))
	st := s.NewStream()
	assert.Equal(t, "", st.Write("Hel"))
	assert.Equal(t, "Hello ", st.Write("lo wor"))
	assert.Equal(t, "world, ", st.Write("ld, abcd"), "the start of the secret is held back")
	assert.Equal(t, "[REDACTED:PLANNER_TEST_API_KEY] ", st.Write("efghijkl and"))
	assert.Equal(t, 3, st.Pending())
	assert.Equal(t, "and", st.Flush())
	assert.Equal(t, "", st.Flush())
	assert.Equal(t, "next ", st.Write("next "), "after Flush, a new text")
}

func TestStreamCutsAWordLongerThanTheHold(t *testing.T) {
	s := redact.New(redact.WithEnviron(nil))
	blob := strings.Repeat("QUJDRA", 3*redact.MaxStreamHold/6)
	st := s.NewStream()
	var early string
	for i := 0; i < len(blob); i += 100 {
		early += st.Write(blob[i:min(i+100, len(blob))])
	}
	assert.NotEmpty(t, early, "a very long word is not held whole")
	assert.LessOrEqual(t, st.Pending(), redact.MaxStreamHold+100)
	assert.Equal(t, blob, early+st.Flush())
}

func TestStreamOfANilScrubberPassesThrough(t *testing.T) {
	var s *redact.Scrubber
	st := s.NewStream()
	assert.Equal(t, "sk-abc", st.Write("sk-abc"))
	assert.Equal(t, "", st.Flush())
}

// FuzzStream checks that a text streamed in pieces of any sizes is
// scrubbed as the whole text is.
func FuzzStream(f *testing.F) {
	f.Add("key "+testKey+" and Bearer abcdefghijkl, AIzaSyA-1234567890abcdefghijklmnopqrstu", uint64(7))
	f.Add("sec ret!sec ret!! bearer\n\tsk-aaaaaaaaaaaaaaaaaaaa", uint64(3))
	s := redact.New(redact.WithEnviron([]string{"A_KEY=sec ret!", "B_TOKEN=ret!sec ret"}), redact.WithSecrets("é日"))
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 1))
		_, got := streamed(s, text, func() int { return 1 + rng.IntN(16) })
		if want := s.String(text); got != want {
			t.Fatalf("streamed %q as %q, want %q", text, got, want)
		}
	})
}

// BenchmarkStreamLongWord streams a 1 MB word (a base64 blob, which a
// Stream holds back up to MaxStreamHold, then cuts) in 1-byte chunks.
func BenchmarkStreamLongWord(b *testing.B) {
	s := redact.New(redact.WithEnviron([]string{"PLANNER_TEST_API_KEY=plain value, with spaces: 0123456789!"}))
	word := strings.Repeat("QUJDRA", (1<<20)/6)
	b.SetBytes(int64(len(word)))
	for b.Loop() {
		st := s.NewStream()
		n := 0
		for i := range len(word) {
			n += len(st.Write(word[i : i+1]))
		}
		n += len(st.Flush())
		if n != len(word) {
			b.Fatalf("streamed %d bytes, want %d", n, len(word))
		}
	}
}
