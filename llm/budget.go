package llm

import (
	"context"
	"errors"
	"fmt"

	"github.com/planner-engine/planner/state"
)

// ErrBudgetExceeded means a run has used up one of its budgets (model
// calls, tokens or cost) and the model call was not made. The ReAct loop
// answers it by stopping with failure "budget" and asking its finalizer
// for a best-effort answer; other nodes fail the run with it.
var ErrBudgetExceeded = errors.New("run budget exceeded")

// Budget bounds what one run may spend on its model. A zero field sets no
// bound. It is checked before each model call against the run's usage so
// far, so calls already in flight (parallel samples or steps) may end a
// little past it. A call with role "finalize" (a loop's best-effort answer
// once stopped) is always made: it is how a stopped run still answers.
type Budget struct {
	// MaxModelCalls bounds the model calls of a run. Default 0: no bound.
	MaxModelCalls int
	// MaxTokens bounds the prompt plus completion tokens of a run.
	// Default 0: no bound.
	MaxTokens int
	// MaxCostUSD bounds the cost of a run in US dollars, as the price
	// table computes it. Default 0: no bound.
	MaxCostUSD float64
}

// IsZero reports whether b sets no bound.
func (b Budget) IsZero() bool { return b == Budget{} }

type budgetKey struct{}

// WithBudget returns ctx carrying the run budget b (pipeline.Run sets it
// from the pipeline's limits).
func WithBudget(ctx context.Context, b Budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// BudgetFrom returns the run budget in ctx, or the zero Budget.
func BudgetFrom(ctx context.Context) Budget {
	b, _ := ctx.Value(budgetKey{}).(Budget)
	return b
}

// check returns an error wrapping ErrBudgetExceeded, naming the limit,
// when u has reached one of b's bounds.
func (b Budget) check(u state.UsageSnapshot) error {
	switch {
	case b.MaxModelCalls > 0 && u.ModelCalls >= b.MaxModelCalls:
		return fmt.Errorf("%w: %d model calls made, limits.max_model_calls is %d", ErrBudgetExceeded, u.ModelCalls, b.MaxModelCalls)
	case b.MaxTokens > 0 && u.PromptTokens+u.CompletionTokens >= b.MaxTokens:
		return fmt.Errorf("%w: %d tokens used, limits.max_tokens is %d", ErrBudgetExceeded, u.PromptTokens+u.CompletionTokens, b.MaxTokens)
	case b.MaxCostUSD > 0 && u.CostUSD >= b.MaxCostUSD:
		return fmt.Errorf("%w: $%.4f spent, limits.max_cost_usd is $%.4f", ErrBudgetExceeded, u.CostUSD, b.MaxCostUSD)
	}
	return nil
}
