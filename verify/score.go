// Package verify reads answers out of model text and judges them: answer
// extraction and normalisation, the scorers, and the Game of 24 verifier and
// solver. It imports no other package of this project, so paradigm nodes
// (Reflexion's evaluator, LATS, ToT) and the evaluation harness share one
// implementation.
//
// The scorers judge a predicted answer against a reference: normalised exact
// match and token F1 as in HotpotQA's official evaluation, numeric equality
// with a tolerance, a Game of 24 verifier with exact rational arithmetic,
// multiple-choice labels, containment, and sorted lists of integers (the
// Graph of Thoughts sorting task, with the paper's error count). Every scorer first reads the
// final answer out of the prediction with Extract, so callers may
// pass either raw model text or a clean answer.
package verify

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ErrUnknownScorer is returned by ByName for a name it does not know or a
// malformed specification.
var ErrUnknownScorer = errors.New("unknown scorer")

// Scorer judges one prediction against one reference.
type Scorer interface {
	// Score returns the verdict for pred, the model's final text or answer.
	Score(pred string, ref Reference) Result
}

// Reference is what a prediction is judged against.
type Reference struct {
	// Question is the task text (the Game of 24 scorer reads the puzzle's
	// numbers from it).
	Question string
	// Answer is the reference answer; empty when unknown.
	Answer string
}

// Result is one verdict. Its numbers are never NaN.
type Result struct {
	// Correct is the verdict: the prediction counts as right.
	Correct bool
	// EM is 1 when the extracted answer matches the reference exactly after
	// normalisation, else 0. For scorers without a separate notion of exact
	// match (numeric, game24, choice) it is 1 exactly when Correct.
	EM float64
	// F1 is the token-level F1 in [0, 1] between the extracted answer and the
	// reference. Meaningful only when HasF1; otherwise 0.
	F1 float64
	// HasF1 reports that the scorer computes F1 (em and contains), so a
	// report averages F1 over the results that have it.
	HasF1 bool
	// Unscorable reports that the task gives nothing to score against (no
	// reference answer, a reference that is not a number or label, or a
	// Game of 24 question without numbers). Correct is then false and a
	// report should leave the result out of its averages.
	Unscorable bool
	// Extracted is the answer read out of the prediction.
	Extracted string
	// Detail explains the verdict in a line, for reports and debugging.
	Detail string
}

// extract reads the final answer out of pred.
func extract(pred string) string {
	a, _ := Extract(pred)
	return a
}

// unscorable builds the result for a task that cannot be scored.
func unscorable(extracted, detail string) Result {
	return Result{Unscorable: true, Extracted: extracted, Detail: detail}
}

// verdict builds a result whose EM mirrors Correct.
func verdict(correct bool, extracted, detail string) Result {
	r := Result{Correct: correct, Extracted: extracted, Detail: detail}
	if correct {
		r.EM = 1
	}
	return r
}

// NormalizedEqual reports whether pred and gold are equal after
// Normalize: HotpotQA's exact match.
func NormalizedEqual(pred, gold string) bool {
	return Normalize(pred) == Normalize(gold)
}

// TokenF1 is HotpotQA's answer F1: the harmonic mean of token precision and
// recall over Normalize tokens, counting repeated tokens as often as
// both sides have them. As in the official script, when either side
// normalises to "yes", "no" or "noanswer" and the two differ, F1 is 0.
func TokenF1(pred, gold string) float64 {
	np, ng := Normalize(pred), Normalize(gold)
	special := func(s string) bool { return s == "yes" || s == "no" || s == "noanswer" }
	if (special(np) || special(ng)) && np != ng {
		return 0
	}
	pt, gt := strings.Fields(np), strings.Fields(ng)
	counts := make(map[string]int, len(gt))
	for _, t := range gt {
		counts[t]++
	}
	same := 0
	for _, t := range pt {
		if counts[t] > 0 {
			counts[t]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	precision := float64(same) / float64(len(pt))
	recall := float64(same) / float64(len(gt))
	return 2 * precision * recall / (precision + recall)
}

// ExactMatch scores HotpotQA-style: Correct when the extracted answer equals
// the reference after Normalize, with token F1 alongside.
//
// A reference that is itself a solution of the question's Game of 24
// puzzle (an expression over the question's numbers that reaches 24) is
// judged as Game24 judges it: any valid solution is right and no other
// answer is. Normalize drops operators, so exact match alone would take
// "1 * 1 + 4 * 6" (25) for "1 * 1 * 4 * 6"; a suite that mixes puzzles
// with other tasks (--suite mixed) needs both rules.
type ExactMatch struct{}

// Score implements Scorer.
func (ExactMatch) Score(pred string, ref Reference) Result {
	gold := ref.Answer
	got := extract(pred)
	if strings.TrimSpace(gold) == "" {
		return unscorable(got, "task has no reference answer")
	}
	if solves24(ref) {
		r := Game24{}.Score(pred, ref)
		r.F1, r.HasF1 = b2f(r.Correct), true
		return r
	}
	r := verdict(NormalizedEqual(got, gold), got, fmt.Sprintf("normalised %q vs reference %q", Normalize(got), Normalize(gold)))
	r.F1, r.HasF1 = TokenF1(got, gold), true
	return r
}

// Contains is a lenient ExactMatch: Correct when the normalised reference
// appears as a whole-token phrase inside the normalised extracted answer
// ("Paris" in "It is Paris, France"). EM and F1 are ExactMatch's. Only the
// extracted answer is searched, not the whole prediction, so a reference
// merely mentioned in the reasoning does not count.
type Contains struct{}

// Score implements Scorer.
func (Contains) Score(pred string, ref Reference) Result {
	gold := ref.Answer
	got := extract(pred)
	gt := Tokens(gold)
	if len(gt) == 0 {
		return unscorable(got, "task has no reference answer")
	}
	found := indexTokens(Tokens(got), gt) >= 0
	r := Result{Correct: found, Extracted: got, HasF1: true, F1: TokenF1(got, gold)}
	if NormalizedEqual(got, gold) {
		r.EM = 1
	}
	if found {
		r.Detail = fmt.Sprintf("reference %q found in %q", Normalize(gold), Normalize(got))
	} else {
		r.Detail = fmt.Sprintf("reference %q not in %q", Normalize(gold), Normalize(got))
	}
	return r
}

// indexTokens returns the index of the first occurrence of phrase in tokens,
// or -1.
func indexTokens(tokens, phrase []string) int {
	for i := 0; i+len(phrase) <= len(tokens); i++ {
		if slices.Equal(tokens[i:i+len(phrase)], phrase) {
			return i
		}
	}
	return -1
}

// DefaultTolerance is Numeric's tolerance when its Tolerance is zero.
const DefaultTolerance = 1e-6

// Numeric scores numeric answers: the last number of the extracted answer
// (Number) against the reference's number.
type Numeric struct {
	// Tolerance is the largest accepted difference, relative to the
	// reference's magnitude but never below an absolute floor of Tolerance:
	// |pred - ref| <= Tolerance * max(1, |ref|). Zero means
	// DefaultTolerance (1e-6); a negative value demands exact equality.
	Tolerance float64
}

// Score implements Scorer.
func (n Numeric) Score(pred string, ref Reference) Result {
	gold := ref.Answer
	got := extract(pred)
	want, ok := Number(gold)
	if !ok {
		return unscorable(got, fmt.Sprintf("reference answer %q has no number", gold))
	}
	have, ok := Number(got)
	if !ok {
		return verdict(false, got, fmt.Sprintf("no number in answer %q", got))
	}
	tol := n.Tolerance
	if tol == 0 {
		tol = DefaultTolerance
	}
	diff := new(big.Rat).Sub(have, want)
	diff.Abs(diff)
	ok = diff.Sign() == 0
	if !ok && tol > 0 {
		bound := new(big.Rat).Abs(want)
		if bound.Cmp(big.NewRat(1, 1)) < 0 {
			bound.SetInt64(1)
		}
		t := new(big.Rat)
		if t.SetFloat64(tol) != nil {
			ok = diff.Cmp(bound.Mul(bound, t)) <= 0
		}
	}
	return verdict(ok, got, fmt.Sprintf("%s vs reference %s", have.RatString(), want.RatString()))
}

// Game24 scores Game of 24 answers with Verify24. The puzzle numbers are the
// first run of two or more integers separated only by spaces or commas in
// the task's question, as in "Use 4 5 6 10 and + - * / to obtain 24." or
// "Input: 4 5 6 10".
type Game24 struct{}

// Score implements Scorer.
func (Game24) Score(pred string, ref Reference) Result {
	got := extract(pred)
	nums, err := PuzzleNumbers(ref.Question)
	if err != nil {
		return unscorable(got, err.Error())
	}
	if err := Verify24(nums, got); err != nil {
		return verdict(false, got, err.Error())
	}
	return verdict(true, got, "reaches 24")
}

var puzzleRe = regexp.MustCompile(`\d+(?:[ \t]*,?[ \t]+\d+|,\d+)+`)

// PuzzleNumbers returns the Game of 24 numbers stated in a question: the
// first run of two or more integers separated only by spaces or commas.
func PuzzleNumbers(question string) ([]int, error) {
	run := puzzleRe.FindString(question)
	if run == "" {
		return nil, fmt.Errorf("question %q states no puzzle numbers (expected e.g. \"4 5 6 10\")", question)
	}
	fields := strings.FieldsFunc(run, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
	nums := make([]int, len(fields))
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("puzzle number %q: %w", f, err)
		}
		nums[i] = n
	}
	return nums, nil
}

// Choice scores multiple-choice answers such as FEVER's SUPPORTS, REFUTES
// and NOT ENOUGH INFO. Labels are compared case-insensitively after
// Normalize. The picked label is the one the extracted answer equals,
// or else the only label it mentions as a whole-token phrase (longer labels
// are matched first, so "NOT ENOUGH INFO" is not also read as a shorter
// label it contains). An answer mentioning two different labels is wrong.
type Choice struct {
	// Labels are the allowed answers. Required: with none, every task is
	// Unscorable.
	Labels []string
}

// Score implements Scorer.
func (c Choice) Score(pred string, ref Reference) Result {
	got := extract(pred)
	gold := Normalize(ref.Answer)
	labels := make([]string, 0, len(c.Labels))
	for _, l := range c.Labels {
		if n := Normalize(l); n != "" && !slices.Contains(labels, n) {
			labels = append(labels, n)
		}
	}
	if !slices.Contains(labels, gold) {
		return unscorable(got, fmt.Sprintf("reference %q is not one of the labels %q", ref.Answer, c.Labels))
	}
	picked := c.pick(Tokens(got), labels)
	switch len(picked) {
	case 0:
		return verdict(false, got, fmt.Sprintf("answer %q names none of the labels", got))
	case 1:
		return verdict(picked[0] == gold, got, fmt.Sprintf("picked %q, reference %q", picked[0], gold))
	default:
		return verdict(false, got, fmt.Sprintf("answer %q names several labels %q", got, picked))
	}
}

// pick returns the distinct labels mentioned in tokens, longest first.
func (Choice) pick(tokens []string, labels []string) []string {
	if slices.Contains(labels, strings.Join(tokens, " ")) {
		return []string{strings.Join(tokens, " ")}
	}
	byLen := slices.Clone(labels)
	slices.SortStableFunc(byLen, func(a, b string) int { return len(strings.Fields(b)) - len(strings.Fields(a)) })
	masked := slices.Clone(tokens)
	var picked []string
	for _, l := range byLen {
		phrase := strings.Fields(l)
		for {
			i := indexTokens(masked, phrase)
			if i < 0 {
				break
			}
			if !slices.Contains(picked, l) {
				picked = append(picked, l)
			}
			for k := i; k < i+len(phrase); k++ {
				masked[k] = "\x00"
			}
		}
	}
	return picked
}

// ByName returns the scorer a suite or command line names:
//
//	em                exact match with F1 (ExactMatch)
//	contains          reference contained in the answer (Contains)
//	numeric           numeric equality, default tolerance (Numeric)
//	numeric:<tol>     numeric equality with tolerance tol, e.g. numeric:0.01
//	game24            Game of 24 verifier (Game24)
//	sorting           sorted list of integers, element by element (Sorting)
//	choice:<a|b|...>  one of the labels, e.g. choice:SUPPORTS|REFUTES|NOT ENOUGH INFO
//
// Names are case-insensitive; labels keep their spelling. An unknown or
// malformed name yields an error wrapping ErrUnknownScorer.
func ByName(name string) (Scorer, error) {
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(name), ":")
	switch strings.ToLower(kind) {
	case "em":
		if !hasArg {
			return ExactMatch{}, nil
		}
	case "contains":
		if !hasArg {
			return Contains{}, nil
		}
	case "game24":
		if !hasArg {
			return Game24{}, nil
		}
	case "sorting":
		if !hasArg {
			return Sorting{}, nil
		}
	case "numeric":
		if !hasArg {
			return Numeric{}, nil
		}
		tol, err := strconv.ParseFloat(strings.TrimSpace(arg), 64)
		if err != nil || tol < 0 {
			return nil, fmt.Errorf("%w: %q: tolerance must be a non-negative number, e.g. numeric:0.01", ErrUnknownScorer, name)
		}
		if tol == 0 {
			tol = -1 // exact: Numeric's zero value would mean the default
		}
		return Numeric{Tolerance: tol}, nil
	case "choice":
		var labels []string
		for l := range strings.SplitSeq(arg, "|") {
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
		if len(labels) < 2 {
			return nil, fmt.Errorf("%w: %q: give at least two labels, e.g. choice:SUPPORTS|REFUTES", ErrUnknownScorer, name)
		}
		return Choice{Labels: labels}, nil
	}
	return nil, fmt.Errorf("%w: %q (known: em, contains, numeric, numeric:<tolerance>, game24, sorting, choice:<a|b|...>)", ErrUnknownScorer, name)
}

// Summary aggregates results for a report.
type Summary struct {
	// Tasks is the number of results summarised.
	Tasks int
	// Scored is the number of results that were not Unscorable.
	Scored int
	// Correct is the number of Correct results.
	Correct int
	// Accuracy is Correct / Scored, in [0, 1]; 0 when nothing was scored.
	Accuracy float64
	// EM is the mean EM over the scored results; 0 when nothing was scored.
	EM float64
	// F1 is the mean F1 over the scored results that have one; 0 when none.
	F1 float64
	// WithF1 is the number of scored results that have an F1.
	WithF1 int
}

// Summarize aggregates results, leaving Unscorable ones out of the means.
func Summarize(results []Result) Summary {
	s := Summary{Tasks: len(results)}
	var em, f1 float64
	for _, r := range results {
		if r.Unscorable {
			continue
		}
		s.Scored++
		em += r.EM
		if r.Correct {
			s.Correct++
		}
		if r.HasF1 {
			s.WithF1++
			f1 += r.F1
		}
	}
	if s.Scored > 0 {
		s.Accuracy = float64(s.Correct) / float64(s.Scored)
		s.EM = em / float64(s.Scored)
	}
	if s.WithF1 > 0 {
		s.F1 = f1 / float64(s.WithF1)
	}
	return s
}

// solves24 reports whether ref's answer is an expression that solves the
// Game of 24 puzzle its question states.
func solves24(ref Reference) bool {
	if !strings.ContainsAny(ref.Answer, "+-*/") {
		return false
	}
	nums, err := PuzzleNumbers(ref.Question)
	return err == nil && len(nums) == 4 && Verify24(nums, ref.Answer) == nil
}

// b2f is 1 for true, 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
