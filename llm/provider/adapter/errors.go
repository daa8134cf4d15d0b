package adapter

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Sentinel errors. Test for them with errors.Is.
var (
	// ErrUnknownProvider means Config.Provider names no known adapter.
	ErrUnknownProvider = errors.New("unknown LLM provider")
	// ErrMissingKey means the environment variable that should hold the API
	// key is unset or empty. The message names the variable, never a value.
	ErrMissingKey = errors.New("missing API key")
	// ErrUnsupported means the adapter cannot do what the call or the config
	// asks (for example tool calls through the native Ollama adapter).
	ErrUnsupported = errors.New("not supported by this provider adapter")
	// ErrInvalidConfig means a Config field has a value no adapter accepts.
	ErrInvalidConfig = errors.New("invalid provider config")

	// ErrAuth matches a *StatusError with HTTP status 401 or 403: the
	// provider rejected the key.
	ErrAuth = errors.New("provider rejected the credentials")
	// ErrRateLimited matches a *StatusError with HTTP status 429.
	ErrRateLimited = errors.New("provider rate limit reached")
	// ErrServer matches a *StatusError with an HTTP status of 500 or above.
	ErrServer = errors.New("provider server error")
	// ErrBadRequest matches a *StatusError with any other 4xx status.
	ErrBadRequest = errors.New("provider rejected the request")
)

// StatusError reports that the provider answered a model call with a non-2xx
// HTTP status. It matches ErrAuth, ErrRateLimited, ErrServer or ErrBadRequest
// under errors.Is, according to StatusCode. Its text never contains the API
// key.
type StatusError struct {
	// Provider is the adapter name, e.g. "openai".
	Provider string
	// StatusCode is the HTTP status of the last response the adapter got.
	StatusCode int
	// RetryAfter is the delay the provider asked for in a Retry-After header
	// (read by middleware.ParseRetryAfter, so capped at 24 h); zero when it
	// sent none or when the adapter does not expose headers (mistral).
	RetryAfter time.Duration
	// Err is the adapter's own error, with the API key redacted.
	Err error

	keyEnv string
}

// Error describes the status, the adapter's message and, for 401/403, which
// environment variable holds the rejected key.
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: HTTP %d", e.Provider, e.StatusCode)
	if e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden {
		if e.keyEnv != "" {
			fmt.Fprintf(&b, " (check the API key in $%s)", e.keyEnv)
		} else {
			b.WriteString(" (the server wants credentials; set api_key_env)")
		}
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the adapter's (redacted) error.
func (e *StatusError) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel for e's status class.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrAuth:
		return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	case ErrServer:
		return e.StatusCode >= http.StatusInternalServerError
	case ErrBadRequest:
		return e.StatusCode >= http.StatusBadRequest && e.StatusCode < http.StatusInternalServerError &&
			e.StatusCode != http.StatusUnauthorized && e.StatusCode != http.StatusForbidden &&
			e.StatusCode != http.StatusTooManyRequests
	}
	return false
}

// redactedError carries an error whose text contained the API key. It keeps
// errors.Is working against the original chain but does not expose the
// original through Unwrap, so no caller can print the unredacted text.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Is(target error) bool { return errors.Is(e.cause, target) }

// RedactedMark replaces the key wherever it appears in an error message.
const RedactedMark = "[REDACTED]"

// redact returns err unchanged when its text does not contain secret (raw or
// URL-encoded), and a redactedError otherwise.
func redact(err error, secret string) error {
	if err == nil || secret == "" {
		return err
	}
	msg := err.Error()
	out := msg
	for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
		out = strings.ReplaceAll(out, form, RedactedMark)
	}
	if out == msg {
		return err
	}
	return &redactedError{msg: out, cause: err}
}
