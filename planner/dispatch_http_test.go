package planner_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/provider"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/planner"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/require"
)

// pacedOpenAI is a loopback OpenAI-compatible server that streams reply
// in chunks of 4 bytes, one per interval, and records when it flushed the
// chunk that holds byte mark of the reply.
type pacedOpenAI struct {
	reply    string
	mark     int
	interval time.Duration
	mu       sync.Mutex
	marked   time.Time
}

func (s *pacedOpenAI) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher := w.(http.Flusher)
	send := func(data string) {
		fmt.Fprintf(w, "data: %s\n\n", data)
		flusher.Flush()
	}
	send(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
	for i := 0; i < len(s.reply); i += 4 {
		time.Sleep(s.interval)
		content, _ := json.Marshal(s.reply[i:min(i+4, len(s.reply))])
		send(fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%s},"finish_reason":null}]}`, content))
		if i <= s.mark && s.mark < i+4 {
			s.mu.Lock()
			s.marked = time.Now()
			s.mu.Unlock()
		}
	}
	send(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	send("[DONE]")
}

// BenchmarkDispatchFirstToolCallOverHTTP is BenchmarkDispatchFirstToolCall
// through the real OpenAI adapter and a loopback server streaming the plan
// at 4 bytes per 2 ms: first-call-lag-ms is the time from the server
// flushing the chunk with the first step's closing brace to that step's
// tool call (goal: under 10 ms).
func BenchmarkDispatchFirstToolCallOverHTTP(b *testing.B) {
	var text strings.Builder
	text.WriteString(`{"steps": [`)
	for i := 1; i <= 6; i++ {
		if i > 1 {
			text.WriteString(", ")
		}
		fmt.Fprintf(&text, `{"id": "%d", "description": "look up fact %d", "tool": "search", "input": "fact number %d"}`, i, i, i)
	}
	text.WriteString("]}")
	srv := &pacedOpenAI{reply: text.String(), mark: strings.Index(text.String(), "}"), interval: 2 * time.Millisecond}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	m, err := provider.New(b.Context(), provider.Config{Provider: "openai", Model: "m", BaseURL: hs.URL + "/v1"})
	require.NoError(b, err)
	var lag time.Duration
	for b.Loop() {
		tool := &timedTool{}
		reg, err := tools.NewRegistry([]tools.Tool{tool})
		require.NoError(b, err)
		built, err := planner.New(nodekind.Env{Model: llm.Model{LLM: m}, Tools: reg}, nodekind.Spec{ID: "plan", Type: "planner",
			Settings: map[string]any{"require_tools": true, "dispatch": true, "output": "text"}})
		require.NoError(b, err)
		st := hookedState(state.Task{Question: "q"})
		_, err = built.Node.Run(b.Context(), st)
		require.NoError(b, err)
		require.Len(b, st.Plan, 6)
		srv.mu.Lock()
		lag += tool.first.Sub(srv.marked)
		srv.mu.Unlock()
	}
	b.ReportMetric(float64(lag.Microseconds())/1000/float64(b.N), "first-call-lag-ms")
}
