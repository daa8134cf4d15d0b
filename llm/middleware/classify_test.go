package middleware

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/tmc/langchaingo/llms"
)

func TestPermanentErrorsMatchErrPermanentAndThemselves(t *testing.T) {
	a, b := Permanent("a"), Permanent("a")
	assert.ErrorIs(t, fmt.Errorf("x: %w", a), ErrPermanent)
	assert.ErrorIs(t, fmt.Errorf("x: %w", a), a)
	assert.NotErrorIs(t, a, b, "each is a sentinel of its own")
	assert.Equal(t, "a", a.Error())
	assert.NotErrorIs(t, errors.New("a"), ErrPermanent)
}

func TestClassify(t *testing.T) {
	plain := errors.New("boom")
	tests := []struct {
		name       string
		err        error
		want       Class
		wantRetryA time.Duration
	}{
		{"nil", nil, Fatal, 0},
		{"per-call timeout", fmt.Errorf("%w after 1s: %w", ErrCallTimeout, context.DeadlineExceeded), Retryable, 0},
		{"caller canceled", fmt.Errorf("x: %w", context.Canceled), Canceled, 0},
		{"caller deadline", context.DeadlineExceeded, Canceled, 0},
		{"openai sanitised cancel", errors.New("request cancelled"), Canceled, 0},
		{"openai sanitised deadline", errors.New("request timeout: API call exceeded deadline"), Canceled, 0},
		{"llms canceled code", llms.NewError(llms.ErrCodeCanceled, "openai", "x"), Canceled, 0},
		{"openai 429 text", errors.New("API returned unexpected status code: 429: Rate limit reached for gpt-4o"), Retryable, 0},
		{"openai 429 quota text", errors.New("API returned unexpected status code: 429: You exceeded your current quota, please check your plan and billing details."), Fatal, 0},
		{"anthropic 529 text", errors.New("anthropic: failed to create message: API returned unexpected status code: 529: Overloaded"), Retryable, 0},
		{"500 text", errors.New("API returned unexpected status code: 500"), Retryable, 0},
		{"408 text", errors.New("API returned unexpected status code: 408"), Retryable, 0},
		{"400 text", errors.New("API returned unexpected status code: 400: Invalid 'messages'"), Fatal, 0},
		{"401 text", errors.New("API returned unexpected status code: 401: Incorrect API key"), Fatal, 0},
		{"404 text", errors.New("API returned unexpected status code: 404: model not found"), Fatal, 0},
		{"googleapi 503", errors.New("googleapi: Error 503: The model is overloaded."), Retryable, 0},
		{"observed 429 with Retry-After", &HTTPError{StatusCode: 429, RetryAfter: 2 * time.Second, Err: plain}, Retryable, 2 * time.Second},
		{"observed 502", &HTTPError{StatusCode: 502, Err: plain}, Retryable, 0},
		{"observed 403", &HTTPError{StatusCode: 403, Err: plain}, Fatal, 0},
		{"observed 200 with broken body", &HTTPError{StatusCode: 200, Transport: io.ErrUnexpectedEOF, Err: plain}, Retryable, 0},
		{"observed status beats message", &HTTPError{StatusCode: 400, Err: errors.New("status code: 503")}, Fatal, 0},
		{"llms rate limit", llms.NewError(llms.ErrCodeRateLimit, "openai", "slow down"), Retryable, 0},
		{"llms unavailable", llms.NewError(llms.ErrCodeProviderUnavailable, "anthropic", "overloaded"), Retryable, 0},
		{"llms auth", llms.NewError(llms.ErrCodeAuthentication, "openai", "bad key"), Fatal, 0},
		{"openai sanitised network error", errors.New("network error: failed to reach API server"), Retryable, 0},
		{"wrapped EOF", fmt.Errorf("send request: %w", &url.Error{Op: "Post", URL: "http://x", Err: io.EOF}), Retryable, 0},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, Fatal, 0},
		{"refused behind openai's text", &HTTPError{Err: errors.New("network error: failed to reach API server"),
			Transport: &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}}, Fatal, 0},
		{"other dial failure", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.EHOSTUNREACH}, Fatal, 0},
		{"dial timeout", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, Retryable, 0},
		{"reset after the dial", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, Retryable, 0},
		{"unreachable sentinel", fmt.Errorf("ollama: %w", ErrUnreachable), Fatal, 0},
		{"connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), Retryable, 0},
		{"reset text only", errors.New("read tcp 1.2.3.4:5: connection reset by peer"), Retryable, 0},
		{"no such host", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}}, Fatal, 0},
		{"unknown", plain, Fatal, 0},
		{"permanent, whatever its text", fmt.Errorf("%w: prompt: why connection refused, status code: 503?", Permanent("offline: no reply")), Fatal, 0},
		{"permanent beats a per-call timeout", fmt.Errorf("%w: %w", Permanent("offline"), ErrCallTimeout), Fatal, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ra := Classify(tt.err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantRetryA, ra)
		})
	}
}

func TestClassString(t *testing.T) {
	assert.Equal(t, "fatal", Fatal.String())
	assert.Equal(t, "retryable", Retryable.String())
	assert.Equal(t, "canceled", Canceled.String())
	assert.Equal(t, "class(7)", Class(7).String())
}

func TestHTTPErrorMessageAndUnwrap(t *testing.T) {
	inner := errors.New("network error: failed to reach API server")
	e := &HTTPError{StatusCode: 0, Transport: syscall.ECONNRESET, Err: inner}
	assert.ErrorIs(t, e, inner)
	assert.ErrorIs(t, e, syscall.ECONNRESET)
	assert.Contains(t, e.Error(), "no HTTP response")
	assert.Contains(t, e.Error(), "connection reset")

	e = &HTTPError{StatusCode: 429, RetryAfter: 3 * time.Second, Err: errors.New("API returned unexpected status code: 429")}
	assert.Equal(t, "API returned unexpected status code: 429 (HTTP 429, retry after 3s)", e.Error())
}

// timeoutErr is a net.Error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestDialFailureNamesWhatFailed(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		reason string
		ok     bool
	}{
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, "connection refused", true},
		{"unknown host", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}}, "unknown host", true},
		{"unreachable network", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ENETUNREACH}, "dial failed", true},
		{"sentinel", fmt.Errorf("x: %w", ErrUnreachable), "unreachable", true},
		{"transport of an HTTPError", &HTTPError{Err: errors.New("network error"), Transport: syscall.ECONNREFUSED}, "connection refused", true},
		{"dial timeout", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, "", false},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), "", false},
		{"text only", errors.New("dial tcp: connection refused"), "", false},
		{"nil", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, ok := DialFailure(tt.err)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.reason, reason)
		})
	}
}

func TestHTTPErrorOfAnUnreachableServerAddsNothing(t *testing.T) {
	inner := fmt.Errorf("ollama: no server answers at localhost:11434 (connection refused): start Ollama: %w", ErrUnreachable)
	e := &HTTPError{Transport: syscall.ECONNREFUSED, Err: inner}
	assert.Equal(t, inner.Error(), e.Error(), "the model error says it all")
	assert.ErrorIs(t, e, ErrUnreachable)
}
