package trace

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Printable returns s made safe to print to a terminal: every character
// that a terminal would act on rather than show is replaced by a visible
// Go-style escape, so model and tool text can neither move the cursor,
// clear the screen, set the window title, hide text, reorder it nor ring
// the bell:
//
//   - C0 controls other than line feed and tab (ESC, which starts every
//     escape sequence, NUL, BEL, backspace, ...) and DEL become \x1b,
//     \x00, ...; a carriage return before a line feed is dropped, any
//     other becomes \r;
//   - C1 controls (U+0080 to U+009F; U+009B is a CSI of its own) become
//     \u009b, ...;
//   - bidirectional formatting characters (U+061C, U+200E, U+200F,
//     U+202A to U+202E, U+2066 to U+2069), which can make text display in
//     another order than it is read, become \u202e, ...;
//   - bytes that are not UTF-8 become \xff, ...
//
// Other text, line feeds and tabs included, is returned as is; when s
// holds nothing to replace, s itself is returned without allocating.
// JSON output needs none of this: encoding/json escapes control
// characters, and a JSON decoder gives the text back exactly.
func Printable(s string) string {
	i := firstUnprintable(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// CRLF: the line feed alone ends the line.
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && unprintableASCII(byte(r)):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && unprintableRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// firstUnprintable returns the offset of the first character of s that
// Printable replaces, or -1.
func firstUnprintable(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unprintableASCII(c) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unprintableRune(r) {
			return i
		}
		i += n
	}
	return -1
}

// unprintableASCII reports whether the ASCII byte c is a control other
// than line feed and tab: C0 or DEL.
func unprintableASCII(c byte) bool {
	return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f
}

// unprintableRune reports whether r, not ASCII, is a C1 control or a
// bidirectional formatting character.
func unprintableRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
