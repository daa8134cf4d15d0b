package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/generative-ai-go/genai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

const geminiModel = "gemini-2.0-flash"

// geminiTextResponse is a complete :generateContent reply in the REST
// format (enums as numbers, as requested by $alt=json;enum-encoding=int).
const geminiTextResponse = `{
  "candidates": [{
    "content": {"parts": [{"text": "Paris is the capital."}], "role": "model"},
    "finishReason": 1,
    "safetyRatings": [{"category": 8, "probability": 1}]
  }],
  "usageMetadata": {"promptTokenCount": 21, "candidatesTokenCount": 6, "totalTokenCount": 27},
  "modelVersion": "gemini-2.0-flash"
}`

// geminiStreamChunks is a :streamGenerateContent reply: a JSON array whose
// elements arrive one by one. As with the real API, only the last element
// carries candidatesTokenCount.
var geminiStreamChunks = []string{
	`[{"candidates": [{"content": {"parts": [{"text": "Par"}], "role": "model"}}],
  "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9}}`,
	"\n,\r\n",
	`{"candidates": [{"content": {"parts": [{"text": "is is"}], "role": "model"}}],
  "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9}}`,
	"\n,\r\n",
	`{"candidates": [{"content": {"parts": [{"text": " the capital."}], "role": "model"}, "finishReason": 1}],
  "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 5, "totalTokenCount": 14}}`,
	"\n]",
}

// geminiReply answers both endpoints with a text reply.
func geminiReply(w http.ResponseWriter, r *http.Request, _ int, _ []byte) {
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		writeStream(w, "application/json; charset=UTF-8", geminiStreamChunks...)
		return
	}
	writeJSON(w, http.StatusOK, geminiTextResponse)
}

func geminiConfig(base string) Config {
	return Config{Provider: "googleai", Model: geminiModel, BaseURL: base}
}

var geminiWire = wireCase{
	provider: "googleai", keyEnv: "TEST_GOOGLE_KEY", config: geminiConfig, reply: geminiReply, retryAfter: true,
	errorBody: func(status int, msg string) string {
		return fmt.Sprintf(`{"error":{"code":%d,"message":%q,"status":"UNAUTHENTICATED"}}`, status, msg)
	},
}

// geminiQuestion is a conversation of one user turn; unless streamed,
// genai sends it to :generateContent.
var geminiQuestion = []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Capital of France?")}

func TestGoogleAIPlainCompletionSendsGeminiRequest(t *testing.T) {
	srv, m := geminiWire.start(t, tuned(0.25, 300))

	resp, err := m.GenerateContent(context.Background(), geminiQuestion, llms.WithStopWords([]string{"Observation:"}))
	require.NoError(t, err)

	req := srv.only(t)
	assertPOST(t, req, "/v1beta/models/"+geminiModel+":generateContent")
	assert.Equal(t, testSecret, req.Header.Get("x-goog-api-key"))
	assert.NotContains(t, req.RawQuery, testSecret, "the key must not travel in the URL")
	body := req.JSON(t)
	assert.Equal(t, "models/"+geminiModel, body["model"])
	assert.Equal(t, "Capital of France?", path(t, body, "contents", 0, "parts", 0, "text"))
	assert.Equal(t, "user", path(t, body, "contents", 0, "role"))
	assert.Equal(t, []any{"Observation:"}, path(t, body, "generationConfig", "stopSequences"))
	assert.InDelta(t, 0.25, path(t, body, "generationConfig", "temperature"), 1e-6)
	assert.EqualValues(t, 300, path(t, body, "generationConfig", "maxOutputTokens"))

	require.Len(t, resp.Choices, 1)
	assert.Equal(t, cannedAnswer, resp.Choices[0].Content)
	info := resp.Choices[0].GenerationInfo
	assertInfo(t, info, map[string]any{
		"input_tokens": int32(21), "output_tokens": int32(6), "total_tokens": int32(27),
		"PromptTokens": int32(21), "CompletionTokens": int32(6), "TotalTokens": int32(27),
		"ThinkingTokens": 0, "ThinkingContent": "",
	})
	assert.IsType(t, []*genai.SafetyRating{}, info["safety"])
	assert.IsType(t, (*genai.CitationMetadata)(nil), info["citations"])
}

func TestGoogleAIConversationUsesStreamEndpointAndSystemInstruction(t *testing.T) {
	srv, m := geminiWire.start(t)

	resp, err := m.GenerateContent(context.Background(), conversation("Answer tersely.", "Capital of France?"))
	require.NoError(t, err)

	req := srv.only(t)
	assert.Equal(t, "/v1beta/models/"+geminiModel+":streamGenerateContent", req.Path,
		"genai's ChatSession sends every multi-message call to the stream endpoint")
	body := req.JSON(t)
	assert.Equal(t, "Answer tersely.", path(t, body, "systemInstruction", "parts", 0, "text"))
	assert.Len(t, path(t, body, "contents"), 1)
	assert.Equal(t, cannedAnswer, resp.Choices[0].Content)
}

func TestGoogleAIStreamingDeliversChunksAndKeepsFirstChunkUsage(t *testing.T) {
	srv, m := geminiWire.start(t)

	resp := streamCanned(t, m, geminiQuestion)

	assert.Equal(t, "/v1beta/models/"+geminiModel+":streamGenerateContent", srv.only(t).Path)
	// genai v0.15.1 merges stream chunks but keeps the FIRST chunk's usage
	// ("TODO: Take the last UsageMetadata"), so the output count is lost.
	info := resp.Choices[0].GenerationInfo
	assert.Equal(t, int32(9), info["input_tokens"])
	assert.Equal(t, int32(0), info["output_tokens"])
}

func TestGoogleAIStreamingFuncErrorIsReturned(t *testing.T) {
	_, m := geminiWire.start(t)
	stop := errors.New("enough")

	_, err := m.GenerateContent(context.Background(), geminiQuestion,
		llms.WithStreamingFunc(func(context.Context, []byte) error { return stop }))
	require.Error(t, err, "langchaingo's googleai adapter swallows this error; the wrapper must not")
	assert.ErrorIs(t, err, stop)
}

func TestGoogleAIToolCallRoundTrip(t *testing.T) {
	srv, m := geminiWire.serve(t, firstJSON(`{
  "candidates": [{
    "content": {"parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}], "role": "model"},
    "finishReason": 1
  }],
  "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 5, "totalTokenCount": 35}
}`, geminiReply))

	first := askWeather(t, m)

	decl := path(t, srv.requests()[0].JSON(t), "tools", 0, "functionDeclarations", 0)
	assert.Equal(t, "get_weather", path(t, decl, "name"))
	assert.EqualValues(t, 6, path(t, decl, "parameters", "type"), "genai Type OBJECT")

	require.Len(t, first.Choices, 1)
	require.Len(t, first.Choices[0].ToolCalls, 1)
	call := first.Choices[0].ToolCalls[0]
	assert.Empty(t, call.ID, "Gemini function calls carry no ID")
	assert.Equal(t, "get_weather", call.FunctionCall.Name)
	assert.JSONEq(t, `{"city":"Paris"}`, call.FunctionCall.Arguments)

	_, second := answerWeather(t, srv, m, call)

	assert.Equal(t, "/v1beta/models/"+geminiModel+":streamGenerateContent", second.Path)
	contents := path(t, second.JSON(t), "contents")
	require.Len(t, contents, 3)
	assert.Equal(t, "model", path(t, contents, 1, "role"))
	assert.Equal(t, "get_weather", path(t, contents, 1, "parts", 0, "functionCall", "name"))
	assert.Equal(t, "Paris", path(t, contents, 1, "parts", 0, "functionCall", "args", "city"))
	assert.Equal(t, "user", path(t, contents, 2, "role"))
	assert.Equal(t, "get_weather", path(t, contents, 2, "parts", 0, "functionResponse", "name"))
	assert.Equal(t, "18C, sunny", path(t, contents, 2, "parts", 0, "functionResponse", "response", "response"))
}
