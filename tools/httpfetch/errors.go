package httpfetch

import (
	"errors"
	"fmt"
)

// Sentinel errors of the tool. Errors caused by the model's input also wrap
// tools.ErrBadInput.
var (
	// ErrScheme means the URL is not an http or https URL (file:, ftp:,
	// data:, javascript:, gopher:, no scheme, ...).
	ErrScheme = errors.New("unsupported URL scheme")
	// ErrBadURL means the URL is malformed, too long, has no host or
	// carries a user name or password.
	ErrBadURL = errors.New("bad URL")
	// ErrBlocked means the host or the address it resolves to is one the
	// tool never connects to: loopback, private, link-local, cloud
	// metadata and the like.
	ErrBlocked = errors.New("refused")
	// ErrHostNotAllowed means the host is not in Config.AllowHosts.
	ErrHostNotAllowed = errors.New("host not allowed")
	// ErrMethod means the HTTP method is not allowed (POST without
	// Config.AllowPost, or any method other than GET and POST).
	ErrMethod = errors.New("method not allowed")
	// ErrTooManyRedirects means the response redirected more than
	// Config.MaxRedirects times.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrStatus means the server answered with a status of 400 or more.
	ErrStatus = errors.New("HTTP error")
	// ErrContentType means the response is not text (an image, an archive,
	// a binary) and was not returned.
	ErrContentType = errors.New("unsupported content type")
	// ErrTimeout means the call did not finish within Config.Timeout.
	ErrTimeout = errors.New("timed out")
	// ErrRequest means the request failed for another reason: the host
	// could not be resolved, the connection was refused, TLS failed.
	ErrRequest = errors.New("request failed")
	// ErrConfig means a Config value is invalid; New returns it inside a
	// *ConfigError.
	ErrConfig = errors.New("invalid http_fetch setting")
)

// ConfigError names the Config setting at fault by its YAML key, so the
// pipeline loader can point at it. It wraps ErrConfig.
type ConfigError struct {
	// Key is the setting's YAML key, such as "max_bytes".
	Key string
	// Err is the cause; it wraps ErrConfig.
	Err error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("http_fetch: setting %q: %v", e.Key, e.Err) }

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

func configErrorf(key, format string, args ...any) error {
	return &ConfigError{Key: key, Err: fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))}
}
