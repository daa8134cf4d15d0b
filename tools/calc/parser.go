package calc

// Binding powers of the operators, loosest first.
const (
	bpAdd     = 10 // + -
	bpMul     = 20 // * / %
	bpUnary   = 30 // prefix - + √
	bpPow     = 40 // ^ (right-associative)
	bpPostfix = 50 // !
)

// node is an evaluable syntax tree node. Evaluate trees with
// evaluator.evaluate, which bounds recursion.
type node interface {
	eval(ev *evaluator) (value, error)
}

type (
	// numNode is a number literal.
	numNode struct {
		col  int
		text string
		lit  numLit
	}
	// constNode is a named constant.
	constNode struct {
		col  int
		name string
		val  float64
	}
	// unaryNode is a prefix operator (- + √) or the postfix factorial (!).
	unaryNode struct {
		col int
		op  rune
		x   node
	}
	// binaryNode is an infix operator.
	binaryNode struct {
		col  int
		op   rune
		l, r node
	}
	// callNode is a function call.
	callNode struct {
		col  int
		name string
		fn   *function
		args []node
		cols []int // column of each argument, for error messages
	}
)

// parser is a Pratt (precedence-climbing) parser pulling tokens from a
// lexer.
type parser struct {
	lx       *lexer
	tok      token // the current, not yet consumed token
	depth    int
	maxDepth int
}

// parse builds the syntax tree of a whole expression.
func parse(lx *lexer, maxDepth int) (node, error) {
	p := &parser{lx: lx, maxDepth: maxDepth}
	if err := p.load(); err != nil {
		return nil, err
	}
	n, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.trailing(t)
	}
	return n, nil
}

// load reads the next token into p.tok.
func (p *parser) load() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) peek() token { return p.tok }

// advance consumes and returns the current token.
func (p *parser) advance() (token, error) {
	t := p.tok
	if t.kind == tEOF {
		return t, nil
	}
	return t, p.load()
}

// trailing explains a token that cannot follow a complete expression.
func (p *parser) trailing(t token) error {
	switch t.kind {
	case tRParen:
		return newError(ErrSyntax, t.col, `unexpected ")" without a matching "("`)
	case tComma:
		return newError(ErrSyntax, t.col,
			`unexpected "," (commas separate function arguments; thousands separators need groups of three digits, e.g. 1,234)`)
	case tNum, tIdent, tLParen:
		return newError(ErrSyntax, t.col,
			"unexpected %s after a complete operand (write * for multiplication, e.g. 2*(3+4))", t.describe())
	}
	return newError(ErrSyntax, t.col, "unexpected %s", t.describe())
}

// infix returns the binding power of t as an infix or postfix operator, or
// 0 when t is not one.
func infix(t token) int {
	if t.kind != tOp {
		return 0
	}
	switch t.op {
	case '+', '-':
		return bpAdd
	case '*', '/', '%':
		return bpMul
	case '^':
		return bpPow
	case '!':
		return bpPostfix
	}
	return 0
}

// expr parses operators binding at least as tightly as minBP.
func (p *parser) expr(minBP int) (node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > p.maxDepth {
		return nil, newError(ErrTooLarge, p.peek().col, "expression nests more than %d levels deep", p.maxDepth)
	}
	left, err := p.prefix()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		bp := infix(t)
		if bp == 0 || bp < minBP {
			return left, nil
		}
		if _, err := p.advance(); err != nil {
			return nil, err
		}
		if t.op == '!' {
			left = &unaryNode{col: t.col, op: '!', x: left}
			continue
		}
		next := bp + 1 // left-associative
		if t.op == '^' {
			next = bp // right-associative
		}
		right, err := p.expr(next)
		if err != nil {
			return nil, err
		}
		left = &binaryNode{col: t.col, op: t.op, l: left, r: right}
	}
}

// prefix parses an operand: a literal, a name, a call, a parenthesised
// expression or a prefix operator applied to an operand.
func (p *parser) prefix() (node, error) {
	t, err := p.advance()
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case tNum:
		return &numNode{col: t.col, text: t.text, lit: t.num}, nil
	case tIdent:
		return p.name(t)
	case tLParen:
		inner, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		if err := p.closeParen(t); err != nil {
			return nil, err
		}
		return inner, nil
	case tOp:
		switch t.op {
		case '-', '+', '√':
			x, err := p.expr(bpUnary)
			if err != nil {
				return nil, err
			}
			return &unaryNode{col: t.col, op: t.op, x: x}, nil
		}
	case tEOF:
		return nil, newError(ErrSyntax, t.col, "unexpected end of expression (an operand is missing)")
	}
	return nil, newError(ErrSyntax, t.col, "unexpected %s", t.describe())
}

// closeParen consumes the ")" matching open.
func (p *parser) closeParen(open token) error {
	t := p.peek()
	switch t.kind {
	case tRParen:
		_, err := p.advance()
		return err
	case tEOF:
		return newError(ErrSyntax, open.col, `missing ")" for the "(" opened`)
	}
	return newError(ErrSyntax, t.col, `expected ")" or an operator, found %s`, t.describe())
}

// name parses a constant or a function call starting with identifier t.
func (p *parser) name(t token) (node, error) {
	isCall := p.peek().kind == tLParen
	if v, ok := constants[t.text]; ok {
		if isCall {
			return nil, newError(ErrSyntax, t.col, "%s is a constant, not a function", t.text)
		}
		return &constNode{col: t.col, name: t.text, val: v}, nil
	}
	fn, ok := functions[t.text]
	if !ok {
		what := "name"
		if isCall {
			what = "function"
		}
		return nil, newError(ErrUnknownName, t.col, "unknown %s %q (functions: %s; constants: pi, e)",
			what, t.text, functionList)
	}
	if !isCall {
		return nil, newError(ErrSyntax, t.col, "function %s needs parentheses, e.g. %s(2)", t.text, t.text)
	}
	open, err := p.advance()
	if err != nil {
		return nil, err
	}
	call := &callNode{col: t.col, name: t.text, fn: fn}
	if p.peek().kind == tRParen {
		if _, err := p.advance(); err != nil {
			return nil, err
		}
	} else {
		for {
			argCol := p.peek().col
			arg, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			call.args = append(call.args, arg)
			call.cols = append(call.cols, argCol)
			if p.peek().kind == tComma {
				if _, err := p.advance(); err != nil {
					return nil, err
				}
				continue
			}
			if err := p.closeParen(open); err != nil {
				return nil, err
			}
			break
		}
	}
	if n := len(call.args); n < fn.minArgs || (fn.maxArgs >= 0 && n > fn.maxArgs) {
		hint := ""
		if fn.maxArgs >= 0 && n > fn.maxArgs {
			hint = " (commas inside a call separate arguments; write 1234567, not 1,234,567)"
		}
		return nil, newError(ErrArgCount, t.col, "%s takes %s, got %d%s", t.text, fn.arity(), n, hint)
	}
	return call, nil
}
