package provider

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

const ollamaModel = "llama3.1:8b"

// ollamaChunks is an /api/chat NDJSON stream; the final line carries the
// counts. Real Ollama streams like this whenever "stream" is not false,
// which is what langchaingo's non-streaming calls get (it omits the field).
var ollamaChunks = []string{
	`{"model":"llama3.1:8b","created_at":"2025-08-20T13:47:54.49Z","message":{"role":"assistant","content":"Paris"},"done":false}` + "\n",
	`{"model":"llama3.1:8b","created_at":"2025-08-20T13:47:54.50Z","message":{"role":"assistant","content":" is the"},"done":false}` + "\n",
	`{"model":"llama3.1:8b","created_at":"2025-08-20T13:47:54.51Z","message":{"role":"assistant","content":" capital."},"done":false}` + "\n",
	`{"model":"llama3.1:8b","created_at":"2025-08-20T13:47:54.52Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":15381256875,"load_duration":14269781625,"prompt_eval_count":18,"prompt_eval_duration":48032166,"eval_count":6,"eval_duration":1062915917}` + "\n",
}

const ollamaSingleResponse = `{"model":"llama3.1:8b","created_at":"2025-08-20T13:47:54.52Z","message":{"role":"assistant","content":"Paris is the capital."},"done_reason":"stop","done":true,"prompt_eval_count":18,"eval_count":6}`

func ollamaReply(w http.ResponseWriter, _ *http.Request, _ int, body []byte) {
	if strings.Contains(string(body), `"stream":false`) {
		writeJSON(w, http.StatusOK, ollamaSingleResponse)
		return
	}
	writeStream(w, "application/x-ndjson", ollamaChunks...)
}

func ollamaConfig(base string) Config {
	return Config{Provider: "ollama", Model: ollamaModel, BaseURL: base}
}

func TestOllamaPlainCompletionSendsChatRequest(t *testing.T) {
	srv := newFakeServer(t, ollamaReply)
	cfg := ollamaConfig(srv.URL)
	cfg.Temperature = ptr(0.4)
	cfg.MaxTokens = 128
	m := newTestModel(t, cfg, "")

	resp, err := m.GenerateContent(context.Background(), conversation("Answer tersely.", "Capital of France?"),
		llms.WithStopWords([]string{"Observation:"}))
	require.NoError(t, err)

	req := srv.only(t)
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "/api/chat", req.Path)
	assert.Empty(t, req.Header.Get("Authorization"))
	body := req.JSON(t)
	assert.Equal(t, ollamaModel, body["model"])
	assert.NotContains(t, body, "stream", "langchaingo omits stream=false, so Ollama streams anyway")
	assert.Equal(t, "system", path(t, body, "messages", 0, "role"))
	assert.Equal(t, "Answer tersely.", path(t, body, "messages", 0, "content"))
	assert.Equal(t, "user", path(t, body, "messages", 1, "role"))
	assert.Equal(t, "Capital of France?", path(t, body, "messages", 1, "content"))
	assert.Equal(t, []any{"Observation:"}, path(t, body, "options", "stop"))
	assert.InDelta(t, 0.4, path(t, body, "options", "temperature"), 1e-6)
	assert.EqualValues(t, 128, path(t, body, "options", "num_predict"))

	require.Len(t, resp.Choices, 1)
	assert.Equal(t, "Paris is the capital.", resp.Choices[0].Content)
	info := resp.Choices[0].GenerationInfo
	assert.Equal(t, 18, info["PromptTokens"])
	assert.Equal(t, 6, info["CompletionTokens"])
	assert.Equal(t, 24, info["TotalTokens"])
	assert.Equal(t, 0, info["ThinkingTokens"])
	assert.Equal(t, "", info["ThinkingContent"])
}

func TestOllamaStreamingDeliversNDJSONChunks(t *testing.T) {
	srv := newFakeServer(t, ollamaReply)
	m := newTestModel(t, ollamaConfig(srv.URL), "")

	var got chunkCollector
	resp, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Capital of France?"),
		llms.WithStreamingFunc(got.fn))
	require.NoError(t, err)

	assert.Equal(t, true, srv.only(t).JSON(t)["stream"])
	require.Len(t, resp.Choices, 1)
	assert.Equal(t, "Paris is the capital.", resp.Choices[0].Content)
	assert.Equal(t, resp.Choices[0].Content, got.joined())
	assert.Equal(t, 3, got.nonEmpty())
	assert.Equal(t, 18, resp.Choices[0].GenerationInfo["PromptTokens"])
	assert.Equal(t, 6, resp.Choices[0].GenerationInfo["CompletionTokens"])
}

func TestOllamaRejectsToolCallingWithHint(t *testing.T) {
	call := llms.ToolCall{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	question := llms.TextParts(llms.ChatMessageTypeHuman, "Weather in Paris?")
	tests := []struct {
		name     string
		messages []llms.MessageContent
		options  []llms.CallOption
	}{
		{"tools option", []llms.MessageContent{question}, []llms.CallOption{llms.WithTools([]llms.Tool{weatherTool})}},
		{"functions option", []llms.MessageContent{question},
			[]llms.CallOption{llms.WithFunctions([]llms.FunctionDefinition{*weatherTool.Function})}},
		{"tool call in history", []llms.MessageContent{question, {Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{call}}}, nil},
		{"tool response in history", []llms.MessageContent{question, {Role: llms.ChatMessageTypeTool,
			Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c1", Name: "get_weather", Content: "18C"}}}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, ollamaReply)
			m := newTestModel(t, ollamaConfig(srv.URL), "")

			_, err := m.GenerateContent(context.Background(), tc.messages, tc.options...)
			require.ErrorIs(t, err, ErrUnsupported)
			assert.Contains(t, err.Error(), "provider: openai")
			assert.Contains(t, err.Error(), "base_url: "+srv.URL+"/v1")
			assert.Empty(t, srv.requests(), "nothing may be sent")
		})
	}
}

func TestOllamaJSONModeSetsFormat(t *testing.T) {
	srv := newFakeServer(t, ollamaReply)
	m := newTestModel(t, ollamaConfig(srv.URL), "")

	_, err := m.GenerateContent(context.Background(), conversation("Reply in JSON.", "Hi"), llms.WithJSONMode())
	require.NoError(t, err)
	assert.Equal(t, "json", srv.only(t).JSON(t)["format"])
}

func TestOllamaFailedStatusWithEmptyBodyIsAnError(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
		w.WriteHeader(http.StatusBadGateway)
	})
	m := newTestModel(t, ollamaConfig(srv.URL), "")

	resp, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	require.Error(t, err, "langchaingo's ollama client returns no error here; the wrapper must")
	assert.Nil(t, resp)
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusBadGateway, se.StatusCode)
	assert.ErrorIs(t, err, ErrServer)
}

func TestOllamaSendsBearerKeyWhenKeyEnvIsSet(t *testing.T) {
	srv := newFakeServer(t, ollamaReply)
	m := newTestModel(t, ollamaConfig(srv.URL), "TEST_OLLAMA_KEY")

	_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	require.NoError(t, err)
	assert.Equal(t, "Bearer "+testSecret, srv.only(t).Header.Get("Authorization"))
}
