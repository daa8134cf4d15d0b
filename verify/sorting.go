package verify

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// intListRe matches a JSON-style list of integers such as "[0, 1, 1, 3]"
// or "[]", with any white space around the numbers and commas. A list
// nested in another ("[[1, 2], [3]]") matches as its inner lists.
var intListRe = regexp.MustCompile(`\[[ \t\r\n]*(?:-?[0-9]+[ \t\r\n]*(?:,[ \t\r\n]*-?[0-9]+[ \t\r\n]*)*)?\]`)

// IntLists returns every JSON-style list of integers in text, in the
// order they appear, such as [1 2] and [3] for "split [1, 2] and [3]".
// Text around the lists is ignored; a list with an element that is not an
// integer (or that overflows an int) is skipped. An empty list "[]" is a
// list. Each result is a fresh slice, never nil.
func IntLists(text string) [][]int {
	var out [][]int
	for _, m := range intListRe.FindAllString(text, -1) {
		inner := strings.TrimSpace(m[1 : len(m)-1])
		list := []int{}
		ok := true
		if inner != "" {
			for f := range strings.SplitSeq(inner, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					ok = false
					break
				}
				list = append(list, n)
			}
		}
		if ok {
			out = append(out, list)
		}
	}
	return out
}

// LastIntList returns the last JSON-style list of integers in text (see
// IntLists) and whether there is one.
func LastIntList(text string) ([]int, bool) {
	lists := IntLists(text)
	if len(lists) == 0 {
		return nil, false
	}
	return lists[len(lists)-1], true
}

// FormatIntList writes xs as a JSON list with ", " between the numbers,
// "[0, 1, 1, 3]", the form of the sorting task's questions and answers;
// an empty or nil xs is "[]".
func FormatIntList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// SortingErrors is the error count of the Graph of Thoughts paper's
// sorting task: the number of adjacent pairs of pred out of ascending
// order, plus, for each value, the difference between how often it occurs
// in pred and in ref. It is 0 exactly when pred is ref sorted; ref's order
// does not matter.
func SortingErrors(pred, ref []int) int {
	order, count := sortingErrorParts(pred, ref)
	return order + count
}

// sortingErrorParts returns SortingErrors' two terms: the adjacent pairs
// of pred out of order, and the per-value count differences.
func sortingErrorParts(pred, ref []int) (order, count int) {
	for i := 1; i < len(pred); i++ {
		if pred[i-1] > pred[i] {
			order++
		}
	}
	diff := make(map[int]int, len(ref))
	for _, x := range ref {
		diff[x]++
	}
	for _, x := range pred {
		diff[x]--
	}
	for _, d := range diff {
		count += max(d, -d)
	}
	return order, count
}

// Sorting scores the Graph of Thoughts sorting task: the reference answer
// and the prediction are each read as their last JSON-style list of
// integers (IntLists), so prose around a list ("Answer: [1, 2]") and white
// space do not matter. The prediction's list is looked for in its
// extracted answer (Extract) first, then anywhere in it. Correct (and EM
// 1) only when the two lists are equal element by element; Detail gives
// the paper's error count (SortingErrors) and its two terms. A reference
// without a list is Unscorable; a prediction without one is wrong.
type Sorting struct{}

// Score implements Scorer.
func (Sorting) Score(pred string, ref Reference) Result {
	got := extract(pred)
	want, ok := LastIntList(ref.Answer)
	if !ok {
		return unscorable(got, fmt.Sprintf("reference answer %q is not a list of integers", ref.Answer))
	}
	have, ok := LastIntList(got)
	if !ok {
		have, ok = LastIntList(pred)
	}
	if !ok {
		return verdict(false, got, fmt.Sprintf("no list of integers in answer %q (errors %d, counted as an empty list)", got, SortingErrors(nil, want)))
	}
	order, count := sortingErrorParts(have, want)
	detail := fmt.Sprintf("errors %d (%d adjacent pairs out of order, %d count differences); %d numbers vs the reference's %d",
		order+count, order, count, len(have), len(want))
	if order+count == 0 && !slices.Equal(have, want) {
		// Both sorted with the same counts can only differ if the reference
		// itself is not sorted.
		detail += "; the reference list is not in ascending order"
	}
	return verdict(slices.Equal(have, want), FormatIntList(have), detail)
}
