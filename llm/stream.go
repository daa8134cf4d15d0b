package llm

import (
	"context"
	"sync/atomic"

	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// tokenEvents is what WithTokenEvents puts in a context: the run's counter
// of streamed calls, which numbers each call's token events.
type tokenEvents struct {
	calls atomic.Int64
}

type tokenEventsKey struct{}

// WithTokenEvents returns ctx whose model calls (Model.Call) stream: every
// chunk of a reply is emitted, as it arrives, as a trace event of kind
// trace.KindToken from the calling node. Its Text is the chunk; its Data
// holds "call" (the call's number in the run, from 1, shared by the
// chunks of one call, so concurrent calls can be told apart), "attempt"
// (the attempt of the retry middleware that produced it, from 1: a
// retried call streams again from its start) and, when set, "role" and
// "step". The reply a streamed call returns is the same as without
// streaming. Without it (the default) no call streams unless its caller
// passes llms.WithStreamingFunc, and no token events are emitted.
//
// Token events are many: sinks that do not want them filter them out (see
// trace.DropKinds).
func WithTokenEvents(ctx context.Context) context.Context {
	if tokenEventsFrom(ctx) != nil {
		return ctx
	}
	return context.WithValue(ctx, tokenEventsKey{}, &tokenEvents{})
}

// TokenEventsOn reports whether ctx's model calls emit token events (see
// WithTokenEvents).
func TokenEventsOn(ctx context.Context) bool { return tokenEventsFrom(ctx) != nil }

func tokenEventsFrom(ctx context.Context) *tokenEvents {
	t, _ := ctx.Value(tokenEventsKey{}).(*tokenEvents)
	return t
}

// withTokenStream adds to opts a streaming function that emits each chunk
// as a token event of caller's node, after the caller's own streaming
// function (if any) has seen it. It returns opts unchanged when ctx does
// not ask for token events.
func withTokenStream(ctx context.Context, caller CallMeta, attempts *middleware.AttemptCounter, opts []llms.CallOption) []llms.CallOption {
	te := tokenEventsFrom(ctx)
	if te == nil {
		return opts
	}
	tr := trace.From(ctx)
	if tr == nil {
		return opts
	}
	call := te.calls.Add(1)
	var own func(context.Context, []byte) error
	for _, o := range opts {
		var co llms.CallOptions
		o(&co)
		if co.StreamingFunc != nil {
			own = co.StreamingFunc
		}
	}
	emit := func(ctx context.Context, chunk []byte) error {
		if own != nil {
			if err := own(ctx, chunk); err != nil {
				return err
			}
		}
		if len(chunk) == 0 {
			return nil
		}
		data := map[string]any{"call": call, "attempt": max(attempts.Attempts(), 1)}
		if caller.Role != "" {
			data["role"] = caller.Role
		}
		if caller.StepID != "" {
			data["step"] = caller.StepID
		}
		tr.Emit(trace.Event{Node: caller.Node, Kind: trace.KindToken, Text: string(chunk), Data: data})
		return nil
	}
	return append(append(make([]llms.CallOption, 0, len(opts)+1), opts...), llms.WithStreamingFunc(emit))
}
