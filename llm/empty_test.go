package llm_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// seqModel answers each call with the next of its replies (the last one
// again once they run out) and records the messages of every call.
type seqModel struct {
	mu      sync.Mutex
	replies []*llms.ContentResponse
	calls   [][]llms.MessageContent
}

func textReplies(texts ...string) *seqModel {
	m := &seqModel{}
	for _, t := range texts {
		m.replies = append(m.replies, &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: t}}})
	}
	return m
}

func (m *seqModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, msgs)
	return m.replies[min(len(m.calls), len(m.replies))-1], nil
}

func (m *seqModel) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

func (m *seqModel) requests() [][]llms.MessageContent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]llms.MessageContent(nil), m.calls...)
}

func recorded() (context.Context, *trace.Recorder) {
	rec := &trace.Recorder{}
	return trace.WithTracer(context.Background(), trace.New("run", rec)), rec
}

func TestCallRetriesAnEmptyReplyWithANudge(t *testing.T) {
	seq := textReplies("  \n", "42")
	m := llm.Model{LLM: seq, Meter: fixedMeter{}, EmptyRetries: 2}
	st := state.NewState(state.Task{Question: "q"})
	ctx, rec := recorded()
	msgs := llm.Prompt("sys", "what is six times seven?")
	text, resp, err := m.Call(ctx, st, llm.CallMeta{Node: "solve", Kind: "cot", Role: "judge"}, msgs)
	require.NoError(t, err)
	assert.Equal(t, "42", text)
	assert.False(t, llm.EmptyReply(resp))

	reqs := seq.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, msgs, reqs[0])
	require.Len(t, reqs[1], len(msgs)+1, "the retry appends one message")
	assert.Equal(t, msgs, reqs[1][:len(msgs)], "the retry keeps the call's messages")
	assert.Equal(t, llms.TextParts(llms.ChatMessageTypeHuman, llm.DefaultEmptyNudge), reqs[1][len(msgs)])
	assert.Len(t, msgs, 2, "the caller's messages are not changed")

	guards := rec.OfKind(trace.KindGuard)
	require.Len(t, guards, 1)
	assert.Equal(t, "solve", guards[0].Node)
	assert.Equal(t, map[string]any{"guard": llm.GuardEmptyReply, "retry": 1, "of": 2, "kind": "cot", "role": "judge"}, guards[0].Data)
	assert.Contains(t, guards[0].Text, "retry 1 of 2")

	u := st.Usage.Snapshot()
	assert.Equal(t, 2, u.ModelCalls, "the retry is a model call of its own")
	assert.Equal(t, 2, u.ModelAttempts)
	assert.Equal(t, 200, u.PromptTokens, "every attempt's usage is counted")
	assert.Len(t, rec.OfKind(trace.KindLLMCall), 2)
}

func TestCallGivesUpAfterItsRetriesAndReturnsTheEmptyReply(t *testing.T) {
	seq := textReplies(" ", "", "\t")
	st := state.NewState(state.Task{Question: "q"})
	ctx, rec := recorded()
	text, resp, err := llm.Model{LLM: seq, EmptyRetries: 2}.Call(ctx, st, llm.CallMeta{Node: "n", Kind: "direct"}, llm.Prompt("", "x"))
	require.NoError(t, err, "an empty reply is the caller's to judge")
	assert.Equal(t, "\t", text, "the last reply is returned")
	assert.True(t, llm.EmptyReply(resp))
	reqs := seq.requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, reqs[1], reqs[2], "every retry sends the same nudged messages")
	guards := rec.OfKind(trace.KindGuard)
	require.Len(t, guards, 2)
	assert.Equal(t, 2, guards[1].Data["retry"])
	assert.NotContains(t, guards[0].Data, "role", "no role, no role key")
	assert.Equal(t, 3, st.Usage.Snapshot().ModelCalls)
}

func TestCallEmptyRetrySettings(t *testing.T) {
	tests := []struct {
		name      string
		model     llm.Model
		ctx       func(context.Context) context.Context
		wantCalls int
		wantNudge string
	}{
		{name: "the zero Model makes no retries", wantCalls: 1},
		{name: "0 disables", model: llm.Model{EmptyRetries: 0}, wantCalls: 1},
		{name: "negative is none", model: llm.Model{EmptyRetries: -3}, wantCalls: 1},
		{name: "the Model's count", model: llm.Model{EmptyRetries: 3}, wantCalls: 4, wantNudge: llm.DefaultEmptyNudge},
		{name: "the Model's nudge", model: llm.Model{EmptyRetries: 1, EmptyNudge: "Say something."}, wantCalls: 2, wantNudge: "Say something."},
		{name: "the context overrides the count", model: llm.Model{EmptyRetries: 2},
			ctx: func(ctx context.Context) context.Context { return llm.WithEmptyRetries(ctx, 0) }, wantCalls: 1},
		{name: "the context turns retries on", model: llm.Model{},
			ctx: func(ctx context.Context) context.Context { return llm.WithEmptyRetries(ctx, 1) }, wantCalls: 2, wantNudge: llm.DefaultEmptyNudge},
		{name: "the context overrides the nudge", model: llm.Model{EmptyRetries: 1, EmptyNudge: "Say something."},
			ctx: func(ctx context.Context) context.Context {
				return llm.WithEmptyNudge(llm.WithEmptyNudge(ctx, "Answer now."), "  ")
			}, wantCalls: 2, wantNudge: "Answer now."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := textReplies(" ")
			m := tt.model
			m.LLM = seq
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx(ctx)
			}
			_, _, err := m.Call(ctx, nil, llm.CallMeta{Node: "n"}, llm.Prompt("", "x"))
			require.NoError(t, err)
			reqs := seq.requests()
			require.Len(t, reqs, tt.wantCalls)
			if tt.wantNudge != "" {
				last := reqs[len(reqs)-1]
				assert.Equal(t, llms.TextParts(llms.ChatMessageTypeHuman, tt.wantNudge), last[len(last)-1])
			}
		})
	}
}

func TestEmptyReply(t *testing.T) {
	call := llms.ToolCall{ID: "1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "calc", Arguments: "{}"}}
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
	seq := &seqModel{replies: []*llms.ContentResponse{{Choices: []*llms.ContentChoice{
		{Content: ""}, {ToolCalls: []llms.ToolCall{{ID: "1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "calc", Arguments: `{"x":1}`}}}},
	}}}}
	ctx, rec := recorded()
	text, resp, err := llm.Model{LLM: seq, EmptyRetries: 2}.Call(ctx, nil, llm.CallMeta{Node: "act"}, llm.Prompt("", "x"))
	require.NoError(t, err)
	assert.Empty(t, text)
	require.Len(t, resp.Choices, 2)
	assert.Len(t, seq.requests(), 1)
	assert.Empty(t, rec.OfKind(trace.KindGuard))
}

func TestCallStopsRetryingWhenTheBudgetIsSpent(t *testing.T) {
	seq := textReplies(" ")
	st := state.NewState(state.Task{Question: "q"})
	ctx := llm.WithBudget(context.Background(), llm.Budget{MaxModelCalls: 2})
	_, _, err := llm.Model{LLM: seq, EmptyRetries: 5}.Call(ctx, st, llm.CallMeta{Node: "n"}, llm.Prompt("", "x"))
	require.ErrorIs(t, err, llm.ErrBudgetExceeded)
	assert.Contains(t, err.Error(), "limits.max_model_calls is 2")
	assert.Len(t, seq.requests(), 2, "the budget is checked before each retry")
	assert.Equal(t, 2, st.Usage.Snapshot().ModelCalls)
}

func TestCallReturnsAFailedRetrysError(t *testing.T) {
	m, err := scripted.New(scripted.Script{Replies: []scripted.Reply{{Text: " "}, {Error: "HTTP 503"}}})
	require.NoError(t, err)
	_, _, err = llm.Model{LLM: m, EmptyRetries: 2}.Call(context.Background(), nil, llm.CallMeta{Node: "n"}, llm.Prompt("", "x"))
	require.ErrorIs(t, err, llm.ErrModel)
	assert.Equal(t, 2, m.Calls())
}

// journaled opens a session of thread on s with scope "1:act".
func journaled(t *testing.T, s journal.Store, thread string) (context.Context, *journal.Run, *trace.Recorder) {
	t.Helper()
	ctx, rec := recorded()
	if _, err := s.Thread(ctx, thread); err != nil {
		require.NoError(t, s.Create(ctx, journal.Thread{Name: thread, Pipeline: "p.yaml", Status: journal.StatusRunning}))
	}
	r, err := journal.Open(ctx, s, thread)
	require.NoError(t, err)
	return journal.WithScope(journal.WithRun(ctx, r), journal.NodeScope(1, "act")), r, rec
}

// failingModel fails every call: a replayed run must not reach it.
type failingModel struct{ calls int }

func (m *failingModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	m.calls++
	return nil, errors.New("a live call in a replay")
}

func (m *failingModel) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

func TestJournaledRetriesReplayWithoutALiveCall(t *testing.T) {
	s := memstore.New()
	msgs := llm.Prompt("sys", "q")
	caller := llm.CallMeta{Node: "act", Kind: "direct"}

	live := scripted.Texts(" ", "the answer")
	ctx, r, rec := journaled(t, s, "t1")
	st := state.NewState(state.Task{Question: "q"})
	text, _, err := llm.Model{LLM: live, EmptyRetries: 2}.Call(ctx, st, caller, msgs)
	require.NoError(t, err)
	require.Equal(t, "the answer", text)
	replayed, made, _ := r.Stats()
	assert.Equal(t, [2]int{0, 2}, [2]int{replayed, made}, "the empty reply and its retry are journaled")
	assert.Len(t, rec.OfKind(trace.KindGuard), 1)

	dead := &failingModel{}
	ctx, r, rec = journaled(t, s, "t1")
	st = state.NewState(state.Task{Question: "q"})
	text, _, err = llm.Model{LLM: dead, EmptyRetries: 2}.Call(ctx, st, caller, msgs)
	require.NoError(t, err)
	assert.Equal(t, "the answer", text)
	assert.Zero(t, dead.calls, "no live call")
	replayed, made, unused := r.Stats()
	assert.Equal(t, [3]int{2, 0, 0}, [3]int{replayed, made, unused}, "both calls are replayed")
	assert.Len(t, rec.OfKind(trace.KindGuard), 1, "the replay retries as the run did")
	assert.Equal(t, 2, st.Usage.Snapshot().ModelCalls)
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
