package middleware

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"1", time.Second},
		{" 120 ", 2 * time.Minute},
		{"0", 0},
		{"-5", 0},
		{"1.5", 0},
		{"soon", 0},
		{"99999999999999", 24 * time.Hour},
		{"Sun, 01 Jun 2025 12:00:30 GMT", 30 * time.Second},
		{"Sunday, 01-Jun-25 12:01:00 GMT", time.Minute},
		{"Sun Jun  1 12:00:05 2025", 5 * time.Second},
		{"Sun, 01 Jun 2025 11:59:00 GMT", 0},
		{"30", 30 * time.Second},
		{"-3", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			assert.Equal(t, tt.want, ParseRetryAfter(tt.value, now))
		})
	}
}

func TestRetryAfterHeaderPrefersMilliseconds(t *testing.T) {
	now := time.Now()
	h := http.Header{}
	h.Set("Retry-After", "3")
	h.Set("Retry-After-Ms", "250")
	assert.Equal(t, 250*time.Millisecond, retryAfterFromHeader(h, now))
	h.Set("Retry-After-Ms", "junk")
	assert.Equal(t, 3*time.Second, retryAfterFromHeader(h, now))
}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// errReader fails after returning its data.
type errReader struct {
	data string
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestObservingTransportRecordsTheLastExchange(t *testing.T) {
	date := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		base       roundTripFunc
		readBody   bool
		wantStatus int
		wantRA     time.Duration
		wantErr    error
	}{
		{
			name: "status and HTTP-date Retry-After",
			base: func(*http.Request) (*http.Response, error) {
				h := http.Header{}
				h.Set("Retry-After", date.Add(4*time.Second).Format(http.TimeFormat))
				return &http.Response{StatusCode: 503, Header: h, Body: io.NopCloser(strings.NewReader("{}"))}, nil
			},
			wantStatus: 503, wantRA: 4 * time.Second,
		},
		{
			name:    "transport error",
			base:    func(*http.Request) (*http.Response, error) { return nil, io.ErrUnexpectedEOF },
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name: "body read error",
			base: func(*http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(&errReader{data: "data: x", err: io.ErrUnexpectedEOF})}, nil
			},
			readBody: true, wantStatus: 200, wantErr: io.ErrUnexpectedEOF,
		},
		{
			name: "clean body EOF is not an error",
			base: func(*http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok"))}, nil
			},
			readBody: true, wantStatus: 200,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := NewObservingClient(&http.Client{Transport: tt.base})
			client.Transport.(*ObservingTransport).Now = func() time.Time { return date }
			ctx, obs := WithObservation(t.Context())
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://example.invalid/v1", nil)
			require.NoError(t, err)
			resp, err := client.Do(req)
			if err == nil {
				if tt.readBody {
					_, _ = io.ReadAll(resp.Body)
				}
				require.NoError(t, resp.Body.Close())
			}
			assert.Equal(t, 1, obs.Requests())
			assert.Equal(t, tt.wantStatus, obs.StatusCode())
			assert.Equal(t, tt.wantRA, obs.RetryAfter())
			if tt.wantErr != nil {
				assert.ErrorIs(t, obs.TransportErr(), tt.wantErr)
			} else {
				assert.NoError(t, obs.TransportErr())
			}
		})
	}
}

func TestObservingTransportPassesThroughWithoutObservation(t *testing.T) {
	called := 0
	client := NewObservingClient(&http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		called++
		return &http.Response{StatusCode: 204, Header: http.Header{}, Body: http.NoBody}, nil
	})})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://example.invalid/", nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, 1, called)
	assert.Nil(t, ObservationFrom(t.Context()))
}

func TestObservationAnnotate(t *testing.T) {
	base := errors.New("boom")
	var nilObs *Observation
	assert.Equal(t, base, nilObs.Annotate(base))

	_, obs := WithObservation(context.Background())
	assert.Equal(t, base, obs.Annotate(base), "no request observed")
	assert.NoError(t, obs.Annotate(nil))

	obs.recordRequest()
	obs.recordResponse(429, time.Second, nil)
	var he *HTTPError
	require.ErrorAs(t, obs.Annotate(base), &he)
	assert.Equal(t, &HTTPError{StatusCode: 429, RetryAfter: time.Second, Err: base}, he)
}

func TestNewObservingClientDefaultsToLangchaingoClient(t *testing.T) {
	c := NewObservingClient(nil)
	tr, ok := c.Transport.(*ObservingTransport)
	require.True(t, ok)
	assert.NotNil(t, tr.Base)
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, seed := range []string{"", "1", "120", "-1", "1e9", "Sun, 01 Jun 2025 12:00:30 GMT", "NaN", "99999999999999999999"} {
		f.Add(seed)
	}
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d := ParseRetryAfter(v, now)
		if d < 0 || d > 24*time.Hour {
			t.Fatalf("ParseRetryAfter(%q) = %v, want within [0, 24h]", v, d)
		}
	})
}
