package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The replies of the fake OpenAI-compatible server: a ReAct step, then the
// answer once the calculator's observation is in the prompt.
const (
	streamReply1 = "Thought: I will compute it with the calculator.\nAction: calculator\nAction Input: 17 * 23 + 4\n"
	streamReply2 = "Thought: The calculator says 395.\nFinal Answer: 395\n"
)

// fakeOpenAI serves chat completions as OpenAI does: a JSON reply, or with
// "stream": true server-sent chunks of a few bytes each, then a usage
// chunk and [DONE]. It counts the requests of each kind.
func fakeOpenAI(t *testing.T) (*httptest.Server, *atomic.Int32, *atomic.Int32) {
	t.Helper()
	var plain, streamed atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req struct {
			Stream bool `json:"stream"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		reply := streamReply1
		if bytes.Contains(body, []byte("395")) {
			reply = streamReply2
		}
		if !req.Stream {
			plain.Add(1)
			w.Header().Set("Content-Type", "application/json")
			content, _ := json.Marshal(reply)
			fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}`, content)
			return
		}
		streamed.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		flusher, _ := w.(http.Flusher)
		chunk := func(data string) {
			fmt.Fprintf(w, "data: %s\n\n", data)
			if flusher != nil {
				flusher.Flush()
			}
		}
		chunk(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
		for i := 0; i < len(reply); i += 5 {
			content, _ := json.Marshal(reply[i:min(i+5, len(reply))])
			chunk(fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":%s},"finish_reason":null}]}`, content))
		}
		chunk(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		chunk(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}`)
		chunk("[DONE]")
	}))
	t.Cleanup(srv.Close)
	return srv, &plain, &streamed
}

func TestAStreamedRunShowsTokensInOrderAndAnswersAsAPlainRun(t *testing.T) {
	t.Setenv("PLANNER_TEST_OPENAI_KEY", "sk-test-streaming")
	srv, plain, streamed := fakeOpenAI(t)
	eng, err := New(fullSet())
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close() })
	p, err := eng.Load(t.Context(), "configs/react.yaml", WithLLMConfig(config.LLM{Provider: "openai", Model: "gpt-4o-mini",
		BaseURL: srv.URL + "/v1", APIKeyEnv: "PLANNER_TEST_OPENAI_KEY"}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	const question = "What is 17 * 23 + 4?"

	base, err := p.Run(t.Context(), question)
	require.NoError(t, err)
	require.Equal(t, "395", base.Answer)
	require.Equal(t, int32(2), plain.Load(), "without WithTokens no call streams")
	require.Zero(t, streamed.Load())

	var term bytes.Buffer
	run := p.Start(t.Context(), question, WithTokens(), WithTraceSink(trace.NewTerminal(&term, trace.WithTokens(true))))
	var events []trace.Event
	for e := range run.Events() {
		events = append(events, e)
	}
	res, err := run.Wait()
	require.NoError(t, err)
	assert.Equal(t, int32(2), streamed.Load(), "with WithTokens every call streams")
	assert.Equal(t, base.Answer, res.Answer, "streaming does not change the answer")
	assert.Equal(t, base.Usage.ModelCalls, res.Usage.ModelCalls)

	// Every event reaches the iterator once, in sequence order; the token
	// events of each call spell its reply, in order.
	texts := map[any]*strings.Builder{}
	var calls []any
	for i, e := range events {
		require.Equal(t, int64(i+1), e.Seq, "events in order, none lost")
		if e.Kind != trace.KindToken {
			continue
		}
		assert.Equal(t, "act", e.Node)
		call := e.Data["call"]
		if texts[call] == nil {
			texts[call] = &strings.Builder{}
			calls = append(calls, call)
		}
		texts[call].WriteString(e.Text)
	}
	require.Len(t, calls, 2)
	assert.Equal(t, streamReply1, texts[calls[0]].String())
	assert.Equal(t, streamReply2, texts[calls[1]].String())
	for _, e := range res.Trace {
		require.NotEqual(t, trace.KindToken, e.Kind, "Result.Trace keeps no token events")
	}
	assert.Len(t, res.Trace, len(events)-strings.Count(fmt.Sprint(kinds(events)), string(trace.KindToken)))

	// The terminal showed each reply as it streamed, and not its Thought a
	// second time; the parsed action and observation follow it.
	out := term.String()
	assert.Contains(t, out, "▸ Thought: I will compute it with the calculator.")
	assert.Equal(t, 1, strings.Count(out, "I will compute it with the calculator."), out)
	assert.Contains(t, out, "Action: calculator[17 * 23 + 4]")
	assert.NotContains(t, out, "    \n", "no blank indented line after a streamed reply")
	assert.Contains(t, out, "Observation: 395")
	assert.Less(t, strings.Index(out, "▸ Thought: I will compute"), strings.Index(out, "Observation: 395"))
}

func kinds(events []trace.Event) []trace.Kind {
	out := make([]trace.Kind, len(events))
	for i, e := range events {
		out[i] = e.Kind
	}
	return out
}

func TestStartReportsAnEmptyQuestionThroughWait(t *testing.T) {
	eng, err := New(fullSet())
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close() })
	p, err := eng.Load(t.Context(), "configs/cot.yaml", WithLLM("scripted:examples/scripts/cot_demo.yaml"))
	require.NoError(t, err)
	run := p.Start(t.Context(), "  ")
	n := 0
	for range run.Events() {
		n++
	}
	_, err = run.Wait()
	require.ErrorIs(t, err, ErrEmptyQuestion)
	assert.Zero(t, n)
	select {
	case <-run.Done():
	default:
		t.Fatal("Done is closed once Wait returned")
	}
}
