package calc

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// minExactFractionDigits is the longest terminating decimal expansion that
// is printed in full when the precision is lower; longer ones are rounded to
// the precision.
const minExactFractionDigits = 40

// float64Digits is the number of significant decimal digits a float64
// result is trusted to.
const float64Digits = 15

// formatRat renders an exact rational: integers and terminating decimals of
// at most max(prec, 40) fractional digits in full, other values rounded to
// prec fractional digits, and values that would round to 0 in scientific
// notation.
func formatRat(r *big.Rat, prec int) string {
	if r.IsInt() {
		return r.Num().String()
	}
	if d, ok := terminatingDigits(r.Denom(), max(prec, minExactFractionDigits)); ok {
		return r.FloatString(d)
	}
	if s := trimFraction(r.FloatString(prec)); s != "0" && s != "-0" {
		return s
	}
	f := new(big.Float).SetPrec(uint(prec)*4 + 64).SetRat(r)
	return trimMantissa(f.Text('e', min(prec, float64Digits)-1))
}

// formatFloat renders a float64 result rounded to 15 significant digits and
// at most prec fractional digits, switching to scientific notation for very
// large values and for values that would round to 0.
func formatFloat(f float64, prec int) string {
	if f == 0 {
		return "0"
	}
	sig := min(prec, float64Digits)
	if math.Abs(f) >= 1e21 {
		return trimMantissa(strconv.FormatFloat(f, 'e', sig-1, 64))
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'e', float64Digits-1, 64))
	if !ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if s := trimFraction(r.FloatString(prec)); s != "0" && s != "-0" {
		return s
	}
	return trimMantissa(strconv.FormatFloat(f, 'e', sig-1, 64))
}

// terminatingDigits reports whether 1/den has a terminating decimal
// expansion of at most limit digits, and its length.
func terminatingDigits(den *big.Int, limit int) (int, bool) {
	twos := int(den.TrailingZeroBits())
	if twos > limit {
		return 0, false
	}
	rest := new(big.Int).Rsh(den, uint(twos))
	five := big.NewInt(5)
	q, m := new(big.Int), new(big.Int)
	fives := 0
	for rest.Cmp(big.NewInt(1)) != 0 {
		q.QuoRem(rest, five, m)
		if m.Sign() != 0 {
			return 0, false
		}
		rest, q = q, rest
		fives++
		if fives > limit {
			return 0, false
		}
	}
	return max(twos, fives), true
}

// trimFraction removes trailing zeros after a decimal point, and the point
// itself when nothing remains after it.
func trimFraction(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// trimMantissa removes trailing zeros from the mantissa of a number in
// scientific notation.
func trimMantissa(s string) string {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return trimFraction(s)
	}
	return trimFraction(s[:i]) + s[i:]
}
