package state_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsageIsSafeForConcurrentUpdates(t *testing.T) {
	st := state.NewState(state.Task{})
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

func TestUsageMarshalsFlatCountersInAFixedOrder(t *testing.T) {
	st := state.NewState(state.Task{})
	st.Usage.AddModelCall("plan", 100, 20, true, 0.25)
	st.Usage.AddAttempts("plan", 3, false)
	st.Usage.AddAttempts("act", 2, true)
	st.Usage.AddToolCall("act")
	const want = `{"model_calls":1,"model_attempts":5,"failed_model_calls":1,"prompt_tokens":100,"completion_tokens":20,"tool_calls":1,"estimated":true,"cost_usd":0.25,` +
		`"per_node":{"act":{"model_calls":0,"model_attempts":2,"failed_model_calls":1,"prompt_tokens":0,"completion_tokens":0,"tool_calls":1},` +
		`"plan":{"model_calls":1,"model_attempts":3,"prompt_tokens":100,"completion_tokens":20,"tool_calls":0}}}`
	snap, err := json.Marshal(st.Usage.Snapshot())
	require.NoError(t, err)
	assert.JSONEq(t, want, string(snap))
	assert.Equal(t, want, string(snap), "the snapshot's JSON is byte for byte what reports and --json print")
	live, err := json.Marshal(&st.Usage)
	require.NoError(t, err)
	assert.Equal(t, want, string(live), "the live counters marshal as their snapshot")

	empty, err := json.Marshal(state.NewState(state.Task{}).Usage.Snapshot())
	require.NoError(t, err)
	assert.Equal(t, `{"model_calls":0,"model_attempts":0,"prompt_tokens":0,"completion_tokens":0,"tool_calls":0}`, string(empty))
}

func TestSetPartialKeepsTheFirstFailureKind(t *testing.T) {
	st := state.NewState(state.Task{})
	st.Failure = state.FailureParse
	st.SetPartial("maybe", "budget ran out", state.FailureBudget)
	assert.True(t, st.Done)
	assert.False(t, st.Complete)
	assert.Equal(t, state.FailureParse, st.Failure)
	st.SetAnswer("yes")
	assert.True(t, st.Complete)
	assert.Empty(t, st.Reason)
}

// flakyModel fails its first failures calls with a retryable error.
