// Package textutil holds the small text helpers that traces, prompts and
// step summaries share: cutting a text to a number of characters, folding
// it onto one line, writing a count with a noun that agrees with it, and
// telling the string literals of JSON text from its structure.
//
// The package imports nothing from the rest of the module.
package textutil

import (
	"strconv"
	"strings"
)

// Clip returns s cut to its first n runes followed by "…", or s itself
// when it has at most n runes.
func Clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// OneLine folds s onto one line: every run of white space, line breaks
// included, becomes one space, and leading and trailing space is dropped.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Count writes n with the noun that agrees with it: Count(1, "node",
// "nodes") is "1 node", Count(3, "node", "nodes") is "3 nodes" (and so is
// 0).
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// JSONScanner follows JSON text byte by byte: it tells the bytes inside
// string literals from those outside them, and counts how deeply the
// brackets and braces outside strings nest. Its zero value starts outside
// any string, at depth 0.
type JSONScanner struct {
	// Depth is the number of brackets and braces opened and not yet
	// closed, outside strings, up to the last byte taken; more closing
	// than opening ones make it negative.
	Depth int

	inString, escaped bool
}

// Step takes the next byte of the text and reports whether it lies
// outside every string literal; an opening bracket or brace there adds one
// to Depth and a closing one takes one away. The quotes that open and
// close a string count as inside it, and so does an escaped quote.
func (j *JSONScanner) Step(c byte) bool {
	switch {
	case j.inString:
		switch {
		case j.escaped:
			j.escaped = false
		case c == '\\':
			j.escaped = true
		case c == '"':
			j.inString = false
		}
		return false
	case c == '"':
		j.inString = true
		return false
	case c == '[' || c == '{':
		j.Depth++
	case c == ']' || c == '}':
		j.Depth--
	}
	return true
}
