package llmtest

import (
	"context"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// Stream writes its chunks, in order, through the call's streaming
// function (llms.WithStreamingFunc; a call without one gets no chunks),
// then answers with their concatenation, or fails with Err: a stream that
// breaks after its chunks. Before each chunk it waits Interval and runs
// Before, whether or not the call streams. A call whose context ends
// while it waits fails with the context's error.
type Stream struct {
	// Chunks are the parts of the reply, streamed in order.
	Chunks []string
	// Interval is waited before each chunk: a model that writes at a
	// pace.
	Interval time.Duration
	// Before, when set, runs before chunk i is written (after Interval);
	// its error ends the call with that error. It may block, to hold the
	// stream until the test lets it go on, and it is called from the
	// goroutines of concurrent calls.
	Before func(ctx context.Context, i int) error
	// Err, when set, fails the call after its chunks were streamed.
	Err error
}

// GenerateContent streams the chunks and answers.
func (s *Stream) GenerateContent(ctx context.Context, _ []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	o := Options(opts...)
	for i, c := range s.Chunks {
		if err := sleep(ctx, s.Interval); err != nil {
			return nil, err
		}
		if s.Before != nil {
			if err := s.Before(ctx, i); err != nil {
				return nil, err
			}
		}
		if o.StreamingFunc != nil {
			if err := o.StreamingFunc(ctx, []byte(c)); err != nil {
				return nil, err
			}
		}
	}
	if s.Err != nil {
		return nil, s.Err
	}
	return TextResponse(strings.Join(s.Chunks, "")), nil
}

// Call answers a single prompt through GenerateContent.
func (s *Stream) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, opts...)
}
