package score

import (
	"context"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/verify"
)

// builtin adapts one of package verify's scorers.
type builtin struct {
	name string
	s    verify.Scorer
}

// newBuiltin builds the verify scorer spec names; its column header is the
// spec with the kind in lower case ("numeric:0.01", "choice:A|B").
func newBuiltin(spec string) (Scorer, error) {
	s, err := verify.ByName(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	kind, arg, hasArg := strings.Cut(spec, ":")
	name := strings.ToLower(strings.TrimSpace(kind))
	if hasArg {
		name += ":" + strings.TrimSpace(arg)
	}
	return builtin{name: name, s: s}, nil
}

// Name returns the spec, e.g. "em" or "numeric:0.01".
func (b builtin) Name() string { return b.name }

// Score runs the verify scorer: Score is 1 when the answer is correct,
// else 0 (for em that is the exact match), Pass is verify's Correct and
// Reason its Detail. An unscorable task gives an Unscorable verdict.
func (b builtin) Score(ctx context.Context, in Input) (Verdict, error) {
	if err := ctx.Err(); err != nil {
		return Verdict{}, err
	}
	r := b.s.Score(in.Answer, verify.Reference{Question: in.Question, Answer: in.Reference})
	v := Verdict{Pass: r.Correct, Reason: r.Detail, Unscorable: r.Unscorable}
	if r.Correct && !r.Unscorable {
		v.Score = 1
	}
	return v, nil
}
