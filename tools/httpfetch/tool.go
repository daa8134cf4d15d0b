package httpfetch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"github.com/planner-engine/planner/tools"
	"golang.org/x/net/html/charset"
)

// Name is the tool's name.
const Name = "http_fetch"

// Tool is the http_fetch tool. It is safe for concurrent use.
type Tool struct {
	cfg        Config
	opts       options
	allowHosts []hostPattern
	client     *http.Client
	dialer     *net.Dialer
}

// New returns an http_fetch tool configured by cfg (zero values take the
// defaults) and opts. An invalid setting is a *ConfigError wrapping
// ErrConfig.
func New(cfg Config, opts ...Option) (*Tool, error) {
	t := &Tool{cfg: cfg}
	for _, o := range opts {
		if o != nil {
			o(&t.opts)
		}
	}
	if err := t.setDefaults(); err != nil {
		return nil, err
	}
	for _, h := range cfg.AllowHosts {
		p, err := parseHostPattern(h)
		if err != nil {
			return nil, configErrorf("allow_hosts", "%v", err)
		}
		t.allowHosts = append(t.allowHosts, p)
	}
	t.dialer = &net.Dialer{Timeout: 10 * time.Second, Control: t.control}
	t.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // a proxy would connect for us, past the address check
			DialContext:            t.dial,
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    10 * time.Second,
			DisableKeepAlives:      true,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: t.checkRedirect,
	}
	return t, nil
}

func (t *Tool) setDefaults() error {
	c := &t.cfg
	switch {
	case c.MaxBytes < 0 || c.MaxBytes > MaxBytesLimit:
		return configErrorf("max_bytes", "must be from 1 to %d, got %d", MaxBytesLimit, c.MaxBytes)
	case c.MaxChars < 0:
		return configErrorf("max_chars", "must be positive, got %d", c.MaxChars)
	case c.Timeout < 0:
		return configErrorf("timeout", "must be positive, got %s", c.Timeout)
	case c.MaxRedirects > MaxRedirectsLimit:
		return configErrorf("max_redirects", "must be at most %d, got %d", MaxRedirectsLimit, c.MaxRedirects)
	case c.MaxURLLength < 0:
		return configErrorf("max_url_length", "must be positive, got %d", c.MaxURLLength)
	case strings.ContainsAny(c.UserAgent, "\r\n"):
		return configErrorf("user_agent", "must be one line")
	}
	c.MaxBytes = cmp.Or(c.MaxBytes, DefaultMaxBytes)
	c.MaxChars = cmp.Or(c.MaxChars, DefaultMaxChars)
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.MaxRedirects = cmp.Or(c.MaxRedirects, DefaultMaxRedirects)
	c.MaxURLLength = cmp.Or(c.MaxURLLength, DefaultMaxURLLength)
	c.UserAgent = cmp.Or(c.UserAgent, DefaultUserAgent)
	return nil
}

// Config returns the tool's configuration with the defaults filled in.
func (t *Tool) Config() Config {
	c := t.cfg
	c.AllowHosts = append([]string(nil), c.AllowHosts...)
	return c
}

// Name implements tools.Tool.
func (t *Tool) Name() string { return Name }

// Description implements tools.Tool.
func (t *Tool) Description() string {
	var b strings.Builder
	b.WriteString("Fetch a public web page or HTTP API over http or https and return its text: HTML is reduced to readable text; JSON, XML and plain text come back as they are; images and other binary files are refused.")
	if t.cfg.AllowPost {
		b.WriteString(` Input: {"url": "https://...", "method": "GET" or "POST", "body": "...", "content_type": "..."}, or just a URL to GET. Each POST needs a human's approval.`)
	} else {
		b.WriteString(" Input: the URL, such as https://example.com/page (GET only).")
	}
	if len(t.allowHosts) > 0 {
		names := make([]string, len(t.allowHosts))
		for i, p := range t.allowHosts {
			names[i] = p.String()
		}
		fmt.Fprintf(&b, " Only these hosts can be fetched: %s.", strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, " Long pages are cut at %d characters.", t.cfg.MaxChars)
	return b.String()
}

// Schema implements tools.Schemer: a required "url", and with AllowPost
// "method", "body" and "content_type".
func (t *Tool) Schema() map[string]any {
	props := map[string]any{
		"url": map[string]any{"type": "string", "description": "the http:// or https:// URL to fetch"},
	}
	if t.cfg.AllowPost {
		props["method"] = map[string]any{"type": "string", "enum": []any{"GET", "POST"}, "description": "GET (default) or POST"}
		props["body"] = map[string]any{"type": "string", "description": "the request body, for POST"}
		props["content_type"] = map[string]any{"type": "string", "description": "the body's media type, for POST; default application/json when the body is JSON, else text/plain"}
	}
	return map[string]any{"type": "object", "properties": props, "required": []any{"url"}}
}

// Meta implements tools.MetaProvider: a network tool, read-only and without
// approval unless it allows POST; its timeout is Config.Timeout.
func (t *Tool) Meta() tools.Meta {
	return tools.Meta{
		ReadOnly:      !t.cfg.AllowPost,
		NeedsApproval: t.cfg.AllowPost,
		Timeout:       t.cfg.Timeout,
		Network:       true,
	}
}

// request is one parsed call.
type request struct {
	url         string
	method      string
	body        string
	contentType string
}

// parseInput reads a JSON object of arguments or a bare URL.
func (t *Tool) parseInput(input string) (request, error) {
	s := strings.TrimSpace(input)
	var r request
	if strings.HasPrefix(s, "{") {
		var a struct {
			URL         string          `json:"url"`
			Input       string          `json:"input"`
			Method      string          `json:"method"`
			Body        json.RawMessage `json:"body"`
			ContentType string          `json:"content_type"`
		}
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			return r, fmt.Errorf(`the input is not a valid JSON object (%v); give {"url": "https://..."} or just the URL`, err)
		}
		r = request{url: strings.TrimSpace(cmp.Or(a.URL, a.Input)), method: a.Method, contentType: strings.TrimSpace(a.ContentType)}
		if b := strings.TrimSpace(string(a.Body)); b != "" && b != "null" {
			if err := json.Unmarshal(a.Body, &r.body); err != nil {
				r.body = b // a JSON object or array: send it as JSON
				if r.contentType == "" {
					r.contentType = "application/json"
				}
			}
		}
	} else {
		f := strings.Fields(s)
		if len(f) == 2 && strings.EqualFold(f[0], "GET") {
			f = f[1:]
		}
		if len(f) > 1 {
			return r, fmt.Errorf(`give one URL, or a JSON object such as {"url": "https://..."}`)
		}
		if len(f) == 1 {
			r.url = strings.Trim(f[0], "\"'`<>")
		}
	}
	if r.url == "" {
		return r, fmt.Errorf(`give the URL to fetch, such as https://example.com/ or {"url": "https://example.com/"}`)
	}
	r.method = strings.ToUpper(strings.TrimSpace(r.method))
	switch r.method {
	case "", http.MethodGet:
		r.method = http.MethodGet
		if r.body != "" {
			return r, fmt.Errorf(`a body is only sent with "method": "POST"`)
		}
	case http.MethodPost:
		if !t.cfg.AllowPost {
			return r, fmt.Errorf("%w: POST is not enabled for this tool; it only fetches with GET", ErrMethod)
		}
		if int64(len(r.body)) > t.cfg.MaxBytes {
			return r, fmt.Errorf("the body is %d bytes, more than the %d allowed", len(r.body), t.cfg.MaxBytes)
		}
		if r.contentType == "" {
			r.contentType = "text/plain; charset=utf-8"
			if b := strings.TrimSpace(r.body); b != "" && (b[0] == '{' || b[0] == '[') && json.Valid([]byte(b)) {
				r.contentType = "application/json"
			}
		} else if _, _, err := mime.ParseMediaType(r.contentType); err != nil {
			return r, fmt.Errorf("content_type %q is not a media type such as application/json: %v", r.contentType, err)
		}
	default:
		allowed := "GET"
		if t.cfg.AllowPost {
			allowed = "GET and POST"
		}
		return r, fmt.Errorf("%w: %s; this tool only sends %s", ErrMethod, r.method, allowed)
	}
	return r, nil
}

// Call fetches the URL of input (a JSON object of arguments or a bare URL)
// and returns the response as text, led by the final URL, the status and
// the content type. Refused input fails with an error wrapping
// tools.ErrBadInput and ErrScheme, ErrBadURL, ErrBlocked,
// ErrHostNotAllowed or ErrMethod; other failures wrap ErrStatus,
// ErrContentType, ErrTooManyRedirects, ErrTimeout (and
// tools.ErrToolTimeout) or ErrRequest. A cancelled ctx fails with its
// cause.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	r, err := t.parseInput(input)
	if err != nil {
		return "", failf(badInput(err))
	}
	u, err := url.Parse(r.url)
	if err != nil {
		return "", failf(badInput(fmt.Errorf("%w: %q: %v", ErrBadURL, r.url, unwrapURLError(err))))
	}
	if err := t.checkURL(u); err != nil {
		return "", failf(badInput(err))
	}
	cctx, cancel := context.WithTimeoutCause(ctx, t.cfg.Timeout, ErrTimeout)
	defer cancel()
	var body io.Reader
	if r.method == http.MethodPost {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(cctx, r.method, u.String(), body)
	if err != nil {
		return "", failf(badInput(fmt.Errorf("%w: %v", ErrBadURL, unwrapURLError(err))))
	}
	req.Header.Set("User-Agent", t.cfg.UserAgent)
	req.Header.Set("Accept", "text/html, application/xhtml+xml, application/json, text/plain;q=0.9, application/xml;q=0.9, text/*;q=0.8, */*;q=0.5")
	if r.method == http.MethodPost {
		req.Header.Set("Content-Type", r.contentType)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return "", t.failure(ctx, cctx, err, r.method, u)
	}
	defer resp.Body.Close()
	out, err := t.render(u, resp)
	if err != nil {
		return "", t.failure(ctx, cctx, err, r.method, u)
	}
	return out, nil
}

// failure turns an error of the request or of reading its response into
// the observation the model reads.
func (t *Tool) failure(ctx, cctx context.Context, err error, method string, u *url.URL) error {
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", Name, context.Cause(ctx))
	}
	if cctx.Err() != nil {
		return failf(also(fmt.Errorf("%w: no complete response from %s within %s", ErrTimeout, u.Redacted(), t.cfg.Timeout), tools.ErrToolTimeout))
	}
	inner := unwrapURLError(err)
	var re *redirectError
	var ae *addrError
	if !errors.As(inner, &re) && errors.As(inner, &ae) {
		inner = ae
		// A refused dial of a redirect target names that target.
		var ue *url.Error
		if errors.As(err, &ue) && ue.URL != u.Redacted() {
			inner = &redirectError{to: ue.URL, err: ae}
		}
	}
	for _, s := range []error{ErrScheme, ErrBadURL, ErrBlocked, ErrHostNotAllowed} {
		if errors.Is(inner, s) {
			return failf(badInput(inner))
		}
	}
	for _, s := range []error{ErrTooManyRedirects, ErrStatus, ErrContentType} {
		if errors.Is(inner, s) {
			return failf(inner)
		}
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		why := dns.Err
		if dns.IsNotFound {
			why = "no such host"
		}
		return failf(fmt.Errorf("%w: could not resolve %s: %s", ErrRequest, dns.Name, why))
	}
	return failf(fmt.Errorf("%w: %s %s: %w", ErrRequest, method, u.Redacted(), inner))
}

// unwrapURLError drops the *url.Error around err, whose message repeats
// the method and URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func failf(err error) error { return fmt.Errorf("%s: %w", Name, err) }

// multi is err that also matches extra, with err's message.
type multi struct{ err, extra error }

func (m *multi) Error() string   { return m.err.Error() }
func (m *multi) Unwrap() []error { return []error{m.err, m.extra} }

func also(err, extra error) error { return &multi{err, extra} }
func badInput(err error) error    { return also(err, tools.ErrBadInput) }

// checkRedirect applies the URL rules and the redirect limit to each
// redirect; the dial-time check covers the address it connects to.
func (t *Tool) checkRedirect(req *http.Request, via []*http.Request) error {
	if t.cfg.MaxRedirects < 0 {
		return http.ErrUseLastResponse
	}
	if len(via) > t.cfg.MaxRedirects {
		return fmt.Errorf("%w: stopped after %d redirects; the next one pointed to %s", ErrTooManyRedirects, t.cfg.MaxRedirects, req.URL.Redacted())
	}
	if err := t.checkURL(req.URL); err != nil {
		return &redirectError{to: req.URL.Redacted(), err: err}
	}
	if req.Method == http.MethodPost && len(via) > 0 && !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
		return &redirectError{to: req.URL.Redacted(), err: fmt.Errorf("%w: the server redirected the POST to another host, %s; http_fetch does not send the body on to another host", ErrBlocked, req.URL.Host)}
	}
	return nil
}

// redirectError is the refusal of a redirect target.
type redirectError struct {
	to  string
	err error
}

func (e *redirectError) Error() string { return "redirect to " + e.to + ": " + e.err.Error() }
func (e *redirectError) Unwrap() error { return e.err }

// dial connects to addr ("host:port"), resolving the host with the
// configured resolver if any; the dialer's Control checks every address.
func (t *Tool) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if _, err := netip.ParseAddr(host); err == nil || t.opts.resolver == nil {
		c, err := t.dialer.DialContext(ctx, network, addr)
		return c, withHost(err, host)
	}
	pn, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port %q: %w", port, err)
	}
	ips, err := t.opts.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	var first error
	for _, ip := range ips {
		c, err := t.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(pn)).String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = withHost(err, host)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// withHost names the host in an address refusal.
func withHost(err error, host string) error {
	var ae *addrError
	if err != nil && errors.As(err, &ae) {
		if _, err := netip.ParseAddr(host); err != nil { // a name, not a literal address
			return &addrError{host: host, addr: ae.addr, reason: ae.reason}
		}
		return ae
	}
	return err
}

// control checks the address a connection is about to be made to: after
// DNS resolution, so a name that resolves or re-binds to a forbidden
// address is refused.
func (t *Tool) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check address %q: %v", ErrBlocked, address, err)
	}
	if t.allowedAddr(ap) {
		return nil
	}
	return CheckAddr(ap.Addr())
}

type kind int

const (
	kindBinary kind = iota
	kindText
	kindHTML
	kindUnknown // no type, or application/octet-stream: sniffed
)

// kindOf classifies a media type (lower case, without parameters).
func kindOf(mt string) kind {
	switch mt {
	case "text/html", "application/xhtml+xml":
		return kindHTML
	case "", "application/octet-stream", "binary/octet-stream", "application/unknown":
		return kindUnknown
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-javascript", "application/x-ndjson", "application/ndjson", "application/jsonl",
		"application/yaml", "application/x-yaml", "application/toml", "application/csv", "application/sql",
		"application/graphql", "application/x-www-form-urlencoded", "application/x-sh", "application/x-tex",
		"application/rtf", "application/x-subrip", "message/rfc822":
		return kindText
	}
	if strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") || strings.HasSuffix(mt, "+yaml") {
		return kindText
	}
	return kindBinary
}

// render reads the response and turns it into the observation.
func (t *Tool) render(asked *url.URL, resp *http.Response) (string, error) {
	final := resp.Request.URL
	ct := resp.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	}
	k := kindOf(mt)
	if enc := strings.TrimSpace(resp.Header.Get("Content-Encoding")); enc != "" && !strings.EqualFold(enc, "identity") {
		return "", fmt.Errorf("%w: the response from %s is compressed with %q, which http_fetch cannot decode", ErrContentType, final.Redacted(), enc)
	}
	if resp.StatusCode >= 400 {
		return "", t.statusError(final, resp, k)
	}
	if k == kindBinary {
		return "", fmt.Errorf("%w: %s is %s (%s), not text; http_fetch returns only HTML, text, JSON and XML", ErrContentType, final.Redacted(), mt, sizeOf(resp, t.cfg.MaxBytes))
	}
	body, truncated, err := readLimited(resp.Body, t.cfg.MaxBytes)
	if err != nil {
		return "", fmt.Errorf("reading the response from %s: %w", final.Redacted(), err)
	}
	shownType := ct
	if k == kindUnknown && len(body) > 0 {
		sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(body))
		k = kindOf(sniffed)
		if k == kindBinary || k == kindUnknown {
			size := humanize.Comma(int64(len(body))) + " bytes"
			if truncated {
				size = "more than " + size
			}
			what := "has no content type"
			if mt != "" {
				what = "is " + mt
			}
			return "", fmt.Errorf("%w: %s %s and looks like %s (%s), not text; http_fetch returns only HTML, text, JSON and XML", ErrContentType, final.Redacted(), what, sniffed, size)
		}
		ct, shownType = sniffed, sniffed+" (sniffed; the server said "+cmp.Or(ct, "nothing")+")"
	}
	text := decodeText(body, ct, truncated)
	if k == kindHTML {
		text = HTMLToText(text, TextOptions{Links: t.cfg.Links, Base: final})
	} else {
		text = strings.TrimSpace(text)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s", final.Redacted())
	if final.String() != asked.String() {
		fmt.Fprintf(&b, " (redirected from %s)", asked.Redacted())
	}
	fmt.Fprintf(&b, "\nStatus: %s\n", resp.Status)
	if shownType != "" {
		fmt.Fprintf(&b, "Content-Type: %s\n", oneLine(shownType))
	}
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode/100 == 3 {
		fmt.Fprintf(&b, "Location: %s (redirect not followed)\n", oneLine(loc))
	}
	if truncated {
		fmt.Fprintf(&b, "Note: the response is longer than %d bytes; only the first %d bytes were read (truncated).\n", t.cfg.MaxBytes, t.cfg.MaxBytes)
	}
	b.WriteByte('\n')
	if text == "" {
		b.WriteString("(the response has no text)")
	} else {
		b.WriteString(cutRunes(text, t.cfg.MaxChars))
	}
	return b.String(), nil
}

// statusError is the error for a status of 400 or more, with an excerpt
// of a text body.
func (t *Tool) statusError(final *url.URL, resp *http.Response, k kind) error {
	const excerptRunes = 300
	excerpt := ""
	if k != kindBinary {
		body, truncated, _ := readLimited(resp.Body, min(t.cfg.MaxBytes, 64<<10))
		text := decodeText(body, resp.Header.Get("Content-Type"), truncated)
		if k == kindHTML || k == kindUnknown && strings.Contains(strings.ToLower(text[:min(len(text), 512)]), "<html") {
			text = HTMLToText(text, TextOptions{})
		}
		excerpt = strings.Join(strings.Fields(text), " ")
		if utf8.RuneCountInString(excerpt) > excerptRunes {
			excerpt = string([]rune(excerpt)[:excerptRunes]) + "..."
		}
	}
	msg := fmt.Sprintf("%s answered %s", final.Redacted(), resp.Status)
	if excerpt != "" {
		msg += ": " + excerpt
	}
	return fmt.Errorf("%w: %s", ErrStatus, msg)
}

// sizeOf describes a response's size without reading more than limit
// bytes of it.
func sizeOf(resp *http.Response, limit int64) string {
	if resp.ContentLength >= 0 {
		return humanize.Comma(resp.ContentLength) + " bytes"
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, limit+1))
	if n > limit {
		return "more than " + humanize.Comma(limit) + " bytes"
	}
	return humanize.Comma(n) + " bytes"
}

// readLimited reads up to limit bytes of r, reporting whether there was
// more.
func readLimited(r io.Reader, limit int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) > limit {
		return b[:limit], true, nil
	}
	return b, false, nil
}

// decodeText decodes a body to UTF-8 by its declared or detected charset;
// the result is valid UTF-8.
func decodeText(body []byte, contentType string, truncated bool) string {
	if truncated {
		body = trimPartialRune(body)
	}
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" || !certain && utf8.Valid(body) {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}

// trimPartialRune drops an incomplete UTF-8 sequence a byte limit cut off
// at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if c := b[len(b)-i]; utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// cutRunes cuts s to at most n runes, with a note saying how much was left
// out.
func cutRunes(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i] + fmt.Sprintf("\n[truncated: the text is %s characters long; only the first %s are shown]", humanize.Comma(int64(total)), humanize.Comma(int64(n)))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
