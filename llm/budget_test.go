package llm_test

import (
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBudgetCheckNamesTheLimitReached(t *testing.T) {
	// A run that made 3 calls of 1000 tokens in all for $0.02.
	const calls, tokens, cost = 3, 1000, 0.02
	cases := []struct {
		b    llm.Budget
		want string
	}{
		{llm.Budget{MaxModelCalls: 3}, "3 model calls made, limits.max_model_calls is 3"},
		{llm.Budget{MaxTokens: 1000}, "1000 tokens used, limits.max_tokens is 1000"},
		{llm.Budget{MaxCostUSD: 0.01}, "$0.0200 spent, limits.max_cost_usd is $0.0100"},
		{llm.Budget{MaxModelCalls: 2, MaxTokens: 10}, "3 model calls made, limits.max_model_calls is 2"},
	}
	for _, tc := range cases {
		err := tc.b.Check(calls, tokens, cost)
		require.ErrorIs(t, err, llm.ErrBudgetExceeded)
		assert.Contains(t, err.Error(), tc.want)
		assert.NotErrorIs(t, err, llm.ErrSharedBudgetExceeded)
	}
	assert.NoError(t, llm.Budget{MaxModelCalls: 4, MaxTokens: 1001, MaxCostUSD: 0.03}.Check(calls, tokens, cost))
	assert.NoError(t, llm.Budget{}.Check(calls, tokens, cost))
	assert.True(t, llm.Budget{}.IsZero())
	assert.False(t, llm.Budget{MaxTokens: 1}.IsZero())
}
