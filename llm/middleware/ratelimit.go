package middleware

import (
	"context"
	"fmt"
	"math"

	"github.com/tmc/langchaingo/llms"
	"golang.org/x/time/rate"
)

// RateLimitConfig configures NewRateLimit.
type RateLimitConfig struct {
	// RequestsPerSecond is the sustained request rate (it may be below 1,
	// e.g. 0.5 for one request every two seconds). Default 0: unlimited.
	RequestsPerSecond float64 `mapstructure:"requests_per_second" yaml:"requests_per_second" json:"requests_per_second"`
	// Burst is how many requests may start at once before the rate applies.
	// Default (0): 1, which spaces requests evenly.
	Burst int `mapstructure:"burst" yaml:"burst" json:"burst"`
	// MaxConcurrent caps the calls in flight at once. Default 0: unlimited.
	MaxConcurrent int `mapstructure:"max_concurrent" yaml:"max_concurrent" json:"max_concurrent"`
}

func (c RateLimitConfig) withDefaults() RateLimitConfig {
	if c.Burst <= 0 {
		c.Burst = 1
	}
	if c.RequestsPerSecond < 0 || math.IsNaN(c.RequestsPerSecond) {
		c.RequestsPerSecond = 0
	}
	if c.MaxConcurrent < 0 {
		c.MaxConcurrent = 0
	}
	return c
}

// NewRateLimit returns a middleware that makes each call first take one of
// MaxConcurrent slots, then wait for the token-bucket limiter
// (golang.org/x/time/rate), and release the slot when the call returns.
// Waiting ends early, with the context's error, when ctx ends.
//
// The limiter and the slots belong to the returned Middleware: every model
// wrapped by it shares one budget. Use WithClock and WithSleep to drive the
// limiter from a fake clock in tests.
func NewRateLimit(cfg RateLimitConfig, opts ...Option) Middleware {
	cfg = cfg.withDefaults()
	o := buildOptions(opts)
	var lim *rate.Limiter
	if cfg.RequestsPerSecond > 0 {
		lim = rate.NewLimiter(rate.Limit(cfg.RequestsPerSecond), cfg.Burst)
	}
	var slots chan struct{}
	if cfg.MaxConcurrent > 0 {
		slots = make(chan struct{}, cfg.MaxConcurrent)
	}
	return func(next llms.Model) llms.Model {
		return Wrap(next, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
			if slots != nil {
				select {
				case slots <- struct{}{}:
					defer func() { <-slots }()
				case <-ctx.Done():
					return nil, fmt.Errorf("middleware: waiting for a concurrency slot: %w", ctx.Err())
				}
			}
			if lim != nil {
				if err := waitLimiter(ctx, lim, o); err != nil {
					return nil, err
				}
			}
			return next.GenerateContent(ctx, msgs, opts...)
		})
	}
}

// waitLimiter reserves one token at the injected clock's time and sleeps
// until it is due, giving the token back if ctx ends first.
func waitLimiter(ctx context.Context, lim *rate.Limiter, o options) error {
	now := o.now()
	r := lim.ReserveN(now, 1)
	if !r.OK() {
		return fmt.Errorf("middleware: rate limiter cannot grant a request (burst %d)", lim.Burst())
	}
	if d := r.DelayFrom(now); d > 0 {
		if err := o.sleep(ctx, d); err != nil {
			r.CancelAt(o.now())
			return fmt.Errorf("middleware: waiting for the rate limiter: %w", err)
		}
	}
	return nil
}
