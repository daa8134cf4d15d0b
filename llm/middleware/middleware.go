// Package middleware wraps langchaingo models (llms.Model) with retry,
// per-call timeouts, rate limiting, reply size limits and streaming,
// configured from YAML.
//
// A Middleware turns one model into another; Chain composes several, the
// first being the outermost. The usual stack, built by Apply from a Config,
// is
//
//	ReplyLimit -> Retry -> RateLimit -> Timeout -> [recorder] -> provider model
//
// so that every attempt is rate limited and timed separately and the
// concurrency slot is released while a retry waits. The reply limit is
// outermost: it cuts the one reply the caller gets, after the retries, and
// it sits outside anything wrapped around the provider itself, such as a
// cassette recorder (the planner's recorder wraps the provider directly,
// inside this stack), so recordings keep the raw reply and a replayed reply
// is cut exactly like the recorded one was. It applies to every model the
// stack wraps, offline ones included.
//
// # Bounded, visible waits
//
// No wait of the retry middleware is unbounded or silent: a Retry-After
// beyond RetryConfig.MaxRetryAfter, or any wait that would reach the
// deadline of the caller's context, fails the call at once
// (ErrRetryAfterTooLong, ErrNoTimeToRetry); each wait that does happen is
// announced first to the WithOnRetry hook. Config.Timeout bounds each
// attempt. WithAttemptCounter counts the attempts of one call, failed ones
// included.
//
// # How provider errors surface
//
// langchaingo v0.1.14's openai and anthropic clients return non-200
// responses as plain errors whose text is "API returned unexpected status
// code: NNN: <message>"; no typed error carries the status or the response
// headers, and the llms.Error mappers (openai.MapError, anthropic.MapError)
// are not applied on the GenerateContent path. Transport failures are worse
// for openai: its client replaces every *url.Error with a fixed string such
// as "network error: failed to reach API server", "request timeout: API call
// exceeded deadline" or "request cancelled", dropping the cause (and the
// context error) entirely. The anthropic client wraps the *url.Error with %w,
// so causes survive there.
//
// Classify therefore works from two sources. Without help it parses the
// status code out of the message and recognises the fixed transport strings;
// Retry-After is then unknown. With an ObservingTransport installed in the
// provider's HTTP client (see NewObservingClient), each attempt carries an
// Observation in its context; the transport records the status code, the
// Retry-After header and the raw transport error there, the retry middleware
// attaches them to the attempt's error as an *HTTPError, and Classify reads
// them from it. This works for every provider that builds its requests with
// http.NewRequestWithContext from the caller's context, which all
// langchaingo HTTP providers do.
package middleware

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// Middleware wraps a model in another model.
type Middleware func(llms.Model) llms.Model

// Chain wraps m in mws. The first middleware is the outermost: Chain(m, a, b)
// is a(b(m)). Nil middlewares are skipped.
func Chain(m llms.Model, mws ...Middleware) llms.Model {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			m = mws[i](m)
		}
	}
	return m
}

// GenerateFunc has the signature of llms.Model.GenerateContent.
type GenerateFunc func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error)

// Wrap returns a model whose GenerateContent is gen and whose Call goes
// through gen too (via llms.GenerateFromSinglePrompt). The result also
// implements llms.ReasoningModel, reporting inner's SupportsReasoning (false
// when inner does not implement it).
func Wrap(inner llms.Model, gen GenerateFunc) llms.Model {
	return &wrapped{inner: inner, gen: gen}
}

type wrapped struct {
	inner llms.Model
	gen   GenerateFunc
}

func (w *wrapped) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	return w.gen(ctx, msgs, opts...)
}

func (w *wrapped) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, w, prompt, opts...)
}

// SupportsReasoning implements llms.ReasoningModel.
func (w *wrapped) SupportsReasoning() bool {
	rm, ok := w.inner.(llms.ReasoningModel)
	return ok && rm.SupportsReasoning()
}

// Config is the YAML-friendly configuration of the standard middleware stack.
type Config struct {
	// Retry configures retries of transient failures.
	Retry RetryConfig `mapstructure:"retry" yaml:"retry" json:"retry"`
	// Timeout bounds each attempt (not the whole call with its retries); a
	// timed-out attempt fails with ErrCallTimeout and is retried. Written as
	// a duration string such as "30s" in YAML. Default 0: no per-attempt
	// timeout; give network models DefaultCallTimeout (2m) or more.
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout" json:"timeout"`
	// RateLimit limits request rate and concurrency.
	RateLimit RateLimitConfig `mapstructure:"rate_limit" yaml:"rate_limit" json:"rate_limit"`
	// MaxReplyBytes caps each text field of a reply (see NewReplyLimit).
	// Default 0: no cap. (The planner sets it from llm.max_reply_bytes,
	// whose default is 256 KiB.)
	MaxReplyBytes int `mapstructure:"max_reply_bytes" yaml:"max_reply_bytes" json:"max_reply_bytes"`
}

// DefaultConfig returns the configuration with every default filled in.
func DefaultConfig() Config {
	return Config{Retry: RetryConfig{}.withDefaults(), RateLimit: RateLimitConfig{}.withDefaults()}
}

// Middlewares returns the stack described by c, outermost first: reply
// limit, retry, rate limit, per-attempt timeout. Parts that are disabled by
// c are left out. opts (sleep function, clock, jitter source, retry and
// truncation hooks) apply to all.
func (c Config) Middlewares(opts ...Option) []Middleware {
	var mws []Middleware
	if c.MaxReplyBytes > 0 {
		mws = append(mws, NewReplyLimit(c.MaxReplyBytes, opts...))
	}
	mws = append(mws, NewRetry(c.Retry, opts...))
	if c.RateLimit.RequestsPerSecond > 0 || c.RateLimit.MaxConcurrent > 0 {
		mws = append(mws, NewRateLimit(c.RateLimit, opts...))
	}
	if c.Timeout > 0 {
		mws = append(mws, NewTimeout(c.Timeout))
	}
	return mws
}

// Apply wraps m in the stack described by cfg. Rate limits are not shared
// with other calls of Apply; to share one budget between several models,
// build the middlewares once with cfg.Middlewares and Chain each model.
func Apply(m llms.Model, cfg Config, opts ...Option) llms.Model {
	return Chain(m, cfg.Middlewares(opts...)...)
}

// Option adjusts the behaviour of the middlewares, mainly for tests.
type Option func(*options)

type options struct {
	sleep   func(ctx context.Context, d time.Duration) error
	now     func() time.Time
	random  func() float64
	onRetry func(ctx context.Context, ev RetryEvent)
	// onTruncate is called by the reply limit for each field it cuts.
	onTruncate func(ctx context.Context, ev TruncateEvent)
}

func buildOptions(opts []Option) options {
	o := options{sleep: Sleep, now: time.Now, random: rand.Float64}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithSleep replaces the function used to wait between retries and for the
// rate limiter. It must return ctx.Err() if ctx ends first. Default: a timer.
func WithSleep(fn func(ctx context.Context, d time.Duration) error) Option {
	return func(o *options) {
		if fn != nil {
			o.sleep = fn
		}
	}
}

// WithClock replaces the clock read by the rate limiter and by the retry
// middleware when it compares a wait with the context's deadline. Default:
// time.Now.
// (ObservingTransport has its own Now field for HTTP-date Retry-After.)
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.now = now
		}
	}
}

// WithRandom replaces the source of jitter, a function returning values in
// [0, 1). 0.5 yields no jitter. Default: math/rand/v2.Float64.
func WithRandom(fn func() float64) Option {
	return func(o *options) {
		if fn != nil {
			o.random = fn
		}
	}
}

// WithOnRetry registers a hook called before each retry wait, for logging
// and tracing; ev.String() is a ready-made progress line. It is not called
// when the retry middleware gives up instead of waiting.
func WithOnRetry(fn func(ctx context.Context, ev RetryEvent)) Option {
	return func(o *options) { o.onRetry = fn }
}

// WithOnTruncate registers a hook called by the reply limit (NewReplyLimit)
// for each reply field it cuts, for logging and tracing.
func WithOnTruncate(fn func(ctx context.Context, ev TruncateEvent)) Option {
	return func(o *options) { o.onTruncate = fn }
}

// Sleep waits for d or until ctx is done, whichever comes first, and
// returns ctx's error if it ended the wait (or was already done). A
// non-positive d does not wait. It is the default sleep of the retry
// middleware and of other code that waits on a context.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
