package provider

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	sdkmistral "github.com/gage-technologies/mistral-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

const mistralModel = "mistral-small-latest"

const mistralTextResponse = `{
  "id": "cmpl-e5cc70bb", "object": "chat.completion", "created": 1702256327, "model": "mistral-small-latest",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris is the capital.", "tool_calls": null},
               "finish_reason": "stop"}],
  "usage": {"prompt_tokens": 16, "total_tokens": 22, "completion_tokens": 6}
}`

var mistralStreamEvents = []string{
	sseData(`{"id":"cmpl-1","object":"chat.completion.chunk","created":1702256327,"model":"mistral-small-latest","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`),
	sseData(`{"id":"cmpl-1","object":"chat.completion.chunk","created":1702256327,"model":"mistral-small-latest","choices":[{"index":0,"delta":{"content":"Paris"},"finish_reason":null}]}`),
	sseData(`{"id":"cmpl-1","object":"chat.completion.chunk","created":1702256327,"model":"mistral-small-latest","choices":[{"index":0,"delta":{"content":" is the"},"finish_reason":null}]}`),
	sseData(`{"id":"cmpl-1","object":"chat.completion.chunk","created":1702256327,"model":"mistral-small-latest","choices":[{"index":0,"delta":{"content":" capital."},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"total_tokens":14,"completion_tokens":4}}`),
	sseData(`[DONE]`),
}

func mistralReply(w http.ResponseWriter, _ *http.Request, _ int, body []byte) {
	if jsonHasTrue(body, "stream") {
		writeStream(w, "text/event-stream", mistralStreamEvents...)
		return
	}
	writeJSON(w, http.StatusOK, mistralTextResponse)
}

func mistralConfig(base string) Config {
	return Config{Provider: "mistral", Model: mistralModel, BaseURL: base}
}

var mistralWire = wireCase{
	provider: "mistral", keyEnv: "TEST_MISTRAL_KEY", config: mistralConfig, reply: mistralReply, retryAfter: false,
	errorBody: func(_ int, msg string) string { return fmt.Sprintf(`{"message":%q,"request_id":"req-1"}`, msg) },
}

func TestMistralPlainCompletionSendsChatRequestWithoutStopWords(t *testing.T) {
	srv, m := mistralWire.start(t, tuned(0.1, 200))

	resp, err := m.GenerateContent(context.Background(), conversation("Answer tersely.", "Capital of France?"),
		llms.WithStopWords([]string{"Observation:"}), llms.WithJSONMode())
	require.NoError(t, err)

	req := srv.only(t)
	assertPOST(t, req, "/v1/chat/completions")
	assert.Equal(t, "Bearer "+testSecret, req.Header.Get("Authorization"))
	body := req.JSON(t)
	assert.Equal(t, mistralModel, body["model"])
	assertChatMessages(t, body)
	assert.InDelta(t, 0.1, body["temperature"], 1e-9)
	assert.EqualValues(t, 200, body["max_tokens"])
	assert.NotContains(t, body, "stop", "langchaingo's mistral adapter drops stop words")
	assert.NotContains(t, body, "response_format", "langchaingo's mistral adapter drops JSON mode")

	require.Len(t, resp.Choices, 1)
	assert.Equal(t, cannedAnswer, resp.Choices[0].Content)
	assert.Equal(t, "stop", resp.Choices[0].StopReason)
	assertInfo(t, resp.Choices[0].GenerationInfo, map[string]any{
		"usage":   sdkmistral.UsageInfo{PromptTokens: 16, TotalTokens: 22, CompletionTokens: 6},
		"created": 1702256327,
		"model":   mistralModel,
	})
}

func TestMistralDefaultsComeFromSDK(t *testing.T) {
	srv, m := mistralWire.start(t)

	_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	require.NoError(t, err)

	body := srv.only(t).JSON(t)
	assert.EqualValues(t, 1, body["temperature"])
	assert.EqualValues(t, 4000, body["max_tokens"])
	assert.EqualValues(t, 42069, body["random_seed"])
}

func TestMistralStreamingDeliversSSEChunks(t *testing.T) {
	srv, m := mistralWire.start(t)

	resp := streamCanned(t, m, conversation("Be brief.", "Capital of France?"))

	assert.Equal(t, true, srv.only(t).JSON(t)["stream"])
	assert.Equal(t, sdkmistral.UsageInfo{PromptTokens: 10, TotalTokens: 14, CompletionTokens: 4},
		resp.Choices[0].GenerationInfo["usage"])
}

func TestMistralToolCallRoundTrip(t *testing.T) {
	srv, m := mistralWire.serve(t, firstJSON(`{
  "id": "cmpl-2", "object": "chat.completion", "created": 1702256400, "model": "mistral-small-latest",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "", "tool_calls": [
      {"id": "D681PevKs", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}
    ]}, "finish_reason": "tool_calls"}],
  "usage": {"prompt_tokens": 90, "total_tokens": 110, "completion_tokens": 20}
}`, mistralReply))

	first := askWeather(t, m)

	assertFunctionTool(t, srv.requests()[0])
	require.Len(t, first.Choices, 1)
	require.Len(t, first.Choices[0].ToolCalls, 1)
	call := first.Choices[0].ToolCalls[0]
	assert.Equal(t, "D681PevKs", call.ID)
	assert.Equal(t, "get_weather", call.FunctionCall.Name)
	assert.JSONEq(t, `{"city":"Paris"}`, call.FunctionCall.Arguments)

	_, second := answerWeather(t, srv, m, call)

	msgs := assertFunctionToolTurns(t, second, "D681PevKs")
	assert.NotContains(t, path(t, msgs, 2), "tool_call_id", "mistral-go's ChatMessage has no tool_call_id field")
}
