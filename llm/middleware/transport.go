package middleware

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/httputil"
)

// Observation collects what an ObservingTransport saw while serving the
// requests made with one context: the outcome of the last HTTP exchange. It
// is safe for concurrent use.
type Observation struct {
	mu         sync.Mutex
	requests   int
	status     int
	retryAfter time.Duration
	transport  error
}

// WithObservation returns a child of ctx carrying a new Observation. The
// retry middleware does this for every attempt; call it yourself to observe
// calls made without the retry middleware.
func WithObservation(ctx context.Context) (context.Context, *Observation) {
	obs := &Observation{}
	return withValues(ctx, func(v *callValues) { v.obs = obs }), obs
}

// ObservationFrom returns the Observation carried by ctx, or nil.
func ObservationFrom(ctx context.Context) *Observation {
	return valuesOf(ctx).obs
}

// Requests returns how many HTTP requests were sent.
func (o *Observation) Requests() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.requests
}

// StatusCode returns the status of the last response, 0 if none arrived.
func (o *Observation) StatusCode() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.status
}

// RetryAfter returns the wait requested by the last response's Retry-After
// (or retry-after-ms) header, 0 if absent.
func (o *Observation) RetryAfter() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.retryAfter
}

// TransportErr returns the error of the last round trip or of reading its
// response body (other than io.EOF), nil if none.
func (o *Observation) TransportErr() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.transport
}

// Annotate returns err wrapped in an *HTTPError holding the observed status,
// Retry-After and transport error, or err unchanged when err is nil, o is
// nil or no request was observed.
func (o *Observation) Annotate(err error) error {
	if err == nil || o == nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.requests == 0 {
		return err
	}
	return &HTTPError{StatusCode: o.status, RetryAfter: o.retryAfter, Transport: o.transport, Err: err}
}

func (o *Observation) recordRequest() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests++
	o.status, o.retryAfter, o.transport = 0, 0, nil
}

func (o *Observation) recordResponse(status int, retryAfter time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.status, o.retryAfter, o.transport = status, retryAfter, err
}

func (o *Observation) recordBodyErr(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.transport == nil {
		o.transport = err
	}
}

// ObservingTransport is an http.RoundTripper that records, into the
// Observation carried by each request's context (see WithObservation), the
// response status, the Retry-After header and any transport or body-read
// error. Requests without an Observation pass through untouched. It adds no
// headers and never retries by itself.
type ObservingTransport struct {
	// Base performs the requests. Nil means langchaingo's
	// httputil.DefaultTransport, which adds langchaingo's User-Agent.
	Base http.RoundTripper
	// Now converts an HTTP-date Retry-After into a delay. Nil means time.Now.
	Now func() time.Time
}

// RoundTrip implements http.RoundTripper.
func (t *ObservingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = httputil.DefaultTransport
	}
	obs := ObservationFrom(req.Context())
	if obs == nil {
		return base.RoundTrip(req)
	}
	obs.recordRequest()
	resp, err := base.RoundTrip(req)
	if err != nil {
		obs.recordResponse(0, 0, err)
		return nil, err
	}
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	obs.recordResponse(resp.StatusCode, retryAfterFromHeader(resp.Header, now()), nil)
	resp.Body = &observedBody{ReadCloser: resp.Body, obs: obs}
	return resp, nil
}

// NewObservingClient returns a copy of base (nil means langchaingo's
// httputil.DefaultClient) whose transport is wrapped in an
// ObservingTransport. Pass it to the provider, for example
// openai.WithHTTPClient or anthropic.WithHTTPClient.
func NewObservingClient(base *http.Client) *http.Client {
	if base == nil {
		base = httputil.DefaultClient
	}
	c := *base
	c.Transport = &ObservingTransport{Base: base.Transport}
	return &c
}

// observedBody records body read errors, such as a connection reset while
// a response streams.
type observedBody struct {
	io.ReadCloser
	obs *Observation
}

func (b *observedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.obs.recordBodyErr(err)
	}
	return n, err
}

// retryAfterFromHeader reads "retry-after-ms" (whole milliseconds, sent by
// Azure OpenAI) or "Retry-After" (delay seconds or an HTTP date, RFC 9110 10.2.3).
// Missing, malformed and past values give 0.
func retryAfterFromHeader(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
			return time.Duration(min(ms, maxRetryAfter.Milliseconds())) * time.Millisecond
		}
	}
	return ParseRetryAfter(h.Get("Retry-After"), now)
}

// maxRetryAfter caps absurd header values so that they cannot overflow a
// time.Duration; the caller's context still bounds the real wait.
const maxRetryAfter = 24 * time.Hour

// ParseRetryAfter converts a Retry-After header value, either a whole number
// of seconds or an HTTP date, into a delay relative to now. Missing,
// malformed, negative and past values give 0; values are capped at 24 h.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		if d := at.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}
