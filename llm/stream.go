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
// "step". A call that fails half way and is retried streams again from
// its start, with the next attempt number. The reply a streamed call
// returns is the same as without streaming. Without it (the default) no call streams unless its caller
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
// function (if any) has seen it. It returns ctx and opts unchanged when
// ctx does not ask for token events. When the caller streams nothing
// itself, the returned ctx lets the retry middleware retry a call that
// failed half way (middleware.WithRestartableStream): token events carry
// their attempt, so readers tell a restarted reply apart.
func withTokenStream(ctx context.Context, caller CallMeta, attempts *middleware.AttemptCounter, opts []llms.CallOption) (context.Context, []llms.CallOption) {
	te := tokenEventsFrom(ctx)
	if te == nil {
		return ctx, opts
	}
	tr := trace.From(ctx)
	if tr == nil {
		return ctx, opts
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
	if own == nil {
		ctx = middleware.WithRestartableStream(ctx)
	}
	return ctx, append(append(make([]llms.CallOption, 0, len(opts)+1), opts...), llms.WithStreamingFunc(emit))
}
