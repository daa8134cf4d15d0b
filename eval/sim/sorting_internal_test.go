package sim

import (
	"slices"
	"testing"

	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
)

// sortError makes every choice of its bits one error, by the Graph of
// Thoughts count, and leaves its input alone.
func TestSortErrorMakesExactlyOneErrorForEveryDraw(t *testing.T) {
	for _, sorted := range [][]int{{4}, {2, 2, 2}, {0, 1, 1, 3}, {0, 0, 5, 5, 9}} {
		in := slices.Clone(sorted)
		seen := map[string]bool{}
		for bits := range uint64(60) {
			out := sortError(sorted, bits)
			assert.Equal(t, 1, verify.SortingErrors(out, sorted), "%v with bits %d gave %v", sorted, bits, out)
			seen[verify.FormatIntList(out)] = true
		}
		assert.Equal(t, in, sorted, "the input is not changed")
		assert.Greater(t, len(seen), 1, "%v: the bits choose among errors", sorted)
	}
	assert.Equal(t, []int{1, 0, 1, 3}, sortError([]int{0, 1, 1, 3}, 2), "kind 2 swaps the first unequal adjacent pair")
	assert.Equal(t, []int{1, 1, 3}, sortError([]int{0, 1, 1, 3}, 0), "kind 0 drops")
	assert.Equal(t, []int{0, 0, 1, 1, 3}, sortError([]int{0, 1, 1, 3}, 1), "kind 1 duplicates")
	assert.Equal(t, []int{2, 2, 2, 2}, sortError([]int{2, 2, 2}, 2), "no unequal pair to swap: a duplicate")
}
