package middleware

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// fixedReply answers every call with resp itself, not a copy, so that a
// test can check that the middleware leaves the model's response alone.
func fixedReply(resp *llms.ContentResponse) *llmtest.Func {
	f := llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		return resp, nil
	})
	return &f
}

func TestReplyLimitCutsAMegabyteReplyWithAMarker(t *testing.T) {
	const limit = 256 << 10
	big := strings.Repeat("a", 1<<20)
	raw := &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content:          big,
		ReasoningContent: big,
		GenerationInfo:   map[string]any{"PromptTokens": 3},
	}}}
	var cuts []TruncateEvent
	model := NewReplyLimit(limit, WithOnTruncate(func(_ context.Context, ev TruncateEvent) { cuts = append(cuts, ev) }))(fixedReply(raw))

	resp, err := model.GenerateContent(t.Context(), humanMsg("x"))
	require.NoError(t, err)

	marker := "\n[reply truncated: 786432 of 1048576 bytes dropped; the limit is 262144 bytes]"
	got := resp.Choices[0]
	assert.Equal(t, strings.Repeat("a", limit)+marker, got.Content)
	assert.Equal(t, strings.Repeat("a", limit)+marker, got.ReasoningContent)
	assert.Equal(t, true, got.GenerationInfo[TruncatedInfoKey])
	assert.Equal(t, 3, got.GenerationInfo["PromptTokens"], "other generation info is kept")
	assert.Equal(t, []TruncateEvent{
		{Choice: 0, Field: "content", Size: 1 << 20, Limit: limit},
		{Choice: 0, Field: "reasoning", Size: 1 << 20, Limit: limit},
	}, cuts)

	assert.Len(t, raw.Choices[0].Content, 1<<20, "the model's own response is not modified")
	assert.NotContains(t, raw.Choices[0].GenerationInfo, TruncatedInfoKey)
}

func TestReplyLimitCutsToolCallArguments(t *testing.T) {
	args := `{"q":"` + strings.Repeat("x", 100) + `"}`
	raw := &llms.ContentResponse{Choices: []*llms.ContentChoice{
		{Content: "short"},
		{
			FuncCall: &llms.FunctionCall{Name: "search", Arguments: args},
			ToolCalls: []llms.ToolCall{
				{ID: "a", Type: "function", FunctionCall: &llms.FunctionCall{Name: "search", Arguments: `{"q":"ok"}`}},
				{ID: "b", Type: "function", FunctionCall: &llms.FunctionCall{Name: "search", Arguments: args}},
			},
		},
	}}
	var fields []string
	model := NewReplyLimit(32, WithOnTruncate(func(_ context.Context, ev TruncateEvent) { fields = append(fields, ev.Field) }))(fixedReply(raw))

	resp, err := model.GenerateContent(t.Context(), humanMsg("x"))
	require.NoError(t, err)

	assert.Same(t, raw.Choices[0], resp.Choices[0], "a choice within the limit is passed through")
	calls := resp.Choices[1].ToolCalls
	require.Len(t, calls, 2)
	assert.Equal(t, `{"q":"ok"}`, calls[0].FunctionCall.Arguments)
	assert.Equal(t, args[:32]+"\n[reply truncated: 76 of 108 bytes dropped; the limit is 32 bytes]", calls[1].FunctionCall.Arguments)
	assert.Equal(t, "b", calls[1].ID)
	assert.Equal(t, calls[1].FunctionCall.Arguments, resp.Choices[1].FuncCall.Arguments)
	assert.Equal(t, true, resp.Choices[1].GenerationInfo[TruncatedInfoKey])
	assert.Nil(t, resp.Choices[0].GenerationInfo)
	assert.Equal(t, []string{"func_call.arguments", "tool_calls[1].arguments"}, fields)
	assert.Equal(t, args, raw.Choices[1].ToolCalls[1].FunctionCall.Arguments, "the model's tool call is not modified")
}

func TestReplyLimitCutsAtARuneBoundary(t *testing.T) {
	reply := strings.Repeat("é", 10) // 20 bytes
	model := NewReplyLimit(5)(fixedReply(textResponse(reply)))
	resp, err := model.GenerateContent(t.Context(), humanMsg("x"))
	require.NoError(t, err)
	got := resp.Choices[0].Content
	assert.True(t, utf8.ValidString(got))
	assert.Equal(t, "éé\n[reply truncated: 16 of 20 bytes dropped; the limit is 5 bytes]", got)
}

func TestReplyLimitLeavesSmallRepliesAndErrorsAlone(t *testing.T) {
	small := textResponse("fine")
	resp, err := NewReplyLimit(4)(fixedReply(small)).GenerateContent(t.Context(), humanMsg("x"))
	require.NoError(t, err)
	assert.Same(t, small, resp)

	boom := errors.New("boom")
	_, err = NewReplyLimit(4)(llmtest.Fail(boom)).GenerateContent(t.Context(), humanMsg("x"))
	assert.ErrorIs(t, err, boom)

	inner := fixedReply(small)
	assert.Same(t, llms.Model(inner), NewReplyLimit(0)(inner), "0 disables the limit")
}

func TestConfigPutsTheReplyLimitOutermost(t *testing.T) {
	calls := 0
	inner := llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		calls++
		if calls == 1 {
			return nil, errors.New("API returned unexpected status code: 502")
		}
		return textResponse(strings.Repeat("z", 100)), nil
	})
	// seen records what reaches the layer just around the model, as a
	// cassette recorder wrapped around the provider would.
	var seen []string
	recorder := Wrap(inner, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		resp, err := inner.GenerateContent(ctx, msgs, opts...)
		if err == nil {
			seen = append(seen, resp.Choices[0].Content)
		}
		return resp, err
	})
	cfg := Config{MaxReplyBytes: 10}
	assert.Len(t, cfg.Middlewares(), 2)
	resp, err := Apply(recorder, cfg, WithSleep((&recordingSleeper{}).sleep)).GenerateContent(t.Context(), humanMsg("x"))
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("z", 10)+"\n[reply truncated: 90 of 100 bytes dropped; the limit is 10 bytes]", resp.Choices[0].Content)
	assert.Equal(t, []string{strings.Repeat("z", 100)}, seen, "the layer around the provider sees the raw reply")
}
