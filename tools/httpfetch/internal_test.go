package httpfetch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDialTimeCheckWithTheSystemResolver dials past the URL checks, as a
// rebound name would arrive at the dialer, and checks that the dialer's
// own check refuses the address.
func TestDialTimeCheckWithTheSystemResolver(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	tool, err := New(Config{})
	require.NoError(t, err)
	conn, err := tool.dial(context.Background(), "tcp", srv.Listener.Addr().String())
	if conn != nil {
		conn.Close()
	}
	require.ErrorIs(t, err, ErrBlocked)
	assert.Contains(t, err.Error(), "is a loopback address")
}

// TestNoEnvironmentProxy checks the transport never takes a proxy from
// the environment, which would connect for it past the address check.
func TestNoEnvironmentProxy(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://198.51.100.7:3128")
	t.Setenv("HTTPS_PROXY", "http://198.51.100.7:3128")
	tool, err := New(Config{})
	require.NoError(t, err)
	tr, ok := tool.client.Transport.(*http.Transport)
	require.True(t, ok)
	assert.Nil(t, tr.Proxy)
	assert.Nil(t, tool.client.Jar, "no cookies are kept between calls")
	var d net.Dialer
	assert.NotNil(t, tool.dialer.Control)
	assert.Nil(t, d.Control)
}
