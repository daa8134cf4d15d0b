package llm_test

import (
	"context"
	"errors"
	"strings"
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

// brokenStream streams "Thought: hal" and fails on its first call, then
// streams its whole reply in three chunks.
type brokenStream struct {
	mu    sync.Mutex
	calls int
}

func (m *brokenStream) GenerateContent(ctx context.Context, _ []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, f := range opts {
		f(&o)
	}
	m.mu.Lock()
	m.calls++
	first := m.calls == 1
	m.mu.Unlock()
	if first {
		if o.StreamingFunc != nil {
			if err := o.StreamingFunc(ctx, []byte("Thought: hal")); err != nil {
				return nil, err
			}
		}
		return nil, errors.New("error reading streaming response: unexpected EOF")
	}
	for _, c := range []string{"Thought: ", "half done", "\nAnswer: 7"} {
		if o.StreamingFunc != nil {
			if err := o.StreamingFunc(ctx, []byte(c)); err != nil {
				return nil, err
			}
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Thought: half done\nAnswer: 7"}}}, nil
}

func (m *brokenStream) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

func retrying(m llms.Model) llm.Model {
	noWait := middleware.WithSleep(func(context.Context, time.Duration) error { return nil })
	return llm.Model{LLM: middleware.NewRetry(middleware.RetryConfig{MaxAttempts: 3}, noWait)(m)}
}

func TestTokenEventsSpellTheReplyAndRestartWithTheRetriedAttempt(t *testing.T) {
	rec := &trace.Recorder{}
	ctx := llm.WithTokenEvents(trace.WithTracer(t.Context(), trace.New("r", rec)))
	st := state.NewState(state.Task{ID: "t1", Question: "q"})
	text, _, err := retrying(&brokenStream{}).Call(ctx, st, llm.CallMeta{Node: "act", Kind: "react", Role: "main"}, llm.Prompt("", "q"))
	require.NoError(t, err, "a call that failed half way is retried when only token events stream it")
	assert.Equal(t, "Thought: half done\nAnswer: 7", text)
	byAttempt := map[any]*strings.Builder{}
	for _, e := range rec.OfKind(trace.KindToken) {
		assert.Equal(t, "act", e.Node)
		assert.Equal(t, int64(1), e.Data["call"])
		assert.Equal(t, "main", e.Data["role"])
		if byAttempt[e.Data["attempt"]] == nil {
			byAttempt[e.Data["attempt"]] = &strings.Builder{}
		}
		byAttempt[e.Data["attempt"]].WriteString(e.Text)
	}
	require.Len(t, byAttempt, 2)
	assert.Equal(t, "Thought: hal", byAttempt[1].String())
	assert.Equal(t, text, byAttempt[2].String(), "the retried attempt streams the whole reply")
}

func TestACallersOwnStreamIsNotRestartedAndSeesEveryChunkFirst(t *testing.T) {
	rec := &trace.Recorder{}
	ctx := llm.WithTokenEvents(trace.WithTracer(t.Context(), trace.New("r", rec)))
	var own []string
	_, _, err := retrying(&brokenStream{}).Call(ctx, nil, llm.CallMeta{Node: "plan"}, llm.Prompt("", "q"),
		llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
			own = append(own, string(c))
			return nil
		}))
	require.ErrorContains(t, err, "partly streamed", "the caller's function cannot tell attempts apart")
	assert.Equal(t, []string{"Thought: hal"}, own)
	require.Len(t, rec.OfKind(trace.KindToken), 1)
}

func TestNoTokenEventsWithoutWithTokenEvents(t *testing.T) {
	rec := &trace.Recorder{}
	ctx := trace.WithTracer(t.Context(), trace.New("r", rec))
	m := &brokenStream{calls: 1}
	_, _, err := retrying(m).Call(ctx, nil, llm.CallMeta{Node: "act"}, llm.Prompt("", "q"))
	require.NoError(t, err)
	assert.Empty(t, rec.OfKind(trace.KindToken))
	assert.False(t, llm.TokenEventsOn(ctx))
	assert.True(t, llm.TokenEventsOn(llm.WithTokenEvents(ctx)))
}
