package pipeline

import (
	"context"
	"errors"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm"
	"github.com/tmc/langchaingo/llms"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/telemetry"
)

// nodeSpanHook opens an OpenTelemetry span per node execution. A node
// that stops to wait for approval ends its span without an error.
type nodeSpanHook struct {
	tp *telemetry.Provider
}

func (h nodeSpanHook) WrapNode(next hooks.NodeFunc) hooks.NodeFunc {
	return func(ctx context.Context, n hooks.Node) (string, error) {
		ctx, span := h.tp.StartNode(ctx, n.ID, n.Kind, n.Step)
		route, err := next(ctx, n)
		class := ""
		if err != nil {
			class = failureClass(err)
		}
		if class == state.FailureWaiting {
			span.EndNode(route, "", nil)
			return route, err
		}
		span.EndNode(route, class, err)
		return route, err
	}
}

// startRunSpan starts the run's span, "invoke_agent {pipeline}", the parent
// of the run's node, model and tool spans.
func (p *Pipeline) startRunSpan(ctx context.Context, tp *telemetry.Provider, task state.Task, runID string) (context.Context, telemetry.Span) {
	return tp.StartRun(ctx, telemetry.Run{Agent: p.Config.Name, RunID: runID, TaskID: task.ID, Question: task.Question})
}

// endSpan records a call's outcome on its span and ends it: the finish
// reasons and, with content on, the reply; or the failure's class. Call
// sets the usage (Span.SetUsage) once measured.
func endModelSpan(span telemetry.Span, res *hooks.ModelResult, err error) {
	defer span.End()
	if !span.Recording() {
		return
	}
	if err != nil {
		span.Fail(modelErrorType(err), err)
		return
	}
	if res == nil || res.Response == nil || len(res.Response.Choices) == 0 {
		return
	}
	resp := res.Response
	u := res.Usage
	span.SetUsage(telemetry.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedInputTokens: u.CachedPromptTokens, Estimated: u.Estimated, CostUSD: u.CostUSD})
	reasons := make([]string, 0, len(resp.Choices))
	for _, c := range resp.Choices {
		if c.StopReason != "" {
			reasons = append(reasons, c.StopReason)
		}
	}
	if len(reasons) > 0 {
		span.SetAttributes(telemetry.KeyFinishReasons.StringSlice(reasons))
	}
	if span.Content() {
		out := make([]telemetry.Message, 0, len(resp.Choices))
		for _, c := range resp.Choices {
			msg := telemetry.Message{Role: "assistant", FinishReason: c.StopReason}
			if c.Content != "" {
				msg.Parts = append(msg.Parts, telemetry.Part{Type: "text", Content: c.Content})
			}
			for _, tc := range c.ToolCalls {
				p := telemetry.Part{Type: "tool_call", ID: tc.ID}
				if tc.FunctionCall != nil {
					p.Name, p.Arguments = tc.FunctionCall.Name, tc.FunctionCall.Arguments
				}
				msg.Parts = append(msg.Parts, p)
			}
			out = append(out, msg)
		}
		span.SetMessages(telemetry.KeyOutputMessages, out)
	}
}

// spanMessages converts a call's messages for gen_ai.input.messages.
func spanMessages(msgs []llms.MessageContent) []telemetry.Message {
	out := make([]telemetry.Message, 0, len(msgs))
	for _, msg := range msgs {
		tm := telemetry.Message{Role: spanRole(msg.Role)}
		for _, p := range msg.Parts {
			switch v := p.(type) {
			case llms.TextContent:
				tm.Parts = append(tm.Parts, telemetry.Part{Type: "text", Content: v.Text})
			case llms.ToolCall:
				tp := telemetry.Part{Type: "tool_call", ID: v.ID}
				if v.FunctionCall != nil {
					tp.Name, tp.Arguments = v.FunctionCall.Name, v.FunctionCall.Arguments
				}
				tm.Parts = append(tm.Parts, tp)
			case llms.ToolCallResponse:
				tm.Parts = append(tm.Parts, telemetry.Part{Type: "tool_call_response", ID: v.ToolCallID, Response: v.Content})
			}
		}
		out = append(out, tm)
	}
	return out
}

// spanRole is the semantic conventions' name of a message role.
func spanRole(r llms.ChatMessageType) string {
	switch r {
	case llms.ChatMessageTypeSystem:
		return "system"
	case llms.ChatMessageTypeAI:
		return "assistant"
	case llms.ChatMessageTypeTool, llms.ChatMessageTypeFunction:
		return "tool"
	}
	return "user"
}

// errorType is the error.type of a failed call: a low-cardinality class.
func modelErrorType(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, llm.ErrBudgetExceeded):
		return "budget_exceeded"
	case errors.Is(err, llm.ErrEmptyResponse):
		return "empty_response"
	case journal.Stopped(err):
		return "journal"
	}
	return "provider_error"
}
