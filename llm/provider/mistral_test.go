package provider

import (
	"context"
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

func TestMistralPlainCompletionSendsChatRequestWithoutStopWords(t *testing.T) {
	srv := newFakeServer(t, mistralReply)
	cfg := mistralConfig(srv.URL)
	cfg.Temperature = ptr(0.1)
	cfg.MaxTokens = 200
	m := newTestModel(t, cfg, "TEST_MISTRAL_KEY")

	resp, err := m.GenerateContent(context.Background(), conversation("Answer tersely.", "Capital of France?"),
		llms.WithStopWords([]string{"Observation:"}), llms.WithJSONMode())
	require.NoError(t, err)

	req := srv.only(t)
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "/v1/chat/completions", req.Path)
	assert.Equal(t, "Bearer "+testSecret, req.Header.Get("Authorization"))
	body := req.JSON(t)
	assert.Equal(t, mistralModel, body["model"])
	assert.Equal(t, "system", path(t, body, "messages", 0, "role"))
	assert.Equal(t, "Answer tersely.", path(t, body, "messages", 0, "content"))
	assert.Equal(t, "user", path(t, body, "messages", 1, "role"))
	assert.Equal(t, "Capital of France?", path(t, body, "messages", 1, "content"))
	assert.InDelta(t, 0.1, body["temperature"], 1e-9)
	assert.EqualValues(t, 200, body["max_tokens"])
	assert.NotContains(t, body, "stop", "langchaingo's mistral adapter drops stop words")
	assert.NotContains(t, body, "response_format", "langchaingo's mistral adapter drops JSON mode")

	require.Len(t, resp.Choices, 1)
	assert.Equal(t, "Paris is the capital.", resp.Choices[0].Content)
	assert.Equal(t, "stop", resp.Choices[0].StopReason)
	info := resp.Choices[0].GenerationInfo
	assert.Equal(t, sdkmistral.UsageInfo{PromptTokens: 16, TotalTokens: 22, CompletionTokens: 6}, info["usage"])
	assert.Equal(t, 1702256327, info["created"])
	assert.Equal(t, mistralModel, info["model"])
}

func TestMistralDefaultsComeFromSDK(t *testing.T) {
	srv := newFakeServer(t, mistralReply)
	m := newTestModel(t, mistralConfig(srv.URL), "TEST_MISTRAL_KEY")

	_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	require.NoError(t, err)

	body := srv.only(t).JSON(t)
	assert.EqualValues(t, 1, body["temperature"])
	assert.EqualValues(t, 4000, body["max_tokens"])
	assert.EqualValues(t, 42069, body["random_seed"])
}

func TestMistralStreamingDeliversSSEChunks(t *testing.T) {
	srv := newFakeServer(t, mistralReply)
	m := newTestModel(t, mistralConfig(srv.URL), "TEST_MISTRAL_KEY")

	var got chunkCollector
	resp, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Capital of France?"),
		llms.WithStreamingFunc(got.fn))
	require.NoError(t, err)

	assert.Equal(t, true, srv.only(t).JSON(t)["stream"])
	require.Len(t, resp.Choices, 1)
	assert.Equal(t, "Paris is the capital.", resp.Choices[0].Content)
	assert.Equal(t, resp.Choices[0].Content, got.joined())
	assert.Equal(t, 3, got.nonEmpty())
	assert.Equal(t, sdkmistral.UsageInfo{PromptTokens: 10, TotalTokens: 14, CompletionTokens: 4},
		resp.Choices[0].GenerationInfo["usage"])
}

func TestMistralToolCallRoundTrip(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, n int, body []byte) {
		if n == 0 {
			writeJSON(w, http.StatusOK, `{
  "id": "cmpl-2", "object": "chat.completion", "created": 1702256400, "model": "mistral-small-latest",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "", "tool_calls": [
      {"id": "D681PevKs", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}
    ]}, "finish_reason": "tool_calls"}],
  "usage": {"prompt_tokens": 90, "total_tokens": 110, "completion_tokens": 20}
}`)
			return
		}
		mistralReply(w, r, n, body)
	})
	m := newTestModel(t, mistralConfig(srv.URL), "TEST_MISTRAL_KEY")

	question := llms.TextParts(llms.ChatMessageTypeHuman, "Weather in Paris?")
	first, err := m.GenerateContent(context.Background(), []llms.MessageContent{question},
		llms.WithTools([]llms.Tool{weatherTool}))
	require.NoError(t, err)

	tool := path(t, srv.requests()[0].JSON(t), "tools", 0)
	assert.Equal(t, "function", path(t, tool, "type"))
	assert.Equal(t, "get_weather", path(t, tool, "function", "name"))
	assert.Equal(t, "object", path(t, tool, "function", "parameters", "type"))

	require.Len(t, first.Choices, 1)
	require.Len(t, first.Choices[0].ToolCalls, 1)
	call := first.Choices[0].ToolCalls[0]
	assert.Equal(t, "D681PevKs", call.ID)
	assert.Equal(t, "get_weather", call.FunctionCall.Name)
	assert.JSONEq(t, `{"city":"Paris"}`, call.FunctionCall.Arguments)

	history := []llms.MessageContent{
		question,
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{call}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{
			ToolCallID: call.ID, Name: call.FunctionCall.Name, Content: "18C, sunny",
		}}},
	}
	_, err = m.GenerateContent(context.Background(), history, llms.WithTools([]llms.Tool{weatherTool}))
	require.NoError(t, err)

	reqs := srv.requests()
	require.Len(t, reqs, 2)
	msgs := path(t, reqs[1].JSON(t), "messages")
	require.Len(t, msgs, 3)
	assert.Equal(t, "assistant", path(t, msgs, 1, "role"))
	assert.Equal(t, "D681PevKs", path(t, msgs, 1, "tool_calls", 0, "id"))
	assert.Equal(t, "get_weather", path(t, msgs, 1, "tool_calls", 0, "function", "name"))
	assert.Equal(t, "tool", path(t, msgs, 2, "role"))
	assert.Equal(t, "18C, sunny", path(t, msgs, 2, "content"))
	assert.NotContains(t, path(t, msgs, 2), "tool_call_id", "mistral-go's ChatMessage has no tool_call_id field")
}
