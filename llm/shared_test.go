package llm_test

import (
	"sync"
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSharedBudgetAdmitsExactlyItsCallsAcrossConcurrentRuns(t *testing.T) {
	sb := llm.NewSharedBudget(llm.Budget{MaxModelCalls: 5}, "the compare budget")
	// Three runs call concurrently until refused; each admitted call
	// returns a reply of 107 tokens.
	made := make([]int, 3)
	var wg sync.WaitGroup
	for i := range made {
		wg.Go(func() {
			for {
				if err := sb.Admit(""); err != nil {
					assert.ErrorIs(t, err, llm.ErrBudgetExceeded)
					assert.ErrorIs(t, err, llm.ErrSharedBudgetExceeded)
					assert.Equal(t, "the compare budget is spent: 5 model calls made, its limit is 5 (max model calls)", err.Error())
					return
				}
				made[i]++
				sb.Add(100, 7, 107e-6)
			}
		})
	}
	wg.Wait()
	// Calls are admitted one at a time: however the runs interleave,
	// exactly the budget's calls are made.
	total := made[0] + made[1] + made[2]
	assert.Equal(t, 5, total)
	calls, tokens, cost := sb.Spent()
	assert.Equal(t, total, calls)
	assert.Equal(t, 107*total, tokens)
	assert.InDelta(t, 107e-6*float64(total), cost, 1e-12)

	// A finalizer is still admitted, and its usage is counted; any other
	// role is refused.
	require.NoError(t, sb.Admit("finalize"))
	sb.Add(100, 7, 107e-6)
	calls, _, _ = sb.Spent()
	assert.Equal(t, total+1, calls)
	require.ErrorIs(t, sb.Admit("evaluate"), llm.ErrSharedBudgetExceeded)
}

func TestACallUnderWayCountsAgainstTheSharedCallLimit(t *testing.T) {
	sb := llm.NewSharedBudget(llm.Budget{MaxModelCalls: 2}, "")
	require.NoError(t, sb.Admit(""))
	require.NoError(t, sb.Admit(""))
	// Neither call has replied yet (no Add): both are under way.
	err := sb.Admit("")
	require.ErrorIs(t, err, llm.ErrSharedBudgetExceeded)
	assert.Equal(t, "the shared budget is spent: 2 model calls made, its limit is 2 (max model calls)", err.Error())
	assert.ErrorIs(t, sb.Exhausted(), llm.ErrSharedBudgetExceeded)
}

func TestANilOrUnboundedSharedBudgetAdmitsEveryCall(t *testing.T) {
	var none *llm.SharedBudget
	assert.NoError(t, none.Admit(""))
	unbounded := llm.NewSharedBudget(llm.Budget{}, "x")
	for range 10 {
		require.NoError(t, unbounded.Admit(""))
	}
	assert.NoError(t, unbounded.Exhausted())
}

func TestSharedBudgetNamesEachLimit(t *testing.T) {
	cases := []struct {
		b    llm.Budget
		want string
	}{
		{llm.Budget{MaxTokens: 200}, "the shared budget is spent: 214 tokens used, its limit is 200 (max tokens)"},
		{llm.Budget{MaxCostUSD: 0.0002}, "the shared budget is spent: $0.0002 spent, its limit is $0.0002 (max cost)"},
	}
	for _, tc := range cases {
		sb := llm.NewSharedBudget(tc.b, "")
		assert.Equal(t, tc.b, sb.Limits())
		assert.Equal(t, "the shared budget", sb.Name())
		require.NoError(t, sb.Exhausted())
		sb.Add(100, 7, 0.000107)
		require.NoError(t, sb.Exhausted())
		sb.Add(100, 7, 0.000107)
		err := sb.Exhausted()
		require.ErrorIs(t, err, llm.ErrSharedBudgetExceeded)
		require.ErrorIs(t, err, llm.ErrBudgetExceeded)
		assert.Equal(t, tc.want, err.Error())
		assert.Equal(t, err, sb.Admit(""), "a spent budget refuses the next call")
		assert.NoError(t, sb.Admit("finalize"))
	}
	// No budget, or one without limits, bounds nothing.
	var none *llm.SharedBudget
	none.Add(1, 1, 1)
	require.NoError(t, none.Exhausted())
	assert.Zero(t, none.Limits())
	assert.Empty(t, none.Name())
	calls, tokens, cost := none.Spent()
	assert.Zero(t, calls+tokens)
	assert.Zero(t, cost)
	require.NoError(t, llm.NewSharedBudget(llm.Budget{}, "x").Exhausted())
}
