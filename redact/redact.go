// Package redact removes secrets from text and values before they are
// written anywhere: traces, cassettes, result stores, reports, command
// output. It holds the engine's one set of scrubbing rules.
//
// # Rules
//
// A Scrubber replaces, in this order:
//
//   - the value of each environment variable whose name ends in _KEY,
//     _TOKEN, _SECRET or _PASSWORD (compared in upper case; values shorter
//     than 8 bytes are ignored, so "1" or "true" do not redact ordinary
//     text) by "[REDACTED:NAME]", and each extra literal secret by
//     "[REDACTED]", longest value first;
//   - bearer tokens ("Bearer abc...", any case, 8 or more token
//     characters) by "Bearer [REDACTED]", keeping the word's case;
//   - the well-known key shapes of OpenAI ("sk-..." with 16 or more
//     characters, Anthropic's "sk-ant-..." included) and Google
//     ("AIza" and 35 characters) by "[REDACTED]".
//
// Tree additionally replaces the string value of any map field named like
// a credential (Authorization, Cookie, api_key, x-api-key, access_token,
// password, secret, ...), for decoded JSON such as HTTP headers or request
// metadata.
//
// A Scrubber is immutable once built and safe for concurrent use. Build one
// per process or per command and share it; building reads the environment.
//
// # Streams
//
// Text that arrives in pieces, such as a streamed model reply, is scrubbed
// with a Stream (Scrubber.NewStream): a secret split across two pieces
// would survive String applied to each piece, so a Stream holds back the
// end of the text until no secret can continue across it, and scrubs the
// whole text as String does.
package redact

import (
	"os"
	"regexp"
	"slices"
	"strings"
)

// Redacted replaces scrubbed values that carry no variable name.
const Redacted = "[REDACTED]"

// DefaultMinLength is the shortest environment value treated as a secret.
const DefaultMinLength = 8

// DefaultSecretSuffixes returns the environment variable name endings whose
// values are secrets by default: _KEY, _TOKEN, _SECRET and _PASSWORD.
func DefaultSecretSuffixes() []string {
	return []string{"_KEY", "_TOKEN", "_SECRET", "_PASSWORD"}
}

// Option configures New.
type Option func(*config)

type config struct {
	environ    []string
	environSet bool
	suffixes   []string
	secrets    []string
	minLen     int
}

// WithEnviron takes secrets from env ("NAME=value" strings) instead of the
// process environment. Default: os.Environ() read once by New. A nil or
// empty env means no environment secrets.
func WithEnviron(env []string) Option {
	return func(c *config) { c.environ, c.environSet = slices.Clone(env), true }
}

// WithSecretSuffixes replaces the name endings that mark an environment
// variable as secret. Names are compared in upper case. Default:
// DefaultSecretSuffixes().
func WithSecretSuffixes(suffixes ...string) Option {
	return func(c *config) { c.suffixes = slices.Clone(suffixes) }
}

// WithSecrets adds literal values to scrub, replaced by "[REDACTED]". They
// are scrubbed whatever their length; empty values are ignored. Options
// accumulate. Default: none.
func WithSecrets(values ...string) Option {
	return func(c *config) { c.secrets = append(c.secrets, values...) }
}

// WithMinLength sets the shortest environment value treated as a secret;
// shorter values are ignored. Values below 1 mean 1. Default:
// DefaultMinLength (8).
func WithMinLength(n int) Option {
	return func(c *config) { c.minLen = max(n, 1) }
}

var (
	// credentialKey matches map keys naming credentials after lower-casing
	// and removing '-', '_' and spaces. "max_tokens" and "PromptTokens" do
	// not match.
	credentialKey = regexp.MustCompile(`^(authorization|proxyauthorization|cookie|setcookie|password|passwd|secret|token|x?(api|access|refresh|id|auth|bearer|session|private|secret|client)(key|token|secret))$`)
	// keyNormalizer strips the separators credentialKey ignores.
	keyNormalizer = strings.NewReplacer("-", "", "_", "", " ", "")
	// bearerToken matches an Authorization-style bearer token.
	bearerToken = regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}`)
	// openAIKey matches OpenAI and Anthropic API keys.
	openAIKey = regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`)
	// googleKey matches Google API keys.
	googleKey = regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)
)

// secret is one literal value and its replacement.
type secret struct{ value, replacement string }

// Scrubber removes secrets; see the package documentation for the rules.
// It is immutable and safe for concurrent use. The zero value scrubs only
// bearer tokens and key shapes; a nil *Scrubber scrubs nothing.
type Scrubber struct {
	secrets []secret // longest value first, then by value
	// heads[i] is the first two bytes of secrets[i] (0 for a one-byte
	// secret).
	heads []uint16
	// pairs holds heads and the first two bytes of each pattern's literal
	// prefix; nil in the zero value.
	pairs *pairSet
	// singles are the secrets of one byte.
	singles []byte
}

// pairSet is a set of byte pairs, one bit each.
type pairSet [1 << 16 / 64]uint64

func (p *pairSet) add(k uint16) { p[k>>6] |= 1 << (k & 63) }

// pair returns the pair of bytes a, b as a pairSet key.
func pair(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

// Keys of the patterns' prefixes ("be" in any case is tested by folding).
const (
	pairSk = uint16('s')<<8 | 'k'
	pairAI = uint16('A')<<8 | 'I'
	pairBe = uint16('b')<<8 | 'e'
)

// New builds a Scrubber. With no options it scrubs the secret-named
// variables of the process environment as it is now, bearer tokens and
// key shapes.
func New(opts ...Option) *Scrubber {
	c := config{suffixes: DefaultSecretSuffixes(), minLen: DefaultMinLength}
	for _, o := range opts {
		o(&c)
	}
	if !c.environSet {
		c.environ = os.Environ()
	}
	suffixes := make([]string, len(c.suffixes))
	for i, suf := range c.suffixes {
		suffixes[i] = strings.ToUpper(suf)
	}
	s := &Scrubber{}
	seen := map[string]bool{}
	for _, kv := range c.environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < c.minLen || seen[value] {
			continue
		}
		upper := strings.ToUpper(name)
		for _, suf := range suffixes {
			if strings.HasSuffix(upper, suf) {
				s.secrets = append(s.secrets, secret{value: value, replacement: "[REDACTED:" + name + "]"})
				seen[value] = true
				break
			}
		}
	}
	for _, v := range c.secrets {
		if v != "" && !seen[v] {
			s.secrets = append(s.secrets, secret{value: v, replacement: Redacted})
			seen[v] = true
		}
	}
	slices.SortStableFunc(s.secrets, func(a, b secret) int {
		if d := len(b.value) - len(a.value); d != 0 {
			return d
		}
		return strings.Compare(a.value, b.value)
	})
	s.pairs = &pairSet{}
	s.heads = make([]uint16, len(s.secrets))
	for i, sec := range s.secrets {
		if len(sec.value) == 1 {
			s.singles = append(s.singles, sec.value[0])
			continue
		}
		s.heads[i] = pair(sec.value[0], sec.value[1])
		s.pairs.add(s.heads[i])
	}
	for _, pre := range []string{"be", "bE", "Be", "BE", "sk", "AI"} {
		s.pairs.add(pair(pre[0], pre[1]))
	}
	return s
}

// Len returns how many literal secrets (environment values and extra
// secrets) s scrubs.
func (s *Scrubber) Len() int {
	if s == nil {
		return 0
	}
	return len(s.secrets)
}

// String returns v with every secret replaced. When v holds none it is
// returned as is, without allocating.
func (s *Scrubber) String(v string) string {
	if s == nil || v == "" || !s.mayHoldSecret(v) {
		return v
	}
	for _, sec := range s.secrets {
		v = strings.ReplaceAll(v, sec.value, sec.replacement)
	}
	// A pattern's regexp runs over the text only when the pattern matches
	// at one of the places where its literal prefix occurs, so text without
	// a match costs a few substring searches rather than regexp scans (and
	// regexp replacement, which copies the text even when nothing matches).
	if hasMatch(v, "b", bearerAt) || hasMatch(v, "B", bearerAt) {
		v = bearerToken.ReplaceAllStringFunc(v, func(m string) string {
			return m[:len("bearer")] + " " + Redacted
		})
	}
	if hasMatch(v, "sk-", openAIAt) {
		v = openAIKey.ReplaceAllLiteralString(v, Redacted)
	}
	if hasMatch(v, "AIza", googleAt) {
		v = googleKey.ReplaceAllLiteralString(v, Redacted)
	}
	return v
}

// mayHoldSecret reports whether v holds a secret or a match of a pattern,
// in one pass: only where a byte pair of pairs occurs are the secrets and
// patterns tried. It is true for the zero Scrubber, which has no pairs, and
// so goes the slow way.
func (s *Scrubber) mayHoldSecret(v string) bool {
	if s.pairs == nil {
		return true
	}
	for _, c := range s.singles {
		if strings.IndexByte(v, c) >= 0 {
			return true
		}
	}
	pairs := s.pairs
	for i := 1; i < len(v); i++ {
		k := pair(v[i-1], v[i])
		if pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		rest := v[i-1:]
		for j, h := range s.heads {
			if h == k && strings.HasPrefix(rest, s.secrets[j].value) {
				return true
			}
		}
		if i > 1 && isWordByte(v[i-2]) {
			continue // the patterns start at a word boundary
		}
		switch {
		case k == pairSk && openAIAt(rest), k == pairAI && googleAt(rest),
			k|0x2020 == pairBe && bearerAt(rest):
			return true
		}
	}
	return false
}

// hasMatch reports whether at(v[i:]) holds at an occurrence i of prefix
// that starts a word (follows no ASCII word character), which is where a
// pattern with a leading \b can match.
func hasMatch(v, prefix string, at func(string) bool) bool {
	for off := 0; ; {
		i := strings.Index(v[off:], prefix)
		if i < 0 {
			return false
		}
		i += off
		if (i == 0 || !isWordByte(v[i-1])) && at(v[i:]) {
			return true
		}
		off = i + 1
	}
}

// bearerAt reports whether bearerToken, less its leading \b, matches at
// the start of v: "bearer" in any case (its letters fold only within
// ASCII), one or more of \s's bytes, 8 token bytes.
func bearerAt(v string) bool {
	const word = "bearer"
	if len(v) < len(word) || !strings.EqualFold(v[:len(word)], word) {
		return false
	}
	i := len(word)
	for i < len(v) && strings.IndexByte("\t\n\f\r ", v[i]) >= 0 {
		i++
	}
	if i == len(word) {
		return false
	}
	return countRun(v[i:], 8, isTokenByte) == 8
}

// openAIAt reports whether openAIKey, less its leading \b, matches at the
// start of v.
func openAIAt(v string) bool {
	return strings.HasPrefix(v, "sk-") && countRun(v[3:], 16, isKeyByte) == 16
}

// googleAt reports whether googleKey, less its leading \b, matches at the
// start of v: "AIza", exactly 35 key bytes, then a word boundary.
func googleAt(v string) bool {
	const n = len("AIza") + 35
	if !strings.HasPrefix(v, "AIza") || countRun(v[4:], 35, isKeyByte) != 35 {
		return false
	}
	return len(v) > n && isWordByte(v[n]) != isWordByte(v[n-1]) || len(v) == n && isWordByte(v[n-1])
}

// countRun counts the leading bytes of v, up to limit, that ok accepts.
func countRun(v string, limit int, ok func(byte) bool) int {
	n := 0
	for n < limit && n < len(v) && ok(v[n]) {
		n++
	}
	return n
}

// isWordByte reports whether c is an ASCII word character, as \b sees it.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isKeyByte reports whether c is in [A-Za-z0-9_-].
func isKeyByte(c byte) bool { return c == '-' || isWordByte(c) }

// isTokenByte reports whether c is in [A-Za-z0-9._~+/=-].
func isTokenByte(c byte) bool { return isKeyByte(c) || strings.IndexByte("._~+/=", c) >= 0 }

// Tree scrubs a decoded JSON value (nil, bool, float64, json.Number,
// string, []any or map[string]any, as encoding/json produces) in place and
// returns it: every string, and in addition the string value of every map
// field named like a credential becomes "[REDACTED]" (so a tool schema's
// "password" property, an object, keeps its schema).
func (s *Scrubber) Tree(v any) any {
	switch t := v.(type) {
	case string:
		return s.String(t)
	case []any:
		for i := range t {
			t[i] = s.Tree(t[i])
		}
		return t
	case map[string]any:
		for k, val := range t {
			if str, ok := val.(string); ok && str != "" && IsCredentialKey(k) {
				t[k] = Redacted
				continue
			}
			t[k] = s.Tree(val)
		}
		return t
	default:
		return v
	}
}

// IsCredentialKey reports whether a field or header name names a
// credential (Authorization, Cookie, api_key, X-Api-Key, access_token,
// password, secret, ...), ignoring case, '-', '_' and spaces. Token counts
// such as max_tokens do not.
func IsCredentialKey(k string) bool {
	return credentialKey.MatchString(keyNormalizer.Replace(strings.ToLower(k)))
}
