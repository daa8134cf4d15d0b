package calc

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"unicode/utf8"
)

// Result is the value of an expression. The zero Result is exact zero.
type Result struct {
	// rat is the exact value when inexact is false (nil means zero).
	rat *big.Rat
	// f is the value when inexact is true.
	f float64
	// inexact is true when the value is a float64 approximation.
	inexact bool
	// precision is the number of fractional digits String shows when it
	// has to round; 0 means DefaultPrecision.
	precision int
}

// Exact reports whether the value is exact (an integer or rational computed
// without rounding). Results of transcendental functions and non-integer
// powers are float64 approximations and are not exact.
func (r Result) Exact() bool { return !r.inexact }

// Rat returns a copy of the exact value, or nil when the result is not
// exact.
func (r Result) Rat() *big.Rat {
	switch {
	case r.inexact:
		return nil
	case r.rat == nil:
		return new(big.Rat)
	}
	return new(big.Rat).Set(r.rat)
}

// Float64 returns the nearest float64 to the value (±Inf when an exact value
// is beyond float64's range).
func (r Result) Float64() float64 {
	if r.inexact {
		return r.f
	}
	if r.rat == nil {
		return 0
	}
	f, _ := r.rat.Float64()
	return f
}

// String renders the value with the precision chosen at evaluation time (see
// WithPrecision).
func (r Result) String() string {
	p := r.precision
	if p <= 0 {
		p = DefaultPrecision
	}
	return r.Text(p)
}

// Text renders the value: integers and terminating decimals of up to
// max(precision, 40) fractional digits exactly, other values rounded to
// precision fractional digits (clamped to 1..MaxPrecision) with trailing
// zeros removed. Float64 results never show more than 15 significant digits.
// Values that would round to 0, and float64 values of 1e21 or more, use
// scientific notation.
func (r Result) Text(precision int) string {
	precision = min(max(precision, 1), MaxPrecision)
	switch {
	case r.inexact:
		return formatFloat(r.f, precision)
	case r.rat == nil:
		return "0"
	}
	return formatRat(r.rat, precision)
}

// Eval evaluates an arithmetic expression (see the package documentation
// for the syntax). Errors are *Error values wrapping ErrSyntax,
// ErrDivByZero, ErrDomain, ErrTooLarge, ErrUnknownName or ErrArgCount, or
// the context's error when ctx ends first.
func Eval(ctx context.Context, expr string, opts ...Option) (Result, error) {
	return eval(ctx, expr, newConfig(opts))
}

func eval(ctx context.Context, expr string, cfg config) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("calculator: %w", err)
	}
	if len(expr) > cfg.maxLength {
		return Result{}, newError(ErrTooLarge, 0, "the expression is %d bytes long, more than the limit of %d", len(expr), cfg.maxLength)
	}
	if !utf8.ValidString(expr) {
		return Result{}, newError(ErrSyntax, 0, "the expression is not valid UTF-8")
	}
	rs := []rune(expr)
	for i, r := range rs {
		rs[i] = normalizeRune(r)
	}
	start, end := trimInput(rs)
	if start == end {
		return Result{}, newError(ErrSyntax, 0, "empty expression")
	}
	tree, err := parse(newLexer(rs[start:end], start), cfg.maxDepth)
	if err != nil {
		return Result{}, err
	}
	ev := newEvaluator(ctx, cfg)
	v, err := ev.evaluate(tree)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && err == ctxErr {
			return Result{}, fmt.Errorf("calculator: %w", err)
		}
		return Result{}, err
	}
	if !v.exact() && (math.IsNaN(v.f) || math.IsInf(v.f, 0)) {
		// Unreachable: every float operation is checked.
		return Result{}, newError(ErrDomain, 0, "the result is not a finite number")
	}
	return Result{rat: v.r, f: v.f, inexact: !v.exact(), precision: cfg.precision}, nil
}
