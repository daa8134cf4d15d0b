package middleware

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// Class is what the retry middleware should do with an error.
type Class int

const (
	// Fatal errors are returned at once: bad requests, authentication,
	// exhausted quota, unknown failures.
	Fatal Class = iota
	// Retryable errors are transient: rate limiting, server errors, broken
	// connections, per-attempt timeouts.
	Retryable
	// Canceled errors come from the caller's context being canceled or
	// reaching its deadline; they are never retried.
	Canceled
)

// String returns the class name in lower case.
func (c Class) String() string {
	switch c {
	case Fatal:
		return "fatal"
	case Retryable:
		return "retryable"
	case Canceled:
		return "canceled"
	default:
		return "class(" + strconv.Itoa(int(c)) + ")"
	}
}

// ErrPermanent is matched by the errors no retry can fix, whatever their
// text says: the deterministic failures of offline models (a script with
// no reply for the call). Classify reports them Fatal before reading their
// text, which may quote a prompt that mentions "connection refused" or
// "status code 503". Make such errors with Permanent.
var ErrPermanent = errors.New("permanent model failure")

// Permanent returns a new sentinel error with text msg that matches
// ErrPermanent (and itself) under errors.Is; wrap it with %w to add detail.
func Permanent(msg string) error { return &permanentError{msg: msg} }

// permanentError is an error of Permanent.
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

// Is makes the error match ErrPermanent.
func (e *permanentError) Is(target error) bool { return target == ErrPermanent }

// ErrUnreachable is matched (errors.Is) by the error of a model call that
// reached no server at all: the connection was refused, the host name is
// unknown, or dialing failed otherwise (see DialFailure). Nothing listens
// at the address, and a retry moments later would meet the same closed
// port, so Classify reports these errors Fatal: the call fails at once
// and its message can say which server to start.
var ErrUnreachable = errors.New("model server unreachable")

// DialFailure reports whether err shows that a model call made no
// connection to its server: an error matching ErrUnreachable or
// syscall.ECONNREFUSED, a DNS error (the host is unknown), or a
// *net.OpError of the dial that did not time out. The transport error of
// an *HTTPError in err's chain counts too, since langchaingo's openai
// client replaces a failed request with a plain text. reason is
// "unreachable", "connection refused", "unknown host" or "dial failed".
// A connection reset or closed after it was made, and a dial that timed
// out, are not dial failures: they may pass (Classify retries them).
func DialFailure(err error) (reason string, ok bool) {
	if err == nil {
		return "", false
	}
	var de *net.DNSError
	var oe *net.OpError
	switch {
	case errors.Is(err, ErrUnreachable):
		return "unreachable", true
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", true
	case errors.As(err, &de) && !de.IsTimeout:
		return "unknown host", true
	case errors.As(err, &oe) && oe.Op == "dial" && !oe.Timeout():
		return "dial failed", true
	}
	return "", false
}

// HTTPError annotates a model error with what the HTTP transport observed
// during the attempt (see ObservingTransport). errors.Is and errors.As see
// both Err and Transport.
type HTTPError struct {
	// StatusCode is the status of the last HTTP response, 0 if none arrived.
	StatusCode int
	// RetryAfter is the wait the server asked for; 0 when it sent none.
	RetryAfter time.Duration
	// Transport is the raw error of the HTTP round trip or of reading the
	// response body, before any provider rewrote it; nil if none.
	Transport error
	// Err is the error returned by the model.
	Err error
}

// Error describes the model error followed by the observed status.
func (e *HTTPError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if e.StatusCode == 0 && errors.Is(e.Err, ErrUnreachable) {
		// The model error says that no server answered, and how to fix
		// it; the transport's text would only repeat it.
		return b.String()
	}
	b.WriteString(" (")
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "HTTP %d", e.StatusCode)
	} else {
		b.WriteString("no HTTP response")
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", retry after %s", e.RetryAfter)
	}
	if e.Transport != nil && !strings.Contains(e.Err.Error(), e.Transport.Error()) {
		fmt.Fprintf(&b, ", transport: %v", e.Transport)
	}
	b.WriteString(")")
	return b.String()
}

// Unwrap returns the model error and the transport error.
func (e *HTTPError) Unwrap() []error {
	if e.Transport == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Transport}
}

// statusPatterns recover an HTTP status from error text: langchaingo's
// openai and anthropic clients ("API returned unexpected status code: 429:
// ...") and Google's API client ("googleapi: Error 503: ...").
var statusPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)status code:? (\d{3})\b`),
	regexp.MustCompile(`googleapi: Error (\d{3})\b`),
}

// transientMessages are error texts of broken connections, including the
// fixed strings langchaingo's openai client substitutes for *url.Error.
var transientMessages = []string{
	"network error: failed to reach api server",
	"request timeout: network operation exceeded timeout",
	"connection reset",
	"connection refused",
	"broken pipe",
	"unexpected eof",
	"server closed idle connection",
	"http2: server sent goaway",
	"tls handshake timeout",
	"i/o timeout",
}

// canceledMessages are the fixed strings langchaingo's openai client returns
// in place of context.Canceled and context.DeadlineExceeded.
var canceledMessages = []string{
	"request cancelled",
	"request timeout: api call exceeded deadline",
}

// quotaMessages mark a 429 that retrying cannot fix: OpenAI answers 429
// "You exceeded your current quota" when the account has no credit.
var quotaMessages = []string{"quota", "billing", "credit balance"}

// Classify decides whether err is worth retrying, and how long the server
// asked to wait (0 when unknown). The rules, first match wins:
//
//  1. nil, or an error matching ErrPermanent: Fatal (there is nothing to
//     retry, or retrying cannot help).
//  2. ErrCallTimeout (a per-attempt timeout): Retryable.
//  3. context.Canceled or context.DeadlineExceeded anywhere in the chain, or
//     openai's "request cancelled" / "request timeout: API call exceeded
//     deadline" texts: Canceled.
//  4. A dial failure (DialFailure: ErrUnreachable, a refused connection,
//     an unknown host, a failed dial): Fatal, since nothing listens there.
//  5. An HTTP status of 400 or more, from an *HTTPError or parsed from the
//     message: 429 (unless the message mentions quota, billing or credit
//     balance), 408 and 5xx are Retryable with the *HTTPError's
//     RetryAfter; every other 4xx is Fatal.
//  6. An *llms.Error with code rate_limit or provider_unavailable:
//     Retryable; with code unknown: go on; any other code: Fatal. (Codes
//     timeout and canceled already matched rule 3: llms.Error's Is method
//     equates them with the context errors.)
//  7. Broken connections: io.EOF, io.ErrUnexpectedEOF, ECONNRESET,
//     ECONNABORTED, EPIPE, a net.Error that timed out, a *net.OpError
//     other than a failed dial, or one of their usual texts (including
//     openai's "network error: failed to reach API server" when no
//     transport error tells more): Retryable.
//  8. Anything else: Fatal.
func Classify(err error) (Class, time.Duration) {
	if err == nil || errors.Is(err, ErrPermanent) {
		return Fatal, 0
	}
	if errors.Is(err, ErrCallTimeout) {
		return Retryable, 0
	}
	msg := strings.ToLower(err.Error())
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || containsAny(msg, canceledMessages) {
		return Canceled, 0
	}

	if _, ok := DialFailure(err); ok {
		return Fatal, 0
	}

	var retryAfter time.Duration
	status := 0
	var he *HTTPError
	if errors.As(err, &he) {
		retryAfter = he.RetryAfter
		if he.StatusCode >= 400 {
			status = he.StatusCode
		}
	}
	if status == 0 {
		status = statusFromMessage(err.Error())
	}
	if status >= 400 {
		switch {
		case status == 429 && containsAny(msg, quotaMessages):
			return Fatal, 0
		case status == 429, status == 408, status >= 500:
			return Retryable, retryAfter
		default:
			return Fatal, 0
		}
	}

	var le *llms.Error
	if errors.As(err, &le) {
		switch le.Code {
		case llms.ErrCodeRateLimit, llms.ErrCodeProviderUnavailable:
			return Retryable, retryAfter
		case llms.ErrCodeUnknown:
			// Fall through to the connection checks.
		default:
			return Fatal, 0
		}
	}

	if isConnectionError(err) || containsAny(msg, transientMessages) {
		return Retryable, retryAfter
	}
	return Fatal, 0
}

func isConnectionError(err error) bool {
	for _, target := range []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

func statusFromMessage(msg string) int {
	for _, re := range statusPatterns {
		if m := re.FindStringSubmatch(msg); m != nil {
			n, err := strconv.Atoi(m[1])
			if err == nil {
				return n
			}
		}
	}
	return 0
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// FailureReason describes a failed attempt briefly, for progress lines and
// messages. With an HTTP status of 400 or more (from an *HTTPError or parsed
// from the message) it returns that status and "HTTP NNN"; otherwise status
// is 0 and reason names the kind of failure: "timeout", "connection
// refused", "connection reset", "connection closed", "unknown host",
// "network error", "canceled", or "error" when nothing more is known.
func FailureReason(err error) (status int, reason string) {
	if err == nil {
		return 0, "no error"
	}
	var he *HTTPError
	if errors.As(err, &he) && he.StatusCode >= 400 {
		status = he.StatusCode
	}
	if status == 0 {
		status = statusFromMessage(err.Error())
	}
	if status >= 400 {
		return status, "HTTP " + strconv.Itoa(status)
	}
	msg := strings.ToLower(err.Error())
	var ne net.Error
	var de *net.DNSError
	var oe *net.OpError
	switch {
	case errors.Is(err, ErrCallTimeout), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout(), strings.Contains(msg, "timeout"), strings.Contains(msg, "deadline"):
		return 0, "timeout"
	case errors.Is(err, syscall.ECONNREFUSED), strings.Contains(msg, "connection refused"):
		return 0, "connection refused"
	case errors.Is(err, syscall.ECONNRESET), strings.Contains(msg, "connection reset"):
		return 0, "connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), containsAny(msg, []string{"unexpected eof", "broken pipe", "server closed idle connection", "goaway"}):
		return 0, "connection closed"
	case errors.As(err, &de) && de.IsNotFound:
		return 0, "unknown host"
	case errors.As(err, &oe), strings.Contains(msg, "network error"):
		return 0, "network error"
	case errors.Is(err, context.Canceled), strings.Contains(msg, "cancel"):
		return 0, "canceled"
	}
	return 0, "error"
}
