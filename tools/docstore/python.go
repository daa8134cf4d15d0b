package docstore

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The wikienv and langchain formats reproduce observations that Python code
// builds, so the string operations they depend on follow CPython's rules
// rather than Go's where the two differ: which characters strip() removes,
// what lower() maps to, and how repr() quotes a string inside a list.

// pyIsSpace reports whether CPython's str.isspace treats r as white space:
// Go's unicode.IsSpace plus the four information separators U+001C..U+001F,
// which CPython counts because their bidirectional class is B or S.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyStrip is CPython's str.strip() with no argument.
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pyLower is CPython's str.lower(): the full lower-case mapping, which
// differs from strings.ToLower in two places. U+0130 (capital I with dot
// above) becomes "i" followed by U+0307, and a capital sigma becomes a final
// sigma (U+03C2) when it ends a word, following Unicode's Final_Sigma rule.
func pyLower(s string) string {
	if !strings.ContainsRune(s, 0x130) && !strings.ContainsRune(s, 0x3a3) {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s) + 2)
	for i, r := range rs {
		switch r {
		case 0x130:
			b.WriteString("i\u0307")
		case 0x3a3:
			if finalSigma(rs, i) {
				b.WriteRune(0x3c2)
			} else {
				b.WriteRune(0x3c3)
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma reports whether the capital sigma at rs[i] is in the
// Final_Sigma context: preceded by a cased letter and not followed by one,
// skipping case-ignorable characters on both sides.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	j = i + 1
	for j < len(rs) && caseIgnorable(rs[j]) {
		j++
	}
	return j == len(rs) || !cased(rs[j])
}

// cased is Unicode's Cased property: lower-case, upper-case or title-case.
func cased(r rune) bool {
	return unicode.IsLower(r) || unicode.IsUpper(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// caseIgnorable is Unicode's Case_Ignorable property: marks, format
// characters, modifier letters and symbols, and the word-break classes
// MidLetter, MidNumLet and Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xb7, 0x387, 0x55f, 0x5f4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// pyPrintable is CPython's str.isprintable for one character: everything
// but the categories Cc, Cf, Cs, Co, Cn (unassigned), Zl, Zp and Zs, except
// that the ASCII space is printable.
func pyPrintable(r rune) bool {
	if r == ' ' {
		return true
	}
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Cs, unicode.Co, unicode.Zl, unicode.Zp, unicode.Zs) {
		return false
	}
	// Unassigned code points belong to no category.
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}

// pyRepr is CPython's repr() of a str: single quotes, unless the string
// holds a single quote and no double quote; backslashes and the chosen
// quote escaped; \t, \n and \r by name; other unprintable characters as
// \xhh, \uhhhh or \Uhhhhhhhh; printable non-ASCII characters as they are.
// Invalid UTF-8 bytes are read as U+FFFD.
func pyRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			writeHex(&b, `\x`, r, 2)
		case r < 0x7f || pyPrintable(r):
			b.WriteRune(r)
		case r <= 0xff:
			writeHex(&b, `\x`, r, 2)
		case r <= 0xffff:
			writeHex(&b, `\u`, r, 4)
		default:
			writeHex(&b, `\U`, r, 8)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// writeHex writes prefix and r in lower-case hexadecimal, zero-padded to
// width digits.
func writeHex(b *strings.Builder, prefix string, r rune, width int) {
	b.WriteString(prefix)
	h := strconv.FormatInt(int64(r), 16)
	for range width - len(h) {
		b.WriteByte('0')
	}
	b.WriteString(h)
}

// pyListRepr is CPython's str() of a list of strings: "['a', 'b']", or
// "[]" for an empty list.
func pyListRepr(items []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyRepr(s))
	}
	b.WriteByte(']')
	return b.String()
}

// validUTF8 returns s with each run of invalid UTF-8 bytes replaced by
// U+FFFD, so that every observation is valid text.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
