package provider

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// anthropicCachedResponse is a Messages reply that read 4000 prompt tokens
// from the cache and wrote 300 to it.
const anthropicCachedResponse = `{
  "id": "msg_c1", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-latest",
  "content": [{"type": "text", "text": "Thought: I know it.\nFinal Answer: 42"}],
  "stop_reason": "end_turn", "stop_sequence": null,
  "usage": {"input_tokens": 120, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 4000,
            "cache_creation": {"ephemeral_5m_input_tokens": 300, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 11, "service_tier": "standard"}
}`

func cachedReply(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
	writeJSON(w, http.StatusOK, anthropicCachedResponse)
}

// longSystem is a system prompt well past the cache's minimum (about
// 2000 tokens).
var longSystem = "You answer questions step by step. " + strings.Repeat("Example: Question: what is 6*7? Thought: multiply. Action: calculator[6*7] Observation: 42. ", 80)

// reactConversation is a ReAct loop's request in chat style at its third
// step: the task, then two turns of (assistant step, observation).
func reactConversation() []llms.MessageContent {
	return []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, longSystem),
		llms.TextParts(llms.ChatMessageTypeHuman, "Question: what is 6*7+1?"),
		llms.TextParts(llms.ChatMessageTypeAI, "Thought: multiply first.\nAction: calculator\nAction Input: 6*7"),
		llms.TextParts(llms.ChatMessageTypeHuman, "Observation: 42"),
		llms.TextParts(llms.ChatMessageTypeAI, "Thought: add one.\nAction: calculator\nAction Input: 42+1"),
		llms.TextParts(llms.ChatMessageTypeHuman, "Observation: 43"),
	}
}

// cacheMarks lists where a request body has cache_control: "system" and
// the indexes of the messages whose last block has it, and fails on a
// mark anywhere else or of another type.
func cacheMarks(t *testing.T, body map[string]any) []string {
	t.Helper()
	var marks []string
	check := func(where string, block any) bool {
		b, ok := block.(map[string]any)
		require.True(t, ok, "%s: a block is an object", where)
		cc, ok := b["cache_control"]
		if !ok {
			return false
		}
		assert.Equal(t, map[string]any{"type": "ephemeral"}, cc, where)
		return true
	}
	if blocks, ok := body["system"].([]any); ok {
		for i, b := range blocks {
			if check("system", b) {
				require.Equal(t, len(blocks)-1, i, "only the system prompt's last block is marked")
				marks = append(marks, "system")
			}
		}
	}
	for i, m := range body["messages"].([]any) {
		content, ok := m.(map[string]any)["content"].([]any)
		if !ok {
			continue
		}
		for j, b := range content {
			if check("message", b) {
				require.Equal(t, len(content)-1, j, "only a message's last block is marked")
				marks = append(marks, "message "+string(rune('0'+i)))
			}
		}
	}
	return marks
}

func TestAnthropicMarksTheStablePrefixOfALongConversationForThePromptCache(t *testing.T) {
	srv, m := anthropicWire.serve(t, cachedReply)
	_, err := m.GenerateContent(context.Background(), reactConversation())
	require.NoError(t, err)
	body := srv.only(t).JSON(t)

	// The system prompt goes as one text block, marked; the observation
	// before the newest turn (message 2: the previous request ended there)
	// and the newest observation (message 4: the next step starts with it).
	assert.Equal(t, []string{"system", "message 2", "message 4"}, cacheMarks(t, body))
	assert.Equal(t, longSystem, path(t, body, "system", 0, "text"))
	assert.Equal(t, "text", path(t, body, "system", 0, "type"))
	msgs := path(t, body, "messages").([]any)
	require.Len(t, msgs, 5)
	assert.Equal(t, "Observation: 42", path(t, msgs, 2, "content", 0, "text"))
	assert.Equal(t, "Observation: 43", path(t, msgs, 4, "content", 0, "text"))
	assert.Equal(t, "user", path(t, msgs, 4, "role"))
	// The rest of the request is as langchaingo wrote it.
	assert.Equal(t, claudeModel, body["model"])
	assert.Equal(t, "Question: what is 6*7+1?", path(t, msgs, 0, "content", 0, "text"))
}

func TestAnthropicMarksToolResultsOfANativeToolLoop(t *testing.T) {
	srv, m := anthropicWire.serve(t, cachedReply)
	call := func(id, args string) llms.MessageContent {
		return llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{ID: id, Type: "function",
			FunctionCall: &llms.FunctionCall{Name: "calculator", Arguments: args}}}}
	}
	result := func(id, out string) llms.MessageContent {
		return llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: id, Name: "calculator", Content: out}}}
	}
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, longSystem),
		llms.TextParts(llms.ChatMessageTypeHuman, "What is 6*7+1?"),
		call("t1", `{"expression":"6*7"}`), result("t1", "42"),
		call("t2", `{"expression":"42+1"}`), result("t2", "43"),
	}
	_, err := m.GenerateContent(context.Background(), msgs)
	require.NoError(t, err)
	body := srv.only(t).JSON(t)
	assert.Equal(t, []string{"system", "message 2", "message 4"}, cacheMarks(t, body))
	assert.Equal(t, "tool_result", path(t, body, "messages", 2, "content", 0, "type"))
	assert.Equal(t, "tool_result", path(t, body, "messages", 4, "content", 0, "type"))
}

func TestAnthropicLeavesShortPromptsAndSingleCallsUnmarkedWhereCachingDoesNotPay(t *testing.T) {
	t.Run("a short conversation", func(t *testing.T) {
		srv, m := anthropicWire.serve(t, cachedReply)
		msgs := reactConversation()
		msgs[0] = llms.TextParts(llms.ChatMessageTypeSystem, "Answer step by step.")
		_, err := m.GenerateContent(context.Background(), msgs)
		require.NoError(t, err)
		req := srv.only(t)
		assert.NotContains(t, string(req.Body), "cache_control")
		assert.Equal(t, "Answer step by step.", req.JSON(t)["system"], "the system prompt stays a string")
	})
	t.Run("one long prompt: only the system prompt", func(t *testing.T) {
		srv, m := anthropicWire.serve(t, cachedReply)
		_, err := m.GenerateContent(context.Background(), conversation(longSystem, "What is 6*7?"))
		require.NoError(t, err)
		assert.Equal(t, []string{"system"}, cacheMarks(t, srv.only(t).JSON(t)),
			"no assistant turn: the user message is not a prefix the next call repeats")
	})
	t.Run("a long task in a short system prompt's loop", func(t *testing.T) {
		srv, m := anthropicWire.serve(t, cachedReply)
		msgs := reactConversation()
		msgs[0] = llms.TextParts(llms.ChatMessageTypeSystem, "Answer step by step.")
		msgs[1] = llms.TextParts(llms.ChatMessageTypeHuman, "Question: "+longSystem)
		_, err := m.GenerateContent(context.Background(), msgs)
		require.NoError(t, err)
		assert.Equal(t, []string{"message 2", "message 4"}, cacheMarks(t, srv.only(t).JSON(t)),
			"the system prompt alone is too short to cache")
	})
	t.Run("prompt_cache: false", func(t *testing.T) {
		srv, m := anthropicWire.serve(t, cachedReply, func(c *Config) { c.PromptCache = ptr(false) })
		_, err := m.GenerateContent(context.Background(), reactConversation())
		require.NoError(t, err)
		req := srv.only(t)
		assert.NotContains(t, string(req.Body), "cache_control")
		assert.Equal(t, longSystem, req.JSON(t)["system"])
	})
	t.Run("streamed requests are marked too", func(t *testing.T) {
		srv, m := anthropicWire.start(t)
		resp := streamCanned(t, m, reactConversation())
		require.NotEmpty(t, resp.Choices)
		assert.Equal(t, []string{"system", "message 2", "message 4"}, cacheMarks(t, srv.only(t).JSON(t)))
	})
}

// cacheMeter is the command line's meter: usage as the provider reports
// it, cached reads included.
type cacheMeter struct{}

func (cacheMeter) Measure(_ []llms.MessageContent, resp *llms.ContentResponse) (int, int, bool) {
	u, _ := usage.FromResponse(resp)
	return u.PromptTokens, u.CompletionTokens, u.Estimated
}

func (cacheMeter) Cached(resp *llms.ContentResponse) int {
	u, _ := usage.FromResponse(resp)
	return u.CachedPromptTokens
}

func TestAnthropicCacheReadsBecomeTheRunsCachedPromptTokens(t *testing.T) {
	_, m := anthropicWire.serve(t, cachedReply)
	model := llm.Model{LLM: m, Meter: cacheMeter{}}
	st := state.NewState(state.Task{ID: "t"})
	var u hooks.Usage
	var node string
	st.SetHooks(hooks.NewSet(hooks.Funcs{AfterModel: func(_ context.Context, call *hooks.ModelCall, res *hooks.ModelResult, err error) {
		if err == nil {
			u, node = res.Usage, call.Node
		}
	}}))
	text, _, err := model.Call(context.Background(), st, llm.CallMeta{Node: "react"}, reactConversation())
	require.NoError(t, err)
	assert.Contains(t, text, "Final Answer: 42")
	assert.Equal(t, 120+300+4000, u.PromptTokens, "prompt tokens count every input token, cached or written")
	assert.Equal(t, 4000, u.CachedPromptTokens, "usage.cache_read_input_tokens")
	assert.Equal(t, "react", node)
	assert.Equal(t, 11, u.CompletionTokens)
}
