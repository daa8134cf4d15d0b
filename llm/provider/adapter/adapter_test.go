package adapter

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// testSecret is an API key whose text is distinctive, so that an
// assertion that it never appears in an error is meaningful.
const testSecret = "sk-TESTSECRET-4f9c2e7a1b"

func TestRedactKeepsIsButHidesTheOriginal(t *testing.T) {
	orig := fmt.Errorf("call with key %s: %w", testSecret, context.DeadlineExceeded)

	err := redact(orig, testSecret)

	assert.Equal(t, "call with key "+RedactedMark+": context deadline exceeded", err.Error())
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Nil(t, errors.Unwrap(err), "the unredacted error must not be reachable")
	clean := errors.New("no key here")
	assert.Same(t, clean, redact(clean, testSecret))
	assert.Same(t, orig, redact(orig, ""), "nothing to redact without a secret")
}

func TestIsLocalURL(t *testing.T) {
	tests := []struct {
		url  string
		want bool
	}{
		{"http://localhost:11434/v1", true},
		{"http://LOCALHOST:8000/v1", true},
		{"http://vllm.localhost/v1", true},
		{"http://127.0.0.1:8080/v1", true},
		{"http://[::1]:1234/v1", true},
		{"http://10.1.2.3:8000/v1", true},
		{"http://172.16.0.5/v1", true},
		{"http://192.168.1.20:1234/v1", true},
		{"http://[fd00::5]:8000/v1", true},
		{"http://169.254.1.1/v1", true},
		{"https://api.openai.com/v1", false},
		{"https://api.deepseek.com/v1", false},
		{"http://8.8.8.8/v1", false},
		{"http://172.32.0.1/v1", false},
		{"http://ollama:11434/v1", false},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			assert.Equal(t, tc.want, isLocalURL(tc.url))
		})
	}
}

func TestNewBuildsOnlyWithAGivenAdapter(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", testSecret)
	cfg := Config{Provider: OpenAI, Model: "m"}
	_, err := New(context.Background(), cfg)
	assert.ErrorIs(t, err, ErrUnknownProvider)
	assert.ErrorContains(t, err, "not registered")

	var got Settings
	fake := Adapter{Name: OpenAI, Build: func(_ context.Context, s Settings) (Client, error) {
		got = s
		return Client{Chat: nil}, nil
	}}
	_, err = New(context.Background(), cfg, fake)
	assert.ErrorIs(t, err, ErrInvalidConfig, "an adapter must build a chat client")
	assert.Equal(t, "m", got.Model)
	assert.Equal(t, testSecret, got.Key)
	assert.Equal(t, defaultOpenAIURL, got.BaseURL)
	assert.Equal(t, DefaultTimeout, got.Timeout)

	failing := Adapter{Name: OpenAI, Build: func(context.Context, Settings) (Client, error) {
		return Client{}, fmt.Errorf("bad key %s", testSecret)
	}}
	_, err = New(context.Background(), cfg, failing)
	assert.ErrorContains(t, err, RedactedMark, "a build error is redacted")
	assert.NotContains(t, err.Error(), testSecret)
}
