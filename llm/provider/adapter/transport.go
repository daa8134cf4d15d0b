package adapter

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// exchange records the status of the HTTP responses seen during one model
// call. langchaingo flattens HTTP failures into plain strings (and the
// native Ollama client can even drop a failed status with an empty body), so
// the model wrapper reads the status from here to build a *StatusError.
type exchange struct {
	mu         sync.Mutex
	status     int
	retryAfter string
}

func (x *exchange) record(resp *http.Response) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.status = resp.StatusCode
	x.retryAfter = resp.Header.Get("Retry-After")
}

// last returns the status and Retry-After header of the latest response;
// status 0 means no response arrived.
func (x *exchange) last() (status int, retryAfter string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.status, x.retryAfter
}

type exchangeKey struct{}

func withExchange(ctx context.Context, x *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, x)
}

func exchangeFrom(ctx context.Context) *exchange {
	x, _ := ctx.Value(exchangeKey{}).(*exchange)
	return x
}

// transport wraps the caller's round tripper: it adds an authentication
// header for adapters whose langchaingo client cannot send one itself, and
// records every response status in the call's exchange.
type transport struct {
	base http.RoundTripper
	// header and value, when header is not empty, are set on every request.
	header, value string
}

// RoundTrip implements http.RoundTripper. It clones the request before
// adding a header, as the RoundTripper contract requires.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.header != "" {
		req = req.Clone(req.Context())
		req.Header.Set(t.header, t.value)
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil {
		if x := exchangeFrom(req.Context()); x != nil {
			x.record(resp)
		}
	}
	return resp, err
}

// newHTTPClient builds the client an adapter uses: a shallow copy of base
// (or a new client) whose transport is wrapped, with the given timeout.
func newHTTPClient(base *http.Client, timeout time.Duration, header, value string) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &transport{base: rt, header: header, value: value}
	c.Timeout = timeout
	return &c
}
