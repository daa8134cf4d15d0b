package planner

import (
	"context"

	"github.com/planner-engine/planner/telemetry"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// WithTracerProvider makes every run of the Engine's pipelines emit
// OpenTelemetry spans through tp, named and attributed after the GenAI
// semantic conventions: "invoke_agent {pipeline}" per run, "node {id}" per
// node execution, "chat {model}" per model call and "execute_tool {tool}"
// per tool call (see package telemetry). Prompts, completions and tool
// inputs and outputs are recorded, scrubbed by the Engine's scrubber, when
// the environment opts in (telemetry.ContentFromEnv) or opts say so
// (telemetry.WithContent(true)); opts come last and win. The caller owns tp
// and shuts it down. Default: none, unless the run's context already
// carries a provider (telemetry.WithProvider), which then applies; a nil tp
// is the default.
func WithTracerProvider(tp oteltrace.TracerProvider, opts ...telemetry.Option) Option {
	return func(o *options) { o.tracerProvider, o.telemetry = tp, opts }
}

// withTelemetry returns ctx carrying the Engine's tracer provider, if it has
// one, with the Engine's scrubber for recorded content.
func (e *Engine) withTelemetry(ctx context.Context) context.Context {
	if e.tracerProvider == nil {
		return ctx
	}
	opts := append([]telemetry.Option{telemetry.WithScrubber(e.scrub), telemetry.WithContent(telemetry.ContentFromEnv())}, e.telemetry...)
	return telemetry.WithProvider(ctx, e.tracerProvider, opts...)
}
