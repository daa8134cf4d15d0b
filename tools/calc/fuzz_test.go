package calc

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// sentinels are the errors every evaluation failure must wrap.
var sentinels = []error{ErrSyntax, ErrDivByZero, ErrDomain, ErrTooLarge, ErrUnknownName, ErrArgCount}

// FuzzEval checks that no input panics, that every failure wraps one of the
// sentinels, that evaluation is deterministic and that exact integer results
// read back as themselves. Hangs surface as fuzzer timeouts.
func FuzzEval(f *testing.F) {
	seeds := []string{
		"1+2*3", "2^3^2", "-2^2", "0.1+0.2", "1/3", "123456789*987654321",
		"10^10^10", "9^9^9^9", "2^99999999", "2^-99999999", "(-8)^(1/3)", "0^0", "0^-1",
		"100000!", "3!!!!", "factorial(1e9)", "1e999999999", "1e-999999999", "0e99999999999999999999",
		strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200),
		strings.Repeat("-", 300) + "1", strings.Repeat("2^", 150) + "2",
		"1,234,567.89*2", "max(1,234)", "(1,234)", "1,23", ",", "1,,2",
		"sqrt(-1)", "log(0)", "log(8, 1)", "ln(-e)", "asin(2)", "round(2.675, 2)", "round(1, -999)",
		"`3 × 4 − 1 =`", "１２３＋４", "```\n2**10\n```", "\"\"", "==", "√√√16", "√-4",
		"exp(709.7)", "exp(-1e10)", "tan(pi/2)", "1/0", "5%0", "pi%0", "1e308*10", "2^1023.9999",
		"sin(2^5000)", "(10^400)^0.5", "(2*10^400)^0.5", "min()", "max(pi, 22/7)", "\xff\xfe",
		"1.e5", "1e", "1e+", ".", "..1", "1..2", "e^e^e", "PI(", "((((", "))))", "2**-**2",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		ctx := context.Background()
		res, err := Eval(ctx, expr)
		if err != nil {
			var calcErr *Error
			if !errors.As(err, &calcErr) {
				t.Fatalf("Eval(%q) returned %v, not an *Error", expr, err)
			}
			known := false
			for _, s := range sentinels {
				known = known || errors.Is(err, s)
			}
			if !known {
				t.Fatalf("Eval(%q) error %v wraps no sentinel", expr, err)
			}
			_, err2 := Eval(ctx, expr)
			if err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("Eval(%q) is not deterministic: %v then %v", expr, err, err2)
			}
			return
		}
		out := res.String()
		if out == "" {
			t.Fatalf("Eval(%q) rendered an empty string", expr)
		}
		res2, err := Eval(ctx, expr)
		if err != nil || res2.String() != out {
			t.Fatalf("Eval(%q) is not deterministic: %q then %q (%v)", expr, out, res2.String(), err)
		}
		if r := res.Rat(); r != nil && r.IsInt() {
			back, err := Eval(ctx, out, WithMaxLength(len(out)+1))
			if err != nil || back.Rat() == nil || back.Rat().Cmp(r) != 0 {
				t.Fatalf("Eval(%q) = %s does not read back: %v", expr, out, err)
			}
		}
	})
}
