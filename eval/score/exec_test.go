package score_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/planner-engine/planner/eval/score"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// script writes an executable /bin/sh script named name into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700))
	return p
}

func TestExecScorerVerdict(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	seen := filepath.Join(dir, "stdin.json")
	// The script saves its input and passes answers that mention Paris.
	grade := script(t, dir, "grade.sh", `cat > "$1"
if grep -q '"answer":"[^"]*Paris' "$1"; then
  echo '{"score": 1, "pass": true, "reason": "mentions Paris"}'
else
  printf '%s\n' '{"score": 0.2,' '"reason": "no Paris"}'
fi
`)
	s, err := score.Parse(ctx, "exec:"+grade+" '"+seen+"'", score.Options{})
	require.NoError(t, err)
	assert.Equal(t, "exec:grade.sh", s.Name())

	v, err := s.Score(ctx, paris)
	require.NoError(t, err)
	assert.Equal(t, score.Verdict{Score: 1, Pass: true, Reason: "mentions Paris"}, v)
	raw, err := os.ReadFile(seen)
	require.NoError(t, err)
	var got map[string]string
	require.NoError(t, json.Unmarshal(raw, &got))
	assert.Equal(t, map[string]string{"task_id": "t1", "question": paris.Question, "answer": paris.Answer, "reference": "Paris"}, got)

	v, err = s.Score(ctx, score.Input{TaskID: "t2", Question: "q", Answer: "Lyon", Reference: "Paris"})
	require.NoError(t, err)
	assert.Equal(t, score.Verdict{Score: 0.2, Reason: "no Paris"}, v)
}

func TestExecScorerUnscorable(t *testing.T) {
	dir := t.TempDir()
	s, err := score.Parse(context.Background(), "exec:"+script(t, dir, "skip.sh", `cat >/dev/null; echo '{"unscorable": true, "reason": "no reference"}'`), score.Options{})
	require.NoError(t, err)
	v, err := s.Score(context.Background(), paris)
	require.NoError(t, err)
	assert.Equal(t, score.Verdict{Unscorable: true, Reason: "no reference"}, v)
}

func TestExecScorerTimeoutKills(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := score.Options{ExecTimeout: 200 * time.Millisecond}
	s, err := score.Parse(ctx, "exec:sleep 30", opts)
	require.NoError(t, err)
	_, err = s.Score(ctx, paris)
	require.ErrorIs(t, err, score.ErrExecTimeout)
	assert.Contains(t, err.Error(), "200ms")

	// A script whose child sleeps: the whole process group is killed.
	s, err = score.Parse(ctx, "exec:"+script(t, dir, "slow.sh", "echo starting >&2\nsleep 30\necho '{\"score\": 1}'\n"), opts)
	require.NoError(t, err)
	_, err = s.Score(ctx, paris)
	require.ErrorIs(t, err, score.ErrExecTimeout)
	assert.Contains(t, err.Error(), "starting")
}

func TestExecScorerFailures(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cases := []struct {
		name, body string
		is         error
		want       []string
	}{
		{"exit.sh", "cat >/dev/null\necho line1 >&2\necho line2 >&2\necho oops >&2\nexit 3\n", score.ErrScorerFailed,
			[]string{"exit status 3", "line1 | line2 | oops", `task "t1"`}},
		{"notjson.sh", "echo not json\n", score.ErrBadVerdict, []string{`"not json"`}},
		{"silent.sh", "true\n", score.ErrBadVerdict, []string{"printed nothing"}},
		{"unknown.sh", `echo '{"score": 1, "grade": "A"}'` + "\n", score.ErrBadVerdict, []string{`unknown field "grade"`}},
		{"range.sh", `echo '{"score": 3}'` + "\n", score.ErrBadVerdict, []string{"score 3 is outside [0, 1]"}},
		{"two.sh", `echo '{"score": 1} {"score": 0}'` + "\n", score.ErrBadVerdict, []string{"more than one JSON value"}},
		{"empty.sh", `echo '{"reason": "hm"}'` + "\n", score.ErrBadVerdict, []string{`neither "score" nor "pass"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := score.Parse(ctx, "exec:"+script(t, dir, c.name, c.body), score.Options{})
			require.NoError(t, err)
			_, err = s.Score(ctx, paris)
			require.ErrorIs(t, err, c.is)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestExecScorerSpecErrors(t *testing.T) {
	ctx := context.Background()
	for spec, want := range map[string]string{
		"exec:":                            "give the command",
		"exec:  ":                          "give the command",
		"exec:./no-such-grader.sh":         "no-such-grader.sh",
		"exec:no-such-program-on-path-x9z": "executable file not found",
		`exec:sh -c "echo unterminated`:    "double quote at character 7 is never closed",
		"exec:sh -c 'echo unterminated":    "single quote at character 7 is never closed",
		`exec:sh -c echo\`:                 "lone backslash",
	} {
		_, err := score.Parse(ctx, spec, score.Options{})
		require.ErrorIs(t, err, score.ErrBadSpec, spec)
		assert.Contains(t, err.Error(), want, spec)
	}
}

func TestSplitWords(t *testing.T) {
	cases := map[string][]string{
		"":                           nil,
		"  grade.py  ":               {"grade.py"},
		"python3 grade.py --strict":  {"python3", "grade.py", "--strict"},
		`grade 'a b' "c d"`:          {"grade", "a b", "c d"},
		`grade 'it''s' x"y z"w`:      {"grade", "its", "xy zw"},
		`grade "a \"q\" \\ \$ \n"`:   {"grade", `a "q" \ $ \n`},
		`grade 'no \escapes "here"'`: {"grade", `no \escapes "here"`},
		`grade a\ b \'c`:             {"grade", "a b", "'c"},
		"grade ''":                   {"grade", ""},
		"grade\tx\ny":                {"grade", "x", "y"},
		"grade \"line\\\ncont\"":     {"grade", "linecont"},
	}
	for in, want := range cases {
		got, err := score.SplitWords(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}
