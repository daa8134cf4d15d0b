package autopilot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/verify"
)

// checker is a built CheckSettings.
type checker struct {
	complete   bool
	agreement  int // samples; 1 for one run
	confidence float64
	confident  bool // confidence is checked
	verifier   verifier
	judge      *nodekind.Template // nil: no judge
}

// verifier checks an answer against the question.
type verifier interface {
	// verify returns whether answer passes, and why not. err is only the
	// run's end (a cancelled ctx).
	verify(ctx context.Context, n *Node, st *state.State, cand, answer string) (ok bool, reason string, err error)
	// name describes the verifier in verdicts.
	name() string
}

// buildCheck builds s, whose setting keys are under key ("check",
// "candidates[2].check").
func buildCheck(env nodekind.Env, key string, s CheckSettings) (*checker, error) {
	c := &checker{complete: s.Complete == nil || *s.Complete, agreement: 1}
	switch {
	case s.Agreement == 0:
	case s.Agreement < 2:
		return nil, config.SettingErrorf(key+".agreement", "the number of samples that vote must be at least 2 (3 is usual), got %d; leave it out for one run", s.Agreement)
	case s.Agreement > maxAgreement:
		return nil, config.SettingErrorf(key+".agreement", "at most %d samples, got %d", maxAgreement, s.Agreement)
	default:
		c.agreement = s.Agreement
	}
	if s.Confidence != nil {
		if v := *s.Confidence; v < 0 || v > 1 {
			return nil, config.SettingErrorf(key+".confidence", "the least confidence is a number in [0, 1], such as 0.7; got %v", v)
		}
		c.confidence, c.confident = *s.Confidence, true
	}
	if s.Verifier != nil {
		v, err := buildVerifier(env, key+".verifier", *s.Verifier)
		if err != nil {
			return nil, err
		}
		c.verifier = v
	}
	// The judge's prompt is compiled whether or not the judge is on, so
	// that a pipeline's templates are the same set either way.
	spec := judgeSpec()
	spec.Key = key + ".judge_prompt"
	t, err := env.Template(spec, s.JudgePrompt, s.JudgePromptFile, defaultJudge)
	if err != nil {
		return nil, err
	}
	if s.Judge || s.JudgePrompt != "" || s.JudgePromptFile != "" {
		c.judge = t
	}
	return c, nil
}

// maxAgreement bounds CheckSettings.Agreement.
const maxAgreement = 25

// buildVerifier builds one verifier.
func buildVerifier(env nodekind.Env, key string, s VerifierSettings) (verifier, error) {
	set := 0
	for _, v := range []string{s.Tool, s.Scorer, s.Starlark + s.StarlarkFile} {
		if v != "" {
			set++
		}
	}
	if set != 1 {
		return nil, config.SettingErrorf(key, "set exactly one of tool, scorer and starlark (or starlark_file), got %d", set)
	}
	if s.Tool == "" && (s.Input != "" || s.FailPattern != "") {
		return nil, config.SettingErrorf(key, "input and fail_pattern go with a verifier tool; set tool, or remove them")
	}
	switch {
	case s.Tool != "":
		return buildToolVerifier(env, key, s)
	case s.Scorer != "":
		switch strings.ToLower(strings.TrimSpace(s.Scorer)) {
		case "game24":
			return scorerVerifier{label: "game24", scorer: verify.Game24{}}, nil
		}
		return nil, config.SettingErrorf(key+".scorer", "%q is no gold-free scorer (an autopilot has no gold answer to compare with); gold-free scorers: game24", s.Scorer)
	default:
		src, err := env.LoadText(s.Starlark, s.StarlarkFile, key+".starlark")
		if err != nil {
			return nil, err
		}
		return buildStarlark(env, key, src)
	}
}

// toolVerifier calls a tool with the answer.
type toolVerifier struct {
	tool  string
	input *nodekind.Template
	fail  *regexp.Regexp
	reg   *tools.Registry
}

func buildToolVerifier(env nodekind.Env, key string, s VerifierSettings) (verifier, error) {
	t, ok := env.Tools.Resolve(s.Tool)
	if !ok {
		known := "none: list tools under the pipeline's tools:"
		if env.Tools.Len() > 0 {
			known = strings.Join(env.Tools.Names(), ", ")
		}
		return nil, config.SettingErrorf(key+".tool", "the pipeline has no tool %q (its tools: %s)", s.Tool, known)
	}
	pattern := s.FailPattern
	if pattern == "" {
		pattern = DefaultFailPattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, config.SettingErrorf(key+".fail_pattern", "not a regular expression: %v", err)
	}
	in, err := env.Template(inputSpec(key+".input"), s.Input, "", "{{.Extra.Answer}}")
	if err != nil {
		return nil, err
	}
	return toolVerifier{tool: t.Name(), input: in, fail: re, reg: env.Tools}, nil
}

func (v toolVerifier) name() string { return "tool " + v.tool }

func (v toolVerifier) verify(ctx context.Context, n *Node, st *state.State, cand, answer string) (bool, string, error) {
	input, err := v.input.Render(st, map[string]any{"Answer": answer, "Candidate": cand})
	if err != nil {
		return false, "", err
	}
	res, err := nodekind.CallTool(ctx, st, llm.CallMeta{Node: n.id, Kind: n.kind, Role: "verify"}, v.reg, v.tool, input, nodekind.ToolOptions{})
	if err != nil {
		return false, "", err
	}
	if res.Err != nil {
		return false, fmt.Sprintf("the verifier tool %s failed: %v", v.tool, res.Err), nil
	}
	if v.fail.MatchString(res.Output) {
		return false, fmt.Sprintf("the verifier tool %s said: %s", v.tool, clipLine(res.Output, 200)), nil
	}
	return true, "", nil
}

// scorerVerifier judges with a gold-free scorer.
type scorerVerifier struct {
	label  string
	scorer verify.Scorer
}

func (v scorerVerifier) name() string { return "scorer " + v.label }

func (v scorerVerifier) verify(_ context.Context, _ *Node, st *state.State, _, answer string) (bool, string, error) {
	r := v.scorer.Score(answer, verify.Reference{Question: st.Task.Question})
	if r.Correct {
		return true, "", nil
	}
	return false, fmt.Sprintf("the %s scorer: %s", v.label, r.Detail), nil
}

// starlarkVerifier runs check(question, answer) of a Starlark program on
// the pipeline's code tool.
type starlarkVerifier struct {
	src  string
	tool string
	reg  *tools.Registry
}

// codeTool is the name of the Starlark interpreter tool (package
// tools/code), which the engine registers by an option.
const codeTool = "code"

func buildStarlark(env nodekind.Env, key, src string) (verifier, error) {
	if strings.TrimSpace(src) == "" {
		return nil, config.SettingErrorf(key+".starlark", "the program is empty; define check(question, answer) returning a bool or (bool, reason)")
	}
	t, ok := env.Tools.Resolve(codeTool)
	if !ok {
		return nil, config.SettingErrorf(key+".starlark", "a Starlark check runs on the pipeline's %s tool (the Starlark interpreter); add %s to the pipeline's tools:", codeTool, codeTool)
	}
	out, err := t.Call(context.Background(), src+"\n\ntype(check)\n")
	if err != nil {
		return nil, config.SettingErrorf(key+".starlark", "the program must define a function check(question, answer), returning a bool or (bool, reason), and does not run: %v", clipLine(err.Error(), 300))
	}
	if lastLine(out) != `"function"` {
		return nil, config.SettingErrorf(key+".starlark", "the program must define a function check(question, answer), returning a bool or (bool, reason)")
	}
	return starlarkVerifier{src: src, tool: t.Name(), reg: env.Tools}, nil
}

func (v starlarkVerifier) name() string { return "starlark check" }

func (v starlarkVerifier) verify(ctx context.Context, n *Node, st *state.State, _, answer string) (bool, string, error) {
	prog := fmt.Sprintf("%s\n\njson.encode(check(%s, %s))\n", v.src, starQuote(st.Task.Question), starQuote(answer))
	res, err := nodekind.CallTool(ctx, st, llm.CallMeta{Node: n.id, Kind: n.kind, Role: "verify"}, v.reg, v.tool, prog, nodekind.ToolOptions{Verbatim: true})
	if err != nil {
		return false, "", err
	}
	if res.Err != nil {
		return false, "the Starlark check failed: " + clipLine(res.Err.Error(), 200), nil
	}
	ok, reason, perr := readVerdict(lastLine(res.Output))
	if perr != nil {
		return false, perr.Error(), nil
	}
	if !ok && reason == "" {
		reason = "the Starlark check returned False"
	}
	return ok, reason, nil
}

// lastLine is the last non-blank line of s, trimmed.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
}

// errVerdict means check returned something else than a bool or a pair.
var errVerdict = errors.New("the Starlark check must return a bool or (bool, reason)")

// readVerdict reads the repr of check's JSON-encoded result.
func readVerdict(repr string) (bool, string, error) {
	raw, err := strconv.Unquote(repr)
	if err != nil {
		raw = repr
	}
	var b bool
	if json.Unmarshal([]byte(raw), &b) == nil {
		return b, "", nil
	}
	var pair []any
	if json.Unmarshal([]byte(raw), &pair) == nil && len(pair) >= 1 && len(pair) <= 2 {
		if b, ok := pair[0].(bool); ok {
			reason := ""
			if len(pair) == 2 {
				if s, ok := pair[1].(string); ok {
					reason = s
				} else {
					reason = fmt.Sprint(pair[1])
				}
			}
			return b, reason, nil
		}
	}
	return false, "", fmt.Errorf("%w, got %s", errVerdict, clipLine(raw, 100))
}

// starQuote quotes s as a Starlark string literal.
func starQuote(s string) string { return strconv.QuoteToASCII(strings.ToValidUTF8(s, "\uFFFD")) }

// judgePassed reads a judge reply: its first non-blank line must say PASS
// and not FAIL.
func judgePassed(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if line = strings.ToUpper(strings.TrimSpace(line)); line != "" {
			return strings.Contains(line, "PASS") && !strings.Contains(line, "FAIL")
		}
	}
	return false
}

var confidenceLine = regexp.MustCompile(`(?i)^\W*confidence\W*[:=]\s*([0-9]*\.?[0-9]+\s*%?|high|medium|low)\W*$`)

// parseConfidence reads the trailing confidence line of answer: the
// confidence, and the answer without the line.
func parseConfidence(answer string) (float64, string, bool) {
	trimmed := strings.TrimRight(answer, " \t\r\n")
	i := strings.LastIndexByte(trimmed, '\n')
	last := trimmed[i+1:]
	m := confidenceLine.FindStringSubmatch(last)
	if m == nil {
		return 0, answer, false
	}
	v, ok := confidenceValue(m[1])
	if !ok {
		return 0, answer, false
	}
	rest := ""
	if i >= 0 {
		rest = strings.TrimRight(trimmed[:i], " \t\r\n")
	}
	return v, rest, true
}

// confidenceValue reads "0.82", "82%", "high".
func confidenceValue(s string) (float64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if v, ok := confidenceWords[s]; ok {
		return v, true
	}
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil {
		return 0, false
	}
	if pct || v > 1 {
		v /= 100
	}
	return v, v >= 0 && v <= 1
}

// clipLine is s on one line, clipped to n characters.
func clipLine(s string, n int) string { return textutil.Clip(textutil.OneLine(s), n) }
