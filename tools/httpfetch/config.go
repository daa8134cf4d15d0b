package httpfetch

import (
	"context"
	"net/netip"
	"time"
)

// Defaults of Config.
const (
	// DefaultMaxBytes is the default limit on the response bytes read:
	// 2 MiB.
	DefaultMaxBytes = 2 << 20
	// DefaultMaxChars is the default limit on the characters of text
	// returned to the model.
	DefaultMaxChars = 20_000
	// DefaultTimeout is the default bound on one call, redirects and
	// reading the response included.
	DefaultTimeout = 20 * time.Second
	// DefaultMaxRedirects is the default number of redirects followed.
	DefaultMaxRedirects = 5
	// DefaultMaxURLLength is the default limit on a URL's length in bytes,
	// redirect targets included.
	DefaultMaxURLLength = 2048
	// DefaultUserAgent is the User-Agent header sent when Config.UserAgent
	// is empty.
	DefaultUserAgent = "planner-http-fetch/0.1 (+https://github.com/planner-engine/planner)"
)

// Upper bounds of Config values; larger values are configuration errors.
const (
	// MaxRedirectsLimit is the largest Config.MaxRedirects accepted.
	MaxRedirectsLimit = 20
	// MaxBytesLimit is the largest Config.MaxBytes accepted: 64 MiB.
	MaxBytesLimit = 64 << 20
)

// Config configures the tool; its mapstructure tags are the keys of the
// tool's pipeline settings. Zero values take the defaults. Negative values
// are errors, except for MaxRedirects.
type Config struct {
	// AllowHosts, when not empty, limits fetching to these hosts, redirect
	// targets included. An entry is an exact host name ("example.com",
	// which does not cover its subdomains) or a wildcard "*.example.com",
	// which covers every subdomain of example.com at any depth but not
	// example.com itself. Matching ignores case and a trailing dot. An
	// allowed host is still subject to every address check. Default empty:
	// any public host.
	AllowHosts []string `mapstructure:"allow_hosts"`
	// AllowPost lets the model send POST requests with a body. A tool that
	// allows POST is not read-only, and its Meta says each call needs a
	// human's approval. Default false: GET only.
	AllowPost bool `mapstructure:"allow_post"`
	// MaxBytes bounds the response bytes read (after any transparent gzip
	// decoding); a longer response is read up to it and marked truncated.
	// It also bounds a POST body. Default DefaultMaxBytes (2 MiB), at most
	// MaxBytesLimit.
	MaxBytes int64 `mapstructure:"max_bytes"`
	// MaxChars bounds the characters (runes) of the text returned; longer
	// text is cut with a note saying how much was left out. Default
	// DefaultMaxChars (20,000).
	MaxChars int `mapstructure:"max_chars"`
	// Timeout bounds one call: connecting, redirects and reading the
	// response. It is also the tool's Meta.Timeout. Default DefaultTimeout
	// (20s).
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxRedirects is the number of redirects followed; one more is an
	// ErrTooManyRedirects error. Zero means DefaultMaxRedirects (5); a
	// negative value follows none, returning the redirect response itself
	// with its Location. At most MaxRedirectsLimit.
	MaxRedirects int `mapstructure:"max_redirects"`
	// MaxURLLength bounds the length of a URL in bytes, redirect targets
	// included. Default DefaultMaxURLLength (2048).
	MaxURLLength int `mapstructure:"max_url_length"`
	// UserAgent is the User-Agent header. Default DefaultUserAgent.
	UserAgent string `mapstructure:"user_agent"`
	// Links writes each link of an HTML page as "text (url)", so the model
	// can follow it. Default false: link text only, which is more compact.
	Links bool `mapstructure:"links"`
}

// Resolver looks up the IP addresses of a host; *net.Resolver implements
// it. Whatever it answers, each address is checked when it is dialled.
type Resolver interface {
	// LookupNetIP returns the addresses of host; network is "ip".
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Option sets an optional dependency of the tool, one that pipeline
// settings cannot reach.
type Option func(*options)

type options struct {
	allow    []func(netip.AddrPort) bool
	resolver Resolver
}

// WithAllowAddr lets the tool connect to the addresses for which allow
// returns true even though the address check would refuse them (a
// loopback test server's address and port, say). It is for tests and
// local development only: every other check stays on, host names such as
// localhost are still refused (use the IP address), and nothing in a
// pipeline file can set it. Several WithAllowAddr options add up.
func WithAllowAddr(allow func(netip.AddrPort) bool) Option {
	return func(o *options) {
		if allow != nil {
			o.allow = append(o.allow, allow)
		}
	}
}

// WithAllowLoopback lets the tool connect to loopback addresses
// (127.0.0.0/8, ::1) on any port, as WithAllowAddr does; for tests and
// local development only.
func WithAllowLoopback() Option {
	return WithAllowAddr(func(ap netip.AddrPort) bool { return ap.Addr().Unmap().IsLoopback() })
}

// WithResolver makes the tool resolve host names with r instead of the
// system resolver. The resolved addresses go through the same dial-time
// check, so a resolver cannot let the tool reach a forbidden address; tests
// use it to play a DNS-rebinding attack.
func WithResolver(r Resolver) Option {
	return func(o *options) { o.resolver = r }
}
