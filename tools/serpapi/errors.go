package serpapi

import (
	"errors"
	"fmt"
)

// Sentinel errors of the tool. Every error the tool returns wraps one of
// them (or tools.ErrBadInput, or the caller's context error when the
// caller cancelled), and none carries the API key: error text may reach
// the model, the trace and the logs.
var (
	// ErrMissingKey means no API key was configured: neither Config.APIKey
	// nor the environment variable Config.APIKeyEnv names. New returns it
	// inside a *ConfigError keyed "api_key_env".
	ErrMissingKey = errors.New("no SerpApi API key")
	// ErrInvalidKey means SerpApi refused the key (HTTP 401 or 403, or an
	// "Invalid API key" error message).
	ErrInvalidKey = errors.New("SerpApi refused the API key")
	// ErrQuota means the account has no searches left this month or sent
	// too many searches this hour (HTTP 429, or such an error message).
	ErrQuota = errors.New("SerpApi search quota exhausted")
	// ErrServer means SerpApi failed on its side (HTTP 5xx).
	ErrServer = errors.New("SerpApi server error")
	// ErrAPI means SerpApi answered with another error: an unexpected
	// HTTP status or an error message the tool does not classify.
	ErrAPI = errors.New("SerpApi error")
	// ErrBadResponse means the response could not be read as SerpApi's
	// JSON: not JSON, not an object, or larger than MaxResponseBytes.
	ErrBadResponse = errors.New("unreadable SerpApi response")
	// ErrRequest means the request did not reach SerpApi or its answer
	// was cut off: the host could not be resolved, the connection was
	// refused or reset, TLS failed.
	ErrRequest = errors.New("SerpApi request failed")
	// ErrTimeout means the search did not finish within Config.Timeout.
	// It comes wrapped together with context.DeadlineExceeded.
	ErrTimeout = errors.New("SerpApi search timed out")
	// ErrConfig means a Config value is invalid; New returns it inside a
	// *ConfigError. (A missing key is ErrMissingKey instead.)
	ErrConfig = errors.New("invalid serpapi setting")
)

// ConfigError names the Config setting at fault by its YAML key, so the
// pipeline loader can point at it. It wraps ErrMissingKey when there is no
// key, ErrConfig otherwise.
type ConfigError struct {
	// Key is the setting's YAML key, such as "num".
	Key string
	// Err is the cause; it wraps ErrConfig.
	Err error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("serpapi: setting %q: %v", e.Key, e.Err) }

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

func configErrorf(key, format string, args ...any) error {
	return &ConfigError{Key: key, Err: fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))}
}
