package calc

import (
	"context"
	"math"
	"math/big"
	"strconv"
)

// value is an intermediate result: exact when r is non-nil, otherwise the
// float64 f.
type value struct {
	r *big.Rat
	f float64
}

func exactValue(r *big.Rat) value { return value{r: r} }

func floatValue(f float64) value { return value{f: f} }

func intValue(i int64) value { return value{r: new(big.Rat).SetInt64(i)} }

func (v value) exact() bool { return v.r != nil }

// sign returns -1, 0 or +1.
func (v value) sign() int {
	if v.r != nil {
		return v.r.Sign()
	}
	switch {
	case v.f < 0:
		return -1
	case v.f > 0:
		return 1
	}
	return 0
}

// isInt reports whether v is an exact integer.
func (v value) isInt() bool { return v.r != nil && v.r.IsInt() }

// evaluator walks the syntax tree under the limits of one evaluation.
type evaluator struct {
	ctx   context.Context
	cfg   config
	steps int
	// work is the estimated cost of the big-number operations so far, in
	// squared 64-bit words (the cost model of schoolbook multiplication and
	// of the GCD that normalises every rational).
	work int64
	// budget is the largest work allowed; see fullSizeOps.
	budget int64
}

// fullSizeOps is how many operations on values of the full bit limit one
// evaluation may perform; it sets the work budget.
const fullSizeOps = 16

// newEvaluator returns an evaluator for one evaluation.
func newEvaluator(ctx context.Context, cfg config) *evaluator {
	w := int64(cfg.maxBits)/64 + 1
	return &evaluator{ctx: ctx, cfg: cfg, budget: mulSat(fullSizeOps, mulSat(w, w))}
}

// mulSat multiplies non-negative a and b, saturating at math.MaxInt64.
func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// wordsOf is the size of r in 64-bit words, numerator and denominator
// together.
func wordsOf(r *big.Rat) int64 {
	return int64(r.Num().BitLen()+r.Denom().BitLen())/64 + 1
}

// wordsOfBits is the size of a value of the given bit length in 64-bit
// words.
func wordsOfBits(bits float64) int64 {
	return int64(bits/64) + 1
}

// charge accounts, before it runs, for an operation whose cost is about
// a*b squared words (operands of a and b words), and fails with ErrTooLarge
// once the budget is spent, so that long inputs full of maximal values
// still finish quickly.
func (ev *evaluator) charge(a, b int64, col int) error {
	cost := mulSat(a, b)
	if cost > ev.budget-ev.work {
		return newError(ErrTooLarge, col,
			"the expression needs too much computation (more than about %d operations on %d-bit numbers)",
			fullSizeOps, ev.cfg.maxBits)
	}
	ev.work += cost
	return nil
}

// ctxCheckEvery is how many nodes are evaluated between context checks.
const ctxCheckEvery = 64

// step counts one node and periodically checks for cancellation.
func (ev *evaluator) step() error {
	ev.steps++
	if ev.steps%ctxCheckEvery == 0 {
		return ev.ctx.Err()
	}
	return nil
}

// checkRat enforces the bit limit on an exact value.
func (ev *evaluator) checkRat(r *big.Rat, col int) (value, error) {
	if n := max(r.Num().BitLen(), r.Denom().BitLen()); n > ev.cfg.maxBits {
		return value{}, newError(ErrTooLarge, col, "value needs %d bits, more than the limit of %d", n, ev.cfg.maxBits)
	}
	return exactValue(r), nil
}

// checkFloat rejects overflowed and undefined float64 results.
func (ev *evaluator) checkFloat(f float64, col int, what string) (value, error) {
	switch {
	case math.IsNaN(f):
		return value{}, newError(ErrDomain, col, "%s is undefined", what)
	case math.IsInf(f, 0):
		return value{}, newError(ErrTooLarge, col, "%s overflows float64", what)
	}
	return floatValue(f), nil
}

// toFloat converts v to float64, failing when it is beyond float64's range.
func (ev *evaluator) toFloat(v value, col int) (float64, error) {
	if v.r == nil {
		return v.f, nil
	}
	f, _ := v.r.Float64()
	if math.IsInf(f, 0) {
		return 0, newError(ErrTooLarge, col, "value is too large for a floating-point function")
	}
	return f, nil
}

// toFloats converts both operands of a binary operator with toFloat.
func (ev *evaluator) toFloats(a, b value, col int) (x, y float64, err error) {
	if x, err = ev.toFloat(a, col); err != nil {
		return 0, 0, err
	}
	if y, err = ev.toFloat(b, col); err != nil {
		return 0, 0, err
	}
	return x, y, nil
}

// decimalRat converts a float64 to the exact rational of its shortest
// decimal representation, so that 2.675 stays 2.675 rather than the binary
// value just below it. f must be finite.
func decimalRat(f float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		// Unreachable for finite f; fall back to the binary value.
		r = new(big.Rat).SetFloat64(f)
	}
	return r
}

// asRat returns v as an exact rational (floats via decimalRat).
func (ev *evaluator) asRat(v value, col int) (*big.Rat, error) {
	if v.r != nil {
		return v.r, nil
	}
	r := decimalRat(v.f)
	if _, err := ev.checkRat(r, col); err != nil {
		return nil, err
	}
	return r, nil
}

// pow10 holds the powers of ten that fit in an int64.
var pow10 = [...]int64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// log2Of10 is log2(10), used to estimate the bit length of powers of ten.
const log2Of10 = 3.321928094887362

// literal converts a number literal to an exact rational, refusing
// literals whose value would exceed the bit limit before building them.
func (ev *evaluator) literal(n *numNode) (value, error) {
	digits := n.lit.intDigits + n.lit.fracDigits
	scale := n.lit.exp - int64(len(n.lit.fracDigits))
	if len(digits) <= 18 && scale > -19 && scale <= 0 {
		// Fast path for ordinary literals: everything fits in an int64.
		m, err := strconv.ParseInt(digits, 10, 64)
		if err == nil {
			return exactValue(new(big.Rat).SetFrac64(m, pow10[-scale])), nil
		}
	}
	mant, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return value{}, newError(ErrSyntax, n.col, "malformed number %s", n.text)
	}
	if mant.Sign() == 0 {
		return intValue(0), nil
	}
	mb := float64(mant.BitLen())
	limit := float64(ev.cfg.maxBits)
	// 10^scale has about |scale|*log2(10) bits; a denominator can shrink by
	// at most the size of the mantissa when the fraction is reduced.
	if (scale > 0 && mb-1+float64(scale)*log2Of10 > limit) ||
		(scale < 0 && float64(-scale)*log2Of10-mb > limit) {
		return value{}, newError(ErrTooLarge, n.col, "number %s needs more than %d bits", abbreviate(n.text), ev.cfg.maxBits)
	}
	w := wordsOfBits(mb + float64(abs64(scale))*log2Of10)
	if err := ev.charge(w, w, n.col); err != nil {
		return value{}, err
	}
	r := new(big.Rat).SetInt(mant)
	if scale != 0 {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(scale)), nil)
		if scale > 0 {
			r.SetInt(p.Mul(p, mant))
		} else {
			r.SetFrac(mant, p)
		}
	}
	return ev.checkRat(r, n.col)
}

// abbreviate shortens long literals in error messages.
func abbreviate(s string) string {
	const keep = 24
	if len(s) <= 2*keep {
		return s
	}
	return s[:keep] + "…" + s[len(s)-keep:]
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
