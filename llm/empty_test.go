package llm_test

import (
	"context"
	"errors"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// retries returns the EmptyRetry and EmptyRetries of each observed call.
func retries(calls []observed) [][2]int {
	out := make([][2]int, len(calls))
	for i, c := range calls {
		out[i] = [2]int{c.call.EmptyRetry, c.call.EmptyRetries}
	}
	return out
}

func TestCallRetriesAnEmptyReplyWithANudge(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Replies("  \n", "42")}
	m := llm.Model{LLM: rec, Meter: fixedMeter{}, EmptyRetries: 2}
	ms, ps := &modelSpy{}, &providerSpy{}
	msgs := make([]llms.MessageContent, 0, 4) // room to append in place
	msgs = append(msgs, llm.Prompt("sys", "what is six times seven?")...)
	text, resp, err := m.Call(context.Background(), runWith(ms, ps), llm.CallMeta{Node: "solve", Kind: "cot", Role: "judge"}, msgs)
	require.NoError(t, err)
	assert.Equal(t, "42", text)
	assert.False(t, llm.EmptyReply(resp))

	reqs := rec.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, msgs, reqs[0].Messages)
	require.Len(t, reqs[1].Messages, len(msgs)+1, "the retry appends one message")
	assert.Equal(t, msgs, reqs[1].Messages[:len(msgs)], "the retry keeps the call's messages")
	assert.Equal(t, llms.TextParts(llms.ChatMessageTypeHuman, llm.DefaultEmptyNudge), reqs[1].Messages[len(msgs)])
	assert.Len(t, msgs, 2, "the caller's messages are not changed")
	assert.Zero(t, msgs[:cap(msgs)][2], "nor is the array behind them")

	// Each retry is a call of its own through every hook, marked as one.
	calls := ms.calls()
	require.Len(t, calls, 2)
	assert.Equal(t, [][2]int{{0, 0}, {1, 2}}, retries(calls))
	assert.Equal(t, retries(calls), retries(ps.calls()), "the provider hooks see the retry too")
	for i, c := range calls {
		assert.Equal(t, "solve", c.call.Node)
		assert.Equal(t, "cot", c.call.Kind)
		assert.Equal(t, "judge", c.call.Role)
		assert.Equal(t, reqs[i].Messages, c.call.Messages, "the hooks see the messages sent")
		assert.Equal(t, 100, c.res.Usage.PromptTokens, "every call is metered")
	}
}

func TestCallGivesUpAfterItsRetriesAndReturnsTheEmptyReply(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Replies(" ", "", "\t")}
	spy := &modelSpy{}
	text, resp, err := llm.Model{LLM: rec, EmptyRetries: 2}.Call(context.Background(), runWith(spy), llm.CallMeta{Node: "n", Kind: "direct"}, prompt("x"))
	require.NoError(t, err, "an empty reply is the caller's to judge")
	assert.Equal(t, "\t", text, "the last reply is returned")
	assert.True(t, llm.EmptyReply(resp))
	reqs := rec.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, reqs[1].Messages, reqs[2].Messages, "every retry sends the same nudged messages")
	assert.Equal(t, [][2]int{{0, 0}, {1, 2}, {2, 2}}, retries(spy.calls()))
}

func TestCallEmptyRetrySettings(t *testing.T) {
	tests := []struct {
		name      string
		model     llm.Model
		wantCalls int
		wantNudge string
	}{
		{name: "the zero Model makes no retries", wantCalls: 1},
		{name: "0 disables", model: llm.Model{EmptyRetries: 0}, wantCalls: 1},
		{name: "negative is none", model: llm.Model{EmptyRetries: -3}, wantCalls: 1},
		{name: "the Model's count", model: llm.Model{EmptyRetries: 3}, wantCalls: 4, wantNudge: llm.DefaultEmptyNudge},
		{name: "the Model's nudge", model: llm.Model{EmptyRetries: 1, EmptyNudge: "Say something."}, wantCalls: 2, wantNudge: "Say something."},
		{name: "a blank nudge is the default", model: llm.Model{EmptyRetries: 1, EmptyNudge: " \n"}, wantCalls: 2, wantNudge: llm.DefaultEmptyNudge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &llmtest.Recorder{Model: llmtest.Reply(" ")}
			m := tt.model
			m.LLM = rec
			_, _, err := m.Call(context.Background(), nil, llm.CallMeta{Node: "n"}, prompt("x"))
			require.NoError(t, err)
			reqs := rec.Requests()
			require.Len(t, reqs, tt.wantCalls)
			if tt.wantNudge != "" {
				last := reqs[len(reqs)-1].Messages
				assert.Equal(t, llms.TextParts(llms.ChatMessageTypeHuman, tt.wantNudge), last[len(last)-1])
			}
		})
	}
}

func TestEmptyReply(t *testing.T) {
	call := llmtest.ToolCall("1", "calc", "{}")
	tests := []struct {
		name string
		resp *llms.ContentResponse
		want bool
	}{
		{"nil", nil, true},
		{"no choices", &llms.ContentResponse{}, true},
		{"a nil choice", &llms.ContentResponse{Choices: []*llms.ContentChoice{nil}}, true},
		{"white space", &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: " \n\t"}, {Content: ""}}}, true},
		{"reasoning only", &llms.ContentResponse{Choices: []*llms.ContentChoice{{ReasoningContent: "hmm"}}}, true},
		{"text", &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok"}}}, false},
		{"text in a later choice", &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: " "}, {Content: "ok"}}}, false},
		{"tool calls only", &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{call}}}}, false},
		{"tool calls in a later choice", &llms.ContentResponse{Choices: []*llms.ContentChoice{{}, {ToolCalls: []llms.ToolCall{call}}}}, false},
		{"a function call", &llms.ContentResponse{Choices: []*llms.ContentChoice{{FuncCall: call.FunctionCall}}}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, llm.EmptyReply(tt.resp), tt.name)
	}
}

func TestCallDoesNotRetryAReplyOfToolCallsAlone(t *testing.T) {
	model := llmtest.Respond(&llms.ContentResponse{Choices: []*llms.ContentChoice{
		{Content: ""}, {ToolCalls: []llms.ToolCall{llmtest.ToolCall("1", "calc", `{"x":1}`)}},
	}})
	spy := &modelSpy{}
	text, resp, err := llm.Model{LLM: model, EmptyRetries: 2}.Call(context.Background(), runWith(spy), llm.CallMeta{Node: "act"}, prompt("x"))
	require.NoError(t, err)
	assert.Empty(t, text)
	require.Len(t, resp.Choices, 2)
	assert.Equal(t, 1, model.Calls())
	assert.Equal(t, [][2]int{{0, 0}}, retries(spy.calls()), "no retry passes the hooks")
}

func TestAHookThatRefusesARetryEndsTheRetries(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Reply(" ")}
	refused := errors.New("no more")
	stop := hooks.Funcs{BeforeModel: func(_ context.Context, call *hooks.ModelCall) error {
		if call.EmptyRetry == 2 {
			return refused
		}
		return nil
	}}
	_, _, err := llm.Model{LLM: rec, EmptyRetries: 5}.Call(context.Background(), runWith(stop), llm.CallMeta{Node: "n"}, prompt("x"))
	assert.Same(t, refused, err)
	assert.Equal(t, 2, rec.Calls(), "the hooks are asked before each retry")
}

func TestCallReturnsAFailedRetrysError(t *testing.T) {
	model := llmtest.Seq(llmtest.Reply(" "), llmtest.Fail(errors.New("HTTP 503")))
	_, _, err := llm.Model{LLM: model, EmptyRetries: 2}.Call(context.Background(), nil, llm.CallMeta{Node: "n"}, prompt("x"))
	require.ErrorIs(t, err, llm.ErrModel)
	assert.ErrorContains(t, err, "HTTP 503")
	assert.Equal(t, 2, model.Calls())
}

func TestFactorySetsTheEmptyReplySettings(t *testing.T) {
	f := llm.NewFactory(llm.WithProvider("scripted", "scripted", func(context.Context, config.LLM, string) (llms.Model, error) {
		return scripted.Texts("x"), nil
	}, llm.AsKind(llm.KindScripted)))
	zero, three := 0, 3
	m, err := f.Model(context.Background(), config.LLM{Provider: "scripted"}, "")
	require.NoError(t, err)
	assert.Equal(t, config.DefaultEmptyRetries, m.EmptyRetries)
	assert.Equal(t, 2, m.EmptyRetries)
	assert.Empty(t, m.EmptyNudge, "empty means llm.DefaultEmptyNudge")

	m, err = f.Model(context.Background(), config.LLM{Provider: "scripted", EmptyRetries: &zero}, "")
	require.NoError(t, err)
	assert.Zero(t, m.EmptyRetries, "0 disables")

	m, err = f.Model(context.Background(), config.LLM{Provider: "scripted", EmptyRetries: &three, EmptyNudge: "Try again."}, "")
	require.NoError(t, err)
	assert.Equal(t, 3, m.EmptyRetries)
	assert.Equal(t, "Try again.", m.EmptyNudge)

	minus := -1
	_, err = f.Model(context.Background(), config.LLM{Provider: "scripted", EmptyRetries: &minus}, "")
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), "llm.empty_retries: -1 is negative")
	_, err = f.Model(context.Background(), config.LLM{Provider: "scripted", EmptyNudge: " \n"}, "")
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), "llm.empty_nudge")
}
