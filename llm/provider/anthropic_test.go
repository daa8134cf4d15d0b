package provider

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

const claudeModel = "claude-3-5-haiku-latest"

const anthropicTextResponse = `{
  "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-latest",
  "content": [{"type": "text", "text": "Paris is the capital."}],
  "stop_reason": "end_turn", "stop_sequence": null,
  "usage": {"input_tokens": 13, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 3,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 7, "service_tier": "standard"}
}`

// anthropicStreamEvents is a Messages API SSE stream: text deltas split
// across events, a ping, and usage in message_start and message_delta.
var anthropicStreamEvents = []string{
	sseEvent("message_start", `{"type":"message_start","message":{"id":"msg_02","type":"message","role":"assistant","model":"claude-3-5-haiku-latest","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":15,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`),
	sseEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
	sseEvent("ping", `{"type": "ping"}`),
	sseEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Paris"}}`),
	sseEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" is the"}}`),
	sseEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" capital."}}`),
	sseEvent("content_block_stop", `{"type":"content_block_stop","index":0}`),
	sseEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}`),
	sseEvent("message_stop", `{"type":"message_stop"}`),
}

func anthropicReply(w http.ResponseWriter, _ *http.Request, _ int, body []byte) {
	if jsonHasTrue(body, "stream") {
		writeStream(w, "text/event-stream; charset=utf-8", anthropicStreamEvents...)
		return
	}
	writeJSON(w, http.StatusOK, anthropicTextResponse)
}

func anthropicConfig(base string) Config {
	return Config{Provider: "anthropic", Model: claudeModel, BaseURL: base + "/v1"}
}

var anthropicWire = wireCase{
	provider: "anthropic", keyEnv: "TEST_ANTHROPIC_KEY", config: anthropicConfig, reply: anthropicReply, retryAfter: true,
	errorBody: func(_ int, msg string) string {
		return fmt.Sprintf(`{"type":"error","error":{"type":"authentication_error","message":%q}}`, msg)
	},
}

func TestAnthropicPlainCompletionSendsMessagesRequest(t *testing.T) {
	srv, m := anthropicWire.start(t, tuned(0.3, 512))

	resp, err := m.GenerateContent(context.Background(), conversation("Answer tersely.", "Capital of France?"),
		llms.WithStopWords([]string{"Observation:"}))
	require.NoError(t, err)

	req := srv.only(t)
	assertPOST(t, req, "/v1/messages")
	assert.Equal(t, testSecret, req.Header.Get("x-api-key"))
	assert.Equal(t, "2023-06-01", req.Header.Get("anthropic-version"))
	assert.Empty(t, req.Header.Get("Authorization"))
	body := req.JSON(t)
	assert.Equal(t, claudeModel, body["model"])
	assert.Equal(t, "Answer tersely.", body["system"])
	msgs := path(t, body, "messages")
	require.Len(t, msgs, 1)
	assert.Equal(t, "user", path(t, msgs, 0, "role"))
	assert.Equal(t, "text", path(t, msgs, 0, "content", 0, "type"))
	assert.Equal(t, "Capital of France?", path(t, msgs, 0, "content", 0, "text"))
	assert.Equal(t, []any{"Observation:"}, body["stop_sequences"])
	assert.InDelta(t, 0.3, body["temperature"], 1e-9)
	assert.EqualValues(t, 512, body["max_tokens"])

	require.Len(t, resp.Choices, 1)
	assert.Equal(t, cannedAnswer, resp.Choices[0].Content)
	assert.Equal(t, "end_turn", resp.Choices[0].StopReason)
	assertInfo(t, resp.Choices[0].GenerationInfo, map[string]any{
		"InputTokens": 13, "OutputTokens": 7, "CacheCreationInputTokens": 2, "CacheReadInputTokens": 3,
		"ThinkingContent": "", "OutputContent": cannedAnswer,
	})
}

func TestAnthropicDefaultsMaxTokensTo2048(t *testing.T) {
	srv, m := anthropicWire.start(t)

	_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	require.NoError(t, err)

	body := srv.only(t).JSON(t)
	assert.EqualValues(t, 2048, body["max_tokens"])
	assert.EqualValues(t, 0, body["temperature"])
}

func TestAnthropicStreamingDeliversTextDeltasAndUsage(t *testing.T) {
	srv, m := anthropicWire.start(t)

	resp := streamCanned(t, m, conversation("Be brief.", "Capital of France?"))

	assert.Equal(t, true, srv.only(t).JSON(t)["stream"])
	assert.Equal(t, 15, resp.Choices[0].GenerationInfo["InputTokens"])
	assert.Equal(t, 9, resp.Choices[0].GenerationInfo["OutputTokens"])
}

func TestAnthropicToolCallArrivesInLaterChoiceAndRoundTrips(t *testing.T) {
	srv, m := anthropicWire.serve(t, firstJSON(`{
  "id": "msg_03", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-latest",
  "content": [
    {"type": "text", "text": "I'll look that up."},
    {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}
  ],
  "stop_reason": "tool_use", "stop_sequence": null,
  "usage": {"input_tokens": 300, "output_tokens": 40}
}`, anthropicReply))

	first := askWeather(t, m)

	tool := path(t, srv.requests()[0].JSON(t), "tools", 0)
	assert.Equal(t, "get_weather", path(t, tool, "name"))
	assert.Equal(t, "object", path(t, tool, "input_schema", "type"))

	require.Len(t, first.Choices, 2, "one choice per content block")
	assert.Equal(t, "I'll look that up.", first.Choices[0].Content)
	assert.Empty(t, first.Choices[0].ToolCalls, "the first choice holds only the text")
	require.Len(t, first.Choices[1].ToolCalls, 1)
	call := first.Choices[1].ToolCalls[0]
	assert.Equal(t, "toolu_01", call.ID)
	assert.Equal(t, "get_weather", call.FunctionCall.Name)
	assert.JSONEq(t, `{"city":"Paris"}`, call.FunctionCall.Arguments)
	assert.Equal(t, "tool_use", first.Choices[1].StopReason)
	assert.Equal(t, 300, first.Choices[1].GenerationInfo["InputTokens"])
	assert.Equal(t, 40, first.Choices[1].GenerationInfo["OutputTokens"])

	_, second := answerWeather(t, srv, m, call)

	msgs := path(t, second.JSON(t), "messages")
	require.Len(t, msgs, 3)
	assert.Equal(t, "assistant", path(t, msgs, 1, "role"))
	assert.Equal(t, "tool_use", path(t, msgs, 1, "content", 0, "type"))
	assert.Equal(t, "toolu_01", path(t, msgs, 1, "content", 0, "id"))
	assert.Equal(t, "get_weather", path(t, msgs, 1, "content", 0, "name"))
	assert.Equal(t, "Paris", path(t, msgs, 1, "content", 0, "input", "city"))
	assert.Equal(t, "user", path(t, msgs, 2, "role"))
	assert.Equal(t, "tool_result", path(t, msgs, 2, "content", 0, "type"))
	assert.Equal(t, "toolu_01", path(t, msgs, 2, "content", 0, "tool_use_id"))
	assert.Equal(t, "18C, sunny", path(t, msgs, 2, "content", 0, "content"))
}

func TestAnthropicStreamedToolUseIsAssembled(t *testing.T) {
	_, m := anthropicWire.serve(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
		writeStream(w, "text/event-stream",
			sseEvent("message_start", `{"type":"message_start","message":{"id":"msg_04","type":"message","role":"assistant","model":"claude-3-5-haiku-latest","content":[],"stop_reason":null,"usage":{"input_tokens":300,"output_tokens":1}}}`),
			sseEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			sseEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking."}}`),
			sseEvent("content_block_stop", `{"type":"content_block_stop","index":0}`),
			sseEvent("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_02","name":"get_weather","input":{}}}`),
			sseEvent("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}}`),
			sseEvent("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}`),
			sseEvent("content_block_stop", `{"type":"content_block_stop","index":1}`),
			sseEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":60}}`),
			sseEvent("message_stop", `{"type":"message_stop"}`))
	})

	var got chunkCollector
	resp := askWeather(t, m, llms.WithStreamingFunc(got.fn))

	require.Len(t, resp.Choices, 2)
	assert.Equal(t, "Checking.", resp.Choices[0].Content)
	assert.Equal(t, "Checking.", got.joined(), "only text deltas are streamed")
	require.Len(t, resp.Choices[1].ToolCalls, 1)
	assert.Equal(t, "toolu_02", resp.Choices[1].ToolCalls[0].ID)
	assert.JSONEq(t, `{"city":"Paris"}`, resp.Choices[1].ToolCalls[0].FunctionCall.Arguments)
	assert.Equal(t, 60, resp.Choices[1].GenerationInfo["OutputTokens"])
}

func TestAnthropicParallelToolCallsAreSentAsSeparateTurns(t *testing.T) {
	srv, m := anthropicWire.start(t)
	paris := llms.ToolCall{ID: "toolu_a", Type: "function",
		FunctionCall: &llms.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	rome := llms.ToolCall{ID: "toolu_b", Type: "function",
		FunctionCall: &llms.FunctionCall{Name: "get_weather", Arguments: `{"city":"Rome"}`}}
	history := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeHuman, "Weather in Paris and Rome?"),
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.TextPart("Checking both."), paris, rome}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
			llms.ToolCallResponse{ToolCallID: "toolu_a", Name: "get_weather", Content: "18C"},
			llms.ToolCallResponse{ToolCallID: "toolu_b", Name: "get_weather", Content: "24C"},
		}},
	}

	_, err := m.GenerateContent(context.Background(), history, llms.WithTools([]llms.Tool{weatherTool}))
	require.NoError(t, err)

	msgs := path(t, srv.only(t).JSON(t), "messages")
	require.Len(t, msgs, 6, "one message per part; the API merges consecutive same-role turns")
	want := []struct{ role, typ, id string }{
		{"user", "text", ""},
		{"assistant", "text", ""},
		{"assistant", "tool_use", "toolu_a"},
		{"assistant", "tool_use", "toolu_b"},
		{"user", "tool_result", "toolu_a"},
		{"user", "tool_result", "toolu_b"},
	}
	for i, w := range want {
		assert.Equal(t, w.role, path(t, msgs, i, "role"), "message %d", i)
		assert.Equal(t, w.typ, path(t, msgs, i, "content", 0, "type"), "message %d", i)
		switch w.typ {
		case "tool_use":
			assert.Equal(t, w.id, path(t, msgs, i, "content", 0, "id"), "message %d", i)
		case "tool_result":
			assert.Equal(t, w.id, path(t, msgs, i, "content", 0, "tool_use_id"), "message %d", i)
		}
	}
	assert.Len(t, history[1].Parts, 3, "the caller's messages are not modified")
}
