package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/verify"
)

var sortingQuestionRe = regexp.MustCompile(`^Sort this list of numbers in ascending order: (\[[0-9](?:, [0-9])*\])$`)

// questionList reads the list back out of a sorting question.
func questionList(t *testing.T, question string) []int {
	t.Helper()
	m := sortingQuestionRe.FindStringSubmatch(question)
	require.NotNil(t, m, "question %q", question)
	var nums []int
	require.NoError(t, json.Unmarshal([]byte(m[1]), &nums))
	return nums
}

func TestSortingSuitesHoldTheListsSortedWithGoldAnswers(t *testing.T) {
	for _, length := range []int{16, 32, 64} {
		t.Run(fmt.Sprint(length), func(t *testing.T) {
			tasks, err := Sorting(length, SortingTasks)
			require.NoError(t, err)
			require.Len(t, tasks, 100)
			assert.Equal(t, fmt.Sprintf("sort%d-001", length), tasks[0].ID)
			assert.Equal(t, fmt.Sprintf("sort%d-100", length), tasks[99].ID)
			seen := map[string]bool{}
			questions := map[string]bool{}
			values := map[int]bool{}
			for _, task := range tasks {
				assert.False(t, seen[task.ID], "duplicate id %s", task.ID)
				seen[task.ID] = true
				questions[task.Question] = true
				nums := questionList(t, task.Question)
				require.Len(t, nums, length, task.ID)
				distinct := map[int]bool{}
				for _, n := range nums {
					assert.True(t, n >= 0 && n <= 9, "%s: %d outside 0..9", task.ID, n)
					distinct[n] = true
					values[n] = true
				}
				assert.Less(t, len(distinct), length, "%s repeats numbers", task.ID)
				sorted := slices.Clone(nums)
				slices.Sort(sorted)
				assert.Equal(t, verify.FormatIntList(sorted), task.Answer, task.ID)
				require.NotNil(t, task.Gold, task.ID)
				assert.Equal(t, task.Answer, task.Gold.Answer, task.ID)
				require.NoError(t, checkGold(task.Gold), task.ID)
				assert.Equal(t, []string{"sorting", fmt.Sprintf("sort%d", length)}, task.Tags)
				assert.True(t, verify.Sorting{}.Score(task.Answer, verify.Reference{Question: task.Question, Answer: task.Answer}).Correct, task.ID)
				if !slices.Equal(sorted, nums) {
					assert.False(t, verify.Sorting{}.Score(verify.FormatIntList(nums), verify.Reference{Answer: task.Answer}).Correct,
						"%s: the unsorted list is wrong", task.ID)
				}
			}
			assert.Len(t, questions, 100, "the lists differ")
			assert.Len(t, values, 10, "every number 0..9 occurs")
		})
	}
}

// The suites are generated from a fixed seed: the same lists every time,
// on every platform and Go version (PCG's output is fixed by its
// algorithm). The pinned questions catch a change of the generator.
func TestSortingSuitesAreDeterministic(t *testing.T) {
	a, err := Sorting(16, SortingTasks)
	require.NoError(t, err)
	b, err := Sorting(16, SortingTasks)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	few, err := Sorting(16, 5)
	require.NoError(t, err)
	assert.Equal(t, a[:5], few, "fewer tasks are a prefix")
	assert.Equal(t, "Sort this list of numbers in ascending order: [2, 3, 0, 0, 6, 4, 5, 1, 9, 0, 3, 5, 0, 2, 6, 5]", a[0].Question)
	assert.Equal(t, "[0, 0, 0, 0, 1, 2, 2, 3, 3, 4, 5, 5, 5, 6, 6, 9]", a[0].Answer)
	c, err := Sorting(32, 1)
	require.NoError(t, err)
	assert.NotEqual(t, questionList(t, a[0].Question), questionList(t, c[0].Question)[:16], "each length has its own lists")
}

func TestSortingRejectsEmptySuites(t *testing.T) {
	for _, args := range [][2]int{{0, 10}, {16, 0}, {-1, -1}} {
		_, err := Sorting(args[0], args[1])
		assert.Error(t, err, "%v", args)
	}
}

func TestBuiltinResolvesTheBuiltinSuiteNames(t *testing.T) {
	tests := []struct {
		name, first string
		format      Format
	}{
		{"demo", "demo-01", FormatJSONL},
		{"mixed", "mixed-01", FormatJSONL},
		{"sorting", "sort16-001", FormatSorting},
		{"sorting32", "sort32-001", FormatSorting},
		{"sorting64", "sort64-001", FormatSorting},
	}
	for _, tt := range tests {
		tasks, format, ok, err := Builtin(tt.name)
		require.NoError(t, err, tt.name)
		require.True(t, ok, tt.name)
		assert.True(t, IsBuiltin(tt.name))
		assert.Equal(t, tt.format, format, tt.name)
		assert.Equal(t, tt.first, tasks[0].ID, tt.name)
		_, err = DefaultScorer(format)
		assert.NoError(t, err, tt.name)
	}
	assert.Equal(t, []string{"demo", "mixed", "sorting", "sorting32", "sorting64"}, BuiltinNames())
	for _, name := range []string{"", "Sorting", "sorting16", "suite.jsonl"} {
		tasks, format, ok, err := Builtin(name)
		assert.False(t, ok, name)
		assert.False(t, IsBuiltin(name), name)
		assert.Nil(t, tasks)
		assert.Empty(t, format)
		assert.NoError(t, err)
	}
	tasks, _, _, err := Builtin("sorting")
	require.NoError(t, err)
	sliced, err := Select(tasks, WithSlice(10, 20), WithLimit(3))
	require.NoError(t, err)
	assert.Equal(t, []string{"sort16-011", "sort16-012", "sort16-013"}, ids(sliced))
}

// A JSONL file of sorting tasks read as FormatSorting is judged by the
// sorting scorer.
func TestLoadReadsSortingTasksAsJSONL(t *testing.T) {
	tasks, err := Sorting(16, 3)
	require.NoError(t, err)
	var b strings.Builder
	for _, task := range tasks {
		line, err := json.Marshal(task)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	path := writeFile(t, "sort.jsonl", b.String())
	got, format, err := LoadFormat(context.Background(), path, WithFormat(FormatSorting))
	require.NoError(t, err)
	assert.Equal(t, FormatSorting, format)
	assert.Equal(t, tasks, got)
	_, format, err = LoadFormat(context.Background(), path)
	require.NoError(t, err)
	assert.Equal(t, FormatJSONL, format, "detection never yields sorting")
}
