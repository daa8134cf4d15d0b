package score_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/eval/score"
	"github.com/planner-engine/planner/tools/code"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFile writes text to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

func TestCodeScorerResults(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cases := []struct {
		name, src string
		in        score.Input
		want      score.Verdict
	}{
		{"number", "def score(question, answer, reference):\n    return 0.75 if reference in answer else 0.25\n",
			paris, score.Verdict{Score: 0.75, Pass: true}},
		{"low number", "def score(question, answer, reference):\n    return 0.25\n",
			paris, score.Verdict{Score: 0.25}},
		{"int", "def score(q, a, r):\n    return 1\n", paris, score.Verdict{Score: 1, Pass: true}},
		{"bool", "def score(q, a, r):\n    return a.lower().startswith(\"it is\")\n", paris, score.Verdict{Score: 1, Pass: true}},
		{"false", "def score(q, a, r):\n    return False\n", paris, score.Verdict{}},
		{"dict", `
WORDS = {"paris": 1}

def score(question, answer, reference):
    hits = [w for w in answer.lower().replace(".", "").split(" ") if w in WORDS]
    return {"score": 0.5, "pass": len(hits) == 1, "reason": "found %d of %s in %r" % (len(hits), reference, answer)}
`, paris, score.Verdict{Score: 0.5, Pass: true, Reason: `found 1 of Paris in "It is Paris."`}},
		{"dict pass only", "def score(q, a, r):\n    return {\"pass\": True}\n", paris, score.Verdict{Score: 1, Pass: true}},
		{"unscorable", "def score(q, a, r):\n    if not r:\n        return {\"unscorable\": True, \"reason\": \"no reference\"}\n    return 1\n",
			score.Input{TaskID: "t", Question: "q", Answer: "a"}, score.Verdict{Unscorable: true, Reason: "no reference"}},
		{"text arrives intact", "def score(q, a, r):\n    return {\"score\": 1, \"reason\": q + \"|\" + a + \"|\" + r}\n",
			score.Input{TaskID: "t", Question: "say \"hi\"\n\tand 'bye' \\ done", Answer: "café ✓", Reference: "x\x00y"},
			score.Verdict{Score: 1, Pass: true, Reason: "say \"hi\" and 'bye' \\ done|café ✓|x\x00y"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, dir, "s.star", c.src)
			s, err := score.Parse(ctx, "code:"+path, score.Options{})
			require.NoError(t, err)
			assert.Equal(t, "code:s", s.Name())
			v, err := s.Score(ctx, c.in)
			require.NoError(t, err)
			assert.Equal(t, c.want, v)
		})
	}
}

func TestCodeScorerLoadErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cases := []struct {
		file, src, want string
		is              error
	}{
		{"syntax.star", "def score(q, a, r):\n    x = 1\n    return (x +\n\n", "syntax.star:", code.ErrSyntax},
		{"undefined.star", "def score(q, a, r):\n    return missing_name\n", "undefined.star:2: ", code.ErrSyntax},
		{"noscore.star", "def grade(q, a, r):\n    return 1\n", "defines no function score", nil},
		{"notfunc.star", "score = 3\n", "score is a \"int\", not a function", nil},
		{"toplevel.star", "x = 1\ny = x // 0\ndef score(q, a, r):\n    return 1\n", "toplevel.star:2: ", code.ErrRuntime},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			_, err := score.Parse(ctx, "code:"+writeFile(t, dir, c.file, c.src), score.Options{})
			require.ErrorIs(t, err, score.ErrBadSpec)
			assert.Contains(t, err.Error(), c.want)
			if c.is != nil {
				assert.ErrorIs(t, err, c.is)
			}
		})
	}
	// The syntax error's line is the line where the parser gave up.
	_, err := score.Parse(ctx, "code:"+writeFile(t, dir, "line.star", "def score(q, a, r):\n    return 1\nthis is not starlark\n"), score.Options{})
	require.ErrorIs(t, err, code.ErrSyntax)
	assert.Contains(t, err.Error(), "line.star:3: syntax error")

	_, err = score.Parse(ctx, "code:"+filepath.Join(dir, "absent.star"), score.Options{})
	require.ErrorIs(t, err, score.ErrBadSpec)
	assert.Contains(t, err.Error(), "absent.star")
	_, err = score.Parse(ctx, "code:"+writeFile(t, dir, "grade.py", "def score(q, a, r): return 1\n"), score.Options{})
	require.ErrorIs(t, err, score.ErrBadSpec)
	assert.Contains(t, err.Error(), "exec:")
}

func TestCodeScorerRunErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := score.Options{Code: code.Config{MaxSteps: 100_000}}
	cases := []struct {
		file, src string
		is        []error
		want      []string
	}{
		{"loop.star", "def score(q, a, r):\n    n = 0\n    while True:\n        n += 1\n",
			[]error{score.ErrScorerFailed, code.ErrStepLimit}, []string{`task "t1"`, "loop.star:", "step limit"}},
		{"div.star", "def score(q, a, r):\n    return 1 / 0\n",
			[]error{score.ErrScorerFailed, code.ErrRuntime}, []string{`task "t1"`, "div.star:2", "division by zero"}},
		{"arity.star", "def score(q, a):\n    return 1\n",
			[]error{score.ErrScorerFailed, code.ErrRuntime}, []string{"arity.star:1:", "accepts 2 positional arguments (3 given)"}},
		{"string.star", "def score(q, a, r):\n    return \"yes\"\n",
			[]error{score.ErrBadVerdict}, []string{`task "t1"`, "score returned a string"}},
		{"none.star", "def score(q, a, r):\n    x = 1\n",
			[]error{score.ErrBadVerdict}, []string{"nothing, None (is a return statement missing?)"}},
		{"range.star", "def score(q, a, r):\n    return 2\n",
			[]error{score.ErrBadVerdict}, []string{"score 2 is outside [0, 1]"}},
		{"list.star", "def score(q, a, r):\n    return [1]\n",
			[]error{score.ErrBadVerdict}, []string{"a list"}},
		{"badkey.star", "def score(q, a, r):\n    return {\"sore\": 1}\n",
			[]error{score.ErrBadVerdict}, []string{`unknown field "sore"`}},
		{"func.star", "def score(q, a, r):\n    return {\"score\": 1, \"reason\": len}\n",
			[]error{score.ErrScorerFailed}, []string{`func.star: calling score(question, answer, reference): json.encode: in dict key "reason": cannot encode`}},
		{"helper.star", "def score(q, a, r):\n    return helper(a)\n\ndef helper(a):\n    return {}[a]\n",
			[]error{score.ErrScorerFailed, code.ErrRuntime}, []string{`helper.star:5: error at line 5 in helper (called from line 2): key "It is Paris." not in dict`}},
		{"emptydict.star", "def score(q, a, r):\n    return {\"reason\": \"hm\"}\n",
			[]error{score.ErrBadVerdict}, []string{`neither "score" nor "pass"`}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			s, err := score.Parse(ctx, "code:"+writeFile(t, dir, c.file, c.src), opts)
			require.NoError(t, err)
			_, err = s.Score(ctx, paris)
			require.Error(t, err)
			for _, is := range c.is {
				assert.ErrorIs(t, err, is)
			}
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), "_planner", "the appended call stays out of messages")
		})
	}
}

func TestCodeScorerStopsWithContext(t *testing.T) {
	dir := t.TempDir()
	s, err := score.Parse(context.Background(), "code:"+writeFile(t, dir, "loop.star", "def score(q, a, r):\n    while True:\n        pass\n"), score.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Score(ctx, paris)
	require.ErrorIs(t, err, context.Canceled)
}

func TestCodeScorerSizes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := "def score(q, a, r):\n    return {\"score\": 1, \"reason\": \"%d %s\" % (len(q), a * 20)}\n"
	s, err := score.Parse(ctx, "code:"+writeFile(t, dir, "len.star", src), score.Options{Code: code.Config{MaxSource: 200, MaxOutput: 300}})
	require.NoError(t, err)

	// A task text far over MaxSource still reaches the scorer: the limit
	// bounds the file, not the task.
	long := score.Input{TaskID: "long", Question: strings.Repeat("q", 100_000), Answer: "a"}
	v, err := s.Score(ctx, long)
	require.NoError(t, err)
	assert.Equal(t, "100000 "+strings.Repeat("a", 20), v.Reason)

	// A verdict longer than MaxOutput is refused rather than cut.
	_, err = s.Score(ctx, score.Input{TaskID: "wide", Answer: strings.Repeat("x", 50)})
	require.ErrorIs(t, err, score.ErrBadVerdict)
	assert.Contains(t, err.Error(), "too large")

	_, err = score.Parse(ctx, "code:"+writeFile(t, dir, "big.star", src+strings.Repeat("# padding\n", 30)), score.Options{Code: code.Config{MaxSource: 200}})
	require.ErrorIs(t, err, score.ErrBadSpec)
	assert.Contains(t, err.Error(), "over the limit of 200")
}
