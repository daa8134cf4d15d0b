// Package textutil holds the small text helpers that traces, prompts and
// step summaries share: cutting a text to a number of characters and
// folding it onto one line.
//
// The package imports nothing from the rest of the module.
package textutil

import "strings"

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
