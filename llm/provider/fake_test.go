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

	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
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
