package calc

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// function describes a built-in function.
type function struct {
	minArgs int
	// maxArgs is the largest argument count, or -1 for no limit.
	maxArgs int
	impl    func(ev *evaluator, call *callNode, args []value) (value, error)
}

// arity describes the accepted argument counts for error messages.
func (f *function) arity() string {
	switch {
	case f.maxArgs < 0:
		return fmt.Sprintf("at least %d argument%s", f.minArgs, plural(f.minArgs))
	case f.minArgs == f.maxArgs:
		return fmt.Sprintf("%d argument%s", f.minArgs, plural(f.minArgs))
	}
	return fmt.Sprintf("%d to %d arguments", f.minArgs, f.maxArgs)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (f *function) call(ev *evaluator, call *callNode, args []value) (value, error) {
	return f.impl(ev, call, args)
}

// constants are the named constants; names are lower case.
var constants = map[string]float64{
	"pi": math.Pi,
	"π":  math.Pi,
	"e":  math.E,
}

// functions are the built-in functions; names are lower case.
var functions = map[string]*function{
	"sqrt":      {1, 1, fnSqrt},
	"ln":        {1, 1, fnLn},
	"log":       {1, 2, fnLog},
	"log10":     {1, 1, fnLog},
	"log2":      {1, 1, fnLog2},
	"exp":       {1, 1, fnExp},
	"sin":       {1, 1, trig("sin", math.Sin, 0)},
	"cos":       {1, 1, trig("cos", math.Cos, 1)},
	"tan":       {1, 1, fnTan},
	"asin":      {1, 1, fnAsin},
	"acos":      {1, 1, fnAcos},
	"atan":      {1, 1, trig("atan", math.Atan, 0)},
	"abs":       {1, 1, fnAbs},
	"round":     {1, 2, fnRound},
	"floor":     {1, 1, fnFloor},
	"ceil":      {1, 1, fnCeil},
	"min":       {1, -1, extreme(-1)},
	"max":       {1, -1, extreme(1)},
	"pow":       {2, 2, fnPow},
	"factorial": {1, 1, fnFactorial},
}

// functionList names the functions in error messages.
const functionList = "sqrt, ln, log, log2, exp, sin, cos, tan, asin, acos, atan, abs, round, floor, ceil, min, max, pow, factorial"

func fnSqrt(ev *evaluator, call *callNode, args []value) (value, error) {
	return ev.sqrt(args[0], call.col, call.name)
}

// sqrt returns an exact root for squares of rationals and a float64
// otherwise.
func (ev *evaluator) sqrt(x value, col int, name string) (value, error) {
	if x.sign() < 0 {
		return value{}, newError(ErrDomain, col, "%s of a negative number is not real", name)
	}
	if !x.exact() {
		return floatValue(math.Sqrt(x.f)), nil
	}
	if err := ev.charge(wordsOf(x.r), wordsOf(x.r), col); err != nil {
		return value{}, err
	}
	if s, ok := exactSqrt(x.r); ok {
		return exactValue(s), nil
	}
	f := new(big.Float).SetPrec(64).SetRat(x.r)
	r, _ := f.Sqrt(f).Float64()
	return ev.checkFloat(r, col, name)
}

// positive fails unless x > 0, the domain of the logarithms.
func positive(x value, col int, name string) error {
	if x.sign() <= 0 {
		return newError(ErrDomain, col, "%s needs a positive argument", name)
	}
	return nil
}

// ln returns the natural logarithm of x > 0 of any size.
func ln(x value) float64 {
	if x.exact() {
		return lnRat(x.r)
	}
	return math.Log(x.f)
}

func fnLn(ev *evaluator, call *callNode, args []value) (value, error) {
	x := args[0]
	if err := positive(x, call.col, call.name); err != nil {
		return value{}, err
	}
	if x.exact() && x.r.Cmp(big.NewRat(1, 1)) == 0 {
		return intValue(0), nil
	}
	return ev.checkFloat(ln(x), call.col, call.name)
}

func fnLog(ev *evaluator, call *callNode, args []value) (value, error) {
	base := intValue(10)
	if len(args) == 2 {
		base = args[1]
		if err := positive(base, call.cols[1], "the base of "+call.name); err != nil {
			return value{}, err
		}
		if ln(base) == 0 {
			return value{}, newError(ErrDomain, call.cols[1], "the base of %s must not be 1", call.name)
		}
	}
	return ev.logBase(args[0], base, call)
}

func fnLog2(ev *evaluator, call *callNode, args []value) (value, error) {
	return ev.logBase(args[0], intValue(2), call)
}

// logBase returns log_base(x), exactly when x is an integer power of an
// exact base (log(1000) = 3, log2(1/8) = -3).
func (ev *evaluator) logBase(x, base value, call *callNode) (value, error) {
	if err := positive(x, call.col, call.name); err != nil {
		return value{}, err
	}
	f := ln(x) / ln(base)
	if x.exact() && base.exact() {
		if k := math.Round(f); math.Abs(f-k) < 1e-9 && math.Abs(k) <= float64(ev.cfg.maxBits) {
			p, err := ev.powInt(base.r, big.NewInt(int64(k)), call.col)
			if err == nil && p.r.Cmp(x.r) == 0 {
				return intValue(int64(k)), nil
			}
		}
	}
	return ev.checkFloat(f, call.col, call.name)
}

func fnExp(ev *evaluator, call *callNode, args []value) (value, error) {
	if args[0].sign() == 0 {
		return intValue(1), nil
	}
	x, err := ev.toFloat(args[0], call.col)
	if err != nil {
		return value{}, err
	}
	return ev.checkFloat(math.Exp(x), call.col, call.name)
}

// trig wraps a float64 function whose value at an exact 0 is the exact
// integer atZero.
func trig(name string, f func(float64) float64, atZero int64) func(*evaluator, *callNode, []value) (value, error) {
	return func(ev *evaluator, call *callNode, args []value) (value, error) {
		if args[0].exact() && args[0].sign() == 0 {
			return intValue(atZero), nil
		}
		x, err := ev.toFloat(args[0], call.col)
		if err != nil {
			return value{}, err
		}
		return ev.checkFloat(f(x), call.col, name)
	}
}

// tanPoleULPs is how near, in units in the last place (ulp) of the
// argument's float64 value, tan's argument may come to an odd multiple of
// π/2 before tan is reported undefined there.
const tanPoleULPs = 4

// fnTan is the tangent, in radians. tan is undefined at the odd multiples
// of π/2, but pi is only the float64 nearest π, so pi/2, 3*pi/2, -pi/2 or
// 101*pi/2 miss the pole by a fraction of an ulp, and math.Tan returns a
// huge number that only measures the rounding (16331239353195370 for
// tan(pi/2)). An argument within tanPoleULPs (4) ulp of an odd multiple of
// π/2 therefore fails with ErrDomain, as sqrt(-1) does, rather than giving
// such a number or ±Inf. The distance is measured from the argument's
// float64 value to the true multiple of π/2, so the rounding of pi itself
// (under half an ulp of the product) and of one or two operations on it
// are covered, while tan(1.5707), 6e-5 away from π/2, still gives
// 10381.3274175698, and tan(pi/2 - 1e-14), 45 ulp away, 99470423824503.1.
// Exact arguments that float64 holds exactly (5, 0.5, 1e16) are never
// rejected: tan is defined at every rational, and math.Tan is accurate
// there. Beyond about 2^51, where 4 ulp exceed π/4, the check rejects most
// other arguments: their float64 values no longer say where they lie in
// tan's period.
func fnTan(ev *evaluator, call *callNode, args []value) (value, error) {
	x := args[0]
	if x.exact() && x.sign() == 0 {
		return intValue(0), nil
	}
	f, err := ev.toFloat(x, call.col)
	if err != nil {
		return value{}, err
	}
	t := math.Tan(f)
	exactlyHeld := false
	if x.exact() {
		_, exactlyHeld = x.r.Float64()
	}
	if !exactlyHeld && nearTanPole(f, t) {
		return value{}, newError(ErrDomain, call.col,
			"%s is undefined at odd multiples of π/2, and the argument is within %d ulp of %s",
			call.name, tanPoleULPs, oddHalfPi(f))
	}
	return ev.checkFloat(t, call.col, call.name)
}

// nearTanPole reports whether x, whose tangent is t, lies within
// tanPoleULPs ulp of an odd multiple of π/2. At distance d from the nearest
// pole |tan x| = cot d, so d = atan(1/|tan x|) without cancellation, and
// math.Tan's exact argument reduction makes d accurate even for large x.
func nearTanPole(x, t float64) bool {
	ax := math.Abs(x)
	ulp := math.Nextafter(ax, math.Inf(1)) - ax
	return math.Atan(1/math.Abs(t)) <= tanPoleULPs*ulp
}

// oddHalfPi names the odd multiple of π/2 nearest x, such as "3π/2", or
// says "one" where float64 cannot hold the multiplier.
func oddHalfPi(x float64) string {
	m := 2*math.Floor(x/math.Pi) + 1
	switch {
	case m == 1:
		return "π/2"
	case m == -1:
		return "-π/2"
	case math.Abs(m) >= 1<<53:
		return "one"
	}
	return strconv.FormatFloat(m, 'f', -1, 64) + "π/2"
}

// unitRange fails unless -1 <= x <= 1, the domain of asin and acos.
func (ev *evaluator) unitRange(x value, call *callNode) (float64, error) {
	f, err := ev.toFloat(x, call.col)
	if err == nil && (f < -1 || f > 1) {
		err = newError(ErrDomain, call.col, "%s needs an argument between -1 and 1", call.name)
	}
	return f, err
}

func fnAsin(ev *evaluator, call *callNode, args []value) (value, error) {
	f, err := ev.unitRange(args[0], call)
	if err != nil {
		return value{}, err
	}
	if args[0].exact() && f == 0 {
		return intValue(0), nil
	}
	return ev.checkFloat(math.Asin(f), call.col, call.name)
}

func fnAcos(ev *evaluator, call *callNode, args []value) (value, error) {
	f, err := ev.unitRange(args[0], call)
	if err != nil {
		return value{}, err
	}
	if args[0].exact() && f == 1 {
		return intValue(0), nil
	}
	return ev.checkFloat(math.Acos(f), call.col, call.name)
}

func fnAbs(_ *evaluator, _ *callNode, args []value) (value, error) {
	x := args[0]
	if x.exact() {
		return exactValue(new(big.Rat).Abs(x.r)), nil
	}
	return floatValue(math.Abs(x.f)), nil
}

// maxRoundDigits bounds the digits argument of round.
const maxRoundDigits = 1000

// fnRound rounds to the nearest integer, or to a number of decimal places
// (negative: tens, hundreds...), halves away from zero. The result is exact.
func fnRound(ev *evaluator, call *callNode, args []value) (value, error) {
	x, err := ev.asRat(args[0], call.cols[0])
	if err != nil {
		return value{}, err
	}
	if err := ev.charge(wordsOf(x), wordsOf(x), call.col); err != nil {
		return value{}, err
	}
	if len(args) == 1 {
		return ev.checkRat(new(big.Rat).SetInt(roundInt(x)), call.col)
	}
	d := args[1]
	tooMany := newError(ErrTooLarge, call.cols[1], "%s accepts at most %d digits", call.name, maxRoundDigits)
	if !d.exact() && d.f == math.Trunc(d.f) {
		if math.Abs(d.f) > maxRoundDigits {
			return value{}, tooMany
		}
		d = intValue(int64(d.f))
	}
	if !d.isInt() {
		return value{}, newError(ErrDomain, call.cols[1], "the digits of %s must be an integer", call.name)
	}
	if !d.r.Num().IsInt64() || abs64(d.r.Num().Int64()) > maxRoundDigits {
		return value{}, tooMany
	}
	digits := d.r.Num().Int64()
	w := wordsOf(x) + wordsOfBits(float64(abs64(digits))*log2Of10)
	if err := ev.charge(w, w, call.col); err != nil {
		return value{}, err
	}
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(digits)), nil))
	if digits < 0 {
		scale.Inv(scale)
	}
	y := new(big.Rat).SetInt(roundInt(new(big.Rat).Mul(x, scale)))
	return ev.checkRat(y.Quo(y, scale), call.col)
}

func fnFloor(ev *evaluator, call *callNode, args []value) (value, error) {
	x, err := ev.asRat(args[0], call.cols[0])
	if err == nil {
		err = ev.charge(wordsOf(x), wordsOf(x), call.col)
	}
	if err != nil {
		return value{}, err
	}
	return exactValue(new(big.Rat).SetInt(floorInt(x))), nil
}

func fnCeil(ev *evaluator, call *callNode, args []value) (value, error) {
	x, err := ev.asRat(args[0], call.cols[0])
	if err == nil {
		err = ev.charge(wordsOf(x), wordsOf(x), call.col)
	}
	if err != nil {
		return value{}, err
	}
	return ev.checkRat(new(big.Rat).SetInt(ceilInt(x)), call.col)
}

// extreme returns min (sign -1) or max (sign +1) of its arguments, keeping
// the chosen argument's exactness.
func extreme(sign int) func(*evaluator, *callNode, []value) (value, error) {
	return func(ev *evaluator, call *callNode, args []value) (value, error) {
		best := args[0]
		for i, a := range args[1:] {
			c, err := ev.compare(a, best, call.cols[i+1])
			if err != nil {
				return value{}, err
			}
			if c == sign {
				best = a
			}
		}
		return best, nil
	}
}

// compare returns -1, 0 or +1 as a is less than, equal to or greater than b.
func (ev *evaluator) compare(a, b value, col int) (int, error) {
	if a.exact() && b.exact() {
		if err := ev.charge(wordsOf(a.r), wordsOf(b.r), col); err != nil {
			return 0, err
		}
		return a.r.Cmp(b.r), nil
	}
	// Compare exactly through the decimal form of the float operand so that
	// values beyond float64's range still compare correctly.
	x, err := ev.asRat(a, col)
	if err != nil {
		return 0, err
	}
	y, err := ev.asRat(b, col)
	if err != nil {
		return 0, err
	}
	if err := ev.charge(wordsOf(x), wordsOf(y), col); err != nil {
		return 0, err
	}
	return x.Cmp(y), nil
}

func fnPow(ev *evaluator, call *callNode, args []value) (value, error) {
	return ev.pow(args[0], args[1], call.col)
}

func fnFactorial(ev *evaluator, call *callNode, args []value) (value, error) {
	return ev.factorial(args[0], call.col, call.name)
}
