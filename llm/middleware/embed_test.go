package middleware

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplyEmbedRetriesTransientFailures(t *testing.T) {
	var calls atomic.Int32
	embed := func(_ context.Context, texts []string) ([][]float32, error) {
		if calls.Add(1) < 3 {
			return nil, io.ErrUnexpectedEOF
		}
		out := make([][]float32, len(texts))
		for i, s := range texts {
			out[i] = []float32{float32(len(s)), float32(i)}
		}
		return out, nil
	}
	sleeper := &recordingSleeper{}
	var events []RetryEvent
	cfg := Config{Retry: RetryConfig{MaxAttempts: 3, BaseDelay: 100 * time.Millisecond}, MaxReplyBytes: 1}
	wrapped := ApplyEmbed(embed, cfg, WithSleep(sleeper.sleep), WithRandom(func() float64 { return 0.5 }),
		WithOnRetry(func(_ context.Context, ev RetryEvent) { events = append(events, ev) }))

	ctx, counter := WithAttemptCounter(context.Background())
	vecs, err := wrapped(ctx, []string{"abc", "de"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{3, 0}, {2, 1}}, vecs, "the vectors come back whole, whatever the reply limit")
	assert.EqualValues(t, 3, calls.Load())
	assert.Len(t, sleeper.got(), 2)
	require.Len(t, events, 2)
	assert.Equal(t, 1, events[0].Attempt)
	assert.Equal(t, 3, counter.Attempts())
	assert.Equal(t, 2, counter.Failed())
}

func TestApplyEmbedGivesUpAfterMaxAttemptsAndOnFatalErrors(t *testing.T) {
	var calls atomic.Int32
	wrapped := ApplyEmbed(func(context.Context, []string) ([][]float32, error) {
		calls.Add(1)
		return nil, io.ErrUnexpectedEOF
	}, Config{Retry: RetryConfig{MaxAttempts: 2}}, WithSleep((&recordingSleeper{}).sleep))
	_, err := wrapped(context.Background(), []string{"x"})
	require.ErrorIs(t, err, ErrRetriesExhausted)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.EqualValues(t, 2, calls.Load())

	calls.Store(0)
	bad := errors.New("invalid model text-embedding-9")
	wrapped = ApplyEmbed(func(context.Context, []string) ([][]float32, error) {
		calls.Add(1)
		return nil, bad
	}, Config{Retry: RetryConfig{MaxAttempts: 3}}, WithSleep((&recordingSleeper{}).sleep))
	_, err = wrapped(context.Background(), []string{"x"})
	require.ErrorIs(t, err, bad)
	assert.EqualValues(t, 1, calls.Load(), "a fatal error is not retried")
}

func TestApplyEmbedBoundsEachAttempt(t *testing.T) {
	wrapped := ApplyEmbed(func(ctx context.Context, _ []string) ([][]float32, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}, Config{Retry: RetryConfig{MaxAttempts: 1}, Timeout: 20 * time.Millisecond})
	began := time.Now()
	_, err := wrapped(context.Background(), []string{"x"})
	require.ErrorIs(t, err, ErrCallTimeout)
	assert.Less(t, time.Since(began), 5*time.Second)
}
