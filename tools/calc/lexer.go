package calc

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tNum
	tIdent
	tOp
	tLParen
	tRParen
	tComma
)

// token is one lexical unit. col is its 1-based column in the original input.
type token struct {
	kind tokKind
	col  int
	// op is the operator for tOp: + - * / % ^ ! or √ ("**" becomes ^).
	op rune
	// text is the lower-cased name for tIdent and the literal as written
	// (thousands separators removed) for tNum.
	text string
	// num is the parsed literal for tNum.
	num numLit
}

// numLit is a number literal split into its parts: the value is
// (intDigits followed by fracDigits) * 10^(exp - len(fracDigits)).
type numLit struct {
	intDigits  string
	fracDigits string
	// exp is the decimal exponent written after e/E, clamped to
	// ±maxLiteralExp so that absurd exponents still fail cleanly.
	exp int64
}

// maxLiteralExp clamps literal exponents; anything this large fails the bit
// limit anyway.
const maxLiteralExp = 1 << 40

// describe renders the token for error messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tNum:
		return fmt.Sprintf("number %s", t.text)
	case tIdent:
		return fmt.Sprintf("name %q", t.text)
	case tOp:
		return fmt.Sprintf("%q", string(t.op))
	case tLParen:
		return `"("`
	case tRParen:
		return `")"`
	case tComma:
		return `","`
	}
	return "token"
}

// normalizeRune maps the look-alike characters models produce onto the ASCII
// operators and digits the lexer understands. It never changes the number of
// runes, so columns stay aligned with the original input.
func normalizeRune(r rune) rune {
	if r < 0x80 {
		return r
	}
	if n := width.LookupRune(r).Narrow(); n != 0 {
		r = n
	}
	switch r {
	case '×', '⋅', '·', '∙', '∗', '✕', '✖':
		return '*'
	case '÷', '∕', '⁄', '∶':
		return '/'
	case '−', '–', '‐', '‑', '‒', '﹣':
		return '-'
	case '﹢':
		return '+'
	}
	return r
}

// trimInput removes the decoration models put around an expression: white
// space, matching quotes or backticks, Markdown code fences and a leading or
// trailing "=". It returns the bounds of what remains in rs.
func trimInput(rs []rune) (start, end int) {
	start, end = 0, len(rs)
	for {
		s0, e0 := start, end
		for start < end && unicode.IsSpace(rs[start]) {
			start++
		}
		for end > start && unicode.IsSpace(rs[end-1]) {
			end--
		}
		if hasRunes(rs[start:end], "```") {
			start += 3
			// An optional language tag on the fence line: ```python\n.
			i := start
			for i < end && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) {
				i++
			}
			if i > start && i < end && rs[i] == '\n' {
				start = i + 1
			}
		}
		if end-start >= 3 && string(rs[end-3:end]) == "```" {
			end -= 3
		}
		if end-start >= 2 && quotePair(rs[start], rs[end-1]) {
			start++
			end--
		}
		if end > start && rs[end-1] == '=' {
			end--
		}
		if end > start && rs[start] == '=' {
			start++
		}
		if start == s0 && end == e0 {
			return start, end
		}
	}
}

// hasRunes reports whether rs starts with prefix.
func hasRunes(rs []rune, prefix string) bool {
	i := 0
	for _, p := range prefix {
		if i >= len(rs) || rs[i] != p {
			return false
		}
		i++
	}
	return true
}

// quotePair reports whether open and closing quote belong together.
func quotePair(open, closing rune) bool {
	switch open {
	case '"', '\'', '`':
		return closing == open
	case '“':
		return closing == '”'
	case '‘':
		return closing == '’'
	case '«':
		return closing == '»'
	}
	return false
}

// lexer turns normalized runes into tokens on demand, so that memory stays
// proportional to what the parser has consumed.
type lexer struct {
	rs []rune
	// off is the number of runes trimmed before rs, so that columns refer
	// to the original input.
	off int
	i   int
	// prev is the kind of the previous token.
	prev tokKind
	// parens records, for every open parenthesis, whether it opens the
	// argument list of a function call, where commas separate arguments
	// and are never thousands separators.
	parens []bool
}

// newLexer returns a lexer over rs, whose first rune is at column off+1.
func newLexer(rs []rune, off int) *lexer {
	return &lexer{rs: rs, off: off, prev: tEOF}
}

func (lx *lexer) col(i int) int { return lx.off + i + 1 }

func (lx *lexer) at(i int) rune {
	if i < len(lx.rs) {
		return lx.rs[i]
	}
	return 0
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

func isIdentPart(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// next returns the next token; after the input it returns tEOF forever.
func (lx *lexer) next() (token, error) {
	t, err := lx.scan()
	lx.prev = t.kind
	return t, err
}

func (lx *lexer) scan() (token, error) {
	for lx.i < len(lx.rs) && unicode.IsSpace(lx.rs[lx.i]) {
		lx.i++
	}
	start := lx.i
	if start >= len(lx.rs) {
		return token{kind: tEOF, col: lx.col(start)}, nil
	}
	r := lx.rs[start]
	switch {
	case isDigit(r) || (r == '.' && isDigit(lx.at(start+1))):
		return lx.number(), nil
	case isIdentStart(r):
		for lx.i < len(lx.rs) && isIdentPart(lx.rs[lx.i]) {
			lx.i++
		}
		name := strings.ToLower(string(lx.rs[start:lx.i]))
		return token{kind: tIdent, col: lx.col(start), text: name}, nil
	}
	lx.i++
	t := token{col: lx.col(start)}
	switch r {
	case '(':
		t.kind = tLParen
		lx.parens = append(lx.parens, lx.prev == tIdent)
	case ')':
		t.kind = tRParen
		if n := len(lx.parens); n > 0 {
			lx.parens = lx.parens[:n-1]
		}
	case ',':
		t.kind = tComma
	case '*':
		t.kind, t.op = tOp, '*'
		if lx.at(lx.i) == '*' {
			lx.i++
			t.op = '^'
		}
	case '+', '-', '/', '%', '^', '!', '√':
		t.kind, t.op = tOp, r
	case '=':
		return t, newError(ErrSyntax, t.col, `unexpected "=" (give a single expression, not an equation)`)
	default:
		return t, newError(ErrSyntax, t.col, "unexpected character %q", r)
	}
	return t, nil
}

// groupingAllowed reports whether a comma inside a number may be a thousands
// separator here, that is, outside any function argument list.
func (lx *lexer) groupingAllowed() bool {
	n := len(lx.parens)
	return n == 0 || !lx.parens[n-1]
}

// digits advances over a run of ASCII digits and returns it.
func (lx *lexer) digits() string {
	start := lx.i
	for lx.i < len(lx.rs) && isDigit(lx.rs[lx.i]) {
		lx.i++
	}
	return string(lx.rs[start:lx.i])
}

// number lexes a literal: digits with optional thousands separators, an
// optional fraction and an optional exponent.
func (lx *lexer) number() token {
	start := lx.i
	var lit numLit
	intPart := lx.digits()
	if n := len(intPart); n >= 1 && n <= 3 && intPart[0] != '0' && lx.groupingAllowed() {
		var b strings.Builder
		b.WriteString(intPart)
		for lx.at(lx.i) == ',' && isDigit(lx.at(lx.i+1)) && isDigit(lx.at(lx.i+2)) &&
			isDigit(lx.at(lx.i+3)) && !isDigit(lx.at(lx.i+4)) {
			b.WriteString(string(lx.rs[lx.i+1 : lx.i+4]))
			lx.i += 4
		}
		intPart = b.String()
	}
	lit.intDigits = intPart
	if lx.at(lx.i) == '.' {
		lx.i++
		lit.fracDigits = lx.digits()
	}
	if c := lx.at(lx.i); c == 'e' || c == 'E' {
		j := lx.i + 1
		neg := false
		if s := lx.at(j); s == '+' || s == '-' {
			neg = s == '-'
			j++
		}
		if isDigit(lx.at(j)) {
			lx.i = j
			var e int64
			for _, d := range lx.digits() {
				if e < maxLiteralExp {
					e = e*10 + int64(d-'0')
				}
			}
			e = min(e, maxLiteralExp)
			if neg {
				e = -e
			}
			lit.exp = e
		}
	}
	text := string(lx.rs[start:lx.i])
	if strings.ContainsRune(text, ',') {
		text = strings.ReplaceAll(text, ",", "")
	}
	return token{kind: tNum, col: lx.col(start), text: text, num: lit}
}
