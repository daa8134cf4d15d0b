package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/telemetry"
	"github.com/planner-engine/planner/telemetry/otlp"
	"github.com/spf13/cobra"
)

// telemetryFlush bounds the flush of the spans at exit, under the stop
// grace a signal leaves.
const telemetryFlush = 2 * time.Second

// tracedCommands are the commands whose runs emit OpenTelemetry spans when
// the environment configures an exporter (otlp.FromEnv).
var tracedCommands = map[string]bool{"run": true, "resume": true, "compare": true}

// otelSetup starts OpenTelemetry for a traced command and shuts it down
// when the command is done.
type otelSetup struct {
	stderr   io.Writer
	shutdown func(context.Context) error
}

// wireTelemetry makes root's traced commands run with the tracer provider
// the OTEL_* environment variables configure (none unless
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set):
// it puts the provider in the command's context, where every run finds it.
// Call the result's close when the command has returned.
func wireTelemetry(root *cobra.Command, stderr io.Writer) *otelSetup {
	o := &otelSetup{stderr: stderr}
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
	return o
}

// start builds the provider; a bad setting is reported and the command runs
// without spans.
func (o *otelSetup) start(c *cobra.Command) {
	tp, shutdown, err := otlp.FromEnv(c.Context())
	if err != nil {
		fmt.Fprintf(o.stderr, "planner: OpenTelemetry off: %s\n", redact.New().String(err.Error()))
		return
	}
	if tp == nil {
		return
	}
	o.shutdown = shutdown
	c.SetContext(telemetry.WithProvider(c.Context(), tp, telemetry.WithContent(telemetry.ContentFromEnv()), telemetry.WithScrubber(redact.New())))
}

// close flushes the spans still batched, within telemetryFlush.
func (o *otelSetup) close() {
	if o.shutdown == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetryFlush)
	defer cancel()
	if err := o.shutdown(ctx); err != nil {
		fmt.Fprintf(o.stderr, "planner: OpenTelemetry: %s\n", redact.New().String(err.Error()))
	}
}
