package nodekind

import (
	"context"
	"errors"

	"github.com/planner-engine/planner/telemetry"
)

// startSpan starts the OpenTelemetry span of c, "execute_tool {tool}", when
// ctx carries a provider (telemetry.WithProvider).
func (c ToolCall) startSpan(ctx context.Context) (context.Context, telemetry.Span) {
	if !telemetry.Enabled(ctx) {
		return ctx, telemetry.Span{}
	}
	id, _ := c.opts.Trace["tool_call_id"].(string)
	return telemetry.StartTool(ctx, telemetry.Tool{Name: c.Name, CallID: id, Node: c.meta.Node, Input: c.Input})
}

// endSpan records c's result on its span and ends it: with content on, the
// tool's output; on failure, its class (error.type).
func (c ToolCall) endSpan(span telemetry.Span, res ToolResult, err error) {
	defer span.End()
	if !span.Recording() {
		return
	}
	switch {
	case err != nil:
		span.Fail(toolErrorType(err), err)
	case res.Err != nil:
		span.Fail(toolErrorType(res.Err), res.Err)
	}
	if span.Content() {
		out := res.Output
		if out == "" {
			out = res.Observation
		}
		span.SetContent(telemetry.KeyToolResult, out)
	}
}

// toolErrorType is the error.type of a failed tool call.
func toolErrorType(err error) string {
	if class := errorClass(err); class != "" {
		return class
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "tool_error"
}
