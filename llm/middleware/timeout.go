package middleware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// DefaultCallTimeout is the per-attempt timeout (Config.Timeout) that
// network models should get when none is configured; the planner applies
// it to every real provider whose llm block sets no timeout. Config.Timeout
// itself stays 0 (no timeout) unless set, since offline models need none.
const DefaultCallTimeout = 2 * time.Minute

// ErrCallTimeout is matched (errors.Is) by the error of a call that ran past
// its per-call timeout while the caller's context was still live. Classify
// reports it as Retryable.
var ErrCallTimeout = errors.New("model call timed out")

// NewTimeout returns a middleware that gives each GenerateContent call at
// most d. A call cut short by it fails with an error matching ErrCallTimeout
// and wrapping the model's own error. d <= 0 returns a middleware that
// leaves the model unchanged. The model must honour context cancellation,
// as langchaingo's HTTP providers do.
func NewTimeout(d time.Duration) Middleware {
	if d <= 0 {
		return func(m llms.Model) llms.Model { return m }
	}
	return func(next llms.Model) llms.Model {
		return Wrap(next, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
			cctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			resp, err := next.GenerateContent(cctx, msgs, opts...)
			if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w after %s (raise the timeout setting if the model needs longer): %w", ErrCallTimeout, d, err)
			}
			return resp, err
		})
	}
}
