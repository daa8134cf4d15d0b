package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/planner-engine/planner/tools/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// httpServer serves the test server over streamable HTTP. Its handler can
// be replaced, as a restarted server that forgot its sessions.
type httpServer struct {
	*httptest.Server
	handler atomic.Pointer[http.Handler]
	mu      sync.Mutex
	headers []http.Header
}

func newHTTPServer(t *testing.T) *httpServer {
	s := &httpServer{}
	s.reset()
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		(*s.handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// reset installs a fresh handler, which knows none of the old sessions.
func (s *httpServer) reset() {
	srv := newTestServer(false)
	var h http.Handler = gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv }, nil)
	s.handler.Store(&h)
}

func (s *httpServer) seen(header string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, h := range s.headers {
		out = append(out, h.Get(header))
	}
	return out
}

func TestHTTPServerGetsHeadersWithEnvironmentVariables(t *testing.T) {
	t.Setenv("PLANNER_TEST_TOKEN", "tok-123")
	srv := newHTTPServer(t)
	c := connect(t, mcp.Config{URL: srv.URL, Headers: map[string]string{
		"Authorization": "Bearer ${PLANNER_TEST_TOKEN}",
		"X-Price":       "$5 or ${PLANNER_TEST_TOKEN}$",
	}})
	assert.ElementsMatch(t, testToolNames(false), names(c))
	assert.Equal(t, "127.0.0.1", c.Name())
	echo := toolNamed(t, c, "echo")
	assert.True(t, echo.Meta().Network)
	out, err := echo.Call(context.Background(), "over http")
	require.NoError(t, err)
	assert.Equal(t, "over http", out)

	auth := srv.seen("Authorization")
	require.NotEmpty(t, auth)
	for _, a := range auth {
		assert.Equal(t, "Bearer tok-123", a)
	}
	assert.Equal(t, "$5 or tok-123$", srv.seen("X-Price")[0])
}

func TestHTTPReconnectsWhenTheServerLostTheSession(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t)
	c := connect(t, mcp.Config{URL: srv.URL, Include: []string{"echo", "fail"}, Prefix: "web_"})
	assert.ElementsMatch(t, []string{"web_echo", "web_fail"}, names(c))
	echo := toolNamed(t, c, "web_echo")
	_, err := echo.Call(context.Background(), "one")
	require.NoError(t, err)

	srv.reset()
	_, err = echo.Call(context.Background(), "two")
	require.ErrorIs(t, err, mcp.ErrServerDown)
	out, err := echo.Call(context.Background(), "three")
	require.NoError(t, err)
	assert.Equal(t, "three", out)
	assert.Equal(t, 1, c.Restarts())

	_, err = toolNamed(t, c, "web_fail").Call(context.Background(), "")
	require.ErrorIs(t, err, mcp.ErrToolError)
}
