package llm

import (
	"errors"
	"fmt"
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

// Check returns an error wrapping ErrBudgetExceeded, naming the limit,
// when a run that has made calls model calls and used tokens tokens at
// costUSD dollars has reached one of b's bounds; nil otherwise.
func (b Budget) Check(calls, tokens int, costUSD float64) error {
	switch {
	case b.MaxModelCalls > 0 && calls >= b.MaxModelCalls:
		return fmt.Errorf("%w: %d model calls made, limits.max_model_calls is %d", ErrBudgetExceeded, calls, b.MaxModelCalls)
	case b.MaxTokens > 0 && tokens >= b.MaxTokens:
		return fmt.Errorf("%w: %d tokens used, limits.max_tokens is %d", ErrBudgetExceeded, tokens, b.MaxTokens)
	case b.MaxCostUSD > 0 && costUSD >= b.MaxCostUSD:
		return fmt.Errorf("%w: $%.4f spent, limits.max_cost_usd is $%.4f", ErrBudgetExceeded, costUSD, b.MaxCostUSD)
	}
	return nil
}
