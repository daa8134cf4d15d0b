package llm_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

type echoModel struct {
	seen llm.CallMeta
	err  error
}

func (m *echoModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.seen = llm.CallMetaFrom(ctx)
	if m.err != nil {
		return nil, m.err
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "hello world"}}}, nil
}

func (m *echoModel) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

type fixedMeter struct{}

func (fixedMeter) Measure([]llms.MessageContent, *llms.ContentResponse) (int, int, bool) {
	return 100, 7, false
}

type perToken struct{}

func (perToken) Cost(p, c int) (float64, bool) { return float64(p+c) / 1e6, true }

func TestModelCallMetersPricesTracesAndIdentifiesTheCaller(t *testing.T) {
	echo := &echoModel{}
	m := llm.Model{LLM: echo, Meter: fixedMeter{}, Pricer: perToken{}}
	st := state.NewState(state.Task{ID: "t1", Question: "q"})
	rec := &trace.Recorder{}
	ctx := llm.WithStep(trace.WithTracer(context.Background(), trace.New("run", rec)), "s2")
	text, resp, err := m.Call(ctx, st, llm.CallMeta{Node: "n", Kind: "cot", Role: "finalize"}, llm.Prompt("sys", "hi"))
	require.NoError(t, err)
	assert.Equal(t, "hello world", text)
	require.Len(t, resp.Choices, 1)
	assert.Equal(t, llm.CallMeta{Node: "n", Kind: "cot", Role: "finalize", TaskID: "t1", StepID: "s2"}, echo.seen)
	u := st.Usage.Snapshot()
	assert.Equal(t, 1, u.ModelCalls)
	assert.Equal(t, 100, u.PromptTokens)
	assert.InDelta(t, 107e-6, u.CostUSD, 1e-12)
	calls := rec.OfKind(trace.KindLLMCall)
	require.Len(t, calls, 1)
	assert.Equal(t, 7, calls[0].Usage.CompletionTokens)
	assert.Equal(t, "finalize", calls[0].Data["role"])
}

func TestModelCallWrapsProviderErrorsButNotCancellation(t *testing.T) {
	boom := errors.New("HTTP 500")
	_, _, err := llm.Model{LLM: &echoModel{err: boom}}.Call(context.Background(), nil, llm.CallMeta{Node: "n"}, llm.Prompt("", "x"))
	require.ErrorIs(t, err, llm.ErrModel)
	require.ErrorIs(t, err, boom)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = llm.Model{LLM: &echoModel{err: context.Canceled}}.Call(ctx, nil, llm.CallMeta{}, llm.Prompt("", "x"))
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, llm.ErrModel)

	_, _, err = llm.Model{}.Call(context.Background(), nil, llm.CallMeta{}, nil)
	require.ErrorIs(t, err, llm.ErrModel)
	assert.Contains(t, err.Error(), "--llm")
}

type flakyModel struct {
	mu       sync.Mutex
	failures int
	calls    int
}

func (m *flakyModel) GenerateContent(_ context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.calls <= m.failures {
		return nil, errors.New("API returned unexpected status code: 503: overloaded")
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok"}}}, nil
}

func (m *flakyModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func TestModelCallCountsEveryAttemptIncludingFailedOnes(t *testing.T) {
	noSleep := middleware.WithSleep(func(context.Context, time.Duration) error { return nil })
	tests := []struct {
		name                    string
		failures                int
		wantCalls, wantAttempts int
		wantFailed              int
	}{
		{name: "first try", failures: 0, wantCalls: 1, wantAttempts: 1},
		{name: "fails once then succeeds", failures: 1, wantCalls: 1, wantAttempts: 2},
		{name: "every attempt fails", failures: 3, wantCalls: 0, wantAttempts: 3, wantFailed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := middleware.NewRetry(middleware.RetryConfig{MaxAttempts: 3}, noSleep)(&flakyModel{failures: tt.failures})
			st := state.NewState(state.Task{Question: "q"})
			_, _, err := llm.Model{LLM: m}.Call(context.Background(), st, llm.CallMeta{Node: "n"}, llm.Prompt("", "x"))
			if tt.wantFailed > 0 {
				require.ErrorIs(t, err, llm.ErrModel)
			} else {
				require.NoError(t, err)
			}
			u := st.Usage.Snapshot()
			assert.Equal(t, tt.wantCalls, u.ModelCalls)
			assert.Equal(t, tt.wantAttempts, u.ModelAttempts)
			assert.Equal(t, tt.wantFailed, u.FailedCalls)
			assert.Equal(t, tt.wantAttempts, u.PerNode["n"].ModelAttempts)
		})
	}
}

func TestMessagesTextListsTextAndToolResultsWithThePrefix(t *testing.T) {
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "sys"),
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{ID: "1", FunctionCall: &llms.FunctionCall{Name: "calc", Arguments: "{}"}}}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "1", Name: "calc", Content: "42"}}},
		llms.TextParts(llms.ChatMessageTypeHuman, "q"),
	}
	assert.Equal(t, "sys\n42\nq\n", llm.MessagesText(msgs, ""))
	assert.Equal(t, "sys\nObservation: 42\nq\n", llm.MessagesText(msgs, "Observation: "))
	assert.Empty(t, llm.MessagesText(nil, "x"))
}
