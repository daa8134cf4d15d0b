package middleware

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestRetryAgainstRealProviderClients(t *testing.T) {
	type check func(t *testing.T, err error, events []RetryEvent)
	noErr := func(t *testing.T, err error, _ []RetryEvent) { require.NoError(t, err) }

	tests := []struct {
		name      string
		provider  provider
		observe   bool // install the ObservingTransport
		timeout   time.Duration
		steps     func(p provider) []step
		wantHits  int
		wantWaits []time.Duration
		check     check
	}{
		{
			name: "429 with Retry-After is retried after the server's wait", provider: openaiProvider, observe: true,
			steps: func(p provider) []step {
				return []step{statusStep(429, map[string]string{"Retry-After": "1"}, errorBody("Rate limit reached")), okStep(p, "ok")}
			},
			wantHits: 2, wantWaits: []time.Duration{time.Second},
			check: func(t *testing.T, err error, events []RetryEvent) {
				require.NoError(t, err)
				require.Len(t, events, 1)
				var he *HTTPError
				require.ErrorAs(t, events[0].Err, &he)
				assert.Equal(t, 429, he.StatusCode)
				assert.Equal(t, time.Second, he.RetryAfter)
				assert.Equal(t, time.Second, events[0].RetryAfter)
			},
		},
		{
			name: "429 without the transport falls back to backoff", provider: openaiProvider, observe: false,
			steps: func(p provider) []step {
				return []step{statusStep(429, map[string]string{"Retry-After": "7"}, errorBody("Rate limit reached")), okStep(p, "ok")}
			},
			wantHits: 2, wantWaits: []time.Duration{DefaultBaseDelay}, check: noErr,
		},
		{
			name: "anthropic 429 with Retry-After is retried after the server's wait", provider: anthropicProvider, observe: true,
			steps: func(p provider) []step {
				return []step{statusStep(429, map[string]string{"Retry-After": "2"}, errorBody("rate limited")), okStep(p, "ok")}
			},
			wantHits: 2, wantWaits: []time.Duration{2 * time.Second}, check: noErr,
		},
		{
			name: "500 then 200 is retried once", provider: openaiProvider, observe: true,
			steps: func(p provider) []step {
				return []step{statusStep(500, nil, errorBody("internal error")), okStep(p, "ok")}
			},
			wantHits: 2, wantWaits: []time.Duration{DefaultBaseDelay}, check: noErr,
		},
		{
			name: "anthropic 529 overloaded is retried without the transport", provider: anthropicProvider, observe: false,
			steps: func(p provider) []step {
				return []step{statusStep(529, nil, errorBody("Overloaded")), okStep(p, "ok")}
			},
			wantHits: 2, wantWaits: []time.Duration{DefaultBaseDelay}, check: noErr,
		},
		{
			name: "503 on every attempt exhausts the retries", provider: openaiProvider, observe: true,
			steps: func(provider) []step {
				return []step{statusStep(503, nil, errorBody("unavailable"))}
			},
			wantHits: 3, wantWaits: []time.Duration{DefaultBaseDelay, 2 * DefaultBaseDelay},
			check: func(t *testing.T, err error, _ []RetryEvent) {
				require.ErrorIs(t, err, ErrRetriesExhausted)
				var re *RetryError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, 3, re.Attempts)
				var he *HTTPError
				require.ErrorAs(t, err, &he)
				assert.Equal(t, 503, he.StatusCode)
				assert.Contains(t, err.Error(), "3 attempts")
			},
		},
		{
			name: "reset connection is retried", provider: openaiProvider, observe: true,
			steps:    func(p provider) []step { return []step{resetStep, okStep(p, "ok")} },
			wantHits: 2, wantWaits: []time.Duration{DefaultBaseDelay},
			check: func(t *testing.T, err error, events []RetryEvent) {
				require.NoError(t, err)
				require.Len(t, events, 1)
				var he *HTTPError
				require.ErrorAs(t, events[0].Err, &he)
				assert.Zero(t, he.StatusCode)
				assert.Error(t, he.Transport, "the raw transport error must survive openai's sanitising")
			},
		},
		{
			name: "reset connection is retried without the transport", provider: openaiProvider, observe: false,
			steps:    func(p provider) []step { return []step{resetStep, okStep(p, "ok")} },
			wantHits: 2, wantWaits: []time.Duration{DefaultBaseDelay}, check: noErr,
		},
		{
			name: "hang past the per-call timeout is retried", provider: openaiProvider, observe: true, timeout: time.Second, // long enough that a loaded machine still answers the second attempt in time
			steps:    func(p provider) []step { return []step{hangStep, okStep(p, "ok")} },
			wantHits: 2, wantWaits: []time.Duration{DefaultBaseDelay},
			check: func(t *testing.T, err error, events []RetryEvent) {
				require.NoError(t, err)
				require.Len(t, events, 1)
				assert.ErrorIs(t, events[0].Err, ErrCallTimeout)
			},
		},
		{
			name: "400 is not retried", provider: openaiProvider, observe: true,
			steps: func(provider) []step {
				return []step{statusStep(400, nil, errorBody("bad parameter")), statusStep(200, nil, "{}")}
			},
			wantHits: 1, wantWaits: nil,
			check: func(t *testing.T, err error, events []RetryEvent) {
				require.Error(t, err)
				assert.NotErrorIs(t, err, ErrRetriesExhausted)
				assert.Contains(t, err.Error(), "400")
				assert.Empty(t, events)
			},
		},
		{
			name: "429 for exhausted quota is not retried", provider: openaiProvider, observe: true,
			steps: func(provider) []step {
				return []step{statusStep(429, nil, errorBody("You exceeded your current quota, please check your plan and billing details."))}
			},
			wantHits: 1, wantWaits: nil,
			check: func(t *testing.T, err error, _ []RetryEvent) {
				require.Error(t, err)
				assert.NotErrorIs(t, err, ErrRetriesExhausted)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScriptServer(t, tt.steps(tt.provider)...)
			client := &http.Client{}
			if tt.observe {
				client = NewObservingClient(&http.Client{})
			}
			sleeper := &recordingSleeper{}
			var (
				mu     sync.Mutex
				events []RetryEvent
			)
			model := Chain(tt.provider.newLLM(t, srv.URL, client),
				NewRetry(RetryConfig{},
					WithSleep(sleeper.sleep),
					WithRandom(func() float64 { return 0.5 }),
					WithOnRetry(func(_ context.Context, ev RetryEvent) {
						mu.Lock()
						events = append(events, ev)
						mu.Unlock()
					})),
				NewTimeout(tt.timeout),
			)
			resp, err := model.GenerateContent(t.Context(), humanMsg("hi"))
			mu.Lock()
			defer mu.Unlock()
			tt.check(t, err, events)
			if err == nil {
				require.Len(t, resp.Choices, 1)
				assert.Equal(t, "ok", resp.Choices[0].Content)
			}
			assert.Equal(t, tt.wantHits, int(srv.hits.Load()), "HTTP requests")
			assert.Equal(t, tt.wantWaits, sleeper.got(), "waits")
			for i, ev := range events {
				assert.Equal(t, i+1, ev.Attempt)
			}
		})
	}
}

func TestRetryBackoffGrowsAndIsCapped(t *testing.T) {
	cfg := RetryConfig{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		assert.Equal(t, w*time.Millisecond, cfg.Backoff(i+1), "attempt %d", i+1)
	}
	assert.Equal(t, DefaultBaseDelay, RetryConfig{}.Backoff(0))
	assert.Equal(t, DefaultMaxDelay, RetryConfig{}.Backoff(100))
}

func TestRetryJitterStaysWithinTheConfiguredFraction(t *testing.T) {
	tests := []struct {
		name   string
		jitter float64
		random float64
		want   time.Duration
	}{
		{"lowest draw shrinks by the default 20 %", 0, 0, 400 * time.Millisecond},
		{"middle draw leaves the delay", 0, 0.5, 500 * time.Millisecond},
		{"high draw stretches", 0.5, 0.9, 700 * time.Millisecond},
		{"negative jitter disables it", -1, 0, 500 * time.Millisecond},
		{"jitter above 1 is capped at 1", 5, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			sleeper := &recordingSleeper{}
			model := NewRetry(RetryConfig{MaxAttempts: 2, Jitter: tt.jitter},
				WithSleep(sleeper.sleep), WithRandom(func() float64 { return tt.random }),
			)(llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
				calls++
				if calls == 1 {
					return nil, errors.New("API returned unexpected status code: 502")
				}
				return textResponse("ok"), nil
			}))
			_, err := model.GenerateContent(t.Context(), humanMsg("x"))
			require.NoError(t, err)
			require.Len(t, sleeper.got(), 1)
			assert.InDelta(t, float64(tt.want), float64(sleeper.got()[0]), float64(time.Microsecond))
		})
	}
}

func TestRetryStopsWhenTheCallerCancels(t *testing.T) {
	tests := []struct {
		name       string
		cancelWhen string // "during-call" or "during-wait"
	}{
		{"canceled while the model runs", "during-call"},
		{"canceled while waiting to retry", "during-wait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			calls := 0
			sleep := func(ctx context.Context, _ time.Duration) error {
				if tt.cancelWhen == "during-wait" {
					cancel()
				}
				return ctx.Err()
			}
			model := NewRetry(RetryConfig{MaxAttempts: 5}, WithSleep(sleep))(llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
				calls++
				if tt.cancelWhen == "during-call" {
					cancel()
					// openai's client hides context.Canceled behind this text.
					return nil, errors.New("request cancelled")
				}
				return nil, errors.New("API returned unexpected status code: 503")
			}))
			_, err := model.GenerateContent(ctx, humanMsg("x"))
			require.ErrorIs(t, err, context.Canceled)
			assert.NotErrorIs(t, err, ErrRetriesExhausted)
			assert.Equal(t, 1, calls)
			class, _ := Classify(err)
			assert.Equal(t, Canceled, class)
		})
	}
}

func TestRetryRetriesInnerDeadlinesWhileTheCallerIsLive(t *testing.T) {
	calls := 0
	model := NewRetry(RetryConfig{}, WithSleep((&recordingSleeper{}).sleep))(llmtest.Func(func(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
		calls++
		if calls == 1 {
			return nil, fmt.Errorf("send request: %w", context.DeadlineExceeded) // e.g. http.Client.Timeout
		}
		return textResponse("ok"), nil
	}))
	_, err := model.GenerateContent(t.Context(), humanMsg("x"))
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
}

func TestRetryDoesNotRepeatPartlyStreamedOutput(t *testing.T) {
	calls := 0
	model := NewRetry(RetryConfig{}, WithSleep((&recordingSleeper{}).sleep))(llmtest.Func(func(ctx context.Context, _ []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		calls++
		var co llms.CallOptions
		for _, o := range opts {
			o(&co)
		}
		if calls == 1 {
			require.NoError(t, co.StreamingFunc(ctx, []byte("partial")))
			return nil, errors.New("error reading streaming response: unexpected EOF")
		}
		return textResponse("ok"), nil
	}))
	var got []string
	_, err := model.GenerateContent(t.Context(), humanMsg("x"), llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
		got = append(got, string(c))
		return nil
	}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "partly streamed")
	assert.Equal(t, 1, calls)
	assert.Equal(t, []string{"partial"}, got)
}

func TestRetryRestartsAPartlyStreamedCallWhenTheSinkCanTellAttemptsApart(t *testing.T) {
	calls := 0
	model := NewRetry(RetryConfig{}, WithSleep((&recordingSleeper{}).sleep))(llmtest.Func(func(ctx context.Context, _ []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		calls++
		var co llms.CallOptions
		for _, o := range opts {
			o(&co)
		}
		if calls == 1 {
			require.NoError(t, co.StreamingFunc(ctx, []byte("partial")))
			return nil, errors.New("error reading streaming response: unexpected EOF")
		}
		require.NoError(t, co.StreamingFunc(ctx, []byte("whole")))
		return textResponse("whole"), nil
	}))
	ctx, counter := WithAttemptCounter(WithRestartableStream(t.Context()))
	var got []string
	resp, err := model.GenerateContent(ctx, humanMsg("x"), llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
		got = append(got, fmt.Sprintf("%d:%s", counter.Attempts(), c))
		return nil
	}))
	require.NoError(t, err)
	assert.Equal(t, "whole", resp.Choices[0].Content)
	assert.Equal(t, []string{"1:partial", "2:whole"}, got, "each chunk tells its attempt")
}

func TestRetryRetriesStreamingCallsThatFailedBeforeOutput(t *testing.T) {
	calls := 0
	model := NewRetry(RetryConfig{}, WithSleep((&recordingSleeper{}).sleep))(llmtest.Func(func(ctx context.Context, _ []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		calls++
		if calls == 1 {
			return nil, errors.New("API returned unexpected status code: 503")
		}
		var co llms.CallOptions
		for _, o := range opts {
			o(&co)
		}
		require.NoError(t, co.StreamingFunc(ctx, []byte("full")))
		return textResponse("full"), nil
	}))
	var got []string
	_, err := model.GenerateContent(t.Context(), humanMsg("x"), llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
		got = append(got, string(c))
		return nil
	}))
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
	assert.Equal(t, []string{"full"}, got)
}

func TestRetryConfigDefaults(t *testing.T) {
	got := RetryConfig{}.withDefaults()
	assert.Equal(t, RetryConfig{MaxAttempts: 3, BaseDelay: 500 * time.Millisecond, MaxDelay: 20 * time.Second, Jitter: 0.2}, got)
	got = RetryConfig{MaxAttempts: 1, BaseDelay: time.Minute, MaxDelay: time.Second, Jitter: -0.5}.withDefaults()
	assert.Equal(t, RetryConfig{MaxAttempts: 1, BaseDelay: time.Minute, MaxDelay: time.Minute, Jitter: 0}, got)
}

func TestRetryErrorSaysWhatToCheck(t *testing.T) {
	overloaded := &RetryError{Attempts: 3, Err: &HTTPError{StatusCode: 503, Err: errors.New("overloaded")}}
	assert.Equal(t, "gave up after 3 attempts (retries exhausted; raise retry.max_attempts or check the provider's status): overloaded (HTTP 503)",
		overloaded.Error())
	assert.ErrorIs(t, overloaded, ErrRetriesExhausted)

	// No attempt got a response: the server is what to check.
	reset := &RetryError{Attempts: 3, Err: &HTTPError{Transport: syscall.ECONNRESET, Err: errors.New("network error")}}
	assert.Contains(t, reset.Error(), "no attempt got an HTTP response: check that the server at llm.base_url is up and speaks HTTP, or raise retry.max_attempts")
	assert.NotContains(t, reset.Error(), "check the provider's status")
	assert.ErrorIs(t, reset, syscall.ECONNRESET)
}
