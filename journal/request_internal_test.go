package journal

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"

	"github.com/planner-engine/planner/llm/cassette"
)

// The request body the journal assembles from its messages' JSON is, byte
// for byte, encoding/json's encoding of the requestBody: the digests of
// journals written before requests were kept as digests cover that
// encoding, and must still match.
func TestAssembledRequestBodyIsTheJSONEncoding(t *testing.T) {
	tool := llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: "search", Description: "<b>find</b> & more",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}
	for name, tc := range map[string]struct {
		role string
		msgs []llms.MessageContent
		opts []llms.CallOption
	}{
		"empty":   {},
		"no role": {msgs: []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}},
		"role and options": {role: "final<ize>", msgs: []llms.MessageContent{
			llms.TextParts(llms.ChatMessageTypeSystem, "You are \"helpful\" & <terse>\n\tü \u2028"),
			llms.TextParts(llms.ChatMessageTypeHuman, strings.Repeat("Thought: x\n", 50)),
			{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{ID: "c1", Type: "function",
				FunctionCall: &llms.FunctionCall{Name: "search", Arguments: `{"q":"<x>"}`}}}},
			{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c1", Name: "search", Content: "found"}}},
			{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.ImageURLContent{URL: "http://x/y.png"}, llms.BinaryContent{MIMEType: "a/b", Data: []byte{0, 1, 2}}}},
		}, opts: []llms.CallOption{llms.WithTemperature(0.25), llms.WithStopWords([]string{"Observation:"}), llms.WithTools([]llms.Tool{tool}),
			llms.WithMaxTokens(300), llms.WithJSONMode(), llms.WithMetadata(map[string]any{"k": []any{1, "two"}})}},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(requestBody{Role: tc.role, Request: cassette.NewRequest(tc.msgs, tc.opts)})
			require.NoError(t, err)
			c := newMessageCache()
			for _, cache := range []*messageCache{nil, c, c} { // uncached, cached first, from the cache
				lr, err := encodeRequest(cache, tc.role, tc.msgs, tc.opts)
				require.NoError(t, err)
				assert.Equal(t, string(want), string(lr.body))
				assert.Equal(t, digest([]byte(KindModel), want), lr.sum)
			}
		})
	}
}

// A shape digests every message of a short request, and the first and
// last shapeEnds of a long one.
func TestShapeDigestsTheEndsOfTheMessages(t *testing.T) {
	var msgs []llms.MessageContent
	for i := range 30 {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, strings.Repeat("m", i)))
	}
	lr, err := encodeRequest(nil, "", msgs[:5], nil)
	require.NoError(t, err)
	sh := lr.shape()
	assert.Len(t, sh.Head, 5)
	assert.Empty(t, sh.Tail)
	lr, err = encodeRequest(nil, "", msgs, nil)
	require.NoError(t, err)
	sh = lr.shape()
	assert.Equal(t, 30, sh.Messages)
	assert.Equal(t, len(lr.body), sh.Bytes)
	require.Len(t, sh.Head, shapeEnds)
	require.Len(t, sh.Tail, shapeEnds)
	assert.Equal(t, lr.msgs[0].digest(), sh.Head[0])
	assert.Equal(t, lr.msgs[29].digest(), sh.Tail[shapeEnds-1])
	assert.True(t, strings.HasPrefix(sh.Head[0], "human:"))
}
