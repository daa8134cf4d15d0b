package calc

import (
	"math"
	"math/big"
)

func (n *numNode) eval(ev *evaluator) (value, error) {
	if err := ev.step(); err != nil {
		return value{}, err
	}
	return ev.literal(n)
}

func (n *constNode) eval(ev *evaluator) (value, error) {
	if err := ev.step(); err != nil {
		return value{}, err
	}
	return floatValue(n.val), nil
}

func (n *unaryNode) eval(ev *evaluator) (value, error) { return ev.evaluate(n) }

func (n *binaryNode) eval(ev *evaluator) (value, error) { return ev.evaluate(n) }

// evaluate evaluates a tree. Operator nodes along the leftmost path (long
// chains such as 1+1+...+1 or 3!!!) are walked iteratively, so that the
// recursion depth is bounded by the parser's nesting limit rather than by
// the input length.
func (ev *evaluator) evaluate(n node) (value, error) {
	var chain []node
walk:
	for {
		switch c := n.(type) {
		case *binaryNode:
			chain = append(chain, c)
			n = c.l
		case *unaryNode:
			chain = append(chain, c)
			n = c.x
		default:
			break walk
		}
	}
	v, err := n.eval(ev)
	for i := len(chain) - 1; i >= 0 && err == nil; i-- {
		if err = ev.step(); err != nil {
			break
		}
		switch c := chain[i].(type) {
		case *binaryNode:
			v, err = c.apply(ev, v)
		case *unaryNode:
			v, err = c.apply(ev, v)
		}
	}
	return v, err
}

// apply applies the unary operator to its evaluated operand.
func (n *unaryNode) apply(ev *evaluator, x value) (value, error) {
	switch n.op {
	case '-':
		if x.exact() {
			return exactValue(new(big.Rat).Neg(x.r)), nil
		}
		return floatValue(-x.f), nil
	case '√':
		return ev.sqrt(x, n.col, "sqrt")
	case '!':
		return ev.factorial(x, n.col, "factorial")
	}
	return x, nil // unary +
}

// apply evaluates the right operand and applies the operator.
func (n *binaryNode) apply(ev *evaluator, l value) (value, error) {
	r, err := ev.evaluate(n.r)
	if err != nil {
		return value{}, err
	}
	switch n.op {
	case '+', '-', '*':
		return ev.arith(n.op, l, r, n.col)
	case '/':
		return ev.div(l, r, n.col)
	case '%':
		return ev.mod(l, r, n.col)
	case '^':
		return ev.pow(l, r, n.col)
	}
	return value{}, newError(ErrSyntax, n.col, "unknown operator %q", string(n.op))
}

func (n *callNode) eval(ev *evaluator) (value, error) {
	if err := ev.step(); err != nil {
		return value{}, err
	}
	args := make([]value, len(n.args))
	for i, a := range n.args {
		v, err := ev.evaluate(a)
		if err != nil {
			return value{}, err
		}
		args[i] = v
	}
	return n.fn.call(ev, n, args)
}

// arith adds, subtracts or multiplies.
func (ev *evaluator) arith(op rune, a, b value, col int) (value, error) {
	if a.exact() && b.exact() {
		if err := ev.charge(wordsOf(a.r), wordsOf(b.r), col); err != nil {
			return value{}, err
		}
		r := new(big.Rat)
		switch op {
		case '+':
			r.Add(a.r, b.r)
		case '-':
			r.Sub(a.r, b.r)
		default:
			r.Mul(a.r, b.r)
		}
		return ev.checkRat(r, col)
	}
	x, y, err := ev.toFloats(a, b, col)
	if err != nil {
		return value{}, err
	}
	var f float64
	switch op {
	case '+':
		f = x + y
	case '-':
		f = x - y
	default:
		f = x * y
	}
	return ev.checkFloat(f, col, "the result of "+string(op))
}

// div divides exactly when both operands are exact.
func (ev *evaluator) div(a, b value, col int) (value, error) {
	if b.sign() == 0 {
		return value{}, newError(ErrDivByZero, col, `the divisor of "/" is 0`)
	}
	if a.exact() && b.exact() {
		if err := ev.charge(wordsOf(a.r), wordsOf(b.r), col); err != nil {
			return value{}, err
		}
		return ev.checkRat(new(big.Rat).Quo(a.r, b.r), col)
	}
	x, y, err := ev.toFloats(a, b, col)
	if err != nil {
		return value{}, err
	}
	return ev.checkFloat(x/y, col, "the quotient")
}

// mod is the floored modulo: the result has the sign of the divisor.
func (ev *evaluator) mod(a, b value, col int) (value, error) {
	if b.sign() == 0 {
		return value{}, newError(ErrDivByZero, col, `the divisor of "%%" is 0`)
	}
	if a.exact() && b.exact() {
		if err := ev.charge(2*wordsOf(a.r), wordsOf(b.r), col); err != nil {
			return value{}, err
		}
		// With a = p/q and b = r/s: a - b*floor(a/b) =
		// (p*s - r*q*floor(p*s / (q*r))) / (q*s), with a single GCD.
		p, q := a.r.Num(), a.r.Denom()
		r, s := b.r.Num(), b.r.Denom()
		ps := new(big.Int).Mul(p, s)
		qr := new(big.Int).Mul(q, r)
		fl := new(big.Int)
		if qr.Sign() < 0 {
			fl.Div(new(big.Int).Neg(ps), new(big.Int).Neg(qr))
		} else {
			fl.Div(ps, qr) // Euclidean division by a positive divisor floors
		}
		qr.Mul(qr, fl)
		num := ps.Sub(ps, qr)
		return ev.checkRat(new(big.Rat).SetFrac(num, new(big.Int).Mul(q, s)), col)
	}
	x, y, err := ev.toFloats(a, b, col)
	if err != nil {
		return value{}, err
	}
	m := math.Mod(x, y)
	if m != 0 && (m < 0) != (y < 0) {
		m += y
	}
	return ev.checkFloat(m, col, "the remainder")
}

// floorInt returns the largest integer <= r.
func floorInt(r *big.Rat) *big.Int {
	// Euclidean division by the positive denominator rounds toward -inf.
	return new(big.Int).Div(r.Num(), r.Denom())
}

// ceilInt returns the smallest integer >= r.
func ceilInt(r *big.Rat) *big.Int {
	q := floorInt(r)
	if !r.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// roundInt rounds r to the nearest integer, halves away from zero.
func roundInt(r *big.Rat) *big.Int {
	half := big.NewRat(1, 2)
	if r.Sign() < 0 {
		return ceilInt(new(big.Rat).Sub(r, half))
	}
	return floorInt(new(big.Rat).Add(r, half))
}

// pow raises a to the power b, exactly when b is an integer (or a half
// integer of a perfect square) and within the bit limit.
func (ev *evaluator) pow(a, b value, col int) (value, error) {
	if a.exact() && b.exact() {
		if b.r.IsInt() {
			return ev.powInt(a.r, b.r.Num(), col)
		}
		if b.r.Denom().Cmp(big.NewInt(2)) == 0 && a.r.Sign() > 0 {
			if err := ev.charge(wordsOf(a.r), wordsOf(a.r), col); err != nil {
				return value{}, err
			}
			if s, ok := exactSqrt(a.r); ok {
				return ev.powInt(s, b.r.Num(), col)
			}
		}
	}
	if a.sign() == 0 {
		switch b.sign() {
		case 0:
			return intValue(1), nil
		case -1:
			return value{}, newError(ErrDivByZero, col, "0 raised to a negative power")
		}
		return intValue(0), nil
	}
	y, err := ev.toFloat(b, col)
	if err != nil {
		return value{}, err
	}
	if a.sign() < 0 {
		// A negative base has a real power only for integer exponents or
		// exact fractional exponents with an odd denominator: (-8)^(1/3).
		oddRoot := b.exact() && b.r.Denom().Bit(0) == 1
		if !oddRoot && y != math.Trunc(y) {
			return value{}, newError(ErrDomain, col, "a negative number raised to a fractional power is not real")
		}
		neg := a
		if neg.exact() {
			neg = exactValue(new(big.Rat).Neg(a.r))
		} else {
			neg.f = -a.f
		}
		m, err := ev.posPow(neg, y, col)
		if err != nil {
			return value{}, err
		}
		odd := math.Mod(y, 2) != 0
		if b.exact() {
			odd = b.r.Num().Bit(0) == 1
		}
		if odd {
			m.f = -m.f
		}
		return m, nil
	}
	return ev.posPow(a, y, col)
}

// posPow computes a^y in float64 for a > 0, going through logarithms when a
// itself is beyond float64's range.
func (ev *evaluator) posPow(a value, y float64, col int) (value, error) {
	if a.exact() {
		if x, _ := a.r.Float64(); math.IsInf(x, 0) || x == 0 {
			return ev.checkFloat(math.Exp(y*lnRat(a.r)), col, "the power")
		}
	}
	x, err := ev.toFloat(a, col)
	if err != nil {
		return value{}, err
	}
	return ev.checkFloat(math.Pow(x, y), col, "the power")
}

// powInt computes base^n exactly, refusing before any work when the result
// would exceed the bit limit.
func (ev *evaluator) powInt(base *big.Rat, n *big.Int, col int) (value, error) {
	switch {
	case n.Sign() == 0:
		return intValue(1), nil
	case base.Sign() == 0:
		if n.Sign() < 0 {
			return value{}, newError(ErrDivByZero, col, "0 raised to a negative power")
		}
		return intValue(0), nil
	}
	num, den := base.Num(), base.Denom()
	if den.IsInt64() && den.Int64() == 1 && num.IsInt64() && (num.Int64() == 1 || num.Int64() == -1) {
		if num.Int64() == -1 && n.Bit(0) == 1 {
			return intValue(-1), nil
		}
		return intValue(1), nil
	}
	// |x|^e has at least (bitlen(x)-1)*e+1 bits.
	e := new(big.Int).Abs(n)
	ef, _ := new(big.Float).SetInt(e).Float64()
	need := max(float64(num.BitLen()-1), float64(den.BitLen()-1))*ef + 1
	if need > float64(ev.cfg.maxBits) {
		if math.IsInf(need, 0) {
			return value{}, newError(ErrTooLarge, col, "the exponent is too large (limit %d bits)", ev.cfg.maxBits)
		}
		return value{}, newError(ErrTooLarge, col, "the power needs about %.4g bits, more than the limit of %d", need, ev.cfg.maxBits)
	}
	w := wordsOfBits(need)
	if err := ev.charge(w, w, col); err != nil {
		return value{}, err
	}
	pn := new(big.Int).Exp(new(big.Int).Abs(num), e, nil)
	pd := new(big.Int).Exp(den, e, nil)
	if num.Sign() < 0 && e.Bit(0) == 1 {
		pn.Neg(pn)
	}
	var r *big.Rat
	if n.Sign() > 0 {
		r = new(big.Rat).SetFrac(pn, pd)
	} else {
		r = new(big.Rat).SetFrac(pd, pn)
	}
	return ev.checkRat(r, col)
}

// exactSqrt returns the exact square root of r when r >= 0 is the square of
// a rational.
func exactSqrt(r *big.Rat) (*big.Rat, bool) {
	if r.Sign() < 0 {
		return nil, false
	}
	n, ok := isqrt(r.Num())
	if !ok {
		return nil, false
	}
	d, ok := isqrt(r.Denom())
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetFrac(n, d), true
}

// isqrt returns the integer square root of x and whether it is exact.
func isqrt(x *big.Int) (*big.Int, bool) {
	s := new(big.Int).Sqrt(x)
	return s, new(big.Int).Mul(s, s).Cmp(x) == 0
}

// lnRat returns ln(r) for r > 0 of any size, splitting off powers of two so
// that numerator and denominator never overflow float64.
func lnRat(r *big.Rat) float64 {
	return lnInt(r.Num()) - lnInt(r.Denom())
}

// lnInt returns ln(x) for x > 0.
func lnInt(x *big.Int) float64 {
	f := new(big.Float).SetInt(x)
	mant := new(big.Float)
	exp := f.MantExp(mant) // f = mant * 2^exp, 0.5 <= mant < 1
	m, _ := mant.Float64()
	return math.Log(m) + float64(exp)*math.Ln2
}

// maxFactorial bounds factorial arguments before the size estimate.
const maxFactorial = 1 << 24

// factorial computes n! exactly for integers within the bit limit.
func (ev *evaluator) factorial(x value, col int, name string) (value, error) {
	if !x.exact() && x.f == math.Trunc(x.f) {
		if x.f > maxFactorial {
			return value{}, newError(ErrTooLarge, col, "%s of %g needs more than %d bits", name, x.f, ev.cfg.maxBits)
		}
		if x.f >= 0 {
			x = intValue(int64(x.f))
		}
	}
	if !x.isInt() || x.r.Sign() < 0 {
		return value{}, newError(ErrDomain, col, "%s needs a non-negative integer", name)
	}
	n := x.r.Num()
	if !n.IsInt64() || n.Int64() > maxFactorial {
		return value{}, newError(ErrTooLarge, col, "%s of %s needs more than %d bits", name, abbreviate(n.String()), ev.cfg.maxBits)
	}
	k := n.Int64()
	lg, _ := math.Lgamma(float64(k) + 1)
	if bits := lg / math.Ln2; bits > float64(ev.cfg.maxBits) {
		return value{}, newError(ErrTooLarge, col, "%s of %d needs about %.4g bits, more than the limit of %d", name, k, bits, ev.cfg.maxBits)
	}
	if k < 2 {
		return intValue(1), nil
	}
	w := wordsOfBits(lg / math.Ln2)
	if err := ev.charge(w, w, col); err != nil {
		return value{}, err
	}
	return ev.checkRat(new(big.Rat).SetInt(new(big.Int).MulRange(1, k)), col)
}
