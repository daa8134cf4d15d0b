package llm_test

import (
	"context"
	"sync"
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSharedBudgetBoundsTheCallsOfEveryRunTogether(t *testing.T) {
	sb := llm.NewSharedBudget(llm.Budget{MaxModelCalls: 5}, "the compare budget")
	m := llm.Model{LLM: &echoModel{}, Meter: fixedMeter{}, Pricer: perToken{}}
	// Three runs, each with a scope of its own, call concurrently until refused.
	ctxs := make([]context.Context, 3)
	var wg sync.WaitGroup
	made := make([]int, 3)
	for i := range ctxs {
		ctxs[i] = llm.WithSharedBudget(context.Background(), sb)
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := state.NewState(state.Task{ID: "t"})
			for {
				if _, _, err := m.Call(ctxs[i], st, llm.CallMeta{Node: "n"}, llm.Prompt("", "hi")); err != nil {
					require.ErrorIs(t, err, llm.ErrBudgetExceeded)
					require.ErrorIs(t, err, llm.ErrSharedBudgetExceeded)
					assert.Equal(t, "the compare budget is spent: 5 model calls made, its limit is 5 (max model calls)", err.Error())
					return
				}
				made[i]++
			}
		}()
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

	// A finalizer still answers, and its usage is counted.
	st := state.NewState(state.Task{ID: "t"})
	_, _, err := m.Call(ctxs[0], st, llm.CallMeta{Node: "n", Role: "finalize"}, llm.Prompt("", "answer now"))
	require.NoError(t, err)
	calls, _, _ = sb.Spent()
	assert.Equal(t, total+1, calls)

	// A new scope on the same budget has been refused nothing yet.
	fresh := llm.WithSharedBudget(context.Background(), sb)
	assert.False(t, llm.SharedBudgetRefused(fresh))
	assert.Same(t, sb, llm.SharedBudgetFrom(fresh))
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
		require.NoError(t, sb.Exhausted())
		sb.Add(100, 7, 0.000107)
		require.NoError(t, sb.Exhausted())
		sb.Add(100, 7, 0.000107)
		err := sb.Exhausted()
		require.ErrorIs(t, err, llm.ErrSharedBudgetExceeded)
		assert.Equal(t, tc.want, err.Error())
	}
	// No budget, or one without limits, bounds nothing.
	var none *llm.SharedBudget
	none.Add(1, 1, 1)
	require.NoError(t, none.Exhausted())
	require.NoError(t, llm.NewSharedBudget(llm.Budget{}, "x").Exhausted())
	assert.Nil(t, llm.SharedBudgetFrom(context.Background()))
	assert.False(t, llm.SharedBudgetRefused(context.Background()))
	assert.Equal(t, context.Background(), llm.WithSharedBudget(context.Background(), nil))
}
