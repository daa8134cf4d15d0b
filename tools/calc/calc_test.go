package calc

import (
	"context"
	"errors"
	"math"
	"math/big"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// evalString evaluates expr with the default settings and renders it.
func evalString(t *testing.T, expr string, opts ...Option) string {
	t.Helper()
	res, err := Eval(context.Background(), expr, opts...)
	require.NoError(t, err, "expression %q", expr)
	return res.String()
}

func TestEvalComputesExactArithmetic(t *testing.T) {
	tests := []struct {
		name, expr, want string
	}{
		{"big integer product", "123456789*987654321", "121932631112635269"},
		{"decimal sum without binary error", "0.1+0.2", "0.3"},
		{"multiplication before addition", "2+3*4", "14"},
		{"parentheses first", "(2+3)*4", "20"},
		{"subtraction is left-associative", "10-4-3", "3"},
		{"division is left-associative", "100/10/5", "2"},
		{"power is right-associative", "2^3^2", "512"},
		{"double star is power", "2**10", "1024"},
		{"power binds tighter than unary minus", "-2^2", "-4"},
		{"negative exponent", "2^-2", "0.25"},
		{"parenthesised negative base", "(-2)^3", "-8"},
		{"unary plus and minus chain", "-+-3", "3"},
		{"terminating quotient printed in full", "1/8", "0.125"},
		{"non-terminating quotient rounded", "1/3", "0.333333333333"},
		{"rounding halves away from zero", "2/3", "0.666666666667"},
		{"negative repeating quotient", "-1/3", "-0.333333333333"},
		{"quotient times divisor is exact", "1/7*7", "1"},
		{"modulo of integers", "17%5", "2"},
		{"modulo takes the divisor's sign", "-7%3", "2"},
		{"modulo with negative divisor", "7%-3", "-2"},
		{"modulo of decimals", "5.5%2", "1.5"},
		{"factorial", "10!", "3628800"},
		{"factorial binds tighter than minus", "-3!", "-6"},
		{"repeated factorial", "3!!", "720"},
		{"factorial binds tighter than power", "2^3!", "64"},
		{"zero to the zero", "0^0", "1"},
		{"exponent literal", "2.5e3", "2500"},
		{"negative exponent literal", "25e-3", "0.025"},
		{"leading decimal point", ".5+.5", "1"},
		{"trailing decimal point", "5.", "5"},
		{"thousands separators", "1,234,567*2", "2469134"},
		{"thousands separators with fraction", "1,234.5+0.5", "1235"},
		{"thousands separators in plain parentheses", "(1,234)*2", "2468"},
		{"comma separates function arguments", "max(1,234)", "234"},
		{"tiny exact value in scientific notation", "1/3*10^-20", "3.33333333333e-21"},
		{"long terminating decimal rounded", "2^-100", "7.88860905221e-31"},
		{"huge integer stays exact", "2^200", new(big.Int).Lsh(big.NewInt(1), 200).String()},
		{"rational power of a fraction", "(2/3)^3", "0.296296296296"},
		{"half power of a square is exact", "4^0.5", "2"},
		{"half power of a rational square", "(9/4)^1.5", "3.375"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, evalString(t, tc.expr))
		})
	}
}

func TestEvalComputesFunctionsAndConstants(t *testing.T) {
	tests := []struct {
		name, expr, want string
		exact            bool
	}{
		{"sqrt of a square is exact", "sqrt(16)", "4", true},
		{"sqrt of a rational square is exact", "sqrt(0.25)", "0.5", true},
		{"sqrt of a non-square", "sqrt(2)", "1.414213562373", false},
		{"sqrt of a huge square", "sqrt(10^400)", "1" + strings.Repeat("0", 200), true},
		{"square root sign", "√16+√(9)", "7", true},
		{"log is base 10 and exact on powers", "log(1000)", "3", true},
		{"log10 alias", "log10(0.01)", "-2", true},
		{"log with a base", "log(8, 2)", "3", true},
		{"log with a non-power", "log(2)", "0.301029995664", false},
		{"log of a value beyond float64", "log(10^400+1)", "400", false},
		{"log2", "log2(1/8)", "-3", true},
		{"ln of 1 is exact", "ln(1)", "0", true},
		{"ln of e", "ln(e)", "1", false},
		{"exp of 0 is exact", "exp(0)", "1", true},
		{"exp", "exp(1)", "2.718281828459", false},
		{"large float result keeps 15 digits", "exp(30)", "10686474581524.5", false},
		{"very large float result in scientific notation", "exp(700)", "1.01423205474e+304", false},
		{"sin of 0 is exact", "sin(0)", "0", true},
		{"sin of pi/2", "sin(pi/2)", "1", false},
		{"sin of pi is tiny, not zero", "sin(pi)", "1.22464679915e-16", false},
		{"cos of 0 is exact", "cos(0)", "1", true},
		{"cos of pi", "cos(pi)", "-1", false},
		{"tan", "tan(pi/4)", "1", false},
		{"asin", "asin(1)*2", "3.14159265359", false},
		{"acos of 1 is exact", "acos(1)", "0", true},
		{"atan", "atan(1)*4", "3.14159265359", false},
		{"abs", "abs(-5.5)", "5.5", true},
		{"round half away from zero", "round(-2.5)", "-3", true},
		{"round to digits uses the decimal value", "round(2.675, 2)", "2.68", true},
		{"round to tens", "round(1234, -1)", "1230", true},
		{"round of a float is exact", "round(sqrt(2), 3)", "1.414", true},
		{"floor of negative", "floor(-2.5)", "-3", true},
		{"ceil of a float", "ceil(sqrt(2))", "2", true},
		{"min is variadic", "min(3, 1/3, pi)", "0.333333333333", true},
		{"max keeps the float", "max(3, pi)", "3.14159265359", false},
		{"max of one", "max(7)", "7", true},
		{"pow", "pow(2, 10)", "1024", true},
		{"factorial function", "factorial(5)", "120", true},
		{"factorial of an integral float", "factorial(sqrt(9))", "6", true},
		{"constants are case-insensitive", "PI - Pi + pI", "3.14159265359", false},
		{"greek pi", "2*π", "6.28318530718", false},
		{"function names are case-insensitive", "SQRT(4)+Sin(0)", "2", true},
		{"real cube root of a negative", "(-8)^(1/3)", "-2", false},
		{"even power of a negative root", "(-8)^(2/3)", "4", false},
		{"float base with integer exponent", "(-sqrt(2))^3", "-2.828427124746", false},
		{"non-integer power", "2^0.5", "1.414213562373", false},
		{"power of a value beyond float64", "(10^400)^0.001", "2.51188643151", false},
		{"float modulo takes the divisor's sign", "-pi % 2", "0.85840734641", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Eval(context.Background(), tc.expr)
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.String())
			assert.Equal(t, tc.exact, res.Exact())
		})
	}
}

func TestEvalToleratesModelFormatting(t *testing.T) {
	tests := []struct {
		name, expr, want string
	}{
		{"surrounding white space", "  \t2+2\n ", "4"},
		{"double quotes", `"2+2"`, "4"},
		{"single quotes", "'2+2'", "4"},
		{"backticks", "`2+2`", "4"},
		{"curly quotes", "“2+2”", "4"},
		{"markdown code fence with language", "```python\n2**10\n```", "1024"},
		{"markdown code fence", "```\n2*3\n```", "6"},
		{"trailing equals sign", "6*7 =", "42"},
		{"leading equals sign", "=6*7", "42"},
		{"quoted with trailing equals", "`3 × 4 − 1 =`", "11"},
		{"unicode multiplication and division", "6 × 4 ÷ 3", "8"},
		{"middle dot multiplication", "6·7", "42"},
		{"unicode minus and en dash", "10 − 3 – 2", "5"},
		{"full-width digits and operators", "１２３＋４", "127"},
		{"full-width parentheses", "（１＋２）＊３", "9"},
		{"non-breaking spaces", "2\u00a0+\u20092", "4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, evalString(t, tc.expr))
		})
	}
}

func TestEvalReportsErrorsWithKindAndColumn(t *testing.T) {
	tests := []struct {
		name, expr string
		kind       error
		column     int
		contains   string
	}{
		{"unexpected closing parenthesis", "(1 + 2))", ErrSyntax, 8, `unexpected ")" without a matching "("`},
		{"operand missing before parenthesis", "(1 + 2 *)", ErrSyntax, 9, `unexpected ")" at column 9`},
		{"column counts the trimmed prefix", "  `1 +`", ErrSyntax, 7, "unexpected end of expression"},
		{"column counts characters not bytes", "√× 2", ErrSyntax, 2, `unexpected "*"`},
		{"missing closing parenthesis", "2 * (3 + 4", ErrSyntax, 5, `missing ")"`},
		{"implicit multiplication", "2(3)", ErrSyntax, 2, "write * for multiplication"},
		{"number next to a name", "2pi", ErrSyntax, 2, `unexpected name "pi"`},
		{"bad thousands group", "1,23", ErrSyntax, 2, `unexpected ","`},
		{"stray character", "2 $ 3", ErrSyntax, 3, `unexpected character '$'`},
		{"equation", "x = 2", ErrSyntax, 3, `unexpected "="`},
		{"empty input", " `` ", ErrSyntax, 0, "empty expression"},
		{"function without parentheses", "sqrt 4", ErrSyntax, 1, "needs parentheses"},
		{"constant called as function", "pi(2)", ErrSyntax, 1, "is a constant"},
		{"empty argument", "max(1,)", ErrSyntax, 7, `unexpected ")"`},
		{"unknown function", "1 + foo(2)", ErrUnknownName, 5, `unknown function "foo"`},
		{"unknown name", "2 * x", ErrUnknownName, 5, `unknown name "x"`},
		{"too many arguments", "sqrt(1, 2)", ErrArgCount, 1, "sqrt takes 1 argument, got 2"},
		{"too few arguments", "pow(2)", ErrArgCount, 1, "pow takes 2 arguments, got 1"},
		{"no arguments", "max()", ErrArgCount, 1, "at least 1 argument"},
		{"division by zero", "1 / (2 - 2)", ErrDivByZero, 3, `divisor of "/" is 0`},
		{"modulo by zero", "5 % 0", ErrDivByZero, 3, `divisor of "%" is 0`},
		{"float division by zero", "pi / 0", ErrDivByZero, 4, "divisor"},
		{"zero to a negative power", "0^-1", ErrDivByZero, 2, "negative power"},
		{"sqrt of a negative", "sqrt(-1)", ErrDomain, 1, "sqrt of a negative number"},
		{"log of zero", "log(0)", ErrDomain, 1, "log needs a positive argument"},
		{"ln of a negative", "ln(-e)", ErrDomain, 1, "ln needs a positive argument"},
		{"log base one", "log(5, 1)", ErrDomain, 8, "must not be 1"},
		{"asin outside [-1, 1]", "asin(2)", ErrDomain, 1, "between -1 and 1"},
		{"negative base fractional power", "(-2)^0.5", ErrDomain, 5, "not real"},
		{"factorial of a fraction", "2.5!", ErrDomain, 4, "non-negative integer"},
		{"factorial of a negative", "factorial(-1)", ErrDomain, 1, "non-negative integer"},
		{"round to fractional digits", "round(1, 0.5)", ErrDomain, 10, "must be an integer"},
		{"float overflow", "exp(1000)", ErrTooLarge, 1, "overflows float64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Eval(context.Background(), tc.expr)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.kind)
			var calcErr *Error
			require.ErrorAs(t, err, &calcErr)
			assert.Equal(t, tc.column, calcErr.Column)
			assert.Contains(t, err.Error(), tc.contains)
		})
	}
}

func TestEvalRefusesHugeWorkWithoutComputingIt(t *testing.T) {
	deep := strings.Repeat("(", 1000) + "1" + strings.Repeat(")", 1000)
	tests := []struct {
		name, expr string
		opts       []Option
		contains   string
	}{
		{"tower of tens", "10^10^10", nil, "power needs"},
		{"tower of nines", "9^9^9^9", nil, "power needs"},
		{"huge exponent", "2^99999999", nil, "power needs"},
		{"huge negative exponent", "2^-99999999", nil, "power needs"},
		{"exponent beyond int64", "3^(10^30)", nil, "power needs"},
		{"exponent with thousands of digits", "3^(10^3000)", nil, "exponent is too large"},
		{"fractional base", "0.5^99999999", nil, "power needs"},
		{"pow function", "pow(7, 10^12)", nil, "power needs"},
		{"huge factorial", "100000!", nil, "factorial of 100000"},
		{"factorial of a huge number", "(10^30)!", nil, "factorial of"},
		{"factorial tower", "3!!!!", nil, "factorial of 2601218943"},
		{"huge literal exponent", "1e999999999", nil, "needs more than 10000 bits"},
		{"tiny literal exponent", "1e-999999999", nil, "needs more than 10000 bits"},
		{"product exceeding the limit", "2^6000 * 2^6000", nil, "value needs 12001 bits"},
		{"deep nesting", deep, nil, "nests more than 100 levels"},
		{"deep unary chain", strings.Repeat("-", 2000) + "1", nil, "nests more than 100 levels"},
		{"long power chain", strings.Repeat("1^", 1000) + "1", nil, "nests more than 100 levels"},
		{"ten thousand open parentheses", strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000), nil, "more than the limit of 4096"},
		{"ten thousand levels with a raised length limit", strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000),
			[]Option{WithMaxLength(1 << 20)}, "nests more than 100 levels"},
		{"very long input", strings.Repeat("1+", 1<<20) + "1", nil, "more than the limit of 4096"},
		{"round with absurd digits", "round(1, 10^9)", nil, "at most 1000 digits"},
		{"round with absurd float digits", "round(1, exp(40))", nil, "at most 1000 digits"},
		{"factorial of a huge float", "exp(100)!", nil, "factorial of 2.6881171418161356e+43"},
		{"many maximal factorials", strings.Repeat("1000!+", 600) + "1", nil, "too much computation"},
		{"many maximal divisions", strings.Repeat("(3^6300+1)/(7^3500+1)+", 150) + "1", nil, "too much computation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Eval(context.Background(), tc.expr, tc.opts...)
			runtime.ReadMemStats(&after)
			require.ErrorIs(t, err, ErrTooLarge)
			assert.Contains(t, err.Error(), tc.contains)
			// The input itself may be large; the work must not be.
			allocated := after.TotalAlloc - before.TotalAlloc
			assert.Less(t, allocated, uint64(8*len(tc.expr)+1<<20), "bytes allocated")
		})
	}
}

func TestEvalAcceptsWorkUpToTheBitLimit(t *testing.T) {
	res, err := Eval(context.Background(), "2^9999")
	require.NoError(t, err)
	assert.Equal(t, new(big.Int).Lsh(big.NewInt(1), 9999).String(), res.String())

	_, err = Eval(context.Background(), "2^10000")
	assert.ErrorIs(t, err, ErrTooLarge, "2^10000 has 10001 bits")

	res, err = Eval(context.Background(), "1000!")
	require.NoError(t, err)
	assert.Equal(t, new(big.Int).MulRange(1, 1000).String(), res.String())

	// A few full-size operations fit in the work budget.
	res, err = Eval(context.Background(), "(2^9999 - 3^6300) % 7^3500 + 1000! / 999!")
	require.NoError(t, err)
	want := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 9999), new(big.Int).Exp(big.NewInt(3), big.NewInt(6300), nil))
	want.Mod(want, new(big.Int).Exp(big.NewInt(7), big.NewInt(3500), nil))
	assert.Equal(t, want.Add(want, big.NewInt(1000)).String(), res.String())
}

func TestEvalOptionsChangeLimitsAndRendering(t *testing.T) {
	t.Run("precision sets rounded digits", func(t *testing.T) {
		assert.Equal(t, "0.33333", evalString(t, "1/3", WithPrecision(5)))
		assert.Equal(t, "1.41421", evalString(t, "sqrt(2)", WithPrecision(5)))
	})
	t.Run("precision cannot exceed float64 significance", func(t *testing.T) {
		assert.Equal(t, "1.4142135623731", evalString(t, "sqrt(2)", WithPrecision(40)))
	})
	t.Run("high precision shows long exact expansions", func(t *testing.T) {
		assert.Equal(t, "0."+strings.Repeat("3", 50), evalString(t, "1/3", WithPrecision(50)))
	})
	t.Run("non-positive options keep the defaults", func(t *testing.T) {
		assert.Equal(t, "0.333333333333", evalString(t, "1/3", WithPrecision(0), WithMaxBits(-1), WithMaxDepth(0), WithMaxLength(0)))
	})
	t.Run("max bits lowers the limit", func(t *testing.T) {
		_, err := Eval(context.Background(), "2^64", WithMaxBits(64))
		assert.ErrorIs(t, err, ErrTooLarge)
		assert.Equal(t, "9223372036854775808", evalString(t, "2^63", WithMaxBits(64)))
	})
	t.Run("max bits raises the limit", func(t *testing.T) {
		want := new(big.Int).Lsh(big.NewInt(1), 20000).String()
		assert.Equal(t, want, evalString(t, "2^20000", WithMaxBits(20001), WithMaxLength(10000)))
	})
	t.Run("huge max bits does not overflow the work budget", func(t *testing.T) {
		assert.Equal(t, "1024", evalString(t, "2^10", WithMaxBits(math.MaxInt)))
	})
	t.Run("max depth", func(t *testing.T) {
		_, err := Eval(context.Background(), "((1))", WithMaxDepth(2))
		assert.ErrorIs(t, err, ErrTooLarge)
		assert.Equal(t, "1", evalString(t, "((1))", WithMaxDepth(3)))
	})
	t.Run("max length", func(t *testing.T) {
		_, err := Eval(context.Background(), "1+1", WithMaxLength(2))
		assert.ErrorIs(t, err, ErrTooLarge)
		assert.Equal(t, "2", evalString(t, "1+1", WithMaxLength(3)))
	})
}

func TestResultExposesTheValue(t *testing.T) {
	res, err := Eval(context.Background(), "1/3")
	require.NoError(t, err)
	assert.True(t, res.Exact())
	assert.Equal(t, big.NewRat(1, 3), res.Rat())
	assert.InDelta(t, 1.0/3, res.Float64(), 1e-15)
	assert.Equal(t, "0.333", res.Text(3))

	res.Rat().SetInt64(5) // Rat returns a copy
	assert.Equal(t, big.NewRat(1, 3), res.Rat())

	res, err = Eval(context.Background(), "pi")
	require.NoError(t, err)
	assert.False(t, res.Exact())
	assert.Nil(t, res.Rat())
	assert.Equal(t, math.Pi, res.Float64())

	var zero Result
	assert.True(t, zero.Exact())
	assert.Equal(t, "0", zero.String())
	assert.Equal(t, 0, zero.Rat().Sign())
}

func TestEvalStopsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Eval(ctx, "1+1")
	assert.ErrorIs(t, err, context.Canceled)
	var calcErr *Error
	assert.False(t, errors.As(err, &calcErr), "a cancelled evaluation is not an input error")
}

func TestFunctionListNamesEveryFunction(t *testing.T) {
	listed := strings.Split(functionList, ", ")
	var names []string
	for name := range functions {
		if name != "log10" { // alias of log
			names = append(names, name)
		}
	}
	sort.Strings(listed)
	sort.Strings(names)
	assert.Equal(t, names, listed)
}

func TestTanIsUndefinedAtOddMultiplesOfHalfPi(t *testing.T) {
	poles := []struct{ expr, multiple string }{
		{"tan(pi/2)", "π/2"},
		{"tan(3*pi/2)", "3π/2"},
		{"tan(-pi/2)", "-π/2"},
		{"tan(101*pi/2)", "101π/2"},
		{"tan(-5*pi/2)", "-5π/2"},
		{"tan(pi/2*1001)", "1001π/2"},
		{"tan(pi - pi/2)", "π/2"},
		{"tan(asin(1))", "π/2"},
		{"tan(atan(1)*2)", "π/2"},
		{"tan(π/2)", "π/2"},
		{"tan(1e8*pi + pi/2)", "200000001π/2"},
		{"tan(1.5707963267948966)", "π/2"}, // π/2 to 17 digits: a rational float64 cannot hold
	}
	for _, tc := range poles {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := Eval(context.Background(), tc.expr)
			require.ErrorIs(t, err, ErrDomain)
			var calcErr *Error
			require.ErrorAs(t, err, &calcErr)
			assert.Equal(t, 1, calcErr.Column)
			assert.Contains(t, err.Error(), "tan is undefined at odd multiples of π/2")
			assert.Contains(t, err.Error(), "within 4 ulp of "+tc.multiple+" ")
		})
	}

	values := []struct{ expr, want string }{
		{"tan(pi/4)", "1"},
		{"tan(1.5707)", "10381.3274175698"},
		{"tan(1.5708)", "-272241.808409276"},
		{"tan(pi/2 - 1e-14)", "99470423824503.1"}, // 45 ulp from the pole
		{"tan(pi)", "-1.22464679915e-16"},
		{"tan(0.5)", "0.546302489844"},
		{"tan(1e16)", "-1.245173435718"}, // exact and held exactly: never rejected
		{"tan(2^60)", "1.491837396271"},
		{"tan(355/226)", "-7497258.17914037"},
	}
	for _, tc := range values {
		t.Run(tc.expr, func(t *testing.T) {
			assert.Equal(t, tc.want, evalString(t, tc.expr))
		})
	}
}

func TestNearTanPoleUsesTheFloatSpacingAtTheArgument(t *testing.T) {
	halfPi := math.Pi / 2 // 0.28 ulp below π/2
	at := func(x float64) bool { return nearTanPole(x, math.Tan(x)) }
	assert.True(t, at(halfPi))
	assert.True(t, at(math.Nextafter(halfPi, 4)), "1 ulp above")
	x := halfPi
	for range 3 {
		x = math.Nextafter(x, 0)
	}
	assert.True(t, at(x), "3 ulp below fl(π/2), 3.28 ulp from π/2")
	x = math.Nextafter(x, 0)
	assert.False(t, at(x), "4 ulp below fl(π/2), 4.28 ulp from π/2")
	assert.False(t, at(1.5707))
	assert.False(t, at(0))
	assert.False(t, at(math.Pi))
	big := 1e8*math.Pi + halfPi
	assert.True(t, at(big))
	assert.False(t, at(big+1e-6))
}
