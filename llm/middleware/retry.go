package middleware

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// Defaults applied by NewRetry to zero fields of RetryConfig.
const (
	DefaultMaxAttempts = 3
	DefaultBaseDelay   = 500 * time.Millisecond
	DefaultMaxDelay    = 20 * time.Second
	DefaultJitter      = 0.2
	// DefaultMaxRetryAfter is RetryConfig.MaxRetryAfter when zero: the
	// longest Retry-After a server may ask for before the retry middleware
	// gives up instead of waiting.
	DefaultMaxRetryAfter = 2 * time.Minute
)

// ErrRetriesExhausted is matched (errors.Is) by the *RetryError returned when
// every attempt failed with a retryable error.
var ErrRetriesExhausted = errors.New("retries exhausted")

// ErrRetryAfterTooLong is matched (errors.Is) by the error returned at once,
// without waiting, when a server's Retry-After exceeds
// RetryConfig.MaxRetryAfter. The error also wraps the failed attempt's error.
var ErrRetryAfterTooLong = errors.New("retry-after too long")

// ErrNoTimeToRetry is matched (errors.Is) by the error returned at once,
// without waiting, when the wait before the next attempt (backoff or a
// server's Retry-After) would reach the deadline of the caller's context, so
// that the next attempt could not run. The error also wraps the failed
// attempt's error.
var ErrNoTimeToRetry = errors.New("no time left to retry")

// RetryConfig configures NewRetry.
type RetryConfig struct {
	// MaxAttempts is the total number of attempts, the first included; 1
	// disables retrying. Default 3.
	MaxAttempts int `mapstructure:"max_attempts" yaml:"max_attempts" json:"max_attempts"`
	// BaseDelay is the wait before the second attempt; each later wait
	// doubles. Default 500ms.
	BaseDelay time.Duration `mapstructure:"base_delay" yaml:"base_delay" json:"base_delay"`
	// MaxDelay caps the computed backoff (not a server's Retry-After, which
	// is honoured in full up to MaxRetryAfter). Default 20s.
	MaxDelay time.Duration `mapstructure:"max_delay" yaml:"max_delay" json:"max_delay"`
	// MaxRetryAfter is the longest Retry-After the middleware waits for. A
	// server asking for longer fails the call at once with an error matching
	// ErrRetryAfterTooLong, whether or not the caller's context has a
	// deadline. 0 selects DefaultMaxRetryAfter (2m); a negative value lifts
	// the cap (the context's deadline still applies, see NewRetry).
	MaxRetryAfter time.Duration `mapstructure:"max_retry_after" yaml:"max_retry_after" json:"max_retry_after"`
	// Jitter is the fraction by which each backoff is randomly stretched or
	// shrunk: 0.2 means +-20 %. 0 selects the default 0.2; a negative value
	// disables jitter. Values above 1 are treated as 1.
	Jitter float64 `mapstructure:"jitter" yaml:"jitter" json:"jitter"`
}

func (c RetryConfig) withDefaults() RetryConfig {
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.BaseDelay <= 0 {
		c.BaseDelay = DefaultBaseDelay
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = DefaultMaxDelay
	}
	if c.MaxDelay < c.BaseDelay {
		c.MaxDelay = c.BaseDelay
	}
	switch {
	case c.Jitter == 0:
		c.Jitter = DefaultJitter
	case c.Jitter < 0:
		c.Jitter = 0
	case c.Jitter > 1:
		c.Jitter = 1
	}
	return c
}

// retryAfterCap returns the effective MaxRetryAfter; 0 means no cap.
func (c RetryConfig) retryAfterCap() time.Duration {
	switch {
	case c.MaxRetryAfter == 0:
		return DefaultMaxRetryAfter
	case c.MaxRetryAfter < 0:
		return 0
	}
	return c.MaxRetryAfter
}

// Backoff returns the wait before attempt+1 after attempt (1-based) failed,
// before jitter and Retry-After: BaseDelay * 2^(attempt-1), capped at
// MaxDelay. Zero fields take their defaults.
func (c RetryConfig) Backoff(attempt int) time.Duration {
	c = c.withDefaults()
	if attempt < 1 {
		attempt = 1
	}
	d := float64(c.BaseDelay) * math.Pow(2, float64(attempt-1))
	if d >= float64(c.MaxDelay) {
		return c.MaxDelay
	}
	return time.Duration(d)
}

// RetryError is returned when the last allowed attempt failed with a
// retryable error. It matches ErrRetriesExhausted and unwraps to the last
// attempt's error.
type RetryError struct {
	// Attempts is the number of attempts made.
	Attempts int
	// Err is the error of the last attempt.
	Err error
}

// Error names the attempt count, what to do, and the last error. When the
// last attempt got no HTTP response at all (the server closed or reset the
// connection, or did not answer in time), the server is what to check.
func (e *RetryError) Error() string {
	hint := "raise retry.max_attempts or check the provider's status"
	var he *HTTPError
	if errors.As(e.Err, &he) && he.StatusCode == 0 {
		hint = "no attempt got an HTTP response: check that the server at llm.base_url is up and speaks HTTP, or raise retry.max_attempts"
	}
	return fmt.Sprintf("gave up after %d attempts (%s; %s): %v", e.Attempts, ErrRetriesExhausted, hint, e.Err)
}

// Unwrap returns ErrRetriesExhausted and the last attempt's error.
func (e *RetryError) Unwrap() []error { return []error{ErrRetriesExhausted, e.Err} }

// RetryEvent describes a failed attempt that is about to be retried.
type RetryEvent struct {
	// Attempt is the 1-based number of the attempt that failed.
	Attempt int
	// MaxAttempts is the configured total number of attempts.
	MaxAttempts int
	// Err is its error, annotated with any HTTP observation.
	Err error
	// Delay is the wait before the next attempt.
	Delay time.Duration
	// RetryAfter is the wait the server asked for, 0 if none.
	RetryAfter time.Duration
	// StatusCode is the HTTP status of the failed attempt, 0 when unknown
	// (see FailureReason).
	StatusCode int
	// Reason is a short description of the failure: "HTTP 429", "timeout",
	// "connection refused"... (see FailureReason).
	Reason string
}

// String renders the event as one line for people, for example
// "retrying in 30s after HTTP 429 (attempt 1 of 3)", where attempt 1 is the
// one that failed.
func (ev RetryEvent) String() string {
	reason := ev.Reason
	if reason == "" {
		_, reason = FailureReason(ev.Err)
	}
	return fmt.Sprintf("retrying in %s after %s (attempt %d of %d)", roundDuration(ev.Delay), reason, ev.Attempt, ev.MaxAttempts)
}

// NewRetry returns a middleware that retries GenerateContent calls failing
// with a Retryable error (see Classify), waiting an exponential backoff with
// jitter, or the server's Retry-After when that is longer. Fatal errors are
// returned unchanged after one attempt; when the caller's context ends, its
// error is returned (wrapping the attempt's error) and nothing is retried.
// An error that Classify reports as Canceled while the caller's context is
// still live came from an inner deadline (http.Client.Timeout, a provider's
// own timer) and is retried.
// When every attempt fails the result is a *RetryError.
//
// No wait is unbounded: before waiting, the call fails at once, with an
// error saying why, when the server's Retry-After exceeds
// cfg.MaxRetryAfter (ErrRetryAfterTooLong) or when the wait would reach the
// deadline of the caller's context (ErrNoTimeToRetry). Both errors wrap the
// attempt's error too, so errors.Is, errors.As and Classify still see it.
// The hook of WithOnRetry runs only for waits that do happen.
//
// Every attempt (each call of the wrapped model) is counted in the
// AttemptCounter carried by ctx, if any (see WithAttemptCounter).
//
// Each attempt runs with a fresh Observation in its context, so an
// ObservingTransport in the provider's HTTP client can report the status
// code and Retry-After; the attempt's error is then an *HTTPError.
//
// A call that has already passed output to its streaming function
// (llms.WithStreamingFunc or WithStreamingReasoningFunc) is not retried,
// since the sink would see the output twice, unless its context says the
// sink expects that (WithRestartableStream).
func NewRetry(cfg RetryConfig, opts ...Option) Middleware {
	cfg = cfg.withDefaults()
	o := buildOptions(opts)
	return func(next llms.Model) llms.Model {
		return Wrap(next, func(ctx context.Context, msgs []llms.MessageContent, callOpts ...llms.CallOption) (*llms.ContentResponse, error) {
			return retryLoop(ctx, cfg, o, next, msgs, callOpts)
		})
	}
}

func retryLoop(ctx context.Context, cfg RetryConfig, o options, next llms.Model,
	msgs []llms.MessageContent, callOpts []llms.CallOption,
) (*llms.ContentResponse, error) {
	callOpts, streamed := trackStreaming(callOpts)
	counter := AttemptCounterFrom(ctx)
	for attempt := 1; ; attempt++ {
		actx, obs := WithObservation(ctx)
		counter.add()
		resp, err := next.GenerateContent(actx, msgs, callOpts...)
		if err == nil {
			return resp, nil
		}
		counter.fail()
		err = obs.Annotate(err)
		if cerr := ctx.Err(); cerr != nil {
			return nil, withCause(cerr, err)
		}
		class, retryAfter := Classify(err)
		if class == Canceled {
			// The caller's context is live, so the deadline or cancellation
			// came from inside: http.Client.Timeout or a provider's own timer.
			class = Retryable
		}
		if class != Retryable {
			return nil, err
		}
		if streamed != nil && streamed.Load() && !restartable(ctx) {
			return nil, fmt.Errorf("middleware: not retrying a call whose output was already partly streamed: %w", err)
		}
		if attempt >= cfg.MaxAttempts {
			return nil, &RetryError{Attempts: attempt, Err: err}
		}
		delay := jittered(cfg.Backoff(attempt), cfg.Jitter, o.random())
		delay = max(delay, retryAfter)
		status, reason := FailureReason(err)
		if werr := checkWait(ctx, cfg, o, err, reason, delay, retryAfter); werr != nil {
			return nil, werr
		}
		if o.onRetry != nil {
			o.onRetry(ctx, RetryEvent{Attempt: attempt, MaxAttempts: cfg.MaxAttempts, Err: err, Delay: delay,
				RetryAfter: retryAfter, StatusCode: status, Reason: reason})
		}
		if serr := o.sleep(ctx, delay); serr != nil {
			return nil, withCause(serr, err)
		}
	}
}

// checkWait returns an error matching ErrNoTimeToRetry when waiting delay
// would reach ctx's deadline, or one matching ErrRetryAfterTooLong when the
// server's retryAfter exceeds the configured cap; nil when the wait may
// proceed. Both wrap err, the failed attempt's error, which reason
// describes (FailureReason). The deadline is checked first: it is the more
// precise reason when both apply.
func checkWait(ctx context.Context, cfg RetryConfig, o options, err error, reason string, delay, retryAfter time.Duration) error {
	wait := fmt.Sprintf("the next attempt is due in %s (after %s)", roundDuration(delay), reason)
	if retryAfter > 0 && retryAfter >= delay {
		wait = fmt.Sprintf("the server asked to retry after %s (%s)", roundDuration(retryAfter), reason)
	}
	if deadline, ok := ctx.Deadline(); ok {
		if left := deadline.Sub(o.now()); delay >= left {
			return fmt.Errorf("middleware: %s but the call's deadline is in %s; not waiting (%w): %w",
				wait, roundDuration(max(left, 0)), ErrNoTimeToRetry, err)
		}
	}
	if limit := cfg.retryAfterCap(); limit > 0 && retryAfter > limit {
		return fmt.Errorf("middleware: %s, longer than the %s allowed (retry.max_retry_after); not waiting (%w): %w",
			wait, roundDuration(limit), ErrRetryAfterTooLong, err)
	}
	return nil
}

// roundDuration rounds d for messages: to the second from a minute up, to
// a tenth of a second from a second up, else to the millisecond.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	default:
		return d.Round(time.Millisecond)
	}
}

// withCause returns cerr (a context error) wrapping err as well, unless err
// already matches it.
func withCause(cerr, err error) error {
	if errors.Is(err, cerr) {
		return err
	}
	return fmt.Errorf("%w (last attempt: %w)", cerr, err)
}

// jittered scales d by a factor in [1-j, 1+j) chosen by r in [0, 1).
func jittered(d time.Duration, j, r float64) time.Duration {
	if j <= 0 {
		return d
	}
	f := 1 + j*(2*r-1)
	return time.Duration(float64(d) * max(f, 0))
}

// trackStreaming wraps any streaming functions in opts so that the retry
// loop knows whether output has reached them. It returns opts unchanged and
// a nil flag when there are none.
func trackStreaming(opts []llms.CallOption) ([]llms.CallOption, *atomic.Bool) {
	var co llms.CallOptions
	for _, opt := range opts {
		opt(&co)
	}
	if co.StreamingFunc == nil && co.StreamingReasoningFunc == nil {
		return opts, nil
	}
	streamed := &atomic.Bool{}
	out := append([]llms.CallOption(nil), opts...)
	if fn := co.StreamingFunc; fn != nil {
		out = append(out, llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
			if len(chunk) > 0 {
				streamed.Store(true)
			}
			return fn(ctx, chunk)
		}))
	}
	if fn := co.StreamingReasoningFunc; fn != nil {
		out = append(out, llms.WithStreamingReasoningFunc(func(ctx context.Context, reasoning, chunk []byte) error {
			if len(reasoning) > 0 || len(chunk) > 0 {
				streamed.Store(true)
			}
			return fn(ctx, reasoning, chunk)
		}))
	}
	return out, streamed
}

// WithRestartableStream returns ctx whose calls the retry middleware
// retries even after part of their output reached the streaming function:
// the function tells the attempts apart itself (the AttemptCounter in ctx
// says which attempt a chunk belongs to), so an attempt that fails half
// way is streamed again from its start. Default: a partly streamed call is
// not retried.
func WithRestartableStream(ctx context.Context) context.Context {
	return withValues(ctx, func(v *callValues) { v.restartable = true })
}

func restartable(ctx context.Context) bool {
	return valuesOf(ctx).restartable
}
