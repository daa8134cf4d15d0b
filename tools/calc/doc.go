// Package calc implements the "calculator" tool: a small, exact arithmetic
// evaluator for expressions written by language models.
//
// Expressions are read by a hand-written tokenizer and a precedence-climbing
// (Pratt) parser into a syntax tree, which is then evaluated. Nothing is ever
// handed to a scripting language.
//
// # Numbers
//
// Integers and decimals are exact: integers are math/big integers and decimals
// are math/big rationals, so 123456789*987654321 is 121932631112635269 and
// 0.1+0.2 is 0.3. Division yields an exact rational, printed in full when its
// decimal expansion terminates within 40 fractional digits (or the
// precision, if larger) and otherwise rounded to the precision (12
// fractional digits by default, see WithPrecision): 1/3 prints as
// 0.333333333333; values that would round to 0 use scientific notation.
// Literals may use a decimal point and an exponent (1.5e-3).
//
// Transcendental functions (sin, ln, exp, non-integer powers, ...) fall back
// to float64. Their results are marked inexact (Result.Exact) and printed with
// at most 15 significant digits, so sqrt(2) prints as 1.414213562373. Where
// the exact answer is cheap to recognise it is kept exact: sqrt(16) is 4,
// log(1000) is 3, 4^0.5 is 2, and floor, ceil and round always give exact
// values.
//
// # Syntax
//
// Operators, loosest first: + and - (left-associative); *, / and %
// (left-associative); unary -, + and √ (prefix); ^ and ** (power,
// right-associative, so 2^3^2 = 512 and -2^2 = -4); postfix ! (factorial).
// Parentheses group. Implicit multiplication (2x, 2(3)) is not supported.
// The modulo a % b takes the sign of b (floored division), so -7 % 3 = 2.
// 0^0 is 1.
//
// Functions (names are case-insensitive): sqrt, ln, log (base 10, or
// log(x, base)), log2, exp, sin, cos, tan, asin, acos, atan (radians), abs,
// round(x) and round(x, digits) (halves away from zero), floor, ceil, min and
// max (one or more arguments), pow(x, y) and factorial(n). Constants: pi (or
// π) and e.
//
// pi is the float64 nearest π, so expressions built from it are off by a
// fraction of a unit in the last place (ulp): sin(pi) is 1.22464679915e-16,
// not 0. Where that rounding would turn an undefined value into a
// meaningless huge one, the calculator reports a domain error instead:
// tan fails with ErrDomain when its argument lies within 4 ulp of an odd
// multiple of π/2, so tan(pi/2), tan(3*pi/2) and tan(101*pi/2) are errors
// rather than 16331239353195370 and the like, while tan(1.5707) and
// tan(pi/4) are computed as usual. Exact arguments that float64 represents
// exactly are never rejected, since tan is defined at every rational.
//
// # Thousands separators
//
// A comma between digits is a thousands separator when it is followed by
// exactly three digits and the number is not an argument of a function call:
// "1,234,567 * 2" is 2469134, and so is "(1,234,567) * 2", but in
// "max(1,234)" the comma separates two arguments (the result is 234). Groups
// that are not exactly three digits ("1,23") are syntax errors, never guesses.
//
// # Tolerant input
//
// Surrounding white space, quotes, backticks and Markdown code fences are
// removed, as is a leading or trailing "=". The operators × · ÷ − and en dash
// are read as *, *, /, - and -, and full-width characters (１２３＋４) as their
// ASCII forms.
//
// # Bounded work
//
// Every evaluation is bounded: input length (4096 bytes by default,
// WithMaxLength), nesting depth (100 levels, WithMaxDepth) and the bit length
// of every exact intermediate value (10,000 bits by default, about 3,000
// decimal digits, WithMaxBits). Powers and factorials estimate the size of
// their result before computing it, so 10^10^10 or 9^9^9^9 fail at once with
// ErrTooLarge instead of exhausting memory. Finally each big-number operation
// is charged its estimated cost (quadratic in the operand sizes) against a
// budget worth about 16 operations on numbers at the bit limit, so that a
// long input packed with maximal values also fails with ErrTooLarge instead
// of running for a long time. The budget grows with the square of
// WithMaxBits.
//
// # Errors
//
// Errors are *Error values that wrap one of ErrSyntax, ErrDivByZero,
// ErrDomain, ErrTooLarge, ErrUnknownName or ErrArgCount (test with
// errors.Is) and carry the 1-based column, counted in characters of the
// input, where the problem was found.
package calc
