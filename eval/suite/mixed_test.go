package suite

import (
	"fmt"
	"testing"

	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mixedTags maps the mixed suite's tags to the task types they stand for.
var mixedTags = map[string]string{
	"knowledge": GoldKnowledge, "lookup": GoldLookup, "arithmetic": GoldArithmetic, "multi-hop": GoldMultihop, "puzzle": GoldPuzzle,
}

func TestMixedSuiteHoldsEveryTaskTypeWithConsistentGold(t *testing.T) {
	tasks, err := Mixed()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(tasks), 60)
	require.LessOrEqual(t, len(tasks), 80)
	perType := map[string]int{}
	for i, task := range tasks {
		assert.Equal(t, fmt.Sprintf("mixed-%02d", i+1), task.ID)
		require.NotNil(t, task.Gold, task.ID)
		assert.Equal(t, task.Gold.Answer, task.Answer, task.ID)
		require.Len(t, task.Tags, 1, task.ID)
		typ := task.Gold.InferredType()
		assert.Equal(t, mixedTags[task.Tags[0]], typ, "%s: its tag names its type", task.ID)
		perType[typ]++
		calcs := 0
		for _, s := range task.Gold.Steps {
			if s.Tool == "calculator" {
				calcs++
			}
		}
		switch typ {
		case GoldArithmetic:
			assert.True(t, calcs >= 1 && calcs <= 4, "%s: 1 to 4 calculator steps, not %d", task.ID, calcs)
		case GoldPuzzle:
			nums, err := verify.PuzzleNumbers(task.Question)
			require.NoError(t, err, task.ID)
			assert.NoError(t, verify.Verify24(nums, task.Gold.Answer), "%s: the gold expression makes 24", task.ID)
			assert.NotEmpty(t, task.Gold.Reasoning, "%s: the derivation", task.ID)
		case GoldKnowledge:
			assert.Empty(t, task.Gold.Steps, task.ID)
		}
	}
	for _, typ := range GoldTypes() {
		assert.GreaterOrEqual(t, perType[typ], 5, "tasks of type %s", typ)
	}
	reproduceWithTheRealTools(t, tasks)
}

func TestInferredTypeFollowsTheSteps(t *testing.T) {
	search := GoldStep{ID: "1", Tool: "search", Input: "x", Output: "y"}
	calc := GoldStep{ID: "2", Tool: "calculator", Input: "1 + 1", Output: "2"}
	docs := GoldStep{ID: "3", Tool: "docstore", Input: "x", Output: "y"}
	assert.Equal(t, GoldKnowledge, (&Gold{Answer: "a"}).InferredType())
	assert.Equal(t, GoldLookup, (&Gold{Steps: []GoldStep{search}}).InferredType())
	assert.Equal(t, GoldLookup, (&Gold{Steps: []GoldStep{docs}}).InferredType(), "every tool but the calculator looks up")
	assert.Equal(t, GoldArithmetic, (&Gold{Steps: []GoldStep{calc}}).InferredType())
	assert.Equal(t, GoldMultihop, (&Gold{Steps: []GoldStep{search, calc}}).InferredType())
	assert.Equal(t, GoldMultihop, (&Gold{Steps: []GoldStep{search, docs}}).InferredType())
	assert.Equal(t, GoldPuzzle, (&Gold{Type: GoldPuzzle}).InferredType(), "a declared type wins")
}
