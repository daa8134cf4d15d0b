package llm

import (
	"testing"

	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBudgetCheckNamesTheLimitReached(t *testing.T) {
	u := state.UsageSnapshot{Counters: state.Counters{ModelCalls: 3, PromptTokens: 900, CompletionTokens: 100}, CostUSD: 0.02}
	cases := []struct {
		b    Budget
		want string
	}{
		{Budget{MaxModelCalls: 3}, "3 model calls made, limits.max_model_calls is 3"},
		{Budget{MaxTokens: 1000}, "1000 tokens used, limits.max_tokens is 1000"},
		{Budget{MaxCostUSD: 0.01}, "$0.0200 spent, limits.max_cost_usd is $0.0100"},
	}
	for _, tc := range cases {
		err := tc.b.check(u)
		require.ErrorIs(t, err, ErrBudgetExceeded)
		assert.Contains(t, err.Error(), tc.want)
	}
	assert.NoError(t, Budget{MaxModelCalls: 4, MaxTokens: 1001, MaxCostUSD: 0.03}.check(u))
	assert.NoError(t, Budget{}.check(u))
	assert.True(t, Budget{}.IsZero())
}
