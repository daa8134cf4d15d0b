package middleware

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	"go.yaml.in/yaml/v3"
)

// tagging returns a middleware that appends name to the trail on the way in.
func tagging(name string, trail *[]string) Middleware {
	return func(next llms.Model) llms.Model {
		return Wrap(next, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
			*trail = append(*trail, name)
			return next.GenerateContent(ctx, msgs, opts...)
		})
	}
}

func TestChainRunsTheFirstMiddlewareOutermost(t *testing.T) {
	var trail []string
	inner := llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		trail = append(trail, "model")
		return textResponse("answer"), nil
	})
	m := Chain(inner, tagging("a", &trail), nil, tagging("b", &trail))
	//lint:ignore SA1019 the deprecated Call path must go through the middlewares too
	out, err := m.Call(t.Context(), "question")
	require.NoError(t, err)
	assert.Equal(t, "answer", out)
	assert.Equal(t, []string{"a", "b", "model"}, trail, "Call must pass through the middlewares too")
	assert.Same(t, &inner, Chain(&inner), "no middleware leaves the model as is")
}

// reasoningModel is a model that says it supports reasoning.
type reasoningModel struct{ llmtest.Fixed }

func (*reasoningModel) SupportsReasoning() bool { return true }

func TestWrapForwardsSupportsReasoning(t *testing.T) {
	id := func(next llms.Model) llms.Model { return Wrap(next, next.GenerateContent) }
	rm, ok := Chain(&reasoningModel{}, id).(llms.ReasoningModel)
	require.True(t, ok)
	assert.True(t, rm.SupportsReasoning())
	rm, ok = Chain(&llmtest.Fixed{}, id).(llms.ReasoningModel)
	require.True(t, ok)
	assert.False(t, rm.SupportsReasoning())
}

func TestTimeout(t *testing.T) {
	blocking := llmtest.Func(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		<-ctx.Done()
		return nil, errors.New("request timeout: API call exceeded deadline")
	})
	t.Run("a call past the limit fails with ErrCallTimeout", func(t *testing.T) {
		_, err := NewTimeout(20*time.Millisecond)(blocking).GenerateContent(t.Context(), humanMsg("x"))
		require.ErrorIs(t, err, ErrCallTimeout)
		assert.Contains(t, err.Error(), "20ms")
		class, _ := Classify(err)
		assert.Equal(t, Retryable, class)
	})
	t.Run("the caller's own deadline is not a call timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		_, err := NewTimeout(time.Hour)(blocking).GenerateContent(ctx, humanMsg("x"))
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrCallTimeout)
	})
	t.Run("zero leaves the model unchanged", func(t *testing.T) {
		assert.Same(t, llms.Model(&blocking), NewTimeout(0)(&blocking))
	})
	t.Run("a fast call is untouched", func(t *testing.T) {
		fast := llmtest.Func(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
			_, ok := ctx.Deadline()
			assert.True(t, ok, "the model must see the deadline")
			return textResponse("ok"), nil
		})
		resp, err := NewTimeout(time.Minute)(fast).GenerateContent(t.Context(), humanMsg("x"))
		require.NoError(t, err)
		assert.Equal(t, "ok", resp.Choices[0].Content)
	})
}

// streamingModel streams its chunks through the configured function.
func streamingModel(chunks ...string) *llmtest.Stream {
	return &llmtest.Stream{Chunks: chunks}
}

func TestStreaming(t *testing.T) {
	t.Run("chunks reach the sink and the caller's function", func(t *testing.T) {
		var sink, caller []string
		m := NewStreaming(func(_ context.Context, c []byte) error {
			sink = append(sink, string(c))
			return nil
		})(streamingModel("Hel", "lo"))
		resp, err := m.GenerateContent(t.Context(), humanMsg("x"), llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
			caller = append(caller, string(c))
			return nil
		}))
		require.NoError(t, err)
		assert.Equal(t, "Hello", resp.Choices[0].Content)
		assert.Equal(t, []string{"Hel", "lo"}, sink)
		assert.Equal(t, []string{"Hel", "lo"}, caller)
	})
	t.Run("a sink error stops the call", func(t *testing.T) {
		stop := errors.New("trace closed")
		m := NewStreaming(func(context.Context, []byte) error { return stop })(streamingModel("a", "b"))
		_, err := m.GenerateContent(t.Context(), humanMsg("x"))
		assert.ErrorIs(t, err, stop)
	})
	t.Run("nil sink leaves the model unchanged", func(t *testing.T) {
		inner := streamingModel("a")
		assert.Same(t, llms.Model(inner), NewStreaming(nil)(inner))
	})
}

func TestConfigDecodesFromYAMLAndMapstructure(t *testing.T) {
	doc := `
retry:
  max_attempts: 5
  base_delay: 250ms
  max_delay: 10s
  jitter: 0.1
timeout: 30s
rate_limit:
  requests_per_second: 2.5
  burst: 4
  max_concurrent: 3
`
	want := Config{
		Retry:     RetryConfig{MaxAttempts: 5, BaseDelay: 250 * time.Millisecond, MaxDelay: 10 * time.Second, Jitter: 0.1},
		Timeout:   30 * time.Second,
		RateLimit: RateLimitConfig{RequestsPerSecond: 2.5, Burst: 4, MaxConcurrent: 3},
	}
	var fromYAML Config
	require.NoError(t, yaml.Unmarshal([]byte(doc), &fromYAML))
	assert.Equal(t, want, fromYAML)

	var raw map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &raw))
	var fromMap Config
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		DecodeHook: mapstructure.StringToTimeDurationHookFunc(), Result: &fromMap, ErrorUnused: true,
	})
	require.NoError(t, err)
	require.NoError(t, dec.Decode(raw))
	assert.Equal(t, want, fromMap)
}

func TestDefaultConfig(t *testing.T) {
	assert.Equal(t, Config{
		Retry:     RetryConfig{MaxAttempts: 3, BaseDelay: 500 * time.Millisecond, MaxDelay: 20 * time.Second, Jitter: 0.2},
		RateLimit: RateLimitConfig{Burst: 1},
	}, DefaultConfig())
}

func TestApplyBuildsTheStandardStack(t *testing.T) {
	calls := 0
	var sawDeadline bool
	inner := llmtest.Func(func(ctx context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		calls++
		_, sawDeadline = ctx.Deadline()
		if calls == 1 {
			return nil, errors.New("API returned unexpected status code: 502")
		}
		return textResponse("ok"), nil
	})
	assert.Len(t, Config{}.Middlewares(), 1, "only retry is on by default")
	cfg := Config{Timeout: time.Minute, RateLimit: RateLimitConfig{MaxConcurrent: 1}}
	assert.Len(t, cfg.Middlewares(), 3)
	sleeper := &recordingSleeper{}
	resp, err := Apply(inner, cfg, WithSleep(sleeper.sleep)).GenerateContent(t.Context(), humanMsg("x"))
	require.NoError(t, err)
	assert.Equal(t, "ok", resp.Choices[0].Content)
	assert.Equal(t, 2, calls)
	assert.True(t, sawDeadline, "the per-attempt timeout must be inside the stack")
	assert.Len(t, sleeper.got(), 1)
}

func TestSleepWaitsOrStopsWithTheContext(t *testing.T) {
	require.NoError(t, Sleep(context.Background(), time.Millisecond))
	require.NoError(t, Sleep(context.Background(), 0))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, Sleep(ctx, 0), context.Canceled, "a done context ends even a zero wait")
	start := time.Now()
	require.ErrorIs(t, Sleep(ctx, time.Hour), context.Canceled)
	assert.Less(t, time.Since(start), time.Minute, "a cancelled context ends the wait at once")
}
