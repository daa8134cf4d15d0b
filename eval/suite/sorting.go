package suite

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/verify"
)

// The names of the built-in suites, as --suite takes them (Builtin).
const (
	// DemoName is the built-in demo suite (Demo).
	DemoName = "demo"
	// MixedName is the built-in mixed suite (Mixed).
	MixedName = "mixed"
	// SortingName is the built-in sorting suite of lists of 16 numbers
	// (Sorting with DefaultSortingLength).
	SortingName = "sorting"
	// Sorting32Name is the built-in sorting suite of lists of 32 numbers,
	// the length the Graph of Thoughts paper reports most.
	Sorting32Name = "sorting32"
	// Sorting64Name is the built-in sorting suite of lists of 64 numbers.
	Sorting64Name = "sorting64"
)

// FormatSorting is the Graph of Thoughts sorting task: a built-in sorting
// suite (Sorting), or the project's JSONL (FormatJSONL) of sorting tasks,
// judged by verify.Sorting instead of exact text match. Detection never
// yields it; name it with WithFormat.
const FormatSorting Format = "sorting"

// Sorting suite sizes.
const (
	// DefaultSortingLength is the list length of the "sorting" suite.
	DefaultSortingLength = 16
	// SortingTasks is the number of tasks of each built-in sorting suite.
	SortingTasks = 100
	// sortingSeed seeds the generator of every sorting suite; the list
	// length is the second PCG seed word, so each length has its own lists.
	sortingSeed = 0x60750127
	// sortingMaxValue is the largest number of a list; lists hold 0 to 9
	// as in the paper, so longer ones always repeat numbers.
	sortingMaxValue = 9
)

// SortingQuestion is the task text of a sorting task, for example
// "Sort this list of numbers in ascending order: [5, 1, 9]".
func SortingQuestion(numbers []int) string {
	return "Sort this list of numbers in ascending order: " + verify.FormatIntList(numbers)
}

// Sorting generates the sorting suite of the Graph of Thoughts paper:
// tasks lists of length numbers from 0 to 9, repeats included, drawn from
// a PCG generator with a fixed seed, so every call returns the same
// tasks. Task ids are "sort<length>-001", "sort<length>-002", ...; each
// task's question is SortingQuestion of its list, and its reference
// answer and gold answer are the list sorted ascending, in the same JSON
// form ("[0, 1, 1, 3]"). Judge answers with verify.Sorting
// (DefaultScorer(FormatSorting)). length and tasks must be positive.
func Sorting(length, tasks int) ([]Task, error) {
	if length < 1 || tasks < 1 {
		return nil, fmt.Errorf("suite: a sorting suite of %d lists of %d numbers: both must be positive", tasks, length)
	}
	r := rand.New(rand.NewPCG(sortingSeed, uint64(length)))
	width := max(len(fmt.Sprint(tasks)), 3)
	out := make([]Task, tasks)
	for i := range out {
		nums := make([]int, length)
		for j := range nums {
			// Uint64 is PCG's own output, fixed by its algorithm; the
			// modulo bias over 2^64 is negligible.
			nums[j] = int(r.Uint64() % (sortingMaxValue + 1))
		}
		sorted := slices.Clone(nums)
		slices.Sort(sorted)
		answer := verify.FormatIntList(sorted)
		out[i] = Task{
			Task: state.Task{
				ID:       fmt.Sprintf("sort%d-%0*d", length, width, i+1),
				Question: SortingQuestion(nums),
				Answer:   answer,
				Tags:     []string{"sorting", fmt.Sprintf("sort%d", length)},
			},
			Gold: &Gold{Answer: answer},
		}
	}
	return out, nil
}

// BuiltinNames lists the names of the built-in suites Builtin knows, the
// demo suite first.
func BuiltinNames() []string {
	return []string{DemoName, MixedName, SortingName, Sorting32Name, Sorting64Name}
}

// IsBuiltin reports whether name is a built-in suite (BuiltinNames)
// rather than a suite file.
func IsBuiltin(name string) bool {
	return slices.Contains(BuiltinNames(), name)
}

// Builtin returns the built-in suite called name and the format its tasks
// are judged by (DefaultScorer), and whether name is one: "demo" (Demo,
// FormatJSONL), "mixed" (Mixed, FormatJSONL), "sorting", "sorting32" and "sorting64" (Sorting of
// SortingTasks lists of 16, 32 and 64 numbers, FormatSorting). For any
// other name, a suite file's path, ok is false and tasks and err are nil.
func Builtin(name string) (tasks []Task, format Format, ok bool, err error) {
	switch name {
	case DemoName:
		tasks, err = Demo()
		return tasks, FormatJSONL, true, err
	case MixedName:
		tasks, err = Mixed()
		return tasks, FormatJSONL, true, err
	case SortingName:
		tasks, err = Sorting(DefaultSortingLength, SortingTasks)
	case Sorting32Name:
		tasks, err = Sorting(32, SortingTasks)
	case Sorting64Name:
		tasks, err = Sorting(64, SortingTasks)
	default:
		return nil, "", false, nil
	}
	return tasks, FormatSorting, true, err
}
