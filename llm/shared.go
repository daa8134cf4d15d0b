package llm

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
)

// ErrSharedBudgetExceeded means a budget shared by several runs (a whole
// comparison's: planner compare --max-cost-usd ...) is spent and the model
// call was not made. It also matches ErrBudgetExceeded, so a run meets it
// the way it meets its own budget: a ReAct loop stops with failure
// "budget" and its finalizer answers from the work so far; other nodes
// fail the run as "budget".
var ErrSharedBudgetExceeded = errors.New("shared budget exceeded")

// sharedBudgetError is the error of a call refused by a SharedBudget: its
// text names the budget and the limit reached, and it matches both
// ErrSharedBudgetExceeded and ErrBudgetExceeded.
type sharedBudgetError struct{ msg string }

func (e *sharedBudgetError) Error() string { return e.msg }

// Is makes the error match ErrSharedBudgetExceeded and ErrBudgetExceeded.
func (e *sharedBudgetError) Is(target error) bool {
	return target == ErrSharedBudgetExceeded || target == ErrBudgetExceeded
}

// SharedBudget is a budget that many runs, possibly concurrent, draw on
// together: every model call of every run given it (planner.WithSharedBudget)
// adds its usage to one tally, and is refused once the
// tally has reached one of the limits. Model calls are admitted one at a
// time against MaxModelCalls, so concurrent runs never start more than it
// allows; tokens and cost are known only once a reply is in, so calls
// already in flight when those are reached may take the tally a little
// past them. Calls with role "finalize" are always made (and counted), as
// with a run's own Budget: they are how a stopped run still answers. A
// call admitted but failed still counts against MaxModelCalls. Its methods
// are safe for concurrent use; a nil *SharedBudget sets no bound.
type SharedBudget struct {
	limits  Budget
	name    string
	started atomic.Int64 // calls admitted (finalizers excepted)
	calls   atomic.Int64 // calls that returned a reply (finalizers included)
	tokens  atomic.Int64
	cost    atomic.Uint64 // math.Float64bits of the cost in US dollars
}

// NewSharedBudget returns an empty tally bounded by limits. name says what
// the budget is in error messages and reports ("the compare budget");
// empty means "the shared budget".
func NewSharedBudget(limits Budget, name string) *SharedBudget {
	if name == "" {
		name = "the shared budget"
	}
	return &SharedBudget{limits: limits, name: name}
}

// Limits returns the bounds the budget was made with.
func (s *SharedBudget) Limits() Budget {
	if s == nil {
		return Budget{}
	}
	return s.limits
}

// Name returns what the budget is called in messages.
func (s *SharedBudget) Name() string {
	if s == nil {
		return ""
	}
	return s.name
}

// Add counts one model call of prompt and completion tokens that cost
// costUSD. Model.Call calls it for every call that returned a reply.
func (s *SharedBudget) Add(prompt, completion int, costUSD float64) {
	if s == nil {
		return
	}
	s.calls.Add(1)
	s.tokens.Add(int64(prompt + completion))
	if costUSD == 0 {
		return
	}
	for {
		old := s.cost.Load()
		if s.cost.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+costUSD)) {
			return
		}
	}
}

// Spent returns the tally so far: model calls, prompt plus completion
// tokens, and cost in US dollars.
func (s *SharedBudget) Spent() (calls, tokens int, costUSD float64) {
	if s == nil {
		return 0, 0, 0
	}
	return int(s.calls.Load()), int(s.tokens.Load()), math.Float64frombits(s.cost.Load())
}

// Exhausted returns an error matching ErrSharedBudgetExceeded (and
// ErrBudgetExceeded) that names the limit reached, or nil while every
// limit has room left.
func (s *SharedBudget) Exhausted() error {
	if s == nil || s.limits.IsZero() {
		return nil
	}
	calls, tokens, cost := s.Spent()
	if b := s.limits.MaxModelCalls; b > 0 {
		calls = max(calls, min(int(s.started.Load()), b)) // calls under way count too
	}
	b := s.limits
	var what string
	switch {
	case b.MaxModelCalls > 0 && calls >= b.MaxModelCalls:
		what = fmt.Sprintf("%d model calls made, its limit is %d (max model calls)", calls, b.MaxModelCalls)
	case b.MaxTokens > 0 && tokens >= b.MaxTokens:
		what = fmt.Sprintf("%d tokens used, its limit is %d (max tokens)", tokens, b.MaxTokens)
	case b.MaxCostUSD > 0 && cost >= b.MaxCostUSD:
		what = fmt.Sprintf("$%.4f spent, its limit is $%.4f (max cost)", cost, b.MaxCostUSD)
	default:
		return nil
	}
	return &sharedBudgetError{msg: fmt.Sprintf("%s is spent: %s", s.name, what)}
}

// GuardSharedBudget is the guard name of the trace event that reports a
// model call a SharedBudget refused.
const GuardSharedBudget = "shared_budget"

// Admit returns the error of a refused call when s is spent and the
// call's role is not "finalize"; a call it admits takes one of
// MaxModelCalls. The pipeline's budget hook calls it before every model
// call of a run given the budget. A nil s admits every call.
func (s *SharedBudget) Admit(role string) error {
	if s == nil || role == "finalize" {
		return nil
	}
	return s.admit()
}

// admit lets one model call (not a finalizer's) go ahead, or returns the
// error of a spent budget. A call it admits takes one of MaxModelCalls.
func (s *SharedBudget) admit() error {
	if err := s.Exhausted(); err != nil {
		return err
	}
	if s.limits.MaxModelCalls > 0 && s.started.Add(1) > int64(s.limits.MaxModelCalls) {
		// Another call took the last one since Exhausted looked.
		s.started.Add(-1)
		return s.callsSpent()
	}
	return nil
}

// callsSpent is the error of a budget whose model calls are all taken.
func (s *SharedBudget) callsSpent() error {
	calls := max(int(s.calls.Load()), s.limits.MaxModelCalls)
	return &sharedBudgetError{msg: fmt.Sprintf("%s is spent: %d model calls made, its limit is %d (max model calls)", s.name, calls, s.limits.MaxModelCalls)}
}
