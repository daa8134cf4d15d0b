package config

import (
	"fmt"
	"strings"
)

// Closest returns the name of known that name most likely misspells, or ""
// when none is close enough. A name equal to name but for case, or for
// '-' written for '_', wins at once; otherwise the nearest by EditDistance
// wins, first in known's order on a tie, if it is at most one edit away
// for names of up to five characters and two for longer ones, and fewer
// edits than name has characters (so that "foo" suggests nothing rather
// than "cot", nor "c" "a"). Names equal to name itself are never
// suggested.
func Closest(name string, known []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	n := norm(name)
	limit := min(2, max(1, len([]rune(name))/3))
	best, bestD := "", limit+1
	for _, k := range known {
		if k == name {
			continue
		}
		kn := norm(k)
		if kn == n {
			return k
		}
		if d := EditDistance(n, kn); d < bestD && d < len([]rune(n)) {
			best, bestD = k, d
		}
	}
	return best
}

// The helpers below suggest, in every error about an unknown name (a
// pipeline key, a setting, a node type, a tool, a provider, a simulator
// profile, a template field), the known name a misspelt one most likely
// meant. They live in config, the bottom of the import chains, so that
// every package reporting such an error can reach them.

// DidYouMean returns `did you mean "X"? ` for the name of known closest to
// name (Closest), or "" when none is close: the start of a parenthesis
// that goes on to list the known names, as in
//
//	fmt.Errorf("unknown key %q (%sknown keys: %s)", name, config.DidYouMean(name, known), strings.Join(known, ", "))
func DidYouMean(name string, known []string) string {
	if c := Closest(name, known); c != "" {
		return fmt.Sprintf("did you mean %q? ", c)
	}
	return ""
}

// EditDistance is the number of one-rune insertions, deletions,
// substitutions and swaps of two neighbouring runes that turn a into b
// (the optimal string alignment distance: "Questoin" is one edit from
// "Question"). It compares runes exactly; fold case first to ignore it.
func EditDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
