package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIntListsFindsEveryListOfIntegersInProse(t *testing.T) {
	tests := []struct {
		text string
		want [][]int
	}{
		{"[5, 1, 9]", [][]int{{5, 1, 9}}},
		{"Answer: [1,2]", [][]int{{1, 2}}},
		{"first [ 3 ,1 ] then\n[\n  0,\n  -2\n]", [][]int{{3, 1}, {0, -2}}},
		{"split into [[1, 2], [3]]", [][]int{{1, 2}, {3}}},
		{"empty [] list", [][]int{{}}},
		{"no list here", nil},
		{`["a", 1] [1.5, 2] [1 2] [1, 2,] [99999999999999999999999]`, nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, IntLists(tt.text), tt.text)
	}
	last, ok := LastIntList("Input: [3, 1, 2]\nOutput: [1, 2, 3]")
	require.True(t, ok)
	assert.Equal(t, []int{1, 2, 3}, last)
	_, ok = LastIntList("nothing")
	assert.False(t, ok)
}

func TestFormatIntListWritesTheTaskForm(t *testing.T) {
	assert.Equal(t, "[0, 1, 1, 3]", FormatIntList([]int{0, 1, 1, 3}))
	assert.Equal(t, "[]", FormatIntList(nil))
	assert.Equal(t, "[-1]", FormatIntList([]int{-1}))
}

// SortingErrors follows the Graph of Thoughts paper: adjacent pairs out
// of order plus, per value, the difference of the counts.
func TestSortingErrorsCountsDisorderAndCountDifferences(t *testing.T) {
	ref := []int{3, 1, 2, 1} // order does not matter
	tests := []struct {
		name string
		pred []int
		want int
	}{
		{"sorted", []int{1, 1, 2, 3}, 0},
		{"one swap", []int{1, 2, 1, 3}, 1},
		{"dropped", []int{1, 2, 3}, 1},
		{"duplicated", []int{1, 1, 2, 2, 3}, 1},
		{"reversed", []int{3, 2, 1, 1}, 2},
		{"wrong value", []int{1, 1, 2, 4}, 2},
		{"empty", nil, 4},
		{"swap and drop", []int{2, 1, 3}, 2},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, SortingErrors(tt.pred, ref), tt.name)
	}
}

func TestSortingScorerIsExactOnTheLists(t *testing.T) {
	ref := Reference{Question: "Sort this list of numbers in ascending order: [3, 1, 1, 2]", Answer: "[1, 1, 2, 3]"}
	tests := []struct {
		pred    string
		correct bool
		detail  string
	}{
		{"[1, 1, 2, 3]", true, "errors 0"},
		{"[1,1,2,3]", true, "errors 0"},
		{"Answer: [ 1, 1,\n 2, 3 ]", true, "errors 0"},
		{"The input was [3, 1, 1, 2].\nThe sorted list is [1, 1, 2, 3].", true, "errors 0"},
		{"Sorted:\n[1, 1, 2, 3]\nDone.", true, "errors 0"},
		{"[1, 2, 1, 3]", false, "errors 1 (1 adjacent pairs out of order, 0 count differences)"},
		{"[1, 2, 3]", false, "errors 1 (0 adjacent pairs out of order, 1 count differences)"},
		{"[1, 1, 1, 2, 3]", false, "errors 1"},
		{"[3, 2, 1, 1]", false, "errors 2"},
		{"Answer: I cannot sort this.", false, "no list of integers"},
		{"", false, "errors 4, counted as an empty list"},
	}
	for _, tt := range tests {
		r := Sorting{}.Score(tt.pred, ref)
		assert.Equal(t, tt.correct, r.Correct, tt.pred)
		assert.False(t, r.Unscorable, tt.pred)
		assert.False(t, r.HasF1, tt.pred)
		assert.Contains(t, r.Detail, tt.detail, tt.pred)
		if tt.correct {
			assert.Equal(t, 1.0, r.EM, tt.pred)
			assert.Equal(t, "[1, 1, 2, 3]", r.Extracted, tt.pred)
		} else {
			assert.Zero(t, r.EM, tt.pred)
		}
	}
	for _, answer := range []string{"", "unknown", "1, 2, 3"} {
		assert.True(t, Sorting{}.Score("[1, 2, 3]", Reference{Answer: answer}).Unscorable, answer)
	}
	assert.True(t, Sorting{}.Score("Answer: []", Reference{Answer: "[]"}).Correct, "an empty list sorts to itself")
}
