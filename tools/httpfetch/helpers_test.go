package httpfetch_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/planner-engine/planner/tools/httpfetch"
	"github.com/stretchr/testify/require"
)

// server is a loopback test server that counts its requests.
type server struct {
	*httptest.Server
	hits atomic.Int32
	addr netip.AddrPort
}

func serve(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	s.addr = s.Listener.Addr().(*net.TCPAddr).AddrPort()
	return s
}

// allow lifts the address check for exactly this server's address and
// port; other loopback ports stay refused.
func (s *server) allow() httpfetch.Option {
	return httpfetch.WithAllowAddr(func(ap netip.AddrPort) bool {
		return ap.Addr().Unmap() == s.addr.Addr().Unmap() && ap.Port() == s.addr.Port()
	})
}

// port is the server's port, for URLs that name it through a host name.
func (s *server) port() uint16 { return s.addr.Port() }

func newTool(t *testing.T, cfg httpfetch.Config, opts ...httpfetch.Option) *httpfetch.Tool {
	t.Helper()
	tool, err := httpfetch.New(cfg, opts...)
	require.NoError(t, err)
	return tool
}

// fakeResolver answers from a fixed table and records the names asked.
type fakeResolver struct {
	mu    sync.Mutex
	hosts map[string][]netip.Addr
	asked []string
}

func newResolver(hosts map[string]string) *fakeResolver {
	f := &fakeResolver{hosts: map[string][]netip.Addr{}}
	for h, a := range hosts {
		f.hosts[h] = append(f.hosts[h], netip.MustParseAddr(a))
	}
	return f
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	host = strings.ToLower(host) // as DNS is
	f.asked = append(f.asked, host)
	if a, ok := f.hosts[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (f *fakeResolver) lookups() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

func urlWithPort(host string, port uint16, path string) string {
	return fmt.Sprintf("http://%s:%d%s", host, port, path)
}
