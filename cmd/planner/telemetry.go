package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/telemetry/otlp"
	"github.com/spf13/cobra"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// telemetryFlush bounds the flush of the spans at exit, under the stop
// grace a signal leaves.
const telemetryFlush = 2 * time.Second

// tracedCommands are the commands whose runs emit OpenTelemetry spans when
// the environment configures an exporter (otlp.FromEnv).
var tracedCommands = map[string]bool{"run": true, "resume": true, "compare": true}

// otelSetup starts OpenTelemetry for a traced command and shuts it down
// when the command is done. The traced commands build their engine with
// its provider (app.WithTracerProvider).
type otelSetup struct {
	stderr   io.Writer
	scrub    *redact.Scrubber
	tp       oteltrace.TracerProvider
	shutdown func(context.Context) error
}

// appOptions returns the app options that give an engine the command's
// tracer provider: none when OpenTelemetry is off (or o is nil).
func (o *otelSetup) appOptions() []app.Option {
	if o == nil || o.tp == nil {
		return nil
	}
	return []app.Option{app.WithTracerProvider(o.tp)}
}

// wire makes root's traced commands run with the tracer provider the
// OTEL_* environment variables configure (none unless
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set):
// it is built before the command runs, and the command's engine gets it
// (appOptions). Call close when the command has returned.
func (o *otelSetup) wire(root *cobra.Command) {
	pre := root.PersistentPreRunE
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if pre != nil {
			if err := pre(c, args); err != nil {
				return err
			}
		}
		if tracedCommands[c.Name()] && c.Parent() == root {
			o.start(c)
		}
		return nil
	}
}

// start builds the provider; a bad setting is reported and the command runs
// without spans.
func (o *otelSetup) start(c *cobra.Command) {
	tp, shutdown, err := otlp.FromEnv(c.Context())
	if err != nil {
		fmt.Fprintf(o.stderr, "planner: OpenTelemetry off: %s\n", o.scrub.String(err.Error()))
		return
	}
	if tp == nil {
		return
	}
	o.tp, o.shutdown = tp, shutdown
}

// close flushes the spans still batched, within telemetryFlush.
func (o *otelSetup) close() {
	if o.shutdown == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetryFlush)
	defer cancel()
	if err := o.shutdown(ctx); err != nil {
		fmt.Fprintf(o.stderr, "planner: OpenTelemetry: %s\n", o.scrub.String(err.Error()))
	}
}
