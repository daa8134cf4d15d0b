package executor_test

import (
	"testing"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

var toolsMode = executor.ReActConfig{Mode: executor.ModeTools}

// toolMessages returns the tool responses of a request, in order.
func toolMessages(r request) []llms.ToolCallResponse {
	var out []llms.ToolCallResponse
	for _, m := range r.msgs {
		if m.Role != llms.ChatMessageTypeTool {
			continue
		}
		for _, p := range m.Parts {
			out = append(out, p.(llms.ToolCallResponse))
		}
	}
	return out
}

// assistantCalls returns the tool calls of a request's assistant messages.
func assistantCalls(r request) []llms.ToolCall {
	var out []llms.ToolCall
	for _, m := range r.msgs {
		if m.Role != llms.ChatMessageTypeAI {
			continue
		}
		for _, p := range m.Parts {
			if tc, ok := p.(llms.ToolCall); ok {
				out = append(out, tc)
			}
		}
	}
	return out
}

func TestToolsLoop(t *testing.T) {
	cases := []struct {
		name   string
		script scripted.Script
		tools  func() []tools.Tool
		check  func(t *testing.T, h *harness)
	}{
		{
			name: "tool calls in a second choice are run, as Anthropic returns them",
			script: scripted.Script{Replies: []scripted.Reply{
				{Text: "I will echo.", SplitChoices: true, ToolCalls: []scripted.ToolCall{{ID: "toolu_1", Name: "echo", Arguments: map[string]any{"input": "hi"}}}},
				{Contains: "echo: hi", Text: "It echoed.\nFinal Answer: echo: hi"},
			}},
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, "echo: hi", h.out.Answer)
				require.Len(t, h.out.Entries, 2)
				assert.Equal(t, state.Entry{Thought: "I will echo.", Tool: "echo", Input: "hi", Observation: "echo: hi", ToolCallID: "toolu_1", Raw: "I will echo."}, h.out.Entries[0])
				assert.Equal(t, state.Entry{Thought: "It echoed.", Final: "echo: hi", Raw: "It echoed.\nFinal Answer: echo: hi"}, h.out.Entries[1])
				second := requests(h.model)[1]
				require.Len(t, second.msgs, 4, "system, task, assistant with the call, tool response")
				assert.Equal(t, llms.ChatMessageTypeAI, second.msgs[2].Role)
				assert.Equal(t, []llms.ToolCall{{ID: "toolu_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "echo", Arguments: `{"input":"hi"}`}}}, assistantCalls(second))
				assert.Equal(t, llms.TextContent{Text: "I will echo."}, second.msgs[2].Parts[1])
				assert.Equal(t, []llms.ToolCallResponse{{ToolCallID: "toolu_1", Name: "echo", Content: "echo: hi"}}, toolMessages(second))
			},
		},
		{
			name: "the calls of one turn run concurrently and are answered in call order",
			script: scripted.Script{Replies: []scripted.Reply{
				{Text: "Both at once.", ToolCalls: []scripted.ToolCall{
					{ID: "a", Name: "meet", Arguments: map[string]any{"input": "slow one"}},
					{ID: "b", Name: "meet", Arguments: map[string]any{"input": "fast one"}},
				}},
				{Text: "Final Answer: met"},
			}},
			tools: func() []tools.Tool { return []tools.Tool{meetTool(2)} },
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				second := requests(h.model)[1]
				assert.Equal(t, []llms.ToolCallResponse{
					{ToolCallID: "a", Name: "meet", Content: "met slow one"},
					{ToolCallID: "b", Name: "meet", Content: "met fast one"},
				}, toolMessages(second))
				assert.Len(t, assistantCalls(second), 2)
				assert.Equal(t, llms.ChatMessageTypeAI, second.msgs[2].Role, "the assistant message with both calls comes first")
				assert.Equal(t, llms.ChatMessageTypeTool, second.msgs[3].Role)
				assert.Equal(t, llms.ChatMessageTypeTool, second.msgs[4].Role)
				require.Len(t, h.out.Entries, 3)
				assert.Equal(t, "Both at once.", h.out.Entries[0].Thought)
				assert.Empty(t, h.out.Entries[1].Thought)
				assert.Equal(t, 2, h.state.Usage.Snapshot().ToolCalls)
				obs := h.ofKind(trace.KindObservation)
				require.Len(t, obs, 2)
				assert.Equal(t, "met slow one", obs[0].Text)
				assert.Equal(t, "met fast one", obs[1].Text)
			},
		},
		{
			name:   "a reply without tool calls or an answer label is the final answer as a whole",
			script: text("The echo tool is not needed: the answer is seven."),
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, "The echo tool is not needed: the answer is seven.", h.out.Answer)
			},
		},
		{
			name: "an unknown tool is answered with the real tool names",
			script: scripted.Script{Replies: []scripted.Reply{
				{ToolCalls: []scripted.ToolCall{{ID: "x", Name: "lookup", Arguments: map[string]any{"q": "a"}}}},
				{Text: "Final Answer: none"},
			}},
			check: func(t *testing.T, h *harness) {
				resp := toolMessages(requests(h.model)[1])
				require.Len(t, resp, 1)
				assert.Equal(t, `Error: there is no tool named "lookup". Use one of: echo, schema.`, resp[0].Content)
				assert.Equal(t, []string{"unknown_tool"}, h.guards())
			},
		},
		{
			name: "arguments go to a tool with a schema as JSON and to one without unwrapped",
			script: scripted.Script{Replies: []scripted.Reply{
				{ToolCalls: []scripted.ToolCall{
					{ID: "1", Name: "echo", Arguments: `{"input": "plain"}`},
					{ID: "2", Name: "schema", Arguments: `{"text": "json"}`},
				}},
				{Text: "Final Answer: ok"},
			}},
			check: func(t *testing.T, h *harness) {
				assert.Equal(t, "echo: plain", h.out.Entries[0].Observation)
				assert.Equal(t, `echo: {"text": "json"}`, h.out.Entries[1].Observation)
			},
		},
		{
			name: "a repeated call with the same result is warned about",
			script: scripted.Script{Replies: []scripted.Reply{
				{ToolCalls: []scripted.ToolCall{{ID: "1", Name: "echo", Arguments: map[string]any{"input": "a"}}}},
				{ToolCalls: []scripted.ToolCall{{ID: "2", Name: "echo", Arguments: map[string]any{"input": "a"}}}},
				{Text: "Final Answer: a"},
			}},
			check: func(t *testing.T, h *harness) {
				resp := toolMessages(requests(h.model)[2])
				require.Len(t, resp, 2)
				assert.Equal(t, "echo: a\n(You already called echo with this input in step 1 and got this same result. Use it, call a tool with a different input, or give your final answer.)", resp[1].Content)
				assert.Equal(t, 2, h.state.Usage.Snapshot().ToolCalls)
			},
		},
		{
			name:   "empty replies are retried, then answered with feedback",
			script: text(" ", " ", " ", "Final Answer: a"),
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, 2, h.out.Iterations)
				assert.Contains(t, h.prompt(3), "Your reply was empty.")
				assert.NotContains(t, h.prompt(3), "Observation: Your reply")
				assert.Equal(t, []string{"empty_reply", "empty_reply"}, h.guards())
				assert.NotContains(t, h.prompt(0), "Your reply was empty.")
				assert.Contains(t, h.prompt(1), "Your reply was empty. Call a tool", "the retry's nudge is the loop's tools-mode feedback")
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := []tools.Tool{echoTool(), schemaTool{&fakeTool{name: "schema", fn: echoTool().fn}}}
			if tc.tools != nil {
				ts = tc.tools()
			}
			h := runScript(t, toolsMode, tc.script, "the task", ts...)
			require.NoError(t, h.err)
			tc.check(t, h)
		})
	}
}

func TestToolsModeOffersToolsNativelyWithoutStopWords(t *testing.T) {
	h := runScript(t, toolsMode, text("Final Answer: a"), "q", echoTool(), schemaTool{&fakeTool{name: "schema"}})
	require.NoError(t, h.err)
	req := requests(h.model)[0]
	assert.Empty(t, req.opts.StopWords)
	require.Len(t, req.opts.Tools, 2)
	assert.Equal(t, "echo", req.opts.Tools[0].Function.Name)
	assert.Equal(t, "test tool echo", req.opts.Tools[0].Function.Description)
	assert.Equal(t, tools.SchemaOf(echoTool()), req.opts.Tools[0].Function.Parameters)
	assert.Equal(t, schemaTool{}.Schema(), req.opts.Tools[1].Function.Parameters)
	assert.NotContains(t, req.text(), "Action Input", "the text format is not taught in tools mode")
}

func TestToolsModeBudgetEndsWithTheFinalizer(t *testing.T) {
	s := scripted.Script{Replies: []scripted.Reply{
		{ToolCalls: []scripted.ToolCall{{ID: "1", Name: "echo", Arguments: map[string]any{"input": "a"}}}},
		{Role: "finalize", Contains: "Action Input: a\nObservation: [echo] echo: a", Text: "Final Answer: a"},
	}}
	h := runScript(t, executor.ReActConfig{Mode: executor.ModeTools, MaxIterations: 1}, s, "q", echoTool())
	require.NoError(t, h.err)
	assert.False(t, h.out.Complete)
	assert.Equal(t, state.FailureBudget, h.out.Failure)
	assert.Equal(t, "a", h.out.Answer)
	assert.Empty(t, requests(h.model)[1].opts.Tools, "the finalizer cannot call tools")
}
