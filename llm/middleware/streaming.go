package middleware

import (
	"context"

	"github.com/tmc/langchaingo/llms"
)

// StreamSink receives streamed output chunks. Returning an error stops the
// stream and fails the call.
type StreamSink func(ctx context.Context, chunk []byte) error

// NewStreaming returns a middleware that turns on streaming for every call
// and sends each chunk to sink, for example to write tokens to a trace as
// they arrive. A streaming function passed by the caller keeps working: it
// receives each chunk first, then sink does. A nil sink leaves the model
// unchanged.
func NewStreaming(sink StreamSink) Middleware {
	if sink == nil {
		return func(m llms.Model) llms.Model { return m }
	}
	return func(next llms.Model) llms.Model {
		return Wrap(next, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
			var co llms.CallOptions
			for _, opt := range opts {
				opt(&co)
			}
			fn := func(ctx context.Context, chunk []byte) error { return sink(ctx, chunk) }
			if caller := co.StreamingFunc; caller != nil {
				fn = func(ctx context.Context, chunk []byte) error {
					if err := caller(ctx, chunk); err != nil {
						return err
					}
					return sink(ctx, chunk)
				}
			}
			all := append(append([]llms.CallOption(nil), opts...), llms.WithStreamingFunc(fn))
			return next.GenerateContent(ctx, msgs, all...)
		})
	}
}
