package provider

import (
	"context"
	"errors"
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

func TestGoogleAIPlainCompletionSendsGeminiRequest(t *testing.T) {
	srv := newFakeServer(t, geminiReply)
	cfg := geminiConfig(srv.URL)
	cfg.Temperature = ptr(0.25)
	cfg.MaxTokens = 300
	m := newTestModel(t, cfg, "TEST_GOOGLE_KEY")

	resp, err := m.GenerateContent(context.Background(),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Capital of France?")},
		llms.WithStopWords([]string{"Observation:"}))
	require.NoError(t, err)

	req := srv.only(t)
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "/v1beta/models/"+geminiModel+":generateContent", req.Path)
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
	assert.Equal(t, "Paris is the capital.", resp.Choices[0].Content)
	info := resp.Choices[0].GenerationInfo
	assert.Equal(t, int32(21), info["input_tokens"])
	assert.Equal(t, int32(6), info["output_tokens"])
	assert.Equal(t, int32(27), info["total_tokens"])
	assert.Equal(t, int32(21), info["PromptTokens"])
	assert.Equal(t, int32(6), info["CompletionTokens"])
	assert.Equal(t, int32(27), info["TotalTokens"])
	assert.Equal(t, 0, info["ThinkingTokens"])
	assert.Equal(t, "", info["ThinkingContent"])
	assert.IsType(t, []*genai.SafetyRating{}, info["safety"])
	assert.IsType(t, (*genai.CitationMetadata)(nil), info["citations"])
}

func TestGoogleAIConversationUsesStreamEndpointAndSystemInstruction(t *testing.T) {
	srv := newFakeServer(t, geminiReply)
	m := newTestModel(t, geminiConfig(srv.URL), "TEST_GOOGLE_KEY")

	resp, err := m.GenerateContent(context.Background(), conversation("Answer tersely.", "Capital of France?"))
	require.NoError(t, err)

	req := srv.only(t)
	assert.Equal(t, "/v1beta/models/"+geminiModel+":streamGenerateContent", req.Path,
		"genai's ChatSession sends every multi-message call to the stream endpoint")
	body := req.JSON(t)
	assert.Equal(t, "Answer tersely.", path(t, body, "systemInstruction", "parts", 0, "text"))
	assert.Len(t, path(t, body, "contents"), 1)
	assert.Equal(t, "Paris is the capital.", resp.Choices[0].Content)
}

func TestGoogleAIStreamingDeliversChunksAndKeepsFirstChunkUsage(t *testing.T) {
	srv := newFakeServer(t, geminiReply)
	m := newTestModel(t, geminiConfig(srv.URL), "TEST_GOOGLE_KEY")

	var got chunkCollector
	resp, err := m.GenerateContent(context.Background(),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Capital of France?")},
		llms.WithStreamingFunc(got.fn))
	require.NoError(t, err)

	assert.Equal(t, "/v1beta/models/"+geminiModel+":streamGenerateContent", srv.only(t).Path)
	require.Len(t, resp.Choices, 1)
	assert.Equal(t, "Paris is the capital.", resp.Choices[0].Content)
	assert.Equal(t, resp.Choices[0].Content, got.joined())
	assert.Equal(t, 3, got.nonEmpty())
	// genai v0.15.1 merges stream chunks but keeps the FIRST chunk's usage
	// ("TODO: Take the last UsageMetadata"), so the output count is lost.
	info := resp.Choices[0].GenerationInfo
	assert.Equal(t, int32(9), info["input_tokens"])
	assert.Equal(t, int32(0), info["output_tokens"])
}

func TestGoogleAIStreamingFuncErrorIsReturned(t *testing.T) {
	srv := newFakeServer(t, geminiReply)
	m := newTestModel(t, geminiConfig(srv.URL), "TEST_GOOGLE_KEY")
	stop := errors.New("enough")

	_, err := m.GenerateContent(context.Background(),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Capital of France?")},
		llms.WithStreamingFunc(func(context.Context, []byte) error { return stop }))
	require.Error(t, err, "langchaingo's googleai adapter swallows this error; the wrapper must not")
	assert.ErrorIs(t, err, stop)
}

func TestGoogleAIToolCallRoundTrip(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, n int, body []byte) {
		if n == 0 {
			writeJSON(w, http.StatusOK, `{
  "candidates": [{
    "content": {"parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}], "role": "model"},
    "finishReason": 1
  }],
  "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 5, "totalTokenCount": 35}
}`)
			return
		}
		geminiReply(w, r, n, body)
	})
	m := newTestModel(t, geminiConfig(srv.URL), "TEST_GOOGLE_KEY")

	question := llms.TextParts(llms.ChatMessageTypeHuman, "Weather in Paris?")
	first, err := m.GenerateContent(context.Background(), []llms.MessageContent{question}, llms.WithTools([]llms.Tool{weatherTool}))
	require.NoError(t, err)

	decl := path(t, srv.requests()[0].JSON(t), "tools", 0, "functionDeclarations", 0)
	assert.Equal(t, "get_weather", path(t, decl, "name"))
	assert.EqualValues(t, 6, path(t, decl, "parameters", "type"), "genai Type OBJECT")

	require.Len(t, first.Choices, 1)
	require.Len(t, first.Choices[0].ToolCalls, 1)
	call := first.Choices[0].ToolCalls[0]
	assert.Empty(t, call.ID, "Gemini function calls carry no ID")
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
	assert.Equal(t, "/v1beta/models/"+geminiModel+":streamGenerateContent", reqs[1].Path)
	contents := path(t, reqs[1].JSON(t), "contents")
	require.Len(t, contents, 3)
	assert.Equal(t, "model", path(t, contents, 1, "role"))
	assert.Equal(t, "get_weather", path(t, contents, 1, "parts", 0, "functionCall", "name"))
	assert.Equal(t, "Paris", path(t, contents, 1, "parts", 0, "functionCall", "args", "city"))
	assert.Equal(t, "user", path(t, contents, 2, "role"))
	assert.Equal(t, "get_weather", path(t, contents, 2, "parts", 0, "functionResponse", "name"))
	assert.Equal(t, "18C, sunny", path(t, contents, 2, "parts", 0, "functionResponse", "response", "response"))
}
