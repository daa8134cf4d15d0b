package planner

import (
	"github.com/planner-engine/planner/telemetry"
	"github.com/planner-engine/planner/trace"
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
// and shuts it down. Default: none; a nil tp is the default.
func WithTracerProvider(tp oteltrace.TracerProvider, opts ...telemetry.Option) Option {
	return func(o *options) { o.tracerProvider, o.telemetry = tp, opts }
}

// newSpans returns the Engine's span maker: nil without a tracer
// provider, else one that records content scrubbed by the Engine's
// scrubber.
func newSpans(tp oteltrace.TracerProvider, scrub trace.Scrubber, opts []telemetry.Option) *telemetry.Provider {
	if tp == nil {
		return nil
	}
	return telemetry.New(tp, append([]telemetry.Option{telemetry.WithScrubber(scrub), telemetry.WithContent(telemetry.ContentFromEnv())}, opts...)...)
}
