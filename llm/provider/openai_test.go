package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

const openAIModel = "gpt-4o-mini"

const openAITextResponse = `{
  "id": "chatcmpl-1", "object": "chat.completion", "created": 1755695200, "model": "gpt-4o-mini",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris is the capital.", "refusal": null},
               "logprobs": null, "finish_reason": "stop"}],
  "usage": {"prompt_tokens": 20, "completion_tokens": 6, "total_tokens": 26,
            "prompt_tokens_details": {"cached_tokens": 4, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 1, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
  "system_fingerprint": "fp_1"
}`

// openAIStreamEvents is an SSE chat completion stream with include_usage:
// content deltas, a finish chunk, a usage-only chunk and [DONE].
var openAIStreamEvents = []string{
	sseData(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`),
	sseData(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Paris"},"logprobs":null,"finish_reason":null}],"usage":null}`),
	": keep-alive comment\n\n",
	sseData(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" is the"},"logprobs":null,"finish_reason":null}],"usage":null}`),
	sseData(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" capital."},"logprobs":null,"finish_reason":null}],"usage":null}`),
	sseData(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`),
	sseData(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`),
	sseData(`[DONE]`),
}

// openAIReply answers a chat completion in the mode the request asked for.
func openAIReply(w http.ResponseWriter, _ *http.Request, _ int, body []byte) {
	if jsonHasTrue(body, "stream") {
		writeStream(w, "text/event-stream; charset=utf-8", openAIStreamEvents...)
		return
	}
	writeJSON(w, http.StatusOK, openAITextResponse)
}

func openAIConfig(base string) Config {
	return Config{Provider: "openai", Model: openAIModel, BaseURL: base + "/v1"}
}

var openAIWire = wireCase{
	provider: "openai", keyEnv: "TEST_OPENAI_KEY", config: openAIConfig, reply: openAIReply, retryAfter: true,
	errorBody: func(_ int, msg string) string {
		return fmt.Sprintf(`{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, msg)
	},
}

// redirectTransport sends every request to target, keeping path and query,
// so a test can use the official base URL against a fake server.
type redirectTransport struct{ target *url.URL }

func (rt redirectTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host = rt.target.Scheme, rt.target.Host
	out.Host = ""
	return http.DefaultTransport.RoundTrip(out)
}

func TestOpenAIPlainCompletionSendsChatCompletionRequest(t *testing.T) {
	srv, m := openAIWire.start(t, tuned(0.2, 256))

	resp, err := m.GenerateContent(context.Background(), conversation("Answer tersely.", "Capital of France?"),
		llms.WithStopWords([]string{"Observation:"}))
	require.NoError(t, err)

	req := srv.only(t)
	assertPOST(t, req, "/v1/chat/completions")
	assert.Equal(t, "Bearer "+testSecret, req.Header.Get("Authorization"))
	body := req.JSON(t)
	assert.Equal(t, openAIModel, body["model"])
	assertChatMessages(t, body)
	assert.Equal(t, []any{"Observation:"}, body["stop"])
	assert.InDelta(t, 0.2, body["temperature"], 1e-9)
	assert.EqualValues(t, 256, body["max_tokens"], "OpenAI-compatible servers get the legacy field")
	assert.NotContains(t, body, "max_completion_tokens")
	assert.NotContains(t, body, "stream")

	require.Len(t, resp.Choices, 1)
	assert.Equal(t, cannedAnswer, resp.Choices[0].Content)
	assert.Equal(t, "stop", resp.Choices[0].StopReason)
	assertInfo(t, resp.Choices[0].GenerationInfo, map[string]any{
		"PromptTokens": 20, "CompletionTokens": 6, "TotalTokens": 26,
		"PromptCachedTokens": 4, "ReasoningTokens": 1, "CompletionReasoningTokens": 1, "ThinkingTokens": 1,
		"PromptAudioTokens": 0, "CompletionAudioTokens": 0,
		"CompletionAcceptedPredictionTokens": 0, "CompletionRejectedPredictionTokens": 0,
		"ThinkingContent": "",
	})
}

func TestOpenAIOfficialHostGetsMaxCompletionTokens(t *testing.T) {
	srv := newFakeServer(t, openAIReply)
	target, err := url.Parse(srv.URL)
	require.NoError(t, err)
	m := newTestModel(t, Config{
		Provider: "openai", Model: openAIModel, BaseURL: "https://api.openai.com/v1", MaxTokens: 64,
		HTTPClient: &http.Client{Transport: redirectTransport{target: target}},
	}, "TEST_OPENAI_KEY")

	_, err = m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	require.NoError(t, err)

	body := srv.only(t).JSON(t)
	assert.EqualValues(t, 64, body["max_completion_tokens"])
	assert.NotContains(t, body, "max_tokens")
	assert.EqualValues(t, 0, body["temperature"], "langchaingo always sends temperature")
}

func TestOpenAICallerMetadataSurvivesLegacyMaxTokensFlag(t *testing.T) {
	srv, m := openAIWire.start(t)
	callerMetadata := map[string]any{"trace": "abc"}

	_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"),
		llms.WithMaxTokens(10), llms.WithMetadata(callerMetadata))
	require.NoError(t, err)

	body := srv.only(t).JSON(t)
	assert.EqualValues(t, 10, body["max_tokens"])
	assert.Equal(t, map[string]any{"trace": "abc"}, body["metadata"])
	assert.Equal(t, map[string]any{"trace": "abc"}, callerMetadata, "the caller's map must not be modified")
}

func TestOpenAIStreamingDeliversSSEChunksAndUsage(t *testing.T) {
	srv, m := openAIWire.start(t)

	resp := streamCanned(t, m, conversation("Be brief.", "Capital of France?"))

	body := srv.only(t).JSON(t)
	assert.Equal(t, true, body["stream"])
	assert.Equal(t, true, path(t, body, "stream_options", "include_usage"))
	assert.Equal(t, 12, resp.Choices[0].GenerationInfo["PromptTokens"])
	assert.Equal(t, 4, resp.Choices[0].GenerationInfo["CompletionTokens"])
}

func TestOpenAIToolCallRoundTrip(t *testing.T) {
	srv, m := openAIWire.serve(t, firstJSON(`{
  "id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}
    ]}, "finish_reason": "tool_calls"}],
  "usage": {"prompt_tokens": 50, "completion_tokens": 15, "total_tokens": 65}
}`, openAIReply))

	first := askWeather(t, m)

	assertFunctionTool(t, srv.requests()[0])
	require.Len(t, first.Choices, 1)
	assert.Equal(t, "tool_calls", first.Choices[0].StopReason)
	require.Len(t, first.Choices[0].ToolCalls, 1)
	call := first.Choices[0].ToolCalls[0]
	assert.Equal(t, "call_abc", call.ID)
	assert.Equal(t, "get_weather", call.FunctionCall.Name)
	assert.JSONEq(t, `{"city":"Paris"}`, call.FunctionCall.Arguments)

	second, req := answerWeather(t, srv, m, call)
	assert.Equal(t, cannedAnswer, second.Choices[0].Content)

	msgs := assertFunctionToolTurns(t, req, "call_abc")
	assert.Equal(t, "function", path(t, msgs, 1, "tool_calls", 0, "type"))
	assert.JSONEq(t, `{"city":"Paris"}`, path(t, msgs, 1, "tool_calls", 0, "function", "arguments").(string))
	assert.Equal(t, "call_abc", path(t, msgs, 2, "tool_call_id"))
}

func TestOpenAIStreamingToolCallSendsDeltaJSONToStreamingFunc(t *testing.T) {
	_, m := openAIWire.serve(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
		writeStream(w, "text/event-stream",
			sseData(`{"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`),
			sseData(`{"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}`),
			sseData(`{"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}`),
			sseData(`{"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
			sseData(`[DONE]`))
	})

	var got chunkCollector
	resp := askWeather(t, m, llms.WithStreamingFunc(got.fn))

	require.Len(t, resp.Choices[0].ToolCalls, 1)
	assert.Equal(t, "call_abc", resp.Choices[0].ToolCalls[0].ID)
	assert.JSONEq(t, `{"city":"Paris"}`, resp.Choices[0].ToolCalls[0].FunctionCall.Arguments)
	assert.Empty(t, resp.Choices[0].Content)
	assert.Contains(t, got.joined(), `"get_weather"`,
		"langchaingo streams tool-call deltas as JSON, so chunks are not the content")
}

func TestOpenAILocalServerWithoutKeyGetsPlaceholderKey(t *testing.T) {
	srv := newFakeServer(t, openAIReply)
	t.Setenv("OPENAI_API_KEY", "")
	// Ollama's OpenAI-compatible endpoint on loopback needs no key.
	m, err := New(context.Background(), Config{Provider: "openai", Model: "llama3.1:8b", BaseURL: srv.URL + "/v1"})
	require.NoError(t, err)

	_, err = m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	require.NoError(t, err)

	req := srv.only(t)
	assert.Equal(t, "/v1/chat/completions", req.Path)
	assert.Equal(t, "Bearer "+localPlaceholderKey, req.Header.Get("Authorization"))
}

func TestOpenAIBaseURLComesFromEnvironmentWhenUnset(t *testing.T) {
	srv := newFakeServer(t, openAIReply)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1/")
	m := newTestModel(t, Config{Provider: "openai", Model: openAIModel}, "TEST_OPENAI_KEY")

	_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	require.NoError(t, err)
	assert.Equal(t, "/v1/chat/completions", srv.only(t).Path)
}

func TestOpenAILocalServerRejectingPlaceholderAsksForAKeyVariable(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
		writeJSON(w, http.StatusUnauthorized, `{"error":{"message":"invalid api key","type":"invalid_request_error"}}`)
	})
	t.Setenv("OPENAI_API_KEY", "")
	m, err := New(context.Background(), Config{Provider: "openai", Model: "qwen2.5", BaseURL: srv.URL + "/v1"})
	require.NoError(t, err)

	_, err = m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	require.ErrorIs(t, err, ErrAuth)
	assert.Contains(t, err.Error(), "set api_key_env")
}

func TestOpenAIToolMessageWithSeveralResultsIsSentPerCall(t *testing.T) {
	srv, m := openAIWire.start(t)
	paris := llms.ToolCall{ID: "call_a", Type: "function",
		FunctionCall: &llms.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	rome := llms.ToolCall{ID: "call_b", Type: "function",
		FunctionCall: &llms.FunctionCall{Name: "get_weather", Arguments: `{"city":"Rome"}`}}
	history := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeHuman, "Weather in Paris and Rome?"),
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{paris, rome}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
			llms.ToolCallResponse{ToolCallID: "call_a", Name: "get_weather", Content: "18C"},
			llms.ToolCallResponse{ToolCallID: "call_b", Name: "get_weather", Content: "24C"},
		}},
	}

	_, err := m.GenerateContent(context.Background(), history, llms.WithTools([]llms.Tool{weatherTool}))
	require.NoError(t, err, "langchaingo alone rejects a tool message with two parts")

	msgs := path(t, srv.only(t).JSON(t), "messages")
	require.Len(t, msgs, 4)
	assert.Equal(t, "assistant", path(t, msgs, 1, "role"))
	assert.Len(t, path(t, msgs, 1, "tool_calls"), 2, "parallel calls stay in one assistant message")
	assert.Equal(t, "call_a", path(t, msgs, 2, "tool_call_id"))
	assert.Equal(t, "18C", path(t, msgs, 2, "content"))
	assert.Equal(t, "call_b", path(t, msgs, 3, "tool_call_id"))
	assert.Equal(t, "24C", path(t, msgs, 3, "content"))
}
