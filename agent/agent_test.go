package agent_test

import (
	"sync"
	"testing"

	"github.com/planner-engine/planner/agent"
	"github.com/stretchr/testify/assert"
)

func TestUsageIsSafeForConcurrentUpdates(t *testing.T) {
	st := agent.NewState(agent.Task{})
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.Usage.AddModelCall("a", 10, 2, false, 0.5)
			st.Usage.AddToolCall("b")
		}()
	}
	wg.Wait()
	u := st.Usage.Snapshot()
	assert.Equal(t, 50, u.ModelCalls)
	assert.Equal(t, 500, u.PromptTokens)
	assert.Equal(t, 100, u.CompletionTokens)
	assert.Equal(t, 50, u.ToolCalls)
	assert.InDelta(t, 25.0, u.CostUSD, 1e-9)
	assert.Equal(t, []string{"a", "b"}, u.Nodes())
	assert.Equal(t, 50, u.PerNode["b"].ToolCalls)
}

func TestSetPartialKeepsTheFirstFailureKind(t *testing.T) {
	st := agent.NewState(agent.Task{})
	st.Failure = agent.FailureParse
	st.SetPartial("maybe", "budget ran out", agent.FailureBudget)
	assert.True(t, st.Done)
	assert.False(t, st.Complete)
	assert.Equal(t, agent.FailureParse, st.Failure)
	st.SetAnswer("yes")
	assert.True(t, st.Complete)
	assert.Empty(t, st.Reason)
}

// flakyModel fails its first failures calls with a retryable error.
