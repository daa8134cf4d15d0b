package mcp

import "net/http"

// httpClient returns base (or a new client) sending headers with every
// request. Headers the MCP transport sets itself (Content-Type, Accept,
// Mcp-Session-Id, ...) are left as the transport set them.
func httpClient(base *http.Client, headers map[string]string) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	}
	if len(headers) == 0 {
		return &c
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v)
	}
	c.Transport = &headerTransport{base: rt, headers: h}
	return &c
}

// headerTransport adds fixed headers to each request.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

// RoundTrip implements http.RoundTripper.
func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		if _, set := r.Header[k]; !set {
			r.Header[k] = v
		}
	}
	return t.base.RoundTrip(r)
}
