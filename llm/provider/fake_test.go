package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/llm/provider/adapter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// Constants of package adapter that the tests check against.
const (
	redactedMark        = adapter.RedactedMark
	localPlaceholderKey = adapter.LocalPlaceholderKey
)

// testSecret is the API key every test puts in the environment. Its text is
// distinctive so an assertion that it never appears in an error is
// meaningful.
const testSecret = "sk-TESTSECRET-4f9c2e7a1b"

// exchangeLog is one request the fake server received.
type exchangeLog struct {
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte
}

// JSON decodes the request body into a generic map.
func (e exchangeLog) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(e.Body, &m), "request body: %s", e.Body)
	return m
}

// fakeServer is an httptest server that records every request and answers
// through a scripted handler; n is the 0-based index of the request.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []exchangeLog
}

type replyFunc func(w http.ResponseWriter, r *http.Request, n int, body []byte)

func newFakeServer(t *testing.T, reply replyFunc) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, exchangeLog{
			Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
			Header: r.Header.Clone(), Body: body,
		})
		f.mu.Unlock()
		reply(w, r, n, body)
	}))
	t.Cleanup(f.Close)
	return f
}

// requests returns a copy of the requests received so far.
func (f *fakeServer) requests() []exchangeLog {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]exchangeLog(nil), f.reqs...)
}

// only returns the single request received, failing otherwise.
func (f *fakeServer) only(t *testing.T) exchangeLog {
	t.Helper()
	reqs := f.requests()
	require.Len(t, reqs, 1)
	return reqs[0]
}

// writeJSON answers with status and a JSON body.
func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// writeStream writes each piece and flushes after it, so the client sees a
// genuinely incremental body.
func writeStream(w http.ResponseWriter, contentType string, pieces ...string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	for _, p := range pieces {
		_, _ = io.WriteString(w, p)
		if fl != nil {
			fl.Flush()
		}
	}
}

// sseData formats one SSE "data:" event.
func sseData(payload string) string { return "data: " + payload + "\n\n" }

// sseEvent formats one named SSE event.
func sseEvent(name, payload string) string {
	return fmt.Sprintf("event: %s\ndata: %s\n\n", name, payload)
}

// newTestModel sets the key variable (when keyEnv is not empty) and builds a
// model for provider against base.
func newTestModel(t *testing.T, cfg Config, keyEnv string) llms.Model {
	t.Helper()
	if keyEnv != "" {
		t.Setenv(keyEnv, testSecret)
		cfg.APIKeyEnv = keyEnv
	}
	m, err := New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.(io.Closer).Close() })
	return m
}

// chunkCollector gathers streamed chunks.
type chunkCollector struct {
	mu     sync.Mutex
	chunks []string
}

func (c *chunkCollector) fn(_ context.Context, chunk []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chunks = append(c.chunks, string(chunk))
	return nil
}

func (c *chunkCollector) joined() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.chunks, "")
}

func (c *chunkCollector) nonEmpty() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.chunks {
		if s != "" {
			n++
		}
	}
	return n
}

// weatherTool is the tool definition used by the tool-call tests.
var weatherTool = llms.Tool{
	Type: "function",
	Function: &llms.FunctionDefinition{
		Name:        "get_weather",
		Description: "Current weather for a city",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"city": map[string]any{"type": "string", "description": "City name"},
			},
			"required": []any{"city"},
		},
	},
}

func ptr[T any](v T) *T { return &v }

// conversation returns a system + human message pair.
func conversation(system, human string) []llms.MessageContent {
	return []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, system),
		llms.TextParts(llms.ChatMessageTypeHuman, human),
	}
}

// path walks a decoded JSON value: string keys index objects, ints index
// arrays. It fails the test when the path does not exist.
func path(t *testing.T, v any, steps ...any) any {
	t.Helper()
	cur := v
	for i, s := range steps {
		switch k := s.(type) {
		case string:
			m, ok := cur.(map[string]any)
			require.True(t, ok, "step %d (%q): not an object: %v", i, k, cur)
			next, ok := m[k]
			require.True(t, ok, "step %d: key %q missing in %v", i, k, m)
			cur = next
		case int:
			a, ok := cur.([]any)
			require.True(t, ok, "step %d (%d): not an array: %v", i, k, cur)
			require.Less(t, k, len(a), "step %d: index out of range in %v", i, a)
			cur = a[k]
		}
	}
	return cur
}

// jsonHasTrue reports whether the JSON object body has key set to true.
func jsonHasTrue(body []byte, key string) bool {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	v, _ := m[key].(bool)
	return v
}

// wireCase describes one provider's fake server: its config, key variable,
// success reply and error body format. Each provider's test file defines
// one; the cross-provider tests range over wireCases.
type wireCase struct {
	provider string
	keyEnv   string
	config   func(base string) Config
	reply    replyFunc
	// errorBody renders the provider's JSON error envelope around msg.
	errorBody func(status int, msg string) string
	// retryAfter is whether the adapter exposes the Retry-After header.
	retryAfter bool
}

func wireCases() []wireCase {
	return []wireCase{openAIWire, anthropicWire, geminiWire, ollamaWire, mistralWire}
}

// start serves wc.reply from a fake server and builds a model for it; each
// edit adjusts the config first.
func (wc wireCase) start(t *testing.T, edits ...func(*Config)) (*fakeServer, llms.Model) {
	t.Helper()
	return wc.serve(t, wc.reply, edits...)
}

// serve is start answering through reply instead of wc.reply.
func (wc wireCase) serve(t *testing.T, reply replyFunc, edits ...func(*Config)) (*fakeServer, llms.Model) {
	t.Helper()
	srv := newFakeServer(t, reply)
	cfg := wc.config(srv.URL)
	for _, edit := range edits {
		edit(&cfg)
	}
	return srv, newTestModel(t, cfg, wc.keyEnv)
}

// tuned is a config edit setting the temperature and the token limit.
func tuned(temperature float64, maxTokens int) func(*Config) {
	return func(c *Config) {
		c.Temperature = ptr(temperature)
		c.MaxTokens = maxTokens
	}
}

// firstJSON answers the first request with a 200 JSON body and every later
// one through then.
func firstJSON(body string, then replyFunc) replyFunc {
	return func(w http.ResponseWriter, r *http.Request, n int, reqBody []byte) {
		if n == 0 {
			writeJSON(w, http.StatusOK, body)
			return
		}
		then(w, r, n, reqBody)
	}
}

// cannedAnswer is the text every provider's canned success reply carries.
const cannedAnswer = "Paris is the capital."

// streamCanned streams msgs through m and checks what every adapter shares
// for the canned reply: one choice holding cannedAnswer, equal to the
// concatenated chunks, which arrived as three non-empty pieces.
func streamCanned(t *testing.T, m llms.Model, msgs []llms.MessageContent) *llms.ContentResponse {
	t.Helper()
	var got chunkCollector
	resp, err := m.GenerateContent(context.Background(), msgs, llms.WithStreamingFunc(got.fn))
	require.NoError(t, err)
	require.Len(t, resp.Choices, 1)
	assert.Equal(t, cannedAnswer, resp.Choices[0].Content)
	assert.Equal(t, resp.Choices[0].Content, got.joined())
	assert.Equal(t, 3, got.nonEmpty())
	return resp
}

// assertPOST checks the request was a POST to wantPath.
func assertPOST(t *testing.T, req exchangeLog, wantPath string) {
	t.Helper()
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, wantPath, req.Path)
}

// assertChatMessages checks body carries conversation("Answer tersely.",
// "Capital of France?") as OpenAI-style role/content messages.
func assertChatMessages(t *testing.T, body map[string]any) {
	t.Helper()
	assert.Equal(t, "system", path(t, body, "messages", 0, "role"))
	assert.Equal(t, "Answer tersely.", path(t, body, "messages", 0, "content"))
	assert.Equal(t, "user", path(t, body, "messages", 1, "role"))
	assert.Equal(t, "Capital of France?", path(t, body, "messages", 1, "content"))
}

// assertInfo checks each wanted GenerationInfo entry, naming the key on
// failure.
func assertInfo(t *testing.T, info map[string]any, want map[string]any) {
	t.Helper()
	for key, v := range want {
		assert.Equal(t, v, info[key], key)
	}
}

// weatherQuestion opens every tool-call conversation.
var weatherQuestion = llms.TextParts(llms.ChatMessageTypeHuman, "Weather in Paris?")

// askWeather sends weatherQuestion with weatherTool offered.
func askWeather(t *testing.T, m llms.Model, opts ...llms.CallOption) *llms.ContentResponse {
	t.Helper()
	opts = append([]llms.CallOption{llms.WithTools([]llms.Tool{weatherTool})}, opts...)
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{weatherQuestion}, opts...)
	require.NoError(t, err)
	return resp
}

// answerWeather continues askWeather's conversation with the model's call
// and the tool's "18C, sunny" result, weatherTool still offered. It returns
// the response and the request the server received for it, its second.
func answerWeather(t *testing.T, srv *fakeServer, m llms.Model, call llms.ToolCall) (*llms.ContentResponse, exchangeLog) {
	t.Helper()
	history := []llms.MessageContent{
		weatherQuestion,
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{call}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{
			ToolCallID: call.ID, Name: call.FunctionCall.Name, Content: "18C, sunny",
		}}},
	}
	resp, err := m.GenerateContent(context.Background(), history, llms.WithTools([]llms.Tool{weatherTool}))
	require.NoError(t, err)
	reqs := srv.requests()
	require.Len(t, reqs, 2)
	return resp, reqs[1]
}

// assertFunctionTool checks weatherTool went out in OpenAI's function-tool
// shape as the first entry of the request's tools.
func assertFunctionTool(t *testing.T, req exchangeLog) {
	t.Helper()
	tool := path(t, req.JSON(t), "tools", 0)
	assert.Equal(t, "function", path(t, tool, "type"))
	assert.Equal(t, "get_weather", path(t, tool, "function", "name"))
	assert.Equal(t, "object", path(t, tool, "function", "parameters", "type"))
}

// assertFunctionToolTurns checks answerWeather's request in OpenAI's
// message shape: the assistant turn carrying the call with id, then the
// tool turn carrying the result.
func assertFunctionToolTurns(t *testing.T, req exchangeLog, id string) any {
	t.Helper()
	msgs := path(t, req.JSON(t), "messages")
	require.Len(t, msgs, 3)
	assert.Equal(t, "assistant", path(t, msgs, 1, "role"))
	assert.Equal(t, id, path(t, msgs, 1, "tool_calls", 0, "id"))
	assert.Equal(t, "get_weather", path(t, msgs, 1, "tool_calls", 0, "function", "name"))
	assert.Equal(t, "tool", path(t, msgs, 2, "role"))
	assert.Equal(t, "18C, sunny", path(t, msgs, 2, "content"))
	return msgs
}
