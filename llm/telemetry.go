package llm

import (
	"context"
	"errors"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/telemetry"
	"github.com/tmc/langchaingo/llms"
)

// startSpan starts the OpenTelemetry span of one call, "chat {model}", when
// ctx carries a provider (telemetry.WithProvider); with content on it
// records the messages.
func (m Model) startSpan(ctx context.Context, caller CallMeta, msgs []llms.MessageContent) (context.Context, telemetry.Span) {
	ctx, span := telemetry.StartChat(ctx, telemetry.Chat{Provider: m.Provider, Model: m.Name, Node: caller.Node, Role: caller.Role, Step: caller.StepID})
	if span.Content() {
		span.SetMessages(telemetry.KeyInputMessages, spanMessages(msgs))
	}
	return ctx, span
}

// endSpan records a call's outcome on its span and ends it: the finish
// reasons and, with content on, the reply; or the failure's class. Call
// sets the usage (Span.SetUsage) once measured.
func (m Model) endSpan(span telemetry.Span, resp *llms.ContentResponse, err error) {
	defer span.End()
	if !span.Recording() {
		return
	}
	if err != nil {
		span.Fail(errorType(err), err)
		return
	}
	if resp == nil || len(resp.Choices) == 0 {
		return
	}
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
func errorType(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, ErrBudgetExceeded):
		return "budget_exceeded"
	case errors.Is(err, ErrEmptyResponse):
		return "empty_response"
	case journal.Stopped(err):
		return "journal"
	}
	return "provider_error"
}
