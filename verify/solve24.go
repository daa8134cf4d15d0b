package verify

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Solve24 finds an expression that combines numbers, each exactly once, with
// + - * / and parentheses into exactly 24, by brute force over every pair of
// remaining values and every operator (all orderings and operator trees).
// The search order is fixed, so the same numbers always give the same
// expression whatever their order. The expression uses the fewest
// parentheses its operator precedence needs, for example
// "(10 - 4) * (5 - 1)", and passes Verify24 whenever the numbers are
// non-negative (a negative input would need a unary minus, which Verify24
// rejects). ok is false when the numbers cannot make 24.
func Solve24(numbers []int) (string, bool) {
	expr, _, ok := Solve24Steps(numbers)
	return expr, ok
}

// Solve24Steps is Solve24 that also returns the solution as the steps of the
// Tree-of-Thoughts Game of 24 prompts: one line per operation, each naming
// the values left afterwards in ascending order, for example
// "4 + 8 = 12 (left: 6 10 12)". Fractional values are written as a/b.
//
// Arithmetic is exact. Small puzzles (every intermediate value provably fits
// 64-bit fractions, which covers cards up to 100) use machine integers;
// larger ones use math/big, with the same search order and result.
func Solve24Steps(numbers []int) (expr string, steps []string, ok bool) {
	if len(numbers) == 0 {
		return "", nil, false
	}
	if fitsInt64(numbers) {
		return solveWith(numbers, func(n int) frac { return frac{int64(n), 1} })
	}
	return solveWith(numbers, func(n int) bigFrac { return bigFrac{big.NewRat(int64(n), 1)} })
}

// fitsInt64 reports whether every value the search can build from numbers,
// and every cross product frac.cmp forms, fits in an int64. With n numbers
// of magnitude at most m, a value built from k of them has numerator and
// denominator at most 2^(k-1)·m^k, so the test is (2^(n-1)·m^n)^2 < 2^62.
func fitsInt64(numbers []int) bool {
	m := big.NewInt(1)
	for _, n := range numbers {
		if a := new(big.Int).Abs(big.NewInt(int64(n))); a.Cmp(m) > 0 {
			m = a
		}
	}
	bound := new(big.Int).Exp(m, big.NewInt(int64(len(numbers))), nil)
	bound.Lsh(bound, uint(len(numbers)-1))
	return 2*bound.BitLen() < 62
}

// value24 is the exact arithmetic the solver needs.
type value24[T any] interface {
	// apply returns v op y; ok is false for a division by zero.
	apply(op byte, y T) (r T, ok bool)
	// cmp orders values.
	cmp(y T) int
	// is24 reports whether the value is exactly 24.
	is24() bool
	// String writes the value as an integer or a/b.
	String() string
}

// node24 is a value available to the solver and how it was made: a puzzle
// number (op == 0) or an operation on two earlier values.
type node24[T value24[T]] struct {
	val  T
	leaf int
	op   byte
	x, y *node24[T]
}

// move24 is one operation of a solution and the values left after it.
type move24[T value24[T]] struct {
	made *node24[T]
	left []*node24[T]
}

// solveWith runs the search in the arithmetic of T.
func solveWith[T value24[T]](numbers []int, of func(int) T) (string, []string, bool) {
	items := make([]*node24[T], len(numbers))
	for i, n := range numbers {
		items[i] = &node24[T]{val: of(n), leaf: n}
	}
	sortNodes(items)
	var path []move24[T]
	if !solve(items, &path, map[string]bool{}) {
		return "", nil, false
	}
	if len(path) == 0 {
		return items[0].expr(), nil, true
	}
	steps := make([]string, len(path))
	for i, m := range path {
		vals := make([]string, len(m.left))
		for k, it := range m.left {
			vals[k] = it.val.String()
		}
		steps[i] = fmt.Sprintf("%s %c %s = %s (left: %s)",
			m.made.x.val, m.made.op, m.made.y.val, m.made.val, strings.Join(vals, " "))
	}
	return path[len(path)-1].made.expr(), steps, true
}

// prec is the operator precedence used to place parentheses: 1 for + and -,
// 2 for * and /, 3 for a number.
func (n *node24[T]) prec() int {
	switch n.op {
	case 0:
		return 3
	case '+', '-':
		return 1
	default:
		return 2
	}
}

// expr writes the expression with the fewest parentheses precedence needs.
func (n *node24[T]) expr() string {
	if n.op == 0 {
		return strconv.Itoa(n.leaf)
	}
	p := n.prec()
	left := n.x.expr()
	if n.x.prec() < p {
		left = "(" + left + ")"
	}
	right := n.y.expr()
	if rp := n.y.prec(); rp < p || (rp == p && (n.op == '-' || n.op == '/')) {
		right = "(" + right + ")"
	}
	return left + " " + string(n.op) + " " + right
}

// solve combines two values at a time, depth first, until one is left; on
// success path holds the moves made. failed remembers the multisets of
// values already known not to reach 24, so each is searched once.
func solve[T value24[T]](items []*node24[T], path *[]move24[T], failed map[string]bool) bool {
	if len(items) == 1 {
		return items[0].val.is24()
	}
	key := ""
	if len(items) > 2 {
		key = stateKey(items)
		if failed[key] {
			return false
		}
	}
	for i := 0; i < len(items); i++ {
		for j := i + 1; j < len(items); j++ {
			a, b := items[i], items[j] // a <= b: items are sorted
			// Fixed order: a+b, a*b, b-a, a-b, b/a, a/b.
			for _, m := range [...]struct {
				x, y *node24[T]
				op   byte
			}{{a, b, '+'}, {a, b, '*'}, {b, a, '-'}, {a, b, '-'}, {b, a, '/'}, {a, b, '/'}} {
				v, ok := m.x.val.apply(m.op, m.y.val)
				if !ok || (len(items) == 2 && !v.is24()) {
					continue
				}
				made := &node24[T]{val: v, op: m.op, x: m.x, y: m.y}
				rest := make([]*node24[T], 0, len(items)-1)
				rest = append(rest, made)
				for k, it := range items {
					if k != i && k != j {
						rest = append(rest, it)
					}
				}
				sortNodes(rest)
				*path = append(*path, move24[T]{made: made, left: rest})
				if solve(rest, path, failed) {
					return true
				}
				*path = (*path)[:len(*path)-1]
			}
		}
	}
	if key != "" {
		failed[key] = true
	}
	return false
}

// stateKey identifies the sorted values of items.
func stateKey[T value24[T]](items []*node24[T]) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.val.String())
		b.WriteByte(' ')
	}
	return b.String()
}

// sortNodes orders values ascending, keeping equal values in their order.
func sortNodes[T value24[T]](items []*node24[T]) {
	slices.SortStableFunc(items, func(a, b *node24[T]) int { return a.val.cmp(b.val) })
}

// frac is a reduced fraction n/d with d > 0, for puzzles fitsInt64 admits.
type frac struct{ n, d int64 }

func (a frac) apply(op byte, b frac) (frac, bool) {
	switch op {
	case '+':
		return reduce(a.n*b.d+b.n*a.d, a.d*b.d), true
	case '-':
		return reduce(a.n*b.d-b.n*a.d, a.d*b.d), true
	case '*':
		return reduce(a.n*b.n, a.d*b.d), true
	default:
		if b.n == 0 {
			return frac{}, false
		}
		return reduce(a.n*b.d, a.d*b.n), true
	}
}

func (a frac) cmp(b frac) int {
	l, r := a.n*b.d, b.n*a.d
	switch {
	case l < r:
		return -1
	case l > r:
		return 1
	default:
		return 0
	}
}

func (a frac) is24() bool { return a.n == 24 && a.d == 1 }

func (a frac) String() string {
	if a.d == 1 {
		return strconv.FormatInt(a.n, 10)
	}
	return strconv.FormatInt(a.n, 10) + "/" + strconv.FormatInt(a.d, 10)
}

// reduce returns n/d in lowest terms with a positive denominator; d != 0.
func reduce(n, d int64) frac {
	if d < 0 {
		n, d = -n, -d
	}
	x, y := n, d
	if x < 0 {
		x = -x
	}
	for y != 0 {
		x, y = y, x%y
	}
	return frac{n / x, d / x}
}

// bigFrac is the math/big arithmetic for puzzles too large for frac.
type bigFrac struct{ r *big.Rat }

func (a bigFrac) apply(op byte, b bigFrac) (bigFrac, bool) {
	v := new(big.Rat)
	switch op {
	case '+':
		v.Add(a.r, b.r)
	case '-':
		v.Sub(a.r, b.r)
	case '*':
		v.Mul(a.r, b.r)
	default:
		if b.r.Sign() == 0 {
			return bigFrac{}, false
		}
		v.Quo(a.r, b.r)
	}
	return bigFrac{v}, true
}

func (a bigFrac) cmp(b bigFrac) int { return a.r.Cmp(b.r) }

func (a bigFrac) is24() bool { return a.r.Cmp(big.NewRat(24, 1)) == 0 }

func (a bigFrac) String() string { return a.r.RatString() }
