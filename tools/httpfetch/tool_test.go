package httpfetch_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/httpfetch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const page = `<!DOCTYPE html>
<html><head><title>Kepler &amp; the Planets</title>
<style>body { color: red }</style>
<script>var secret = "SCRIPT-SECRET";</script>
</head>
<body>
<nav><a href="/home">Home</a></nav>
<h1>Laws   of
 motion</h1>
<p>Kepler found <b>three</b> laws &mdash; see <a href="https://en.wikipedia.org/wiki/Kepler%27s_laws">Wikipedia</a>.</p>
<ul><li>Ellipses</li><li>Equal areas</li><li></li></ul>
<noscript>Enable JavaScript</noscript>
<template><p>TEMPLATE-SECRET</p></template>
<svg><text>SVG-SECRET</text></svg>
<div hidden>HIDDEN-SECRET</div>
</body></html>`

func TestFetchHTMLPageAsReadableText(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "test-agent/1", r.UserAgent())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	tool := newTool(t, httpfetch.Config{UserAgent: "test-agent/1", Links: true}, s.allow())
	out, err := tool.Call(context.Background(), s.URL+"/kepler")
	require.NoError(t, err)
	assert.Equal(t, "URL: "+s.URL+"/kepler\nStatus: 200 OK\nContent-Type: text/html; charset=utf-8\n\n"+
		"Kepler & the Planets\n\n"+
		"Home ("+s.URL+"/home)\n\n"+
		"# Laws of motion\n\n"+
		"Kepler found three laws — see Wikipedia (https://en.wikipedia.org/wiki/Kepler%27s_laws).\n\n"+
		"- Ellipses\n- Equal areas", out)
	for _, secret := range []string{"SECRET", "color", "JavaScript"} {
		assert.NotContains(t, out, secret)
	}
}

func TestFetchJSONAndPlainTextComeBackAsTheyAre(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"planet": "Mars", "moons": 2}`)
		case "/text":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "line one\n\n  line two  \n")
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9 cr\xe8me"))
		case "/meta-charset":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><head><meta charset=\"windows-1252\"><title>x</title></head><body><p>na\xefve \x93quotes\x94</p></body></html>"))
		case "/sniffed":
			w.Header().Set("Content-Type", "application/octet-stream")
			io.WriteString(w, "just some text, served as octet-stream")
		}
	})
	tool := newTool(t, httpfetch.Config{}, s.allow())
	ctx := context.Background()

	out, err := tool.Call(ctx, `{"url": "`+s.URL+`/json"}`)
	require.NoError(t, err)
	assert.Contains(t, out, "Content-Type: application/json\n\n{\"planet\": \"Mars\", \"moons\": 2}")

	out, err = tool.Call(ctx, s.URL+"/text")
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(out, "\n\nline one\n\n  line two"), out)

	out, err = tool.Call(ctx, s.URL+"/latin1")
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(out, "café crème"), out)

	out, err = tool.Call(ctx, s.URL+"/meta-charset")
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(out, "x\n\nnaïve “quotes”"), out)

	out, err = tool.Call(ctx, s.URL+"/sniffed")
	require.NoError(t, err)
	assert.Contains(t, out, "Content-Type: text/plain (sniffed; the server said application/octet-stream)")
	assert.True(t, strings.HasSuffix(out, "just some text, served as octet-stream"), out)
}

func TestInputForms(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	tool := newTool(t, httpfetch.Config{}, s.allow())
	for _, in := range []string{s.URL, " " + s.URL + "\n", `"` + s.URL + `"`, "<" + s.URL + ">", "GET " + s.URL, `{"url": "` + s.URL + `", "method": "get"}`, `{"input": "` + s.URL + `"}`} {
		out, err := tool.Call(context.Background(), in)
		require.NoError(t, err, in)
		assert.True(t, strings.HasSuffix(out, "\n\nok"), in)
	}
	for in, msg := range map[string]string{
		"":                                      "give the URL",
		`{"url": 3}`:                            "not a valid JSON object",
		`{"url": "` + s.URL + `", "body": "x"}`: "only sent with",
		"fetch " + s.URL + " please":            "give one URL",
		`{"url": "` + s.URL + `", "method": "DELETE"}`: "DELETE",
	} {
		_, err := tool.Call(context.Background(), in)
		require.ErrorIs(t, err, tools.ErrBadInput, in)
		assert.Contains(t, err.Error(), msg, in)
	}
}

func TestPostNeedsAllowPostAndApproval(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "type": r.Header.Get("Content-Type"), "body": string(b)})
	})

	get := newTool(t, httpfetch.Config{}, s.allow())
	assert.Equal(t, tools.Meta{ReadOnly: true, Network: true, Timeout: httpfetch.DefaultTimeout}, get.Meta())
	assert.NotContains(t, get.Schema()["properties"], "method")
	_, err := get.Call(context.Background(), `{"url": "`+s.URL+`", "method": "POST", "body": "hi"}`)
	require.ErrorIs(t, err, httpfetch.ErrMethod)
	require.ErrorIs(t, err, tools.ErrBadInput)
	assert.Contains(t, err.Error(), "POST is not enabled")
	assert.Zero(t, s.hits.Load(), "a refused POST must not reach the server")

	post := newTool(t, httpfetch.Config{AllowPost: true, Timeout: 5 * time.Second}, s.allow())
	assert.Equal(t, tools.Meta{ReadOnly: false, NeedsApproval: true, Network: true, Timeout: 5 * time.Second}, post.Meta())
	assert.Contains(t, post.Schema()["properties"], "body")
	assert.Contains(t, post.Description(), "POST")

	out, err := post.Call(context.Background(), `{"url": "`+s.URL+`", "method": "POST", "body": {"q": "mars"}}`)
	require.NoError(t, err)
	assert.Contains(t, out, `{"body":"{\"q\": \"mars\"}","method":"POST","type":"application/json"}`)
	out, err = post.Call(context.Background(), `{"url": "`+s.URL+`", "method": "post", "body": "a=1&b=2", "content_type": "application/x-www-form-urlencoded"}`)
	require.NoError(t, err)
	assert.Contains(t, out, `{"body":"a=1\u0026b=2","method":"POST","type":"application/x-www-form-urlencoded"}`)
	out, err = post.Call(context.Background(), s.URL)
	require.NoError(t, err)
	assert.Contains(t, out, `"method":"GET"`)

	// A tool that may POST stays a tool that needs approval when the
	// pipeline wraps it too.
	assert.True(t, tools.MetaOf(tools.RequireApproval(post)).NeedsApproval)
}

func TestPostIsNotRedirectedToAnotherHost(t *testing.T) {
	other := serve(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "got it") })
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "other.example.com", 1), http.StatusTemporaryRedirect)
	})
	res := newResolver(map[string]string{"other.example.com": "127.0.0.1"})
	tool := newTool(t, httpfetch.Config{AllowPost: true}, s.allow(), other.allow(), httpfetch.WithResolver(res))
	_, err := tool.Call(context.Background(), `{"url": "`+s.URL+`", "method": "POST", "body": "secret"}`)
	require.ErrorIs(t, err, httpfetch.ErrBlocked)
	assert.Contains(t, err.Error(), "redirected the POST to another host")
	assert.Zero(t, other.hits.Load())
}

func TestStatusErrorsQuoteTheBody(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "<html><title>Oops</title><body><h1>No such page</h1><p>"+strings.Repeat("filler ", 200)+"</p></body></html>")
	})
	tool := newTool(t, httpfetch.Config{}, s.allow())
	_, err := tool.Call(context.Background(), s.URL+"/missing")
	require.ErrorIs(t, err, httpfetch.ErrStatus)
	assert.False(t, errors.Is(err, tools.ErrBadInput))
	assert.Contains(t, err.Error(), "http_fetch: HTTP error: "+s.URL+"/missing answered 404 Not Found: Oops # No such page filler")
	assert.Less(t, len(err.Error()), 500)
}

func TestNonTextContentIsRefusedWithTypeAndSize(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 1992)))
		case "/blob":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte{0, 1, 2, 3, 0xff, 0xfe, 0, 0})
		case "/zip":
			w.Header().Set("Content-Type", "application/zip")
			w.(http.Flusher).Flush() // no Content-Length
			w.Write(make([]byte, 3000))
		}
	})
	tool := newTool(t, httpfetch.Config{}, s.allow())
	for path, msg := range map[string]string{
		"/png":  "is image/png (2,000 bytes), not text",
		"/blob": "is application/octet-stream and looks like application/octet-stream (8 bytes), not text",
		"/zip":  "is application/zip (3,000 bytes), not text",
	} {
		_, err := tool.Call(context.Background(), s.URL+path)
		require.ErrorIs(t, err, httpfetch.ErrContentType, path)
		assert.Contains(t, err.Error(), msg, path)
	}
}

func TestOversizedResponsesAreTruncated(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, strings.Repeat("ä", 5000)) // 10,000 bytes
	})
	tool := newTool(t, httpfetch.Config{MaxBytes: 1001}, s.allow())
	out, err := tool.Call(context.Background(), s.URL)
	require.NoError(t, err)
	assert.Contains(t, out, "only the first 1001 bytes were read (truncated)")
	assert.True(t, utf8.ValidString(out))
	assert.Equal(t, 500, strings.Count(out, "ä"), "the half rune at the cut is dropped")

	tool = newTool(t, httpfetch.Config{MaxChars: 10}, s.allow())
	out, err = tool.Call(context.Background(), s.URL)
	require.NoError(t, err)
	assert.True(t, utf8.ValidString(out))
	assert.True(t, strings.HasSuffix(out, "\n\näääääääääa\n[truncated: the text is 5,000 characters long; only the first 10 are shown]") ||
		strings.HasSuffix(out, "\n\nääääääääää\n[truncated: the text is 5,000 characters long; only the first 10 are shown]"), out)
}

func TestSlowServersTimeOut(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/drip" {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "first bytes")
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	})
	tool := newTool(t, httpfetch.Config{Timeout: 150 * time.Millisecond}, s.allow())
	assert.Equal(t, 150*time.Millisecond, tool.Meta().Timeout)
	for _, path := range []string{"/stall", "/drip"} {
		start := time.Now()
		_, err := tool.Call(context.Background(), s.URL+path)
		require.ErrorIs(t, err, httpfetch.ErrTimeout, path)
		require.ErrorIs(t, err, tools.ErrToolTimeout, path)
		assert.Contains(t, err.Error(), "within 150ms")
		assert.Less(t, time.Since(start), 5*time.Second)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tool.Call(ctx, s.URL+"/stall")
	require.ErrorIs(t, err, context.Canceled)
}

func TestRedirects(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/a":
			http.Redirect(w, r, "/b", http.StatusMovedPermanently)
		case "/b":
			http.Redirect(w, r, "/c", http.StatusFound)
		default:
			io.WriteString(w, "arrived at "+r.URL.Path)
		}
	})
	tool := newTool(t, httpfetch.Config{MaxRedirects: 3}, s.allow())
	out, err := tool.Call(context.Background(), s.URL+"/a")
	require.NoError(t, err)
	assert.Contains(t, out, "URL: "+s.URL+"/c (redirected from "+s.URL+"/a)")
	assert.True(t, strings.HasSuffix(out, "arrived at /c"))

	s.hits.Store(0)
	_, err = tool.Call(context.Background(), s.URL+"/loop")
	require.ErrorIs(t, err, httpfetch.ErrTooManyRedirects)
	assert.Contains(t, err.Error(), "stopped after 3 redirects")
	assert.EqualValues(t, 4, s.hits.Load())

	none := newTool(t, httpfetch.Config{MaxRedirects: -1}, s.allow())
	out, err = none.Call(context.Background(), s.URL+"/a")
	require.NoError(t, err)
	assert.Contains(t, out, "Status: 301 Moved Permanently\n")
	assert.Contains(t, out, "Location: /b (redirect not followed)\n")
}

func TestRedirectsToForbiddenPlacesAreRefused(t *testing.T) {
	inner := serve(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "internal secrets") })
	res := newResolver(map[string]string{"innocent.example.com": "127.0.0.1"})
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-other-port": // another loopback port, not allowed
			http.Redirect(w, r, inner.URL+"/", http.StatusFound)
		case "/to-private":
			http.Redirect(w, r, "http://10.1.2.3/admin", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-userinfo":
			http.Redirect(w, r, "http://user:pw@example.com/", http.StatusFound)
		case "/to-name":
			http.Redirect(w, r, urlWithPort("innocent.example.com", inner.port(), "/"), http.StatusFound)
		case "/to-localhost":
			http.Redirect(w, r, urlWithPort("localhost", inner.port(), "/"), http.StatusFound)
		}
	})
	tool := newTool(t, httpfetch.Config{}, s.allow(), httpfetch.WithResolver(res))
	for path, want := range map[string]struct {
		err error
		msg string
	}{
		"/to-other-port": {httpfetch.ErrBlocked, "redirect to " + inner.URL + "/: refused: 127.0.0.1 is a loopback address"},
		"/to-private":    {httpfetch.ErrBlocked, "10.1.2.3 is a private address"},
		"/to-metadata":   {httpfetch.ErrBlocked, "169.254.169.254 is a cloud metadata address"},
		"/to-file":       {httpfetch.ErrScheme, "file: URLs are not fetched"},
		"/to-userinfo":   {httpfetch.ErrBadURL, "user name or password"},
		"/to-name":       {httpfetch.ErrBlocked, "innocent.example.com resolved to 127.0.0.1, which is a loopback address"},
		"/to-localhost":  {httpfetch.ErrBlocked, "localhost is a local or internal host name"},
	} {
		_, err := tool.Call(context.Background(), s.URL+path)
		require.ErrorIs(t, err, want.err, path)
		require.ErrorIs(t, err, tools.ErrBadInput, path)
		assert.Contains(t, err.Error(), want.msg, path)
	}
	assert.Zero(t, inner.hits.Load(), "no redirect may reach the inner server")
	assert.Equal(t, []string{"innocent.example.com"}, res.lookups())
}

func TestDNSRebindingIsRefusedAtDialTime(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "internal secrets") })
	res := newResolver(map[string]string{"public.example.com": "127.0.0.1", "mixed.example.com": "10.0.0.7"})
	res.hosts["mixed.example.com"] = append(res.hosts["mixed.example.com"], s.addr.Addr())
	tool := newTool(t, httpfetch.Config{}, httpfetch.WithResolver(res))
	_, err := tool.Call(context.Background(), urlWithPort("public.example.com", s.port(), "/"))
	require.ErrorIs(t, err, httpfetch.ErrBlocked)
	require.ErrorIs(t, err, tools.ErrBadInput)
	assert.Contains(t, err.Error(), "refused: public.example.com resolved to 127.0.0.1, which is a loopback address")
	_, err = tool.Call(context.Background(), urlWithPort("mixed.example.com", s.port(), "/"))
	require.ErrorIs(t, err, httpfetch.ErrBlocked)
	assert.Contains(t, err.Error(), "mixed.example.com resolved to 10.0.0.7, which is a private address")
	assert.Zero(t, s.hits.Load())

	// The same name reaches the server once its address is allowed: the
	// refusal above is the address check's, not a failed lookup.
	allowed := newTool(t, httpfetch.Config{}, httpfetch.WithResolver(res), s.allow())
	out, err := allowed.Call(context.Background(), urlWithPort("public.example.com", s.port(), "/"))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(out, "internal secrets"))

	_, err = tool.Call(context.Background(), urlWithPort("unknown.example.com", s.port(), "/"))
	require.ErrorIs(t, err, httpfetch.ErrRequest)
	assert.Contains(t, err.Error(), "could not resolve unknown.example.com: no such host")
}

func TestAllowHosts(t *testing.T) {
	var s *server
	s = serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, urlWithPort("elsewhere.org", s.port(), "/"), http.StatusFound)
			return
		}
		io.WriteString(w, "hello from "+r.Host)
	})
	res := newResolver(map[string]string{
		"docs.example.com": "127.0.0.1", "a.b.example.com": "127.0.0.1", "example.com": "127.0.0.1",
		"api.test.org": "127.0.0.1", "www.test.org": "127.0.0.1", "elsewhere.org": "127.0.0.1",
	})
	tool := newTool(t, httpfetch.Config{AllowHosts: []string{"*.Example.com", "api.test.org."}}, s.allow(), httpfetch.WithResolver(res))
	assert.Contains(t, tool.Description(), "Only these hosts can be fetched: *.example.com, api.test.org.")
	for _, host := range []string{"docs.example.com", "A.B.EXAMPLE.COM", "api.test.org"} {
		out, err := tool.Call(context.Background(), urlWithPort(host, s.port(), "/"))
		require.NoError(t, err, host)
		assert.Contains(t, out, "hello from", host)
	}
	for _, host := range []string{"example.com", "www.test.org", "elsewhere.org", "127.0.0.1"} {
		_, err := tool.Call(context.Background(), urlWithPort(host, s.port(), "/"))
		require.ErrorIs(t, err, httpfetch.ErrHostNotAllowed, host)
		require.ErrorIs(t, err, tools.ErrBadInput, host)
		assert.Contains(t, err.Error(), "is not in this tool's allow_hosts (*.example.com, api.test.org)", host)
	}
	_, err := tool.Call(context.Background(), urlWithPort("docs.example.com", s.port(), "/away"))
	require.ErrorIs(t, err, httpfetch.ErrHostNotAllowed)
	assert.Contains(t, err.Error(), "redirect to http://elsewhere.org:")
	assert.NotContains(t, res.lookups(), "elsewhere.org")
}

func TestConfigErrorsNameTheSetting(t *testing.T) {
	for key, cfg := range map[string]httpfetch.Config{
		"max_bytes":      {MaxBytes: -1},
		"max_chars":      {MaxChars: -5},
		"timeout":        {Timeout: -time.Second},
		"max_redirects":  {MaxRedirects: 100},
		"max_url_length": {MaxURLLength: -1},
		"user_agent":     {UserAgent: "a\r\nX-Injected: 1"},
	} {
		_, err := httpfetch.New(cfg)
		require.ErrorIs(t, err, httpfetch.ErrConfig, key)
		var ce *httpfetch.ConfigError
		require.ErrorAs(t, err, &ce, key)
		assert.Equal(t, key, ce.Key)
	}
	for _, pattern := range []string{"https://example.com", "example.com:443", "*.*.example.com", "ex*mple.com", "", "localhost", "*.internal", "metadata.google.internal", "intranet", "exa mple.com"} {
		_, err := httpfetch.New(httpfetch.Config{AllowHosts: []string{pattern}})
		var ce *httpfetch.ConfigError
		require.ErrorAs(t, err, &ce, pattern)
		assert.Equal(t, "allow_hosts", ce.Key, pattern)
	}
	tool := newTool(t, httpfetch.Config{AllowHosts: []string{"bücher.example", "93.184.215.14", "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]"}})
	assert.Contains(t, tool.Description(), "xn--bcher-kva.example, 93.184.215.14, 2606:2800:21f:cb07:6820:80da:af6b:8b2c")
}

func TestDefaultsAndDescription(t *testing.T) {
	tool := newTool(t, httpfetch.Config{})
	cfg := tool.Config()
	assert.Equal(t, httpfetch.Config{MaxBytes: 2 << 20, MaxChars: 20000, Timeout: 20 * time.Second, MaxRedirects: 5, MaxURLLength: 2048, UserAgent: httpfetch.DefaultUserAgent}, cfg)
	assert.Equal(t, "http_fetch", tool.Name())
	d := tool.Description()
	assert.Equal(t, tools.CleanDescription(d), d)
	assert.NotRegexp(t, `^"|"$|[\t\n]|  `, d)
	post := newTool(t, httpfetch.Config{AllowPost: true})
	assert.Equal(t, tools.CleanDescription(post.Description()), post.Description())
	assert.Equal(t, []any{"url"}, tool.Schema()["required"])
}
