package middleware

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"
)

// recordingSleeper is an injected sleep function that returns at once and
// remembers the waits it was asked for.
type recordingSleeper struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *recordingSleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *recordingSleeper) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

// fakeClock is a clock that only moves when something sleeps on it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

// step is one scripted server behaviour.
type step func(t *testing.T, w http.ResponseWriter, r *http.Request)

// scriptServer serves the i-th request with steps[i] (the last step repeats)
// and counts requests.
type scriptServer struct {
	*httptest.Server
	hits atomic.Int32
}

func newScriptServer(t *testing.T, steps ...step) *scriptServer {
	t.Helper()
	s := &scriptServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(s.hits.Add(1)) - 1
		steps[min(i, len(steps)-1)](t, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func statusStep(code int, header map[string]string, body string) step {
	return func(_ *testing.T, w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

func errorBody(msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "test_error"}})
	return string(b)
}

// resetStep hijacks the connection and closes it with SO_LINGER 0, so the
// client sees a TCP reset before any response.
func resetStep(t *testing.T, w http.ResponseWriter, _ *http.Request) {
	hj, ok := w.(http.Hijacker)
	require.True(t, ok)
	conn, _, err := hj.Hijack()
	require.NoError(t, err)
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// hangStep blocks until the client gives up on the request. The body must be
// drained first: only then does the server watch the connection and cancel
// r.Context() when the client closes it.
func hangStep(_ *testing.T, _ http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// provider builds a real langchaingo client against a test server and
// knows its success body.
type provider struct {
	name   string
	newLLM func(t *testing.T, baseURL string, client *http.Client) llms.Model
	okBody func(content string) string
}

var openaiProvider = provider{
	name: "openai",
	newLLM: func(t *testing.T, baseURL string, client *http.Client) llms.Model {
		m, err := openai.New(openai.WithBaseURL(baseURL+"/v1"), openai.WithToken("test"),
			openai.WithModel("gpt-4o-mini"), openai.WithHTTPClient(client))
		require.NoError(t, err)
		return m
	},
	okBody: func(content string) string {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
			"choices": []any{map[string]any{
				"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content},
			}},
			"usage": map[string]any{"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
		})
		return string(b)
	},
}

var anthropicProvider = provider{
	name: "anthropic",
	newLLM: func(t *testing.T, baseURL string, client *http.Client) llms.Model {
		m, err := anthropic.New(anthropic.WithBaseURL(baseURL+"/v1"), anthropic.WithToken("test"),
			anthropic.WithModel("claude-3-5-haiku-latest"), anthropic.WithHTTPClient(client))
		require.NoError(t, err)
		return m
	},
	okBody: func(content string) string {
		b, _ := json.Marshal(map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-latest",
			"content":     []any{map[string]any{"type": "text", "text": content}},
			"stop_reason": "end_turn",
			"usage":       map[string]any{"input_tokens": 5, "output_tokens": 1},
		})
		return string(b)
	},
}

func okStep(p provider, content string) step {
	return statusStep(http.StatusOK, nil, p.okBody(content))
}

func humanMsg(text string) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, text)}
}

func textResponse(s string) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: s}}}
}
