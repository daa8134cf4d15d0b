package adapter

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/planner-engine/planner/llm/middleware"
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
	// ErrUnreachable matches an *UnreachableError: no server answered at
	// the provider's address. It is middleware.ErrUnreachable, so the
	// retry middleware fails such a call at once.
	ErrUnreachable = middleware.ErrUnreachable
)

// UnreachableError reports that a model call reached no server: the
// connection to the provider's address was refused, its host is unknown,
// or dialing failed (middleware.DialFailure). It matches ErrUnreachable
// under errors.Is and says what to do: start the server (for ollama,
// `ollama serve`) or point the base URL elsewhere. Its text names the
// server by host and port only, never a path, a query or credentials.
type UnreachableError struct {
	// Provider is the adapter name, e.g. "ollama".
	Provider string
	// Addr is the server's host:port, from the base URL.
	Addr string
	// Reason is what failed: "connection refused", "unknown host" or
	// "dial failed" (middleware.DialFailure).
	Reason string
	// Source is where the base URL came from: "llm.base_url",
	// "$OPENAI_BASE_URL", or "" for the provider's default address.
	Source string
	// Err is the adapter's own error, with the API key redacted.
	Err error
}

// Error names the address, what failed and the fix, on one line.
func (e *UnreachableError) Error() string {
	fix := "start that server or fix llm.base_url"
	switch {
	case e.Provider == Ollama:
		fix = "start Ollama (`ollama serve`) or set llm.base_url"
	case e.Source == "$OPENAI_BASE_URL":
		fix = "start that server or fix $OPENAI_BASE_URL (or llm.base_url)"
	case e.Source == "":
		fix = "check the network, or set llm.base_url to a server that answers"
	}
	what := "no server answers at " + e.Addr
	if e.Reason == "unknown host" {
		what = "the host of " + e.Addr + " is unknown"
	}
	return fmt.Sprintf("%s: %s (%s): %s", e.Provider, what, e.Reason, fix)
}

// Unwrap returns the adapter's (redacted) error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Is reports whether target is ErrUnreachable.
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// hostPort is raw's host and port (the scheme's default port when raw
// names none), without credentials, path or query; raw itself when it is
// not a URL with a host.
func hostPort(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

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
