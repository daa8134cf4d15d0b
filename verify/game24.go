package verify

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Sentinel errors of Verify24. Errors returned by Verify24 wrap exactly one
// of them and say what is wrong.
var (
	// ErrNot24 means the expression is well formed and uses the right
	// numbers but its value is not 24.
	ErrNot24 = errors.New("game24: expression does not equal 24")
	// ErrWrongNumbers means the expression does not use each puzzle number
	// exactly once, or uses a number the puzzle does not have.
	ErrWrongNumbers = errors.New("game24: expression must use each puzzle number exactly once")
	// ErrBadExpression means the expression cannot be read or evaluated:
	// an unknown character, unbalanced parentheses, a unary sign, a missing
	// operand, or a division by zero.
	ErrBadExpression = errors.New("game24: bad expression")
)

// maxExprRunes bounds the expression length Verify24 accepts, so that
// adversarial input cannot cost unbounded time or recursion depth.
const maxExprRunes = 1000

var (
	decimalRe      = regexp.MustCompile(`^\d+(?:\.\d+)?$`)
	answerPrefixRe = regexp.MustCompile(`(?i)^\s*(?:final\s+)?answer\s*[:：]\s*`)
	// opReplacer maps the operator spellings Verify24 accepts onto + - * /.
	opReplacer = strings.NewReplacer(
		`\times`, "*", `\cdot`, "*", `\div`, "/",
		"×", "*", "·", "*", "÷", "/", "−", "-", "–", "-",
	)
)

// Verify24 checks a Game of 24 answer: expr must combine the given numbers,
// each used exactly once and no other number, with + - * / and parentheses,
// and evaluate exactly to 24. Arithmetic is exact (math/big.Rat), so
// 8 / (3 - 8 / 3) counts.
//
// Accepted spellings: × · \times \cdot for multiplication, ÷ \div for
// division, − and – for minus, a leading "Answer:" or "Final Answer:", a
// trailing period, and a trailing "= 24" (an "=" followed by any other value
// is ErrNot24). Unary plus and minus are rejected: the game allows only the
// four binary operations. Inputs longer than 1000 characters are rejected.
//
// The error wraps ErrBadExpression, ErrWrongNumbers or ErrNot24; nil means
// the answer is correct.
func Verify24(numbers []int, expr string) error {
	body, err := stripAnswer(expr)
	if err != nil {
		return err
	}
	toks, err := tokenize(body)
	if err != nil {
		return err
	}
	root, err := (&parser{toks: toks}).parse()
	if err != nil {
		return err
	}
	if err := sameNumbers(numbers, root.literals(nil)); err != nil {
		return err
	}
	v, err := root.eval()
	if err != nil {
		return err
	}
	if v.Cmp(big.NewRat(24, 1)) != 0 {
		return fmt.Errorf("%w: %s evaluates to %s", ErrNot24, strings.TrimSpace(body), v.RatString())
	}
	return nil
}

// stripAnswer removes the decorations Verify24 tolerates around the
// expression and checks the claimed value of a trailing "= value".
func stripAnswer(expr string) (string, error) {
	if utf8.RuneCountInString(expr) > maxExprRunes {
		return "", fmt.Errorf("%w: longer than %d characters", ErrBadExpression, maxExprRunes)
	}
	s := answerPrefixRe.ReplaceAllString(expr, "")
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(s, ".")
	s = opReplacer.Replace(s)
	if lhs, rhs, found := strings.Cut(s, "="); found {
		rhs = strings.TrimSpace(rhs)
		claim, ok := new(big.Rat), decimalRe.MatchString(rhs)
		if ok {
			_, ok = claim.SetString(rhs)
		}
		if !ok {
			return "", fmt.Errorf("%w: %q after \"=\" is not a number", ErrBadExpression, rhs)
		}
		if claim.Cmp(big.NewRat(24, 1)) != 0 {
			return "", fmt.Errorf("%w: the expression is set equal to %s", ErrNot24, claim.RatString())
		}
		s = lhs
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%w: empty expression", ErrBadExpression)
	}
	return s, nil
}

// token is one lexical element: a number literal or one of "+-*/()".
type token struct {
	op  byte     // 0 for a number
	num *big.Int // the literal's value when op == 0
	pos int      // byte offset in the stripped expression, for messages
}

// tokenize splits s into tokens, rejecting anything but digits, the four
// operators, parentheses and white space.
func tokenize(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.IndexByte("+-*/()", c) >= 0:
			toks = append(toks, token{op: c, pos: i})
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			n, _ := new(big.Int).SetString(s[i:j], 10)
			toks = append(toks, token{num: n, pos: i})
			i = j
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, fmt.Errorf("%w: unexpected %q at offset %d (use digits, + - * / and parentheses)", ErrBadExpression, r, i)
		}
	}
	return toks, nil
}

// node is a parsed expression: a literal (op == 0) or a binary operation.
type node struct {
	op          byte
	num         *big.Int
	left, right *node
}

// literals appends the numbers the expression uses, left to right.
func (n *node) literals(dst []*big.Int) []*big.Int {
	if n.op == 0 {
		return append(dst, n.num)
	}
	return n.right.literals(n.left.literals(dst))
}

// eval computes the exact value of the expression.
func (n *node) eval() (*big.Rat, error) {
	if n.op == 0 {
		return new(big.Rat).SetInt(n.num), nil
	}
	a, err := n.left.eval()
	if err != nil {
		return nil, err
	}
	b, err := n.right.eval()
	if err != nil {
		return nil, err
	}
	switch n.op {
	case '+':
		return a.Add(a, b), nil
	case '-':
		return a.Sub(a, b), nil
	case '*':
		return a.Mul(a, b), nil
	default:
		if b.Sign() == 0 {
			return nil, fmt.Errorf("%w: division by zero", ErrBadExpression)
		}
		return a.Quo(a, b), nil
	}
}

// parser is a recursive-descent parser over tokens:
//
//	expr   = term { ("+" | "-") term }
//	term   = factor { ("*" | "/") factor }
//	factor = number | "(" expr ")"
type parser struct {
	toks []token
	i    int
}

func (p *parser) parse() (*node, error) {
	n, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, fmt.Errorf("%w: unexpected %s at offset %d", ErrBadExpression, p.describe(), p.toks[p.i].pos)
	}
	return n, nil
}

func (p *parser) expr() (*node, error) {
	return p.binary("+-", p.term)
}

func (p *parser) term() (*node, error) {
	return p.binary("*/", p.factor)
}

// binary parses a left-associative chain of operands joined by ops.
func (p *parser) binary(ops string, operand func() (*node, error)) (*node, error) {
	left, err := operand()
	if err != nil {
		return nil, err
	}
	for p.i < len(p.toks) && p.toks[p.i].op != 0 && strings.IndexByte(ops, p.toks[p.i].op) >= 0 {
		op := p.toks[p.i].op
		p.i++
		right, err := operand()
		if err != nil {
			return nil, err
		}
		left = &node{op: op, left: left, right: right}
	}
	return left, nil
}

func (p *parser) factor() (*node, error) {
	if p.i >= len(p.toks) {
		return nil, fmt.Errorf("%w: expression ends where a number or \"(\" is expected", ErrBadExpression)
	}
	t := p.toks[p.i]
	switch t.op {
	case 0:
		p.i++
		return &node{num: t.num}, nil
	case '(':
		p.i++
		n, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.i >= len(p.toks) || p.toks[p.i].op != ')' {
			return nil, fmt.Errorf("%w: missing \")\" for \"(\" at offset %d", ErrBadExpression, t.pos)
		}
		p.i++
		return n, nil
	case '+', '-':
		return nil, fmt.Errorf("%w: unary %q at offset %d is not allowed (only binary + - * /)", ErrBadExpression, t.op, t.pos)
	default:
		return nil, fmt.Errorf("%w: unexpected %s at offset %d where a number is expected", ErrBadExpression, p.describe(), t.pos)
	}
}

// describe names the current token for an error message.
func (p *parser) describe() string {
	t := p.toks[p.i]
	if t.op == 0 {
		return "number " + t.num.String()
	}
	return strconv.Quote(string(t.op))
}

// sameNumbers checks that used is a permutation of want.
func sameNumbers(want []int, used []*big.Int) error {
	w := make([]*big.Int, len(want))
	for i, n := range want {
		w[i] = big.NewInt(int64(n))
	}
	u := slices.Clone(used)
	slices.SortFunc(w, (*big.Int).Cmp)
	slices.SortFunc(u, (*big.Int).Cmp)
	if !slices.EqualFunc(w, u, func(a, b *big.Int) bool { return a.Cmp(b) == 0 }) {
		return fmt.Errorf("%w: uses [%s], puzzle has [%s]", ErrWrongNumbers, joinInts(u), joinInts(w))
	}
	return nil
}

// joinInts formats numbers separated by spaces.
func joinInts(ns []*big.Int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = n.String()
	}
	return strings.Join(parts, " ")
}
