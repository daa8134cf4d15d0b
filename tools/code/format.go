package code

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
)

// Starlark's % operator and str.format know neither widths, precisions
// nor format specs ("%.2f", "{:>8,}"), which models writing Python use
// all the time. A template that uses them is formatted here, following
// Python's format-spec mini-language and printf-style rules; any other
// template is left to Starlark.

// spec is a parsed Python format spec:
// [[fill]align][sign][#][0][width][grouping][.precision][type].
type spec struct {
	fill     rune
	align    byte // '<', '>', '^', '=' or 0
	sign     byte // '+', '-', ' ' or 0
	alt      bool
	zero     bool
	width    int
	grouping byte // ',', '_' or 0
	prec     int  // -1 when absent
	typ      byte // 0 when absent
}

// parseSpec parses a format spec.
func parseSpec(s string) (spec, error) {
	sp := spec{fill: ' ', prec: -1}
	if r, n := utf8.DecodeRuneInString(s); n > 0 && len(s) > n && strings.IndexByte("<>^=", s[n]) >= 0 {
		sp.fill, sp.align, s = r, s[n], s[n+1:]
	} else if len(s) > 0 && strings.IndexByte("<>^=", s[0]) >= 0 {
		sp.align, s = s[0], s[1:]
	}
	if len(s) > 0 && strings.IndexByte("+- ", s[0]) >= 0 {
		sp.sign, s = s[0], s[1:]
	}
	if len(s) > 0 && s[0] == '#' {
		sp.alt, s = true, s[1:]
	}
	if len(s) > 0 && s[0] == '0' {
		sp.zero, s = true, s[1:]
	}
	var err error
	if sp.width, s, err = leadingInt(s); err != nil {
		return sp, err
	}
	if len(s) > 0 && (s[0] == ',' || s[0] == '_') {
		sp.grouping, s = s[0], s[1:]
	}
	if len(s) > 0 && s[0] == '.' {
		if len(s) < 2 || s[1] < '0' || s[1] > '9' {
			return sp, fmt.Errorf("format specifier missing precision")
		}
		if sp.prec, s, err = leadingInt(s[1:]); err != nil {
			return sp, err
		}
	}
	if len(s) > 1 {
		return sp, fmt.Errorf("invalid format specifier")
	}
	if len(s) == 1 {
		sp.typ = s[0]
	}
	return sp, nil
}

// leadingInt splits the decimal number that s starts with (0 if none).
func leadingInt(s string) (int, string, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, s, nil
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil || n > 1<<30 {
		return 0, s, fmt.Errorf("too many digits in a format specifier")
	}
	return n, s[i:], nil
}

// formatter formats values by spec, refusing results over max bytes.
type formatter struct{ max int }

// value formats v by the spec text s, as Python's format(v, s).
func (f formatter) value(v starlark.Value, s string) (string, error) {
	sp, err := parseSpec(s)
	if err != nil {
		return "", err
	}
	if sp.width > f.max {
		return "", tooLarge("a width of %s is over the limit of %s", withCommas(uint64(sp.width)), byteSize(int64(f.max)))
	}
	switch v := v.(type) {
	case starlark.Bool:
		if s == "" {
			return v.String(), nil
		}
		n := 0
		if v {
			n = 1
		}
		return f.int(starlark.MakeInt(n), sp)
	case starlark.Int:
		return f.int(v, sp)
	case starlark.Float:
		return f.float(float64(v), sp, "float")
	case starlark.String:
		return f.str(string(v), sp, "str")
	}
	return f.str(str(v), sp, v.Type())
}

// str returns the text of v as str(v) does.
func str(v starlark.Value) string {
	if s, ok := starlark.AsString(v); ok {
		return s
	}
	return v.String()
}

// unknownCode is Python's error for a type code a value does not take.
func unknownCode(code byte, typ string) error {
	return fmt.Errorf("unknown format code '%c' for a value of type %s", code, typ)
}

func (f formatter) str(s string, sp spec, typ string) (string, error) {
	if sp.typ != 0 && sp.typ != 's' {
		return "", unknownCode(sp.typ, typ)
	}
	if sp.sign != 0 || sp.align == '=' || sp.grouping != 0 {
		return "", fmt.Errorf("sign, '=' alignment and grouping are not allowed for a value of type %s", typ)
	}
	if sp.prec >= 0 && sp.prec < len(s) {
		n := 0
		for i := range s {
			if n == sp.prec {
				s = s[:i]
				break
			}
			n++
		}
	}
	return f.pad("", s, sp, false), nil
}

func (f formatter) int(v starlark.Int, sp spec) (string, error) {
	base, prefix := 10, ""
	switch sp.typ {
	case 0, 'd', 'n':
	case 'b':
		base, prefix = 2, "0b"
	case 'o':
		base, prefix = 8, "0o"
	case 'x':
		base, prefix = 16, "0x"
	case 'X':
		base, prefix = 16, "0X"
	case 'c':
		i, ok := v.Int64()
		if !ok || i < 0 || i > utf8.MaxRune {
			return "", fmt.Errorf("%%c arg not in range(0x110000)")
		}
		sp.typ = 0
		return f.str(string(rune(i)), sp, "int")
	case 'e', 'E', 'f', 'F', 'g', 'G', '%':
		fl, _ := new(big.Float).SetInt(v.BigInt()).Float64()
		return f.float(fl, sp, "int")
	default:
		return "", unknownCode(sp.typ, "int")
	}
	if sp.prec >= 0 {
		return "", fmt.Errorf("precision not allowed in integer format specifier")
	}
	b := v.BigInt()
	neg := b.Sign() < 0
	digits := new(big.Int).Abs(b).Text(base)
	if sp.typ == 'X' {
		digits = strings.ToUpper(digits)
	}
	if sp.grouping != 0 {
		every := 3
		if base != 10 {
			every = 4
		}
		digits = group(digits, sp.grouping, every)
	}
	if !sp.alt {
		prefix = ""
	}
	return f.pad(signOf(neg, sp.sign)+prefix, digits, sp, true), nil
}

func (f formatter) float(x float64, sp spec, typ string) (string, error) {
	prec := sp.prec
	var body string
	neg := math.Signbit(x) && !math.IsNaN(x)
	a := math.Abs(x)
	upper := sp.typ == 'E' || sp.typ == 'F' || sp.typ == 'G'
	switch {
	case math.IsInf(a, 0) || math.IsNaN(a):
		body = "inf"
		if math.IsNaN(a) {
			body = "nan"
		}
		if upper {
			body = strings.ToUpper(body)
		}
		if sp.typ == '%' {
			body += "%"
		}
		return f.pad(signOf(neg, sp.sign), body, sp, true), nil
	case prec > 1000:
		return "", tooLarge("a precision of %d is over the limit of 1000", prec)
	}
	switch sp.typ {
	case 0:
		if prec < 0 {
			body = starlark.Float(a).String()
		} else {
			body = strconv.FormatFloat(a, 'g', max(prec, 1), 64)
			if !strings.ContainsAny(body, ".e") {
				body += ".0"
			}
		}
	case 'f', 'F':
		body = strconv.FormatFloat(a, 'f', orDefault(prec, 6), 64)
		if sp.alt && !strings.Contains(body, ".") {
			body += "."
		}
	case 'e', 'E':
		body = strconv.FormatFloat(a, 'e', orDefault(prec, 6), 64)
	case 'g', 'G', 'n':
		body = strconv.FormatFloat(a, 'g', max(orDefault(prec, 6), 1), 64)
	case '%':
		body = strconv.FormatFloat(a*100, 'f', orDefault(prec, 6), 64) + "%"
	default:
		return "", unknownCode(sp.typ, typ)
	}
	if upper {
		body = strings.ToUpper(body)
	}
	if sp.grouping != 0 {
		end := strings.IndexAny(body, ".e%")
		if end < 0 {
			end = len(body)
		}
		body = group(body[:end], sp.grouping, 3) + body[end:]
	}
	return f.pad(signOf(neg, sp.sign), body, sp, true), nil
}

func orDefault(n, def int) int {
	if n < 0 {
		return def
	}
	return n
}

// signOf returns the sign to show for a number.
func signOf(neg bool, sign byte) string {
	switch {
	case neg:
		return "-"
	case sign == '+':
		return "+"
	case sign == ' ':
		return " "
	}
	return ""
}

// group inserts sep between groups of every digits, from the right.
func group(digits string, sep byte, every int) string {
	var b strings.Builder
	for i, c := range []byte(digits) {
		if i > 0 && (len(digits)-i)%every == 0 {
			b.WriteByte(sep)
		}
		b.WriteByte(c)
	}
	return b.String()
}

// pad aligns prefix+body in the spec's width.
func (f formatter) pad(prefix, body string, sp spec, numeric bool) string {
	n := sp.width - utf8.RuneCountInString(prefix) - utf8.RuneCountInString(body)
	if n <= 0 {
		return prefix + body
	}
	align, fill := sp.align, sp.fill
	if align == 0 {
		align = '<'
		if numeric {
			align = '>'
		}
		if sp.zero {
			fill = '0'
			if numeric {
				align = '='
			}
		}
	}
	pad := func(k int) string { return strings.Repeat(string(fill), k) }
	switch align {
	case '<':
		return prefix + body + pad(n)
	case '^':
		return pad(n/2) + prefix + body + pad(n-n/2)
	case '=':
		return prefix + pad(n) + body
	}
	return pad(n) + prefix + body
}

// hasPrintfSpec reports whether a % template has a conversion with flags,
// a width or a precision, which Starlark does not support.
func hasPrintfSpec(t string) bool {
	for i := 0; i < len(t)-1; i++ {
		if t[i] != '%' {
			continue
		}
		j := i + 1
		if t[j] == '(' {
			if k := strings.IndexByte(t[j:], ')'); k >= 0 {
				j += k + 1
			}
		}
		if j < len(t) && strings.IndexByte("-+ #0123456789.*", t[j]) >= 0 {
			return true
		}
		i = j
	}
	return false
}

// printf formats t % arg as Python's printf-style formatting does.
func (f formatter) printf(t string, arg starlark.Value) (string, error) {
	var args []starlark.Value
	mapping, _ := arg.(starlark.Mapping)
	if tup, ok := arg.(starlark.Tuple); ok {
		args = tup
	} else {
		args = []starlark.Value{arg}
	}
	next := 0
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(t) {
			return "", fmt.Errorf("incomplete format")
		}
		var v starlark.Value
		if t[i] == '(' {
			end := strings.IndexByte(t[i:], ')')
			if end < 0 || mapping == nil {
				return "", fmt.Errorf("format requires a mapping")
			}
			key := t[i+1 : i+end]
			i += end + 1
			got, found, err := mapping.Get(starlark.String(key))
			if err != nil || !found {
				return "", fmt.Errorf("key %q not in the mapping", key)
			}
			v = got
		}
		start := i
		for i < len(t) && strings.IndexByte("-+ #0", t[i]) >= 0 {
			i++
		}
		flags := t[start:i]
		wstart := i
		for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
			i++
		}
		widthPrec := t[wstart:i]
		for i < len(t) && strings.IndexByte("hlL", t[i]) >= 0 {
			i++
		}
		if i >= len(t) {
			return "", fmt.Errorf("incomplete format")
		}
		if strings.Contains(t[start:i], "*") || (i < len(t) && t[i] == '*') {
			return "", fmt.Errorf("'*' widths are not supported; write the width in the template")
		}
		conv := t[i]
		if conv == '%' {
			b.WriteByte('%')
			continue
		}
		if v == nil {
			if next >= len(args) {
				return "", fmt.Errorf("not enough arguments for format string")
			}
			v = args[next]
			next++
		}
		sp := spec{fill: ' ', prec: -1}
		for _, fl := range []byte(flags) {
			switch fl {
			case '-':
				sp.align = '<'
			case '+', ' ':
				if sp.sign != '+' {
					sp.sign = fl
				}
			case '#':
				sp.alt = true
			case '0':
				sp.zero = true
			}
		}
		if sp.align == '<' {
			sp.zero = false
		}
		w, p, hasPrec := strings.Cut(widthPrec, ".")
		if w != "" {
			n, err := strconv.Atoi(w)
			if err != nil || n > f.max {
				return "", tooLarge("a width of %s is over the limit of %s", w, byteSize(int64(f.max)))
			}
			sp.width = n
		}
		if hasPrec {
			n, err := strconv.Atoi(cmp.Or(p, "0"))
			if err != nil || n > 1000 {
				return "", tooLarge("a precision of %s is over the limit of 1000", p)
			}
			sp.prec = n
		}
		s, err := f.printfValue(v, conv, sp)
		if err != nil {
			return "", err
		}
		if b.Len()+len(s) > f.max {
			return "", tooLarge("the formatted string would be over the limit of %s", byteSize(int64(f.max)))
		}
		b.WriteString(s)
	}
	if mapping == nil && next < len(args) {
		return "", fmt.Errorf("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

// printfValue formats one value for a printf conversion.
func (f formatter) printfValue(v starlark.Value, conv byte, sp spec) (string, error) {
	switch conv {
	case 'd', 'i', 'u', 'o', 'x', 'X':
		var n starlark.Int
		switch x := v.(type) {
		case starlark.Int:
			n = x
		case starlark.Bool:
			if x {
				n = starlark.MakeInt(1)
			} else {
				n = starlark.MakeInt(0)
			}
		case starlark.Float:
			if conv != 'd' && conv != 'i' && conv != 'u' {
				return "", fmt.Errorf("%%%c format: an integer is required, not float", conv)
			}
			var err error
			if n, err = starlark.NumberToInt(x); err != nil {
				return "", err
			}
		default:
			return "", fmt.Errorf("%%%c format: a number is required, not %s", conv, v.Type())
		}
		sp.typ = conv
		if conv == 'i' || conv == 'u' {
			sp.typ = 'd'
		}
		if prec := sp.prec; prec >= 0 {
			// printf's precision pads an integer's digits with zeros.
			sp.prec = -1
			digits := new(big.Int).Abs(n.BigInt()).Text(10)
			if sp.typ == 'd' && len(digits) < prec {
				return f.pad(signOf(n.Sign() < 0, sp.sign), strings.Repeat("0", prec-len(digits))+digits, sp, true), nil
			}
		}
		return f.int(n, sp)
	case 'e', 'E', 'f', 'F', 'g', 'G':
		x, ok := starlark.AsFloat(v)
		if !ok {
			return "", fmt.Errorf("%%%c format: a number is required, not %s", conv, v.Type())
		}
		sp.typ = conv
		return f.float(x, sp, v.Type())
	case 'c':
		sp.zero = false
		sp.align = cmp.Or(sp.align, '>') // printf right-aligns text too
		switch x := v.(type) {
		case starlark.Int:
			sp.typ = 'c'
			return f.int(x, sp)
		case starlark.String:
			if utf8.RuneCountInString(string(x)) == 1 {
				return f.str(string(x), sp, "str")
			}
		}
		return "", fmt.Errorf("%%c requires an int or a one-character string")
	case 's':
		sp.zero = false
		sp.align = cmp.Or(sp.align, '>') // printf right-aligns text too
		return f.str(str(v), sp, "str")
	case 'r', 'a':
		sp.zero = false
		sp.align = cmp.Or(sp.align, '>') // printf right-aligns text too
		return f.str(v.String(), sp, "str")
	}
	return "", fmt.Errorf("unsupported format character '%c'", conv)
}

// hasFormatSpec reports whether a str.format template has a replacement
// field with a format spec ("{:.2f}") or an element or attribute access
// ("{0[key]}"), which Starlark does not support.
func hasFormatSpec(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] != '{' {
			continue
		}
		if i+1 < len(t) && t[i+1] == '{' {
			i++
			continue
		}
		end := strings.IndexByte(t[i:], '}')
		if end < 0 {
			return false
		}
		if strings.ContainsAny(t[i:i+end], ":[.") {
			return true
		}
		i += end
	}
	return false
}

// format formats t.format(*args, **kwargs) as Python's str.format does.
func (f formatter) format(t string, args starlark.Tuple, kwargs []starlark.Tuple) (string, error) {
	var b strings.Builder
	auto, manual := 0, false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '{' && i+1 < len(t) && t[i+1] == '{':
			b.WriteByte('{')
			i++
			continue
		case c == '}' && i+1 < len(t) && t[i+1] == '}':
			b.WriteByte('}')
			i++
			continue
		case c == '}':
			return "", fmt.Errorf("single '}' encountered in format string")
		case c != '{':
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(t[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("single '{' encountered in format string")
		}
		field := t[i+1 : i+end]
		i += end
		if strings.Contains(field, "{") {
			return "", fmt.Errorf("nested replacement fields are not supported")
		}
		name, specText, _ := strings.Cut(field, ":")
		name, conv, hasConv := strings.Cut(name, "!")
		root, rest := name, ""
		if k := strings.IndexAny(name, ".["); k >= 0 {
			root, rest = name[:k], name[k:]
		}
		var v starlark.Value
		switch {
		case root == "":
			if manual {
				return "", fmt.Errorf("cannot switch from manual field numbering to automatic field numbering")
			}
			if auto >= len(args) {
				return "", fmt.Errorf("not enough arguments for format string")
			}
			v = args[auto]
			auto++
		case root[0] >= '0' && root[0] <= '9':
			if auto > 0 {
				return "", fmt.Errorf("cannot switch from automatic field numbering to manual field specification")
			}
			manual = true
			n, err := strconv.Atoi(root)
			if err != nil || n >= len(args) {
				return "", fmt.Errorf("replacement index %s out of range", root)
			}
			v = args[n]
		default:
			for _, kv := range kwargs {
				if k, _ := starlark.AsString(kv[0]); k == root {
					v = kv[1]
				}
			}
			if v == nil {
				return "", fmt.Errorf("keyword %s not found", root)
			}
		}
		v, err := access(v, rest)
		if err != nil {
			return "", err
		}
		if hasConv {
			switch conv {
			case "r", "a":
				v = starlark.String(v.String())
			case "s":
				v = starlark.String(str(v))
			default:
				return "", fmt.Errorf("unknown conversion specifier %s", conv)
			}
		}
		s, err := f.value(v, specText)
		if err != nil {
			return "", err
		}
		if b.Len()+len(s) > f.max {
			return "", tooLarge("the formatted string would be over the limit of %s", byteSize(int64(f.max)))
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// access applies the .attr and [key] parts of a replacement field name.
func access(v starlark.Value, rest string) (starlark.Value, error) {
	for rest != "" {
		switch rest[0] {
		case '.':
			name := rest[1:]
			if k := strings.IndexAny(name, ".["); k >= 0 {
				name, rest = name[:k], name[k:]
			} else {
				rest = ""
			}
			ha, ok := v.(starlark.HasAttrs)
			if !ok {
				return nil, fmt.Errorf("%s has no .%s field or method", v.Type(), name)
			}
			got, err := ha.Attr(name)
			if err != nil || got == nil {
				return nil, fmt.Errorf("%s has no .%s field or method", v.Type(), name)
			}
			v = got
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("missing ']' in format string")
			}
			key := rest[1:end]
			rest = rest[end+1:]
			var k starlark.Value = starlark.String(key)
			if n, err := strconv.Atoi(key); err == nil {
				k = starlark.MakeInt(n)
			}
			switch x := v.(type) {
			case starlark.Mapping:
				got, found, err := x.Get(k)
				if err != nil || !found {
					return nil, fmt.Errorf("key %s not found", key)
				}
				v = got
			case starlark.Indexable:
				i, err := strconv.Atoi(key)
				if err != nil || i < 0 || i >= x.Len() {
					return nil, fmt.Errorf("index %s out of range", key)
				}
				v = x.Index(i)
			default:
				return nil, fmt.Errorf("%s is not subscriptable", v.Type())
			}
		default:
			return nil, fmt.Errorf("invalid field name")
		}
	}
	return v, nil
}
