package provider

import (
	"context"
	"fmt"
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

var ollamaWire = wireCase{
	provider: "ollama", keyEnv: "TEST_OLLAMA_KEY", config: ollamaConfig, reply: ollamaReply, retryAfter: true,
	errorBody: func(_ int, msg string) string { return fmt.Sprintf(`{"error":%q}`, msg) },
}

// ollamaKeyless is Ollama as usually run: without a key.
var ollamaKeyless = wireCase{provider: "ollama", config: ollamaConfig, reply: ollamaReply}

func TestOllamaPlainCompletionSendsChatRequest(t *testing.T) {
	srv, m := ollamaKeyless.start(t, tuned(0.4, 128))

	resp, err := m.GenerateContent(context.Background(), conversation("Answer tersely.", "Capital of France?"),
		llms.WithStopWords([]string{"Observation:"}))
	require.NoError(t, err)

	req := srv.only(t)
	assertPOST(t, req, "/api/chat")
	assert.Empty(t, req.Header.Get("Authorization"))
	body := req.JSON(t)
	assert.Equal(t, ollamaModel, body["model"])
	assert.NotContains(t, body, "stream", "langchaingo omits stream=false, so Ollama streams anyway")
	assertChatMessages(t, body)
	assert.Equal(t, []any{"Observation:"}, path(t, body, "options", "stop"))
	assert.InDelta(t, 0.4, path(t, body, "options", "temperature"), 1e-6)
	assert.EqualValues(t, 128, path(t, body, "options", "num_predict"))

	require.Len(t, resp.Choices, 1)
	assert.Equal(t, cannedAnswer, resp.Choices[0].Content)
	assertInfo(t, resp.Choices[0].GenerationInfo, map[string]any{
		"PromptTokens": 18, "CompletionTokens": 6, "TotalTokens": 24, "ThinkingTokens": 0, "ThinkingContent": "",
	})
}

func TestOllamaStreamingDeliversNDJSONChunks(t *testing.T) {
	srv, m := ollamaKeyless.start(t)

	resp := streamCanned(t, m, conversation("Be brief.", "Capital of France?"))

	assert.Equal(t, true, srv.only(t).JSON(t)["stream"])
	assert.Equal(t, 18, resp.Choices[0].GenerationInfo["PromptTokens"])
	assert.Equal(t, 6, resp.Choices[0].GenerationInfo["CompletionTokens"])
}

func TestOllamaRejectsToolCallingWithHint(t *testing.T) {
	call := llms.ToolCall{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris"}`}}
	question := weatherQuestion
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
			srv, m := ollamaKeyless.start(t)

			_, err := m.GenerateContent(context.Background(), tc.messages, tc.options...)
			require.ErrorIs(t, err, ErrUnsupported)
			assert.Contains(t, err.Error(), "provider: openai")
			assert.Contains(t, err.Error(), "base_url: "+srv.URL+"/v1")
			assert.Empty(t, srv.requests(), "nothing may be sent")
		})
	}
}

func TestOllamaJSONModeSetsFormat(t *testing.T) {
	srv, m := ollamaKeyless.start(t)

	_, err := m.GenerateContent(context.Background(), conversation("Reply in JSON.", "Hi"), llms.WithJSONMode())
	require.NoError(t, err)
	assert.Equal(t, "json", srv.only(t).JSON(t)["format"])
}

func TestOllamaFailedStatusWithEmptyBodyIsAnError(t *testing.T) {
	_, m := ollamaKeyless.serve(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
		w.WriteHeader(http.StatusBadGateway)
	})

	resp, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	require.Error(t, err, "langchaingo's ollama client returns no error here; the wrapper must")
	assert.Nil(t, resp)
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusBadGateway, se.StatusCode)
	assert.ErrorIs(t, err, ErrServer)
}

func TestOllamaSendsBearerKeyWhenKeyEnvIsSet(t *testing.T) {
	srv, m := ollamaWire.start(t)

	_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	require.NoError(t, err)
	assert.Equal(t, "Bearer "+testSecret, srv.only(t).Header.Get("Authorization"))
}
