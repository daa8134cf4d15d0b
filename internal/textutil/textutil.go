// Package textutil holds the small text helpers that traces, prompts and
// step summaries share: cutting a text to a number of characters, folding
// it onto one line, and writing a count with a noun that agrees with it.
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
