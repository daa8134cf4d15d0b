package middleware

import (
	"context"
	"sync/atomic"
)

// AttemptCounter counts the provider attempts made by the retry middleware
// for calls whose context carries it: every call of the wrapped model,
// failed ones included. Create one per model call with WithAttemptCounter
// and read it when the call returns. It is safe for concurrent use; calls
// that share a context share its counts.
//
// Only the retry middleware (NewRetry, and so Apply) counts. A call that
// does not pass through it leaves the counter at 0; count such a call as
// one attempt.
type AttemptCounter struct {
	attempts atomic.Int64
	failed   atomic.Int64
}

// WithAttemptCounter returns a child of ctx carrying a new AttemptCounter,
// and the counter.
func WithAttemptCounter(ctx context.Context) (context.Context, *AttemptCounter) {
	c := &AttemptCounter{}
	return withValues(ctx, func(v *callValues) { v.counter = c }), c
}

// AttemptCounterFrom returns the AttemptCounter carried by ctx, or nil.
func AttemptCounterFrom(ctx context.Context) *AttemptCounter {
	return valuesOf(ctx).counter
}

// Attempts returns how many attempts were made: each call of the model
// wrapped by the retry middleware. It is 0 for a nil counter.
func (c *AttemptCounter) Attempts() int {
	if c == nil {
		return 0
	}
	return int(c.attempts.Load())
}

// Failed returns how many of those attempts returned an error, whether or
// not they were retried. It is 0 for a nil counter.
func (c *AttemptCounter) Failed() int {
	if c == nil {
		return 0
	}
	return int(c.failed.Load())
}

func (c *AttemptCounter) add() {
	if c != nil {
		c.attempts.Add(1)
	}
}

func (c *AttemptCounter) fail() {
	if c != nil {
		c.failed.Add(1)
	}
}
