package middleware

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestRateLimitNeverExceedsMaxConcurrent(t *testing.T) {
	const callers = 8
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	model := NewRateLimit(RateLimitConfig{MaxConcurrent: 2})(llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
		return textResponse("ok"), nil
	}))
	var wg sync.WaitGroup
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() { _, errs[i] = model.GenerateContent(t.Context(), humanMsg("x")) })
	}
	require.Eventually(t, func() bool { return inFlight.Load() == 2 }, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
	assert.Equal(t, int32(2), peak.Load())
}

func TestRateLimitSpacesRequestsOnAFakeClock(t *testing.T) {
	tests := []struct {
		name        string
		cfg         RateLimitConfig
		calls       int
		wantOffsets []time.Duration // model entry times relative to the first call
	}{
		{
			name: "10 per second, burst 1", cfg: RateLimitConfig{RequestsPerSecond: 10}, calls: 4,
			wantOffsets: []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond},
		},
		{
			name: "burst 3 lets three start together", cfg: RateLimitConfig{RequestsPerSecond: 10, Burst: 3}, calls: 5,
			wantOffsets: []time.Duration{0, 0, 0, 100 * time.Millisecond, 200 * time.Millisecond},
		},
		{
			name: "below one per second", cfg: RateLimitConfig{RequestsPerSecond: 0.5}, calls: 3,
			wantOffsets: []time.Duration{0, 2 * time.Second, 4 * time.Second},
		},
		{
			name: "unlimited", cfg: RateLimitConfig{}, calls: 3,
			wantOffsets: []time.Duration{0, 0, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			start := clock.Now()
			var entries []time.Duration
			model := NewRateLimit(tt.cfg, WithClock(clock.Now), WithSleep(clock.Sleep))(llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
				entries = append(entries, clock.Now().Sub(start))
				return textResponse("ok"), nil
			}))
			for range tt.calls {
				_, err := model.GenerateContent(t.Context(), humanMsg("x"))
				require.NoError(t, err)
			}
			require.Len(t, entries, len(tt.wantOffsets))
			for i, want := range tt.wantOffsets {
				assert.InDelta(t, float64(want), float64(entries[i]), float64(time.Microsecond), "call %d", i)
			}
		})
	}
}

func TestRateLimitSharesOneBudgetAcrossWrappedModels(t *testing.T) {
	clock := newFakeClock()
	start := clock.Now()
	var entries []time.Duration
	inner := llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		entries = append(entries, clock.Now().Sub(start))
		return textResponse("ok"), nil
	})
	mw := NewRateLimit(RateLimitConfig{RequestsPerSecond: 4}, WithClock(clock.Now), WithSleep(clock.Sleep))
	a, b := mw(inner), mw(inner)
	for _, m := range []llms.Model{a, b, a} {
		_, err := m.GenerateContent(t.Context(), humanMsg("x"))
		require.NoError(t, err)
	}
	assert.Equal(t, []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond}, entries)
}

func TestRateLimitWaitEndsWithTheContext(t *testing.T) {
	t.Run("waiting for a slot", func(t *testing.T) {
		release := make(chan struct{})
		entered := make(chan struct{})
		model := NewRateLimit(RateLimitConfig{MaxConcurrent: 1})(llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
			close(entered)
			<-release
			return textResponse("ok"), nil
		}))
		done := make(chan error, 1)
		go func() {
			_, err := model.GenerateContent(t.Context(), humanMsg("first"))
			done <- err
		}()
		<-entered
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := model.GenerateContent(ctx, humanMsg("second"))
		assert.ErrorIs(t, err, context.Canceled)
		close(release)
		assert.NoError(t, <-done)
	})
	t.Run("waiting for the limiter", func(t *testing.T) {
		clock := newFakeClock()
		calls := 0
		model := NewRateLimit(RateLimitConfig{RequestsPerSecond: 1}, WithClock(clock.Now), WithSleep(clock.Sleep))(llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
			calls++
			return textResponse("ok"), nil
		}))
		_, err := model.GenerateContent(t.Context(), humanMsg("x"))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err = model.GenerateContent(ctx, humanMsg("x"))
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, calls)
	})
}

func TestRateLimitConfigDefaults(t *testing.T) {
	assert.Equal(t, RateLimitConfig{Burst: 1}, RateLimitConfig{}.withDefaults())
	assert.Equal(t, RateLimitConfig{Burst: 1}, RateLimitConfig{RequestsPerSecond: -3, MaxConcurrent: -1}.withDefaults())
}
