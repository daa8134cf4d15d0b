package llm_test

import (
	"context"
	"sync"
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSharedBudgetAdmitsExactlyItsCallsAcrossConcurrentRuns(t *testing.T) {
	sb := llm.NewSharedBudget(llm.Budget{MaxModelCalls: 5}, "the compare budget")
	// Three runs, each with a scope of its own, call concurrently until
	// refused; each admitted call returns a reply of 107 tokens.
	ctxs := make([]context.Context, 3)
	made := make([]int, 3)
	var wg sync.WaitGroup
	for i := range ctxs {
		ctxs[i] = llm.WithSharedBudget(context.Background(), sb)
		wg.Go(func() {
			for {
				if err := llm.AdmitShared(ctxs[i], ""); err != nil {
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
	for _, ctx := range ctxs {
		assert.True(t, llm.SharedBudgetRefused(ctx), "every run was refused a call")
	}

	// A finalizer is still admitted, and its usage is counted.
	require.NoError(t, llm.AdmitShared(ctxs[0], "finalize"))
	sb.Add(100, 7, 107e-6)
	calls, _, _ = sb.Spent()
	assert.Equal(t, total+1, calls)

	// A new scope on the same budget has been refused nothing yet.
	fresh := llm.WithSharedBudget(context.Background(), sb)
	assert.False(t, llm.SharedBudgetRefused(fresh))
	assert.Same(t, sb, llm.SharedBudgetFrom(fresh))
	require.Error(t, llm.AdmitShared(fresh, "evaluate"))
	assert.True(t, llm.SharedBudgetRefused(fresh))
}

func TestACallUnderWayCountsAgainstTheSharedCallLimit(t *testing.T) {
	sb := llm.NewSharedBudget(llm.Budget{MaxModelCalls: 2}, "")
	ctx := llm.WithSharedBudget(context.Background(), sb)
	require.NoError(t, llm.AdmitShared(ctx, ""))
	require.NoError(t, llm.AdmitShared(ctx, ""))
	// Neither call has replied yet (no Add): both are under way.
	err := llm.AdmitShared(ctx, "")
	require.ErrorIs(t, err, llm.ErrSharedBudgetExceeded)
	assert.Equal(t, "the shared budget is spent: 2 model calls made, its limit is 2 (max model calls)", err.Error())
	assert.ErrorIs(t, sb.Exhausted(), llm.ErrSharedBudgetExceeded)
}

func TestAdmitSharedWithoutASharedBudgetAdmitsEveryCall(t *testing.T) {
	assert.NoError(t, llm.AdmitShared(context.Background(), ""))
	assert.False(t, llm.SharedBudgetRefused(context.Background()))
	unbounded := llm.WithSharedBudget(context.Background(), llm.NewSharedBudget(llm.Budget{}, "x"))
	for range 10 {
		require.NoError(t, llm.AdmitShared(unbounded, ""))
	}
	assert.False(t, llm.SharedBudgetRefused(unbounded))
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
		ctx := llm.WithSharedBudget(context.Background(), sb)
		assert.Equal(t, err, llm.AdmitShared(ctx, ""), "a spent budget refuses the next call")
		assert.NoError(t, llm.AdmitShared(ctx, "finalize"))
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
	assert.Nil(t, llm.SharedBudgetFrom(context.Background()))
	assert.False(t, llm.SharedBudgetRefused(context.Background()))
	assert.Equal(t, context.Background(), llm.WithSharedBudget(context.Background(), nil))
}
