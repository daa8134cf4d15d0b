package middleware

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// hookRecorder collects the events passed to WithOnRetry.
type hookRecorder struct {
	mu     sync.Mutex
	events []RetryEvent
}

func (h *hookRecorder) hook(_ context.Context, ev RetryEvent) {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
}

func (h *hookRecorder) got() []RetryEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]RetryEvent(nil), h.events...)
}

func (h *hookRecorder) texts() []string {
	var out []string
	for _, ev := range h.got() {
		out = append(out, ev.String())
	}
	return out
}

// failing returns a fake model that fails its first n calls with err and
// then answers "ok", counting its calls.
func failing(n int, err error, calls *int) llmtest.Func {
	return llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		*calls++
		if *calls <= n {
			return nil, err
		}
		return textResponse("ok"), nil
	})
}

func TestRetryAfterBeyondTheDeadlineFailsAtOnceWithoutSleeping(t *testing.T) {
	srv := newScriptServer(t, statusStep(429, map[string]string{"Retry-After": "3600"}, errorBody("Rate limit reached")),
		okStep(openaiProvider, "ok"))
	sleeper := &recordingSleeper{}
	hooks := &hookRecorder{}
	model := NewRetry(RetryConfig{}, WithSleep(sleeper.sleep), WithOnRetry(hooks.hook))(
		openaiProvider.newLLM(t, srv.URL, NewObservingClient(&http.Client{})))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()

	_, err := model.GenerateContent(ctx, humanMsg("hi"))

	require.ErrorIs(t, err, ErrNoTimeToRetry)
	assert.NotErrorIs(t, err, ErrRetriesExhausted)
	assert.NotErrorIs(t, err, context.DeadlineExceeded, "the deadline was not reached: the call gave up early")
	assert.Contains(t, err.Error(), "the server asked to retry after 1h0m0s (HTTP 429) but the call's deadline is in ")
	assert.Contains(t, err.Error(), "not waiting")
	var he *HTTPError
	require.ErrorAs(t, err, &he, "the attempt's error is wrapped")
	assert.Equal(t, 429, he.StatusCode)
	class, retryAfter := Classify(err)
	assert.Equal(t, Retryable, class)
	assert.Equal(t, time.Hour, retryAfter)
	assert.Empty(t, sleeper.got(), "the sleep hook must not be called")
	assert.Empty(t, hooks.got(), "no retry is announced when none will happen")
	assert.Equal(t, 1, int(srv.hits.Load()))
}

func TestRetryAfterBeyondMaxRetryAfterFailsAtOnceWithoutADeadline(t *testing.T) {
	srv := newScriptServer(t, statusStep(429, map[string]string{"Retry-After": "600"}, errorBody("Rate limit reached")),
		okStep(openaiProvider, "ok"))
	sleeper := &recordingSleeper{}
	model := NewRetry(RetryConfig{}, WithSleep(sleeper.sleep))(
		openaiProvider.newLLM(t, srv.URL, NewObservingClient(&http.Client{})))
	_, hasDeadline := t.Context().Deadline()
	require.False(t, hasDeadline)

	_, err := model.GenerateContent(t.Context(), humanMsg("hi"))

	require.ErrorIs(t, err, ErrRetryAfterTooLong)
	assert.NotErrorIs(t, err, ErrNoTimeToRetry)
	assert.Contains(t, err.Error(), "the server asked to retry after 10m0s (HTTP 429), longer than the 2m0s allowed (retry.max_retry_after); not waiting")
	var he *HTTPError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, 429, he.StatusCode)
	assert.Empty(t, sleeper.got())
	assert.Equal(t, 1, int(srv.hits.Load()))
}

func TestMaxRetryAfterCanBeRaisedOrLifted(t *testing.T) {
	for _, tt := range []struct {
		name  string
		limit time.Duration
	}{{"raised", 15 * time.Minute}, {"lifted", -1}} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScriptServer(t, statusStep(429, map[string]string{"Retry-After": "600"}, errorBody("Rate limit reached")),
				okStep(openaiProvider, "ok"))
			sleeper := &recordingSleeper{}
			model := NewRetry(RetryConfig{MaxRetryAfter: tt.limit}, WithSleep(sleeper.sleep))(
				openaiProvider.newLLM(t, srv.URL, NewObservingClient(&http.Client{})))
			_, err := model.GenerateContent(t.Context(), humanMsg("hi"))
			require.NoError(t, err)
			assert.Equal(t, []time.Duration{10 * time.Minute}, sleeper.got())
		})
	}
}

func TestBackoffBeyondTheDeadlineFailsAtOnce(t *testing.T) {
	calls := 0
	sleeper := &recordingSleeper{}
	model := NewRetry(RetryConfig{BaseDelay: 2 * time.Minute, MaxDelay: 2 * time.Minute},
		WithSleep(sleeper.sleep), WithRandom(func() float64 { return 0.5 }),
	)(failing(5, errors.New("API returned unexpected status code: 503"), &calls))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	_, err := model.GenerateContent(ctx, humanMsg("x"))

	require.ErrorIs(t, err, ErrNoTimeToRetry)
	assert.Contains(t, err.Error(), "the next attempt is due in 2m0s (after HTTP 503) but the call's deadline is in ")
	assert.Contains(t, err.Error(), "status code: 503", "the attempt's error is kept")
	assert.Empty(t, sleeper.got())
	assert.Equal(t, 1, calls)
}

func TestWaitsWithinTheDeadlineStillHappen(t *testing.T) {
	calls := 0
	sleeper := &recordingSleeper{}
	model := NewRetry(RetryConfig{}, WithSleep(sleeper.sleep), WithRandom(func() float64 { return 0.5 }))(
		failing(1, errors.New("API returned unexpected status code: 503"), &calls))
	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	_, err := model.GenerateContent(ctx, humanMsg("x"))
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{DefaultBaseDelay}, sleeper.got())
	assert.Equal(t, 2, calls)
}

func TestRetryDeadlineCheckReadsTheInjectedClock(t *testing.T) {
	calls := 0
	sleeper := &recordingSleeper{}
	// The context's deadline is an hour away, but the injected clock says
	// only 1s is left: the 500ms backoff fits, a 2s one would not.
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	defer cancel()
	clock := func() time.Time { return deadline.Add(-time.Second) }
	for _, tt := range []struct {
		base time.Duration
		ok   bool
	}{{500 * time.Millisecond, true}, {2 * time.Second, false}} {
		calls = 0
		model := NewRetry(RetryConfig{BaseDelay: tt.base, Jitter: -1}, WithSleep(sleeper.sleep), WithClock(clock))(
			failing(1, errors.New("API returned unexpected status code: 502"), &calls))
		_, err := model.GenerateContent(ctx, humanMsg("x"))
		if tt.ok {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, ErrNoTimeToRetry)
			assert.Contains(t, err.Error(), "deadline is in 1s")
		}
	}
}

func TestAttemptCounterCountsEveryProviderAttempt(t *testing.T) {
	tests := []struct {
		name         string
		failures     int
		err          error
		wantAttempts int
		wantFailed   int
		wantErr      bool
	}{
		{"three failed attempts", 5, errors.New("API returned unexpected status code: 503"), 3, 3, true},
		{"fail then succeed", 1, errors.New("API returned unexpected status code: 503"), 2, 1, false},
		{"first attempt succeeds", 0, nil, 1, 0, false},
		{"fatal error is one attempt", 5, errors.New("API returned unexpected status code: 401"), 1, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			model := NewRetry(RetryConfig{}, WithSleep((&recordingSleeper{}).sleep))(failing(tt.failures, tt.err, &calls))
			ctx, counter := WithAttemptCounter(t.Context())
			require.Same(t, counter, AttemptCounterFrom(ctx))
			_, err := model.GenerateContent(ctx, humanMsg("x"))
			assert.Equal(t, tt.wantErr, err != nil, "error: %v", err)
			assert.Equal(t, tt.wantAttempts, counter.Attempts())
			assert.Equal(t, tt.wantFailed, counter.Failed())
			assert.Equal(t, calls, counter.Attempts(), "one count per call of the inner model")
		})
	}
}

func TestAttemptCounterIsSafeForConcurrentCallsAndNil(t *testing.T) {
	var nilCounter *AttemptCounter
	assert.Zero(t, nilCounter.Attempts())
	assert.Zero(t, nilCounter.Failed())
	assert.Nil(t, AttemptCounterFrom(t.Context()))

	var mu sync.Mutex
	calls := map[string]int{}
	model := NewRetry(RetryConfig{}, WithSleep((&recordingSleeper{}).sleep))(llmtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		key := fmt.Sprint(msgs[0].Parts[0])
		mu.Lock()
		calls[key]++
		n := calls[key]
		mu.Unlock()
		if n == 1 {
			return nil, errors.New("API returned unexpected status code: 500")
		}
		return textResponse("ok"), nil
	}))
	ctx, counter := WithAttemptCounter(t.Context())
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_, err := model.GenerateContent(ctx, humanMsg(fmt.Sprint(i)))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Equal(t, 40, counter.Attempts())
	assert.Equal(t, 20, counter.Failed())
}

func TestHangingServerGivesBoundedAttemptsAndAnnouncesEachRetry(t *testing.T) {
	srv := newScriptServer(t, hangStep)
	sleeper := &recordingSleeper{}
	hooks := &hookRecorder{}
	model := Chain(openaiProvider.newLLM(t, srv.URL, NewObservingClient(&http.Client{})),
		NewRetry(RetryConfig{}, WithSleep(sleeper.sleep), WithRandom(func() float64 { return 0.5 }), WithOnRetry(hooks.hook)),
		NewTimeout(50*time.Millisecond),
	)
	ctx, counter := WithAttemptCounter(t.Context())

	_, err := model.GenerateContent(ctx, humanMsg("hi"))

	require.ErrorIs(t, err, ErrRetriesExhausted)
	require.ErrorIs(t, err, ErrCallTimeout, "every attempt is cut by the per-call timeout")
	assert.Equal(t, 3, counter.Attempts())
	// Under load an attempt may time out before its request reaches the
	// server, so the server's count is only bounded.
	assert.InDelta(t, 2, int(srv.hits.Load()), 1)
	assert.Equal(t, []string{
		"retrying in 500ms after timeout (attempt 1 of 3)",
		"retrying in 1s after timeout (attempt 2 of 3)",
	}, hooks.texts())
	for i, ev := range hooks.got() {
		assert.Equal(t, i+1, ev.Attempt)
		assert.Equal(t, 3, ev.MaxAttempts)
		assert.Zero(t, ev.StatusCode)
		assert.Equal(t, "timeout", ev.Reason)
	}
	assert.Equal(t, []time.Duration{DefaultBaseDelay, 2 * DefaultBaseDelay}, sleeper.got())
}

func TestRetryEventNamesTheHTTPStatus(t *testing.T) {
	srv := newScriptServer(t, statusStep(429, map[string]string{"Retry-After": "30"}, errorBody("Rate limit reached")),
		okStep(openaiProvider, "ok"))
	hooks := &hookRecorder{}
	model := NewRetry(RetryConfig{}, WithSleep((&recordingSleeper{}).sleep), WithOnRetry(hooks.hook))(
		openaiProvider.newLLM(t, srv.URL, NewObservingClient(&http.Client{})))
	_, err := model.GenerateContent(t.Context(), humanMsg("hi"))
	require.NoError(t, err)
	require.Len(t, hooks.got(), 1)
	ev := hooks.got()[0]
	assert.Equal(t, 429, ev.StatusCode)
	assert.Equal(t, "HTTP 429", ev.Reason)
	assert.Equal(t, "retrying in 30s after HTTP 429 (attempt 1 of 3)", ev.String())
}

func TestFailureReason(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		reason string
	}{
		{"observed status", &HTTPError{StatusCode: 503, Err: errors.New("boom")}, 503, "HTTP 503"},
		{"status in the message", errors.New("API returned unexpected status code: 429: slow down"), 429, "HTTP 429"},
		{"per-call timeout", fmt.Errorf("%w after 1s: x", ErrCallTimeout), 0, "timeout"},
		{"openai's sanitised timeout", errors.New("request timeout: API call exceeded deadline"), 0, "timeout"},
		{"refused", &HTTPError{Err: errors.New("network error: failed to reach API server"),
			Transport: &url.Error{Op: "Post", URL: "http://x", Err: syscall.ECONNREFUSED}}, 0, "connection refused"},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), 0, "connection reset"},
		{"closed", io.ErrUnexpectedEOF, 0, "connection closed"},
		{"network", errors.New("network error: failed to reach API server"), 0, "network error"},
		{"unknown", errors.New("something odd"), 0, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, reason := FailureReason(tt.err)
			assert.Equal(t, tt.status, status)
			assert.Equal(t, tt.reason, reason)
		})
	}
}
