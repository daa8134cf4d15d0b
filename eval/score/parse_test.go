package score_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/eval/score"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuiltinScorers(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		spec, name string
		in         score.Input
		want       score.Verdict
	}{
		{"em", "em", score.Input{Answer: "Final Answer: Paris", Reference: "paris"}, score.Verdict{Score: 1, Pass: true}},
		{"EM", "em", score.Input{Answer: "Lyon", Reference: "Paris"}, score.Verdict{}},
		{"contains", "contains", score.Input{Answer: "It is Paris, France", Reference: "Paris"}, score.Verdict{Score: 1, Pass: true}},
		{"numeric:0.01", "numeric:0.01", score.Input{Answer: "3.141", Reference: "3.14"}, score.Verdict{Score: 1, Pass: true}},
		{"numeric", "numeric", score.Input{Answer: "7", Reference: "no number"}, score.Verdict{Unscorable: true}},
		{"choice:SUPPORTS|REFUTES", "choice:SUPPORTS|REFUTES", score.Input{Answer: "REFUTES", Reference: "SUPPORTS"}, score.Verdict{}},
		{"game24", "game24", score.Input{Question: "Use 4 4 6 8 to make 24", Answer: "(4 + 8) * (6 - 4)"}, score.Verdict{Score: 1, Pass: true}},
		{"sorting", "sorting", score.Input{Answer: "[1, 2, 3]", Reference: "[1, 2, 3]"}, score.Verdict{Score: 1, Pass: true}},
		{"em", "em", score.Input{Answer: "Paris"}, score.Verdict{Unscorable: true}},
	}
	for _, c := range cases {
		s, err := score.Parse(ctx, c.spec, score.Options{})
		require.NoError(t, err, c.spec)
		assert.Equal(t, c.name, s.Name())
		v, err := s.Score(ctx, c.in)
		require.NoError(t, err, c.spec)
		assert.NotEmpty(t, v.Reason, c.spec)
		v.Reason = ""
		assert.Equal(t, c.want, v, c.spec)
	}
}

func TestParseErrors(t *testing.T) {
	ctx := context.Background()
	for spec, want := range map[string]string{
		"":            "empty spec",
		"   ":         "empty spec",
		"bleu":        `unknown scorer "bleu"`,
		"em:x":        "unknown scorer",
		"numeric:abc": "tolerance must be a non-negative number",
		"choice:A":    "at least two labels",
		"code:":       "name the Starlark file",
	} {
		_, err := score.Parse(ctx, spec, score.Options{})
		require.ErrorIs(t, err, score.ErrBadSpec, spec)
		assert.Contains(t, err.Error(), want, spec)
	}
	_, err := score.Parse(ctx, "numeric:abc", score.Options{})
	assert.ErrorIs(t, err, verify.ErrUnknownScorer)
}

func TestParseAll(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	star := writeFile(t, dir, "myscore.star", "def score(q, a, r):\n    return 1\n")
	scorers, err := score.ParseAll(ctx, []string{"em", "numeric:0.5", "code:" + star, "exec:sleep 1"}, score.Options{})
	require.NoError(t, err)
	var names []string
	for _, s := range scorers {
		names = append(names, s.Name())
	}
	assert.Equal(t, []string{"em", "numeric:0.5", "code:myscore", "exec:sleep"}, names)
	require.NoError(t, score.Close(scorers...))

	_, err = score.ParseAll(ctx, []string{"em", "contains", "EM"}, score.Options{})
	require.ErrorIs(t, err, score.ErrBadSpec)
	assert.Contains(t, err.Error(), `"em" and "EM" both make the column "em"`)

	_, err = score.ParseAll(ctx, []string{"code:" + star, "code:" + writeFile(t, t.TempDir(), "myscore.star", "def score(q, a, r):\n    return 0\n")}, score.Options{})
	require.ErrorIs(t, err, score.ErrBadSpec)
	assert.Contains(t, err.Error(), `column "code:myscore"`)

	_, err = score.ParseAll(ctx, []string{"em", "nope"}, score.Options{})
	require.ErrorIs(t, err, score.ErrBadSpec)
	assert.Contains(t, err.Error(), `unknown scorer "nope"`)

	scorers, err = score.ParseAll(ctx, nil, score.Options{})
	require.NoError(t, err)
	assert.Empty(t, scorers)
}
