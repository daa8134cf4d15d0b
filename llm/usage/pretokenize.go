package usage

import (
	"unicode"
	"unicode/utf8"
)

// This file splits text into the pieces that the BPE merges are applied to.
// It reproduces, match for match, what tiktoken-go's regexp2 engine does with
// the patterns in encodingPatterns, in one forward pass. regexp2 backtracks
// and spends several microseconds per match, which made counting a megabyte
// of prose take seconds; the scanners below are linear with a small constant.
// TestPieceSplittersMatchRegexp and FuzzPieceSplittersMatchRegexp hold them
// to the patterns.
//
// All functions take a valid UTF-8 string s and a byte offset i < len(s) at
// which a piece starts, and return the byte offset where that piece ends.

// runeClass is a set of the character classes the patterns test.
type runeClass uint16

const (
	classLu    runeClass = 1 << iota // \p{Lu}: upper-case letter
	classLl                          // \p{Ll}: lower-case letter
	classLt                          // \p{Lt}: title-case letter
	classLm                          // \p{Lm}: modifier letter
	classLo                          // \p{Lo}: other letter
	classM                           // \p{M}: mark
	classN                           // \p{N}: number
	classSpace                       // \s, which regexp2 defines as unicode.IsSpace
)

const (
	// classL is \p{L}.
	classL = classLu | classLl | classLt | classLm | classLo
	// classUpper is o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
	classUpper = classLu | classLt | classLm | classLo | classM
	// classLower is o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}].
	classLower = classLl | classLm | classLo | classM
)

// classify returns the classes of r. The general categories are disjoint, so
// at most one letter, mark or number bit is set; white space is none of them.
// Punctuation, symbols and control characters other than white space have no
// bit set.
func classify(r rune) runeClass {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z':
			return classLl
		case 'A' <= r && r <= 'Z':
			return classLu
		case '0' <= r && r <= '9':
			return classN
		case r == ' ' || '\t' <= r && r <= '\r':
			return classSpace
		}
		return 0
	}
	switch {
	case unicode.IsSpace(r):
		return classSpace
	case unicode.IsLetter(r):
		switch {
		case unicode.Is(unicode.Lo, r):
			return classLo
		case unicode.Is(unicode.Ll, r):
			return classLl
		case unicode.Is(unicode.Lu, r):
			return classLu
		case unicode.Is(unicode.Lm, r):
			return classLm
		}
		return classLt
	case unicode.IsMark(r):
		return classM
	case unicode.IsNumber(r):
		return classN
	}
	return 0
}

// runeAt decodes the rune at byte offset i of s. At the end of s it returns
// width 0 and no classes.
func runeAt(s string, i int) (r rune, c runeClass, width int) {
	if i >= len(s) {
		return 0, 0, 0
	}
	if b := s[i]; b < utf8.RuneSelf {
		return rune(b), classify(rune(b)), 1
	}
	r, width = utf8.DecodeRuneInString(s[i:])
	return r, classify(r), width
}

// isPrefix reports whether a rune belongs to [^\r\n\p{L}\p{N}], the optional
// leading character of a word.
func isPrefix(r rune, c runeClass, width int) bool {
	return width > 0 && c&(classL|classN) == 0 && r != '\r' && r != '\n'
}

// isPunct reports whether a rune belongs to [^\s\p{L}\p{N}].
func isPunct(c runeClass, width int) bool {
	return width > 0 && c&(classSpace|classL|classN) == 0
}

// scanClass returns the end of the longest run, starting at i, of runes that
// have a class in want.
func scanClass(s string, i int, want runeClass) int {
	for {
		_, c, w := runeAt(s, i)
		if w == 0 || c&want == 0 {
			return i
		}
		i += w
	}
}

// contractionSuffixes are the letters after the apostrophe in
// (?i:'s|'t|'re|'ve|'m|'ll|'d), in the pattern's order.
var contractionSuffixes = [...]string{"s", "t", "re", "ve", "m", "ll", "d"}

// contractionEnd returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) matched at
// i, or i when it does not match. Case is ignored as regexp2 ignores it: by
// comparing unicode.ToLower of the input with the pattern.
func contractionEnd(s string, i int) int {
	if i >= len(s) || s[i] != '\'' {
		return i
	}
	for _, suffix := range contractionSuffixes {
		j := i + 1
		matched := true
		for k := 0; k < len(suffix); k++ {
			r, _, w := runeAt(s, j)
			if w == 0 || unicode.ToLower(r) != rune(suffix[k]) {
				matched = false
				break
			}
			j += w
		}
		if matched {
			return j
		}
	}
	return i
}

// digitsEnd returns the end of \p{N}{1,3} at i, or i when it does not match.
func digitsEnd(s string, i int) int {
	for n := 0; n < 3; n++ {
		_, c, w := runeAt(s, i)
		if c&classN == 0 {
			break
		}
		i += w
	}
	return i
}

// punctEnd returns the end of ` ?[^\s\p{L}\p{N}]+[\r\n]*` at i (with
// [\r\n/]* as the tail when slash is set), or i when it does not match.
func punctEnd(s string, i int, slash bool) int {
	j := i
	if s[i] == ' ' {
		if _, c, w := runeAt(s, i+1); isPunct(c, w) {
			j = i + 1
		}
	}
	if _, c, w := runeAt(s, j); !isPunct(c, w) {
		return i
	}
	for {
		_, c, w := runeAt(s, j)
		if !isPunct(c, w) {
			break
		}
		j += w
	}
	for j < len(s) && (s[j] == '\r' || s[j] == '\n' || slash && s[j] == '/') {
		j++
	}
	return j
}

// spaceEnd returns the end of `\s*[\r\n]+|\s+(?!\S)|\s+` at i, or i when
// none matches.
//
// \s*[\r\n]+ backtracks from the whole white-space run to its last line
// break, so it ends just after that break. \s+(?!\S) takes the whole run at
// the end of the text and otherwise gives its last character to the next
// piece (a run of one character followed by text fails and falls to \s+).
func spaceEnd(s string, i int) int {
	lastBreak, lastStart := -1, -1
	j := i
	for {
		r, c, w := runeAt(s, j)
		if c&classSpace == 0 {
			break
		}
		if r == '\r' || r == '\n' {
			lastBreak = j
		}
		lastStart = j
		j += w
	}
	switch {
	case lastBreak >= 0:
		return lastBreak + 1
	case j == len(s) || lastStart <= i:
		return j
	default:
		return lastStart
	}
}

// pieceEndO200k returns the end of the o200k_base piece that starts at i.
func pieceEndO200k(s string, i int) int {
	r, c, w := runeAt(s, i)
	prefix := isPrefix(r, c, w)
	// [^\r\n\p{L}\p{N}]?[Upper]*[Lower]+(contraction)?, with the prefix
	// tried first as regexp2's greedy ? does.
	if prefix {
		if end := lowerTailEnd(s, i+w); end >= 0 {
			return contractionEnd(s, end)
		}
	}
	if end := lowerTailEnd(s, i); end >= 0 {
		return contractionEnd(s, end)
	}
	// [^\r\n\p{L}\p{N}]?[Upper]+[Lower]*(contraction)?
	if prefix {
		if end := upperHeadEnd(s, i+w); end >= 0 {
			return contractionEnd(s, end)
		}
	}
	if end := upperHeadEnd(s, i); end >= 0 {
		return contractionEnd(s, end)
	}
	if end := digitsEnd(s, i); end > i {
		return end
	}
	if end := punctEnd(s, i, true); end > i {
		return end
	}
	return atLeastOneRune(s, i, spaceEnd(s, i))
}

// lowerTailEnd returns the end of [Upper]*[Lower]+ at j, or -1 when it does
// not match. The greedy [Upper]* backs off one rune at a time until [Lower]+
// can start, so [Lower]+ starts at the last position, up to and including
// the rune after the upper run, whose rune is in Lower.
func lowerTailEnd(s string, j int) int {
	lastLower := -1
	for {
		_, c, w := runeAt(s, j)
		if c&classUpper == 0 {
			if c&classLower != 0 {
				lastLower = j
			}
			break
		}
		if c&classLower != 0 {
			lastLower = j
		}
		j += w
	}
	if lastLower < 0 {
		return -1
	}
	return scanClass(s, lastLower, classLower)
}

// upperHeadEnd returns the end of [Upper]+[Lower]* at j, or -1 when it does
// not match.
func upperHeadEnd(s string, j int) int {
	end := scanClass(s, j, classUpper)
	if end == j {
		return -1
	}
	return scanClass(s, end, classLower)
}

// pieceEndCL100k returns the end of the cl100k_base piece that starts at i.
func pieceEndCL100k(s string, i int) int {
	if end := contractionEnd(s, i); end > i {
		return end
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	r, c, w := runeAt(s, i)
	if isPrefix(r, c, w) {
		if end := scanClass(s, i+w, classL); end > i+w {
			return end
		}
	}
	if end := scanClass(s, i, classL); end > i {
		return end
	}
	if end := digitsEnd(s, i); end > i {
		return end
	}
	if end := punctEnd(s, i, false); end > i {
		return end
	}
	return atLeastOneRune(s, i, spaceEnd(s, i))
}

// atLeastOneRune returns end, or the end of the rune at i when end does not
// advance. Every rune matches one of the patterns' alternatives, so this
// only guards the loops in Count against not advancing.
func atLeastOneRune(s string, i, end int) int {
	if end > i {
		return end
	}
	_, _, w := runeAt(s, i)
	return i + w
}

// validUTF8 returns s with every byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, as Go's []rune conversion does: tiktoken-go
// tokenises the runes of the text, so an invalid byte counts as U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, len(s)+len(s)/2)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		out = utf8.AppendRune(out, r)
		i += w
	}
	return string(out)
}
