package llm

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/telemetry"
	"github.com/stretchr/testify/assert"
	"github.com/tmc/langchaingo/llms"
)

// TestCallSpanAllocatesNothingWithoutProvider: without a tracer provider in
// the context, the span a model call opens and ends costs no allocation.
func TestCallSpanAllocatesNothingWithoutProvider(t *testing.T) {
	m := Model{Provider: "openai", Name: "gpt-4o-mini"}
	ctx := WithCallMeta(context.Background(), CallMeta{Node: "react"})
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
	resp := &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "hello", StopReason: "stop"}}}
	caller := CallMeta{Node: "react", Kind: "react"}
	allocs := testing.AllocsPerRun(1000, func() {
		_, span := m.startSpan(ctx, caller, msgs)
		span.SetUsage(telemetry.Usage{InputTokens: 3, OutputTokens: 1})
		m.endSpan(span, resp, nil)
	})
	assert.Zero(t, allocs)
}
