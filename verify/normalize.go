package verify

import (
	"math/big"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// asciiPunct is Python's string.punctuation, the set the SQuAD and HotpotQA
// scripts remove. It includes symbols such as $ + < = > ^ ` | ~.
const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

var articlesRe = regexp.MustCompile(`\b(?:a|an|the)\b`)

// Normalize folds an answer for comparison the way the official HotpotQA and
// SQuAD evaluation scripts do: lower-case, remove punctuation, drop the
// articles a/an/the, and collapse white space to single spaces. Beyond those
// scripts it also removes Unicode punctuation (curly quotes, "，", "。"), so
// typographic variants of the same answer compare equal.
func Normalize(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if (r < unicode.MaxASCII && strings.ContainsRune(asciiPunct, r)) || unicode.IsPunct(r) {
			return -1
		}
		return r
	}, s)
	s = articlesRe.ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

// Tokens returns the white-space separated tokens of Normalize(s), the units
// of token-level F1.
func Tokens(s string) []string {
	return strings.Fields(Normalize(s))
}

// numberRe matches one number: digits with optional thousands separators and
// decimals, or a bare decimal, optionally followed by "/denominator".
var numberRe = regexp.MustCompile(`(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[ \t]*/[ \t]*\d+)?`)

// Number returns the last number in s as an exact rational. It reads the
// forms answers take: "$18", "18.0", "18 dollars", "1,234" (thousands
// separators), "-3.5" and "−3.5", "50%" (the number before the sign, 50),
// "3/4" (a fraction, 0.75), and full-width digits ("１８"). A minus sign
// counts only when it is not preceded by a letter, digit or closing bracket,
// so "10-3" reads as 3, not -3.
//
// The last number is chosen, not the first, because answers that still carry
// working usually end with the result ("9 * 2 = 18"), as in common GSM8K
// evaluation practice. ok is false when s holds no number or only a fraction
// with a zero denominator.
func Number(s string) (*big.Rat, bool) {
	s = width.Narrow.String(s)
	locs := numberRe.FindAllStringIndex(s, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		start, end := locs[i][0], locs[i][1]
		r, ok := parseNumber(s[start:end])
		if !ok {
			continue
		}
		if negative(s[:start]) {
			r.Neg(r)
		}
		return r, true
	}
	return nil, false
}

// parseNumber reads one numberRe match.
func parseNumber(tok string) (*big.Rat, bool) {
	num, den, isFrac := strings.Cut(tok, "/")
	r, ok := new(big.Rat).SetString(strings.ReplaceAll(strings.TrimSpace(num), ",", ""))
	if !ok {
		return nil, false
	}
	if !isFrac {
		return r, true
	}
	d, ok := new(big.Rat).SetString(strings.TrimSpace(den))
	if !ok || d.Sign() == 0 {
		return nil, false
	}
	return r.Quo(r, d), true
}

// negative reports whether the text before a number ends with a minus sign
// that is a sign rather than a subtraction.
func negative(before string) bool {
	var sign string
	switch {
	case strings.HasSuffix(before, "-"):
		sign = "-"
	case strings.HasSuffix(before, "−"):
		sign = "−"
	default:
		return false
	}
	prev := strings.TrimSuffix(before, sign)
	if prev == "" {
		return true
	}
	last, _ := utf8.DecodeLastRuneInString(prev)
	return !unicode.IsLetter(last) && !unicode.IsDigit(last) && last != ')' && last != ']'
}
