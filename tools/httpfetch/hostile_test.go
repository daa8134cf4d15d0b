package httpfetch_test

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/httpfetch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileURLsAreRefused checks that every URL a prompt injection might
// try is refused before anything is resolved or dialled, even by a tool
// whose escape hatch lets it reach one loopback test server.
func TestHostileURLsAreRefused(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") })
	res := newResolver(nil)
	tool := newTool(t, httpfetch.Config{}, s.allow(), httpfetch.WithResolver(res))
	cases := []struct {
		url  string
		err  error
		says string
	}{
		{"file:///etc/passwd", httpfetch.ErrScheme, "file: URLs are not fetched"},
		{"FILE:///etc/passwd", httpfetch.ErrScheme, "file: URLs are not fetched"},
		{"gopher://example.com:70/_GET", httpfetch.ErrScheme, "gopher: URLs"},
		{"ftp://example.com/pub/file.txt", httpfetch.ErrScheme, "ftp: URLs"},
		{"data:text/html,<script>alert(1)</script>", httpfetch.ErrScheme, "data: URLs"},
		{"javascript:alert(1)", httpfetch.ErrScheme, "javascript: URLs"},
		{"dict://127.0.0.1:11211/stat", httpfetch.ErrScheme, "dict: URLs"},
		{"example.com/page", httpfetch.ErrScheme, "has no scheme"},
		{"//example.com/page", httpfetch.ErrScheme, "has no scheme"},
		{"http:example.com", httpfetch.ErrBadURL, "has no host"},
		{"http://", httpfetch.ErrBadURL, "has no host"},
		{"http://user:pass@example.com/", httpfetch.ErrBadURL, "user name or password"},
		{"http://user@example.com/", httpfetch.ErrBadURL, "user name or password"},
		{"http://example.com:0/", httpfetch.ErrBadURL, "port"},
		{"http://example.com/" + strings.Repeat("a", 3000), httpfetch.ErrBadURL, "more than the 2048 allowed"},
		{"http://127.0.0.1/", httpfetch.ErrBlocked, "127.0.0.1 is a loopback address"},
		{"HTTP://127.0.0.1:8080/admin", httpfetch.ErrBlocked, "127.0.0.1 is a loopback address"},
		{"http://127.0.0.2/", httpfetch.ErrBlocked, "loopback"},
		{"http://[::1]/", httpfetch.ErrBlocked, "::1 is a loopback address"},
		{"http://localhost/", httpfetch.ErrBlocked, "localhost is a local or internal host name"},
		{"http://LocalHost./", httpfetch.ErrBlocked, "localhost is a local or internal host name"},
		{"http://app.localhost/", httpfetch.ErrBlocked, "local or internal host name (localhost, *.localhost)"},
		{"http://10.1.2.3/", httpfetch.ErrBlocked, "10.1.2.3 is a private address"},
		{"http://192.168.0.1/", httpfetch.ErrBlocked, "192.168.0.1 is a private address"},
		{"http://172.16.0.1/", httpfetch.ErrBlocked, "172.16.0.1 is a private address"},
		{"http://172.31.255.255/", httpfetch.ErrBlocked, "private"},
		{"http://[fd12:3456::1]/", httpfetch.ErrBlocked, "private"},
		{"http://169.254.169.254/latest/meta-data/iam/", httpfetch.ErrBlocked, "169.254.169.254 is a cloud metadata address"},
		{"http://169.254.1.1/", httpfetch.ErrBlocked, "link-local"},
		{"http://[fd00:ec2::254]/latest/meta-data/", httpfetch.ErrBlocked, "fd00:ec2::254 is a cloud metadata address"},
		{"http://100.100.100.200/latest/meta-data/", httpfetch.ErrBlocked, "cloud metadata"},
		{"http://metadata.google.internal/computeMetadata/v1/", httpfetch.ErrBlocked, "metadata.google.internal is a cloud metadata service"},
		{"http://db.internal/", httpfetch.ErrBlocked, "(*.internal)"},
		{"http://printer.local/", httpfetch.ErrBlocked, "(*.local)"},
		{"http://router.home.arpa/", httpfetch.ErrBlocked, "(*.arpa)"},
		{"http://fileserver/", httpfetch.ErrBlocked, "fileserver is a single-label (intranet) host name"},
		{"http://intranet/", httpfetch.ErrBlocked, "(*.intranet)"},
		{"http://0.0.0.0/", httpfetch.ErrBlocked, "0.0.0.0 is the unspecified address"},
		{"http://0.1.2.3/", httpfetch.ErrBlocked, "this network"},
		{"http://[::]/", httpfetch.ErrBlocked, "unspecified"},
		{"http://[::ffff:127.0.0.1]/", httpfetch.ErrBlocked, "the IPv4-mapped form of 127.0.0.1, a loopback address"},
		{"http://[::ffff:7f00:1]/", httpfetch.ErrBlocked, "IPv4-mapped form of 127.0.0.1"},
		{"http://[::ffff:169.254.169.254]/", httpfetch.ErrBlocked, "IPv4-mapped form of 169.254.169.254, a cloud metadata address"},
		{"http://[::ffff:10.0.0.1]/", httpfetch.ErrBlocked, "IPv4-mapped form of 10.0.0.1, a private address"},
		{"http://[::127.0.0.1]/", httpfetch.ErrBlocked, "IPv4-compatible form of 127.0.0.1"},
		{"http://[64:ff9b::127.0.0.1]/", httpfetch.ErrBlocked, "the NAT64 form of 127.0.0.1, a loopback address"},
		{"http://[64:ff9b::a9fe:a9fe]/", httpfetch.ErrBlocked, "NAT64 form of 169.254.169.254"},
		{"http://[2002:7f00:1::]/", httpfetch.ErrBlocked, "the 6to4 form of 127.0.0.1"},
		{"http://[2002:c0a8:101::1]/", httpfetch.ErrBlocked, "6to4 form of 192.168.1.1, a private address"},
		{"http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", httpfetch.ErrBlocked, "Teredo"},
		{"http://[fe80::1]/", httpfetch.ErrBlocked, "fe80::1 is a link-local address"},
		{"http://[fe80::1%25eth0]/", httpfetch.ErrBlocked, "IPv6 zone"},
		{"http://[fec0::1]/", httpfetch.ErrBlocked, "site-local"},
		{"http://2130706433/", httpfetch.ErrBlocked, "2130706433 looks like an IP address in a non-standard form"},
		{"http://0x7f.0.0.1/", httpfetch.ErrBlocked, "non-standard form"},
		{"http://0x7f000001/", httpfetch.ErrBlocked, "non-standard form"},
		{"http://0177.0.0.1/", httpfetch.ErrBlocked, "non-standard form"},
		{"http://017700000001/", httpfetch.ErrBlocked, "non-standard form"},
		{"http://127.1/", httpfetch.ErrBlocked, "non-standard form"},
		{"http://10.1/", httpfetch.ErrBlocked, "non-standard form"},
		{"http://224.0.0.1/", httpfetch.ErrBlocked, "224.0.0.1 is a multicast address"},
		{"http://239.255.255.250:1900/", httpfetch.ErrBlocked, "multicast"},
		{"http://[ff02::1]/", httpfetch.ErrBlocked, "multicast"},
		{"http://255.255.255.255/", httpfetch.ErrBlocked, "the broadcast address"},
		{"http://100.64.0.1/", httpfetch.ErrBlocked, "carrier-grade NAT"},
		{"http://192.0.2.1/", httpfetch.ErrBlocked, "documentation"},
		{"http://198.18.0.1/", httpfetch.ErrBlocked, "benchmarking"},
		{"http://240.0.0.1/", httpfetch.ErrBlocked, "reserved"},
	}
	for _, tc := range cases {
		for _, in := range []string{tc.url, `{"url": ` + jsonString(tc.url) + `}`} {
			out, err := tool.Call(context.Background(), in)
			require.Error(t, err, in)
			assert.Empty(t, out, in)
			assert.ErrorIs(t, err, tc.err, in)
			assert.ErrorIs(t, err, tools.ErrBadInput, in)
			assert.Contains(t, err.Error(), tc.says, in)
			assert.True(t, strings.HasPrefix(err.Error(), "http_fetch: "), in)
		}
	}
	assert.Empty(t, res.lookups(), "hostile URLs are refused before any lookup")
	assert.Zero(t, s.hits.Load())
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

func TestCheckAddr(t *testing.T) {
	for _, a := range []string{
		"127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "169.254.0.1", "100.64.0.1",
		"100.127.255.255", "0.0.0.0", "255.255.255.255", "224.0.0.1", "::", "::1", "fe80::1", "fc00::1", "fd00:ec2::254",
		"ff02::1", "::ffff:127.0.0.1", "::ffff:10.1.1.1", "64:ff9b::10.0.0.1", "64:ff9b:1::1", "2002:0a00:0001::1",
		"2001:db8::1", "100::1", "::ffff:0:7f00:1", "5f00::1", "fe80::1%eth0",
	} {
		err := httpfetch.CheckAddr(netip.MustParseAddr(a))
		assert.ErrorIs(t, err, httpfetch.ErrBlocked, a)
	}
	for _, a := range []string{
		"93.184.215.14", "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.32.0.1", "2606:4700:4700::1111",
		"2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:0808:0808::1",
	} {
		assert.NoError(t, httpfetch.CheckAddr(netip.MustParseAddr(a)), a)
	}
	assert.ErrorIs(t, httpfetch.CheckAddr(netip.Addr{}), httpfetch.ErrBlocked)
}

// TestLoopbackHatchKeepsOtherChecks checks that WithAllowLoopback lifts
// only the loopback refusal.
func TestLoopbackHatchKeepsOtherChecks(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "local") })
	tool := newTool(t, httpfetch.Config{}, httpfetch.WithAllowLoopback())
	out, err := tool.Call(context.Background(), s.URL)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(out, "local"))
	for _, u := range []string{"http://localhost/", "http://10.0.0.1/", "http://169.254.169.254/", "file:///etc/passwd", "http://u:p@127.0.0.1/"} {
		_, err := tool.Call(context.Background(), u)
		require.ErrorIs(t, err, tools.ErrBadInput, u)
	}
}
