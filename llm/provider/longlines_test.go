package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/planner-engine/planner/llm/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// bigText is about n bytes of reply text with what JSON must escape
// (quotes, backslashes, line feeds, a NUL), what it may (<, >, &), and
// characters of two to four bytes.
func bigText(n int) string {
	const unit = "Step: \"quote\" \\ back\nslash <tag> & ünïcödé 日本語 🚀 \x00 end. "
	return strings.Repeat(unit, n/len(unit)+1)[:n-n%len(unit)]
}

// jsonString is s as a JSON string literal.
func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

// openAIChunk is an OpenAI chat completion chunk whose delta is delta.
func openAIChunk(delta, finish string) string {
	return sseData(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":` +
		delta + `,"logprobs":null,"finish_reason":` + finish + `}],"usage":null}`)
}

// serveOpenAIStream answers every call with the SSE events.
func serveOpenAIStream(t *testing.T, events ...string) llms.Model {
	t.Helper()
	_, m := openAIWire.serve(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
		writeStream(w, "text/event-stream; charset=utf-8", append(events, sseData(`[DONE]`))...)
	})
	return m
}

func TestOpenAIStreamedChunkOver64KiBIsReadWhole(t *testing.T) {
	big := bigText(100_000)
	m := serveOpenAIStream(t,
		openAIChunk(`{"role":"assistant","content":"Plan:\n"}`, "null"),
		openAIChunk(`{"content":`+jsonString(t, big)+`}`, "null"),
		openAIChunk(`{"content":" done."}`, `"stop"`))
	var got chunkCollector
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{weatherQuestion}, llms.WithStreamingFunc(got.fn))
	require.NoError(t, err, "a chunk over 64 KiB no longer fails the call with bufio.Scanner: token too long")
	want := "Plan:\n" + big + " done."
	assert.Equal(t, want, resp.Choices[0].Content, "the reply is whole")
	assert.Equal(t, want, got.joined(), "and streams whole, in pieces")
	assert.Greater(t, got.nonEmpty(), 10)
	assert.Equal(t, "stop", resp.Choices[0].StopReason)
}

func TestOpenAIStreamedChunkOverTheReplyLimitIsCutThere(t *testing.T) {
	const limit = 32 << 10
	big := bigText(3 << 20) // 3 MiB in one line: cut to the limit as it is read
	var cuts []middleware.TruncateEvent
	m := middleware.NewReplyLimit(limit, middleware.WithOnTruncate(func(_ context.Context, ev middleware.TruncateEvent) {
		cuts = append(cuts, ev)
	}))(serveOpenAIStream(t,
		openAIChunk(`{"role":"assistant","content":`+jsonString(t, big)+`}`, `"stop"`)))
	var got chunkCollector
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{weatherQuestion}, llms.WithStreamingFunc(got.fn))
	require.NoError(t, err)
	content := resp.Choices[0].Content
	body, marker, ok := strings.Cut(content, "\n[reply truncated: ")
	require.True(t, ok, "the reply carries the truncation marker")
	assert.True(t, strings.HasPrefix(big, body))
	assert.LessOrEqual(t, len(body), limit)
	assert.Greater(t, len(body), limit-4, "cut at the limit, on a character boundary")
	assert.Contains(t, marker, "the limit is 32768 bytes")
	require.Len(t, cuts, 1, "the cut is reported (a guard event in a run)")
	assert.Equal(t, "content", cuts[0].Field)
	assert.Equal(t, limit+1, len(got.joined()), "the stream carries one byte over the limit, not 3 MiB")
}

func TestOpenAIStreamedToolCallsOver64KiBAreAssembled(t *testing.T) {
	args := `{"plan":` + jsonString(t, bigText(90_000)) + `}`
	second := `{"city":"Paris"}`
	calls := `[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":` + jsonString(t, args) + `}},` +
		`{"index":1,"id":"call_2","type":"function","function":{"name":"get_weather","arguments":` + jsonString(t, second) + `}}]`
	m := serveOpenAIStream(t,
		openAIChunk(`{"role":"assistant","content":null,"tool_calls":`+calls+`}`, "null"),
		openAIChunk(`{}`, `"tool_calls"`))
	resp := askWeather(t, m, llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
	require.Len(t, resp.Choices, 1)
	tc := resp.Choices[0].ToolCalls
	require.Len(t, tc, 2, "the split arguments continue their call, not start another")
	assert.Equal(t, "call_1", tc[0].ID)
	assert.Equal(t, args, tc[0].FunctionCall.Arguments)
	assert.Equal(t, "call_2", tc[1].ID)
	assert.Equal(t, second, tc[1].FunctionCall.Arguments)
	assert.Equal(t, "tool_calls", resp.Choices[0].StopReason)
}

func TestAnthropicStreamedDeltaOver64KiBIsReadWhole(t *testing.T) {
	big := bigText(100_000)
	_, m := anthropicWire.serve(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
		writeStream(w, "text/event-stream",
			sseEvent("message_start", `{"type":"message_start","message":{"id":"msg_05","type":"message","role":"assistant","model":"claude-3-5-haiku-latest","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`),
			sseEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			sseEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+jsonString(t, big)+`}}`),
			sseEvent("content_block_stop", `{"type":"content_block_stop","index":0}`),
			sseEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}`),
			sseEvent("message_stop", `{"type":"message_stop"}`))
	})
	var got chunkCollector
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{weatherQuestion}, llms.WithStreamingFunc(got.fn))
	require.NoError(t, err)
	assert.Equal(t, big, resp.Choices[0].Content)
	assert.Equal(t, big, got.joined())
}
