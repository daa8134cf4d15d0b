package adapter

import (
	"context"
	"net/http"
	"time"

	"github.com/planner-engine/planner/llm/middleware"
)

// observe returns ctx carrying the Observation of the call's HTTP
// exchanges: the one ctx has (the retry middleware makes one per
// attempt), else a new one. langchaingo flattens HTTP failures into plain
// strings (and the native Ollama client can even drop a failed status
// with an empty body), so the model wrapper reads the status from it to
// build a *StatusError.
func observe(ctx context.Context) (context.Context, *middleware.Observation) {
	if obs := middleware.ObservationFrom(ctx); obs != nil {
		return ctx, obs
	}
	return middleware.WithObservation(ctx)
}

// transport wraps the caller's round tripper: it adds an authentication
// header for adapters whose langchaingo client cannot send one itself.
// Beneath it a middleware.ObservingTransport records every response in
// the call's Observation (observe).
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
	return t.base.RoundTrip(req)
}

// newHTTPClient builds the client an adapter uses: a shallow copy of base
// (or a new client) whose transport is wrapped, with the given timeout.
// With split, a middleware.LongLineTransport outermost makes the lines of
// streamed replies fit langchaingo's stream readers (splitterFor).
func newHTTPClient(base *http.Client, timeout time.Duration, header, value string, split middleware.SplitFunc) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if _, ok := rt.(*middleware.ObservingTransport); !ok {
		rt = &middleware.ObservingTransport{Base: rt}
	}
	c.Transport = &transport{base: rt, header: header, value: value}
	if split != nil {
		c.Transport = &middleware.LongLineTransport{Base: c.Transport, Split: split}
	}
	c.Timeout = timeout
	return &c
}
