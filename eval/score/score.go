package score

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/planner-engine/planner/llm/usage"
	"github.com/planner-engine/planner/tools/code"
	"github.com/tmc/langchaingo/llms"
)

// Sentinel errors; every error of the package wraps one of them.
var (
	// ErrBadSpec is returned by Parse and ParseAll for a spec they cannot
	// turn into a scorer: an unknown kind, a missing or unreadable file, a
	// rubric or program that does not load, a judge without a model, or
	// two specs with the same column name.
	ErrBadSpec = errors.New("bad scorer spec")
	// ErrBadVerdict means a code or exec scorer returned something that is
	// not a verdict: a wrong type, a score outside [0, 1], unknown keys or
	// text that is not JSON.
	ErrBadVerdict = errors.New("scorer returned no valid verdict")
	// ErrScorerFailed means a code scorer's program failed while running,
	// or an exec scorer's command could not start or exited non-zero.
	ErrScorerFailed = errors.New("scorer failed")
	// ErrExecTimeout means an exec scorer's command ran past
	// Options.ExecTimeout; its process group was killed.
	ErrExecTimeout = errors.New("scorer command timed out")
	// ErrJudgeCall means the judge model's call failed (a transport error
	// or an error status from the provider).
	ErrJudgeCall = errors.New("judge model call failed")
	// ErrJudgeReply means the judge model's reply, asked for twice, held no
	// readable verdict.
	ErrJudgeReply = errors.New("judge reply has no valid verdict")
	// ErrJudgeCache means the judge's verdict cache could not be opened,
	// read or written.
	ErrJudgeCache = errors.New("judge cache")
)

// PassThreshold is the score from which a verdict that gives only a score
// (a Starlark scorer returning a number, a JSON verdict without "pass")
// passes.
const PassThreshold = 0.5

// DefaultExecTimeout is Options.ExecTimeout's default.
const DefaultExecTimeout = 30 * time.Second

// Input is one answer to judge.
type Input struct {
	// TaskID names the task, for error messages and exec scorers.
	TaskID string
	// Question is the task's text.
	Question string
	// Answer is the answer to judge: the run's final answer.
	Answer string
	// Reference is the task's reference answer; empty when it has none.
	Reference string
}

// Usage is what judging cost. It is zero for scorers that call no model.
type Usage struct {
	// Calls is the number of model calls, a retry after an unreadable
	// reply included.
	Calls int `json:"calls"`
	// PromptTokens and CompletionTokens are the tokens the provider
	// reported for those calls (zero when it reported none).
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CostUSD is the price of those tokens (Options.Price); zero without a
	// price.
	CostUSD float64 `json:"cost_usd"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		Calls:            u.Calls + o.Calls,
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		CostUSD:          u.CostUSD + o.CostUSD,
	}
}

// Verdict is one scorer's judgement of one answer.
type Verdict struct {
	// Score is the grade in [0, 1].
	Score float64
	// Pass is the yes/no verdict.
	Pass bool
	// Reason says in one line why.
	Reason string
	// Unscorable reports that the answer could not be judged (for the
	// built-in scorers, a task without a usable reference). Score and Pass
	// are then zero and a report should leave the verdict out of its
	// averages.
	Unscorable bool
	// Usage is what judging cost; for a cached verdict, what it cost when
	// it was first made, so that a report can say what the cache saved.
	Usage Usage
	// Cached is true when the verdict came from the judge cache (no model
	// call was made).
	Cached bool
}

// Scorer judges answers. Implementations are safe for concurrent use.
type Scorer interface {
	// Name is the scorer's column header in reports: "em", "judge",
	// "judge:strict", "code:myscore", "exec:grade.py".
	Name() string
	// Score judges one answer. An error means no verdict was reached
	// (a failing program or command, an unreachable judge); a wrong answer
	// is a verdict, not an error.
	Score(ctx context.Context, in Input) (Verdict, error)
}

// Options configure the scorers Parse builds. The zero value suits every
// spec but judge, which needs JudgeModel and JudgeModelName.
type Options struct {
	// JudgeModel is the model the judge calls. Required for judge specs.
	JudgeModel llms.Model
	// JudgeModelName names the judge model ("openai:gpt-4o-mini"): part
	// of every cache key, so that verdicts of one model are never served
	// for another. Required for judge specs.
	JudgeModelName string
	// Price returns the cost in US dollars of one judge call's usage. Nil
	// leaves CostUSD zero. TablePrice builds one from a price table.
	Price func(usage.Usage) float64
	// JudgeCache is the path of the SQLite file that caches judge
	// verdicts (created when missing). Empty, the default, caches nothing.
	JudgeCache string
	// Code sets the limits of code scorers' programs (steps, time, memory,
	// ...); zero fields take tools/code's defaults. MaxSource bounds the
	// scorer file itself.
	Code code.Config
	// ExecTimeout bounds each run of an exec scorer's command. Zero or
	// negative means DefaultExecTimeout (30s).
	ExecTimeout time.Duration
}

// TablePrice returns an Options.Price that prices usage at model's rate in
// table (see usage.PriceTable.Cost); a model the table does not know costs
// nothing.
func TablePrice(table usage.PriceTable, model string) func(usage.Usage) float64 {
	return func(u usage.Usage) float64 {
		usd, _ := table.Cost(model, u)
		return usd
	}
}

// builtinKinds are the spec kinds verify.ByName handles.
func builtinKinds() []string {
	return []string{"em", "contains", "numeric", "choice", "game24", "sorting"}
}

// Parse builds the scorer a command-line spec names:
//
//	em, contains, numeric[:TOL], choice:A|B|..., game24, sorting
//	                     the built-in scorers of package verify
//	judge                an LLM judge with the built-in rubric
//	judge:RUBRIC         an LLM judge with the rubric template in file RUBRIC
//	code:FILE.star       a Starlark function score(question, answer, reference)
//	exec:COMMAND ARGS... an external command, a JSON verdict per answer
//
// See the package documentation for each. A judge opens its cache here
// when Options.JudgeCache is set; close scorers with Close when done. Every
// error wraps ErrBadSpec.
func Parse(ctx context.Context, spec string, opts Options) (Scorer, error) {
	spec = strings.TrimSpace(spec)
	kind, arg, hasArg := strings.Cut(spec, ":")
	kind = strings.ToLower(strings.TrimSpace(kind))
	arg = strings.TrimSpace(arg)
	switch {
	case spec == "":
		return nil, fmt.Errorf("%w: empty spec; name a scorer, e.g. em, judge, code:score.star or exec:./grade.sh", ErrBadSpec)
	case isBuiltin(kind):
		return newBuiltin(spec)
	case kind == "judge":
		if hasArg && arg == "" {
			return nil, fmt.Errorf("%w: %q: name the rubric file after judge:, or write judge for the built-in rubric", ErrBadSpec, spec)
		}
		return newJudge(ctx, arg, opts)
	case kind == "code":
		if arg == "" {
			return nil, fmt.Errorf("%w: %q: name the Starlark file, e.g. code:myscore.star", ErrBadSpec, spec)
		}
		return newCode(ctx, arg, opts)
	case kind == "exec":
		if arg == "" {
			return nil, fmt.Errorf("%w: %q: give the command to run, e.g. exec:./grade.sh --strict", ErrBadSpec, spec)
		}
		return newExec(arg, opts)
	}
	return nil, fmt.Errorf("%w: %q: unknown scorer %q (known: %s, judge, judge:RUBRIC, code:FILE.star, exec:COMMAND)",
		ErrBadSpec, spec, kind, strings.Join(builtinKinds(), ", "))
}

func isBuiltin(kind string) bool {
	for _, k := range builtinKinds() {
		if k == kind {
			return true
		}
	}
	return false
}

// ParseAll parses each spec (see Parse) for one comparison's columns, in
// order. Two specs with the same Name are rejected, as is an empty list
// entry; on any error the scorers already built are closed.
func ParseAll(ctx context.Context, specs []string, opts Options) ([]Scorer, error) {
	out := make([]Scorer, 0, len(specs))
	bySpec := make(map[string]string, len(specs))
	fail := func(err error) ([]Scorer, error) {
		return nil, errors.Join(err, Close(out...))
	}
	for _, spec := range specs {
		s, err := Parse(ctx, spec, opts)
		if err != nil {
			return fail(err)
		}
		name := s.Name()
		if prev, dup := bySpec[name]; dup {
			err := fmt.Errorf("%w: %q and %q both make the column %q; give each scorer once (copy a file under another name to run it twice)",
				ErrBadSpec, prev, spec, name)
			return fail(errors.Join(err, Close(s)))
		}
		bySpec[name] = spec
		out = append(out, s)
	}
	return out, nil
}

// Close releases what the scorers hold (a judge's cache), closing each
// that implements io.Closer, and returns their errors joined.
func Close(scorers ...Scorer) error {
	var errs []error
	for _, s := range scorers {
		if c, ok := s.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// baseName is the file name of path without its extension, for column
// headers.
func baseName(path string) string {
	b := filepath.Base(path)
	if ext := filepath.Ext(b); ext != "" && ext != b {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}

// checkScore reports whether s is a valid score.
func checkScore(s float64) error {
	if !(s >= 0 && s <= 1) { // also rejects NaN
		return fmt.Errorf("score %v is outside [0, 1]", s)
	}
	return nil
}
