package httpfetch

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// localSuffixes are names (and the domains under them) that name this
// machine or a private network; they are refused before any lookup.
var localSuffixes = []string{
	"localhost", "localdomain", "internal", "local", "lan", "home", "corp",
	"intranet", "private", "arpa",
}

// checkURL applies the scheme, user-info, length and host rules to u, the
// URL asked for or a redirect target.
func (t *Tool) checkURL(u *url.URL) error {
	if n := len(u.String()); n > t.cfg.MaxURLLength {
		return fmt.Errorf("%w: the URL is %d bytes long, more than the %d allowed", ErrBadURL, n, t.cfg.MaxURLLength)
	}
	switch scheme := strings.ToLower(u.Scheme); scheme {
	case "http", "https":
	case "":
		return fmt.Errorf("%w: %q has no scheme; give a full URL starting with https:// or http://", ErrScheme, u.String())
	default:
		return fmt.Errorf("%w: %s: URLs are not fetched; only http:// and https:// URLs are", ErrScheme, scheme)
	}
	if u.Opaque != "" {
		return fmt.Errorf("%w: %q has no host; write it as http://host/path", ErrBadURL, u.String())
	}
	if u.User != nil {
		return fmt.Errorf("%w: URLs with a user name or password (user:pass@host) are not fetched", ErrBadURL)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: %q has no host", ErrBadURL, u.String())
	}
	port, err := urlPort(u)
	if err != nil {
		return err
	}
	return t.checkHost(host, port)
}

// urlPort returns u's port, or the default port of its scheme.
func urlPort(u *url.URL) (uint16, error) {
	ps := u.Port()
	if ps == "" {
		if strings.EqualFold(u.Scheme, "https") {
			return 443, nil
		}
		return 80, nil
	}
	n, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%w: port %q is not a number from 1 to 65535", ErrBadURL, ps)
	}
	return uint16(n), nil
}

// checkHost checks a URL's host (without brackets or port).
func (t *Tool) checkHost(host string, port uint16) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if addr, err := netip.ParseAddr(h); err == nil {
		if addr.Zone() != "" {
			return fmt.Errorf("%w: %s carries an IPv6 zone; http_fetch only connects to public addresses", ErrBlocked, host)
		}
		if !t.allowedAddr(netip.AddrPortFrom(addr, port)) {
			if err := CheckAddr(addr); err != nil {
				return err
			}
		}
		return t.checkAllowList(addr.String())
	}
	h, err := normalizeName(h)
	if err != nil {
		return fmt.Errorf("%w: %q is not a valid host name: %w", ErrBadURL, host, err)
	}
	if err := checkName(h); err != nil {
		return err
	}
	return t.checkAllowList(h)
}

// normalizeName lower-cases a host name, turns an internationalised one
// into its ASCII (punycode) form, and checks its syntax.
func normalizeName(h string) (string, error) {
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			a, err := idna.Lookup.ToASCII(h)
			if err != nil {
				return "", err
			}
			h = strings.ToLower(a)
			break
		}
	}
	if len(h) > 253 {
		return "", fmt.Errorf("longer than 253 bytes")
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("empty or over-long label %q", label)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("character %q is not allowed in a host name", c)
			}
		}
	}
	return h, nil
}

// checkName refuses names of this machine or of private networks, single
// label names and IPv4 addresses in non-standard forms. h is normalised.
func checkName(h string) error {
	if h == "metadata.google.internal" || h == "metadata.goog" {
		return fmt.Errorf("%w: %s is a cloud metadata service; http_fetch only fetches public hosts", ErrBlocked, h)
	}
	for _, s := range localSuffixes {
		if h == s || strings.HasSuffix(h, "."+s) {
			return fmt.Errorf("%w: %s is a local or internal host name (%s); http_fetch only fetches public hosts", ErrBlocked, h, suffixPattern(s))
		}
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	if numeric(last) {
		return fmt.Errorf("%w: %s looks like an IP address in a non-standard form (write IPv4 addresses as four decimal numbers, such as 93.184.215.14)", ErrBlocked, h)
	}
	if !strings.Contains(h, ".") {
		return fmt.Errorf("%w: %s is a single-label (intranet) host name; give a full public host name such as example.com", ErrBlocked, h)
	}
	return nil
}

func suffixPattern(s string) string {
	if s == "localhost" {
		return "localhost, *.localhost"
	}
	return "*." + s
}

// numeric reports whether a label is a decimal, octal or 0x-hexadecimal
// number, as the last label of an IPv4 address in inet_aton's forms is; no
// top-level domain is.
func numeric(label string) bool {
	digits := label
	hex := false
	if len(label) > 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X') {
		digits, hex = label[2:], true
	}
	if digits == "" {
		return false
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if !(c >= '0' && c <= '9' || hex && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')) {
			return false
		}
	}
	return true
}

// hostPattern is one allow_hosts entry: an exact host, or with wildcard set
// the suffix ".example.com" of "*.example.com".
type hostPattern struct {
	name     string
	wildcard bool
}

func (p hostPattern) String() string {
	if p.wildcard {
		return "*" + p.name
	}
	return p.name
}

func (p hostPattern) match(host string) bool {
	if p.wildcard {
		return len(host) > len(p.name) && strings.HasSuffix(host, p.name)
	}
	return host == p.name
}

// parseHostPattern parses an allow_hosts entry.
func parseHostPattern(s string) (hostPattern, error) {
	raw := strings.TrimSpace(s)
	h := strings.TrimSuffix(strings.ToLower(raw), ".")
	if h == "" {
		return hostPattern{}, fmt.Errorf("empty host pattern")
	}
	if addr, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil && addr.Zone() == "" {
		return hostPattern{name: addr.String()}, nil
	}
	wildcard := false
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		h, wildcard = rest, true
	}
	if strings.ContainsAny(h, "*/:@?# ") {
		return hostPattern{}, fmt.Errorf("%q is not a host name or a *.domain pattern (no scheme, port, path, or * other than a leading *.)", raw)
	}
	n, err := normalizeName(h)
	if err != nil {
		return hostPattern{}, fmt.Errorf("%q is not a valid host name: %w", raw, err)
	}
	if wildcard {
		if err := checkName("x." + n); err != nil {
			return hostPattern{}, fmt.Errorf("%q can never be fetched: %w", raw, err)
		}
		return hostPattern{name: "." + n, wildcard: true}, nil
	}
	if err := checkName(n); err != nil {
		return hostPattern{}, fmt.Errorf("%q can never be fetched: %w", raw, err)
	}
	return hostPattern{name: n}, nil
}

// checkAllowList refuses a host outside a non-empty allow-list.
func (t *Tool) checkAllowList(host string) error {
	if len(t.allowHosts) == 0 {
		return nil
	}
	for _, p := range t.allowHosts {
		if p.match(host) {
			return nil
		}
	}
	names := make([]string, len(t.allowHosts))
	for i, p := range t.allowHosts {
		names[i] = p.String()
	}
	return fmt.Errorf("%w: %s is not in this tool's allow_hosts (%s)", ErrHostNotAllowed, host, strings.Join(names, ", "))
}

// allowedAddr reports whether a WithAllowAddr option lifts the address
// check for ap.
func (t *Tool) allowedAddr(ap netip.AddrPort) bool {
	for _, f := range t.opts.allow {
		if f(ap) {
			return true
		}
	}
	return false
}
