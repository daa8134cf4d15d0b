package score

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/tools/code"
	"go.starlark.net/syntax"
)

// resultName is the global the call appended to a scorer's program
// assigns; a scorer file should not define it.
const resultName = "_planner_score_result"

// starScorer runs a Starlark scorer through the code tool's sandbox. Each
// Score runs the file followed by a call of its score function, as one
// program, in a fresh interpreter under the code tool's limits.
type starScorer struct {
	name  string
	path  string
	src   string
	lines int // lines of src; a position past them is the appended call
	// limits are the code tool's limits, defaults filled in.
	limits code.Config
}

// newCode loads and checks the scorer file at path: it must parse and
// define a function named score.
func newCode(ctx context.Context, path string, opts Options) (*starScorer, error) {
	if !strings.EqualFold(baseExt(path), ".star") {
		return nil, fmt.Errorf("%w: code:%s: a code scorer is a Starlark file ending in .star (run other programs with exec:COMMAND)", ErrBadSpec, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: code scorer: %w", ErrBadSpec, err)
	}
	limits := code.New(opts.Code).Config()
	if len(b) > limits.MaxSource {
		return nil, fmt.Errorf("%w: code scorer %s is %d bytes, over the limit of %d (Options.Code.MaxSource)", ErrBadSpec, path, len(b), limits.MaxSource)
	}
	src := strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n \t")
	s := &starScorer{name: "code:" + baseName(path), path: path, src: src, lines: strings.Count(src, "\n") + 1, limits: limits}

	// Run the file alone, then again ending with the type of score: this
	// finds syntax errors, failures at top level and a missing score
	// function now, rather than at the first answer.
	if _, err := s.run(ctx, ""); err != nil {
		return nil, fmt.Errorf("%w: code scorer %w", ErrBadSpec, s.describe(err))
	}
	res, err := s.run(ctx, "type(score)")
	if err != nil {
		if errors.Is(err, code.ErrSyntax) {
			return nil, fmt.Errorf("%w: code scorer %s defines no function score; write one: def score(question, answer, reference)", ErrBadSpec, path)
		}
		return nil, fmt.Errorf("%w: code scorer %w", ErrBadSpec, s.describe(err))
	}
	if res.Value != `"function"` {
		return nil, fmt.Errorf("%w: code scorer %s: score is a %s, not a function; write one: def score(question, answer, reference)", ErrBadSpec, path, res.Value)
	}
	return s, nil
}

// baseExt is the extension of path's file name.
func baseExt(path string) string {
	i := strings.LastIndexAny(path, `./\`)
	if i < 0 || path[i] != '.' {
		return ""
	}
	return path[i:]
}

// Name returns "code:" and the file's base name without .star.
func (s *starScorer) Name() string { return s.name }

// run runs the scorer file followed by the expression tail on a line of
// its own. The tool's source limit is raised to fit the tail, which holds
// the task's text; the file itself was checked against it by newCode.
func (s *starScorer) run(ctx context.Context, tail string) (code.Result, error) {
	prog := s.src + "\n" + tail + "\n"
	cfg := s.limits
	cfg.MaxSource = max(cfg.MaxSource, len(prog)+1)
	return code.New(cfg).Run(ctx, prog)
}

// Score calls score(question, answer, reference) and reads its result.
func (s *starScorer) Score(ctx context.Context, in Input) (Verdict, error) {
	call := fmt.Sprintf(`%s = score(%s, %s, %s)`, resultName, quote(in.Question), quote(in.Answer), quote(in.Reference))
	// The value is passed back as JSON, with its type, in a string.
	tail := call + "\n" + fmt.Sprintf(`json.encode({"type": type(%[1]s), "value": %[1]s if type(%[1]s) in ("int", "float", "bool", "dict") else None})`, resultName)
	res, err := s.run(ctx, tail)
	if err != nil {
		if ctx.Err() != nil {
			return Verdict{}, fmt.Errorf("%s: task %q: %w", s.name, in.TaskID, err)
		}
		return Verdict{}, fmt.Errorf("%w: %s: task %q: %w", ErrScorerFailed, s.name, in.TaskID, s.describe(err))
	}
	if res.ValueTruncated {
		return Verdict{}, fmt.Errorf("%w: %s: task %q: score returned a value too large to read (over %d bytes); return a short reason",
			ErrBadVerdict, s.name, in.TaskID, s.limits.MaxOutput)
	}
	encoded, err := unquote(res.Value)
	if err != nil {
		return Verdict{}, fmt.Errorf("%w: %s: task %q: reading the result: %w", ErrBadVerdict, s.name, in.TaskID, err)
	}
	var out struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal([]byte(encoded), &out); err != nil {
		return Verdict{}, fmt.Errorf("%w: %s: task %q: reading the result: %w", ErrBadVerdict, s.name, in.TaskID, err)
	}
	v, err := verdictOf(out.Type, out.Value)
	if err != nil {
		return Verdict{}, fmt.Errorf("%w: %s: task %q: score returned %w", ErrBadVerdict, s.name, in.TaskID, err)
	}
	return v, nil
}

// verdictOf converts score's result, of Starlark type typ, to a verdict.
func verdictOf(typ string, value json.RawMessage) (Verdict, error) {
	switch typ {
	case "bool":
		var b bool
		if err := json.Unmarshal(value, &b); err != nil {
			return Verdict{}, err
		}
		v := Verdict{Pass: b}
		if b {
			v.Score = 1
		}
		return v, nil
	case "int", "float":
		var f float64
		if err := json.Unmarshal(value, &f); err != nil {
			return Verdict{}, err
		}
		if err := checkScore(f); err != nil {
			return Verdict{}, fmt.Errorf("a number out of range: %w; return a number from 0 to 1", err)
		}
		return Verdict{Score: f, Pass: f >= PassThreshold}, nil
	case "dict":
		return decodeVerdict(value)
	case "NoneType":
		return Verdict{}, errors.New(`nothing, None (is a return statement missing?); return a number from 0 to 1, a bool, or a dict {"score": ..., "pass": ..., "reason": ...}`)
	}
	return Verdict{}, fmt.Errorf(`a %s; return a number from 0 to 1, a bool, or a dict {"score": ..., "pass": ..., "reason": ...}`, typ)
}

// wireVerdict is the verdict an exec scorer prints, or a code scorer
// returns as a dict.
type wireVerdict struct {
	Score      *float64 `json:"score"`
	Pass       *bool    `json:"pass"`
	Reason     string   `json:"reason"`
	Unscorable bool     `json:"unscorable"`
}

// decodeVerdict reads a JSON verdict strictly: known keys only, at least
// one of score and pass (the other follows from it as for the judge), a
// score in [0, 1].
func decodeVerdict(data []byte) (Verdict, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var w wireVerdict
	if err := dec.Decode(&w); err != nil {
		return Verdict{}, fmt.Errorf(`a verdict that does not read (%w); the keys are "score" (0 to 1), "pass" (a bool), "reason" (a string) and "unscorable" (a bool)`, err)
	}
	if dec.More() {
		return Verdict{}, errors.New("more than one JSON value; give one verdict object")
	}
	v := Verdict{Reason: textutil.Clip(textutil.OneLine(w.Reason), 500)}
	if w.Unscorable {
		v.Unscorable = true
		return v, nil
	}
	if w.Score == nil && w.Pass == nil {
		return Verdict{}, errors.New(`a verdict with neither "score" nor "pass"; give at least one`)
	}
	if w.Score != nil {
		if err := checkScore(*w.Score); err != nil {
			return Verdict{}, fmt.Errorf("a verdict whose %w", err)
		}
		v.Score = *w.Score
		v.Pass = v.Score >= PassThreshold
	}
	if w.Pass != nil {
		v.Pass = *w.Pass
		if w.Score == nil && v.Pass {
			v.Score = 1
		}
	}
	return v, nil
}

// describe renders a program's failure as "FILE:LINE: message", or, for a
// failure in the appended call of score, as a failure calling score.
func (s *starScorer) describe(err error) error {
	var ce *code.Error
	if !errors.As(err, &ce) {
		return err
	}
	msg, _, _ := strings.Cut(ce.Msg, "\n")
	// Positions past the file are in the lines this package appended: the
	// call of score and the encoding of its result.
	for l := s.lines + 1; l <= s.lines+2; l++ {
		msg = strings.ReplaceAll(msg, fmt.Sprintf(" (called from line %d)", l), "")
		msg = strings.ReplaceAll(msg, fmt.Sprintf(", line %d)", l), ")")
	}
	if ce.Line > s.lines && !errors.Is(ce.Kind, code.ErrSyntax) {
		msg = strings.Replace(msg, fmt.Sprintf("error at line %d: ", ce.Line), "", 1)
		if i := strings.Index(msg, fmt.Sprintf(" (line %d: ", ce.Line)); i >= 0 {
			msg = msg[:i]
		}
		msg = strings.ReplaceAll(msg, `in dict key "value": `, "")
	}
	switch {
	case ce.Line > s.lines && errors.Is(ce.Kind, code.ErrSyntax):
		// The file alone ends early (an unclosed bracket, say).
		msg = fmt.Sprintf("%s:%d: %s", s.path, s.lines, msg)
	case ce.Line > s.lines:
		msg = fmt.Sprintf("%s: calling score(question, answer, reference): %s", s.path, msg)
	case ce.Line > 0:
		msg = fmt.Sprintf("%s:%d: %s", s.path, ce.Line, msg)
	default:
		msg = fmt.Sprintf("%s: %s", s.path, msg)
	}
	return &programError{msg: msg, kind: ce.Kind}
}

// programError is a scorer program's failure: its message names the file
// and line, and it matches the code tool's sentinel (code.ErrSyntax,
// code.ErrStepLimit, ...).
type programError struct {
	msg  string
	kind error
}

func (e *programError) Error() string { return e.msg }
func (e *programError) Unwrap() error { return e.kind }

// quote writes s as a Starlark string literal.
func quote(s string) string {
	return syntax.Quote(strings.ToValidUTF8(s, "\uFFFD"), false)
}

// unquote reads the repr of a Starlark string, as the code tool renders a
// program's final value.
func unquote(repr string) (string, error) {
	e, err := (&syntax.FileOptions{}).ParseExpr("result", repr, 0)
	if err != nil {
		return "", err
	}
	lit, ok := e.(*syntax.Literal)
	if !ok || lit.Token != syntax.STRING {
		return "", fmt.Errorf("the result %s is not a string", textutil.Clip(repr, 80))
	}
	s, _ := lit.Value.(string)
	return s, nil
}
