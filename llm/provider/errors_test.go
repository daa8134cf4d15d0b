package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// assertNoSecret checks err and every error it wraps.
func assertNoSecret(t *testing.T, err error) {
	t.Helper()
	queue := []error{err}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		if e == nil {
			continue
		}
		assert.NotContains(t, e.Error(), testSecret)
		assert.NotContains(t, fmt.Sprintf("%+v", e), testSecret)
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			queue = append(queue, u.Unwrap())
		case interface{ Unwrap() []error }:
			queue = append(queue, u.Unwrap()...)
		}
	}
}

func TestHTTPErrorsAreClassifiedAndNeverContainTheKey(t *testing.T) {
	statuses := []struct {
		code     int
		sentinel error
	}{
		{http.StatusUnauthorized, ErrAuth},
		{http.StatusTooManyRequests, ErrRateLimited},
		{http.StatusInternalServerError, ErrServer},
	}
	for _, wc := range wireCases() {
		for _, st := range statuses {
			t.Run(fmt.Sprintf("%s/%d", wc.provider, st.code), func(t *testing.T) {
				_, m := wc.serve(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
					w.Header().Set("Retry-After", "7")
					// The message echoes the key, as OpenAI's "Incorrect API
					// key provided: ..." does.
					writeJSON(w, st.code, wc.errorBody(st.code, fmt.Sprintf("status %d for key %s", st.code, testSecret)))
				})

				resp, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
				require.Error(t, err)
				assert.Nil(t, resp)
				assertNoSecret(t, err)
				assert.Contains(t, err.Error(), redactedMark, "the echoed key is masked, the rest kept")

				var se *StatusError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, wc.provider, se.Provider)
				assert.Equal(t, st.code, se.StatusCode)
				assert.ErrorIs(t, err, st.sentinel)
				if wc.retryAfter {
					assert.Equal(t, 7*time.Second, se.RetryAfter)
				} else {
					assert.Zero(t, se.RetryAfter)
				}
				if st.code == http.StatusUnauthorized {
					assert.Contains(t, err.Error(), "$"+wc.keyEnv, "a 401 names the variable to fix")
				}
			})
		}
	}
}

func TestUnreachableServerErrorNeverContainsTheKey(t *testing.T) {
	for _, wc := range wireCases() {
		t.Run(wc.provider, func(t *testing.T) {
			srv := newFakeServer(t, wc.reply)
			base := srv.URL
			srv.Close()
			m := newTestModel(t, wc.config(base), wc.keyEnv)

			_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
			require.Error(t, err)
			assertNoSecret(t, err)
			var se *StatusError
			assert.False(t, errors.As(err, &se), "no HTTP status was received")
			assert.True(t, strings.HasPrefix(err.Error(), wc.provider+": "), err.Error())
			// The call fails at once, naming the server and the fix.
			require.ErrorIs(t, err, ErrUnreachable)
			var ue *UnreachableError
			require.ErrorAs(t, err, &ue)
			fix := "start that server or fix llm.base_url"
			if wc.provider == Ollama {
				fix = "start Ollama (`ollama serve`) or set llm.base_url"
			}
			assert.Equal(t, fmt.Sprintf("%s: no server answers at %s (connection refused): %s", wc.provider, strings.TrimPrefix(base, "http://"), fix), err.Error())
		})
	}
}

func TestCanceledContextFailsBeforeSending(t *testing.T) {
	for _, wc := range wireCases() {
		t.Run(wc.provider, func(t *testing.T) {
			srv, m := wc.start(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()

			_, err := m.GenerateContent(ctx, conversation("Be brief.", "Hi"))
			require.ErrorIs(t, err, context.Canceled)
			assert.Empty(t, srv.requests())
		})
	}
}

func TestStreamingFuncErrorAbortsEveryProvider(t *testing.T) {
	for _, wc := range wireCases() {
		t.Run(wc.provider, func(t *testing.T) {
			_, m := wc.start(t)
			stop := errors.New("stop streaming")

			_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"),
				llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
					if len(chunk) > 0 {
						return stop
					}
					return nil
				}))
			require.ErrorIs(t, err, stop)
		})
	}
}

func TestStatusErrorMatchesOnlyItsClass(t *testing.T) {
	sentinels := []error{ErrAuth, ErrRateLimited, ErrServer, ErrBadRequest}
	tests := []struct {
		code int
		want error
	}{
		{400, ErrBadRequest}, {401, ErrAuth}, {403, ErrAuth}, {404, ErrBadRequest}, {422, ErrBadRequest},
		{429, ErrRateLimited}, {500, ErrServer}, {503, ErrServer},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			err := error(&StatusError{Provider: "openai", StatusCode: tc.code, Err: errors.New("x")})
			for _, s := range sentinels {
				assert.Equal(t, s == tc.want, errors.Is(err, s), "%v", s)
			}
		})
	}
}
