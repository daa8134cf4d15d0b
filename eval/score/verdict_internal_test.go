package score

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseVerdictTolerates(t *testing.T) {
	cases := []struct {
		name, reply string
		want        Verdict
	}{
		{"bare", `{"score": 1, "pass": true, "reason": "ok"}`, Verdict{Score: 1, Pass: true, Reason: "ok"}},
		{"fenced", "Verdict:\n```json\n{\"score\": 0.25, \"pass\": false, \"reason\": \"partly\"}\n```\nDone.", Verdict{Score: 0.25, Reason: "partly"}},
		{"prose and braces first", `I considered {the city} carefully. {"score": "0.8", "pass": "true", "reason": "close"}`, Verdict{Score: 0.8, Pass: true, Reason: "close"}},
		{"score only passes from the threshold", `{"score": 0.5}`, Verdict{Score: 0.5, Pass: true}},
		{"score only below", `{"score": 0.49}`, Verdict{Score: 0.49}},
		{"pass only", `{"pass": false, "reason": "no"}`, Verdict{Reason: "no"}},
		{"other object first", `{"note": 1} then {"pass": true}`, Verdict{Score: 1, Pass: true}},
		{"multi-line reason folded", "{\"pass\": true, \"reason\": \"a\\n  b\"}", Verdict{Score: 1, Pass: true, Reason: "a b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := parseVerdict(c.reply)
			require.NoError(t, err)
			assert.Equal(t, c.want, v)
		})
	}
}

func TestParseVerdictRejects(t *testing.T) {
	cases := map[string]string{
		"":                              "empty",
		"looks right":                   "no JSON object",
		`{"verdict": "yes"}`:            `neither "score" nor "pass"`,
		`{"score": 1.5}`:                "outside [0, 1]",
		`{"score": -0.1, "pass": true}`: "outside [0, 1]",
		`{"score": "high"}`:             "score:",
		`{"pass": "maybe"}`:             "not true or false",
	}
	for reply, want := range cases {
		_, err := parseVerdict(reply)
		require.Error(t, err, reply)
		assert.Contains(t, err.Error(), want, reply)
	}
}

func TestCacheKeySeparatesModelAndPrompt(t *testing.T) {
	a := cacheKey("m", "prompt")
	assert.Equal(t, a, cacheKey("m", "prompt"))
	assert.NotEqual(t, a, cacheKey("m2", "prompt"))
	assert.NotEqual(t, a, cacheKey("m", "prompt2"))
	assert.NotEqual(t, cacheKey("ab", "c"), cacheKey("a", "bc"), "the fields are length-prefixed")
}
