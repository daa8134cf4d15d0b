package provider

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestProvidersAreTheFiveAdaptersAndAllHaveCapabilities(t *testing.T) {
	assert.Equal(t, []string{"openai", "ollama", "anthropic", "googleai", "mistral"}, Providers())
	for _, p := range Providers() {
		_, err := CapabilitiesOf(strings.ToUpper(p))
		assert.NoError(t, err, p)
	}
	_, err := CapabilitiesOf("bard")
	require.ErrorIs(t, err, ErrUnknownProvider)
	assert.Contains(t, err.Error(), "openai, ollama, anthropic, googleai, mistral")

	names := Providers()
	names[0] = "changed"
	assert.Equal(t, "openai", Providers()[0], "callers get a copy")
}

// bodyOf sends one call and returns the decoded request body, or the call's
// error.
func bodyOf(t *testing.T, wc wireCase, opts ...llms.CallOption) (map[string]any, error) {
	t.Helper()
	srv, m := wc.start(t)
	_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"), opts...)
	if err != nil {
		return nil, err
	}
	return srv.only(t).JSON(t), nil
}

// TestCapabilityTableMatchesWhatReachesTheWire derives each capability from
// the requests an adapter really sends and compares with CapabilitiesOf.
func TestCapabilityTableMatchesWhatReachesTheWire(t *testing.T) {
	for _, wc := range wireCases() {
		t.Run(wc.provider, func(t *testing.T) {
			want, err := CapabilitiesOf(wc.provider)
			require.NoError(t, err)

			plain, err := bodyOf(t, wc)
			require.NoError(t, err)
			raw, err := json.Marshal(plain)
			require.NoError(t, err)
			require.NotContains(t, string(raw), "STOPMARK")

			withStop, err := bodyOf(t, wc, llms.WithStopWords([]string{"STOPMARK"}))
			require.NoError(t, err)
			raw, err = json.Marshal(withStop)
			require.NoError(t, err)
			assert.Equal(t, want.StopWords, strings.Contains(string(raw), "STOPMARK"), "StopWords")

			withJSON, err := bodyOf(t, wc, llms.WithJSONMode())
			require.NoError(t, err)
			assert.Equal(t, want.JSONMode, !reflect.DeepEqual(plain, withJSON), "JSONMode")

			withTools, err := bodyOf(t, wc, llms.WithTools([]llms.Tool{weatherTool}))
			if errors.Is(err, ErrUnsupported) {
				assert.False(t, want.ToolCalls, "ToolCalls")
			} else {
				require.NoError(t, err)
				raw, err = json.Marshal(withTools)
				require.NoError(t, err)
				assert.Equal(t, want.ToolCalls, strings.Contains(string(raw), "get_weather"), "ToolCalls")
			}

			_, m := wc.start(t)
			var got chunkCollector
			resp, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"),
				llms.WithStreamingFunc(got.fn))
			require.NoError(t, err)
			streamed := got.nonEmpty() > 1 && got.joined() == resp.Choices[0].Content
			assert.Equal(t, want.Streaming, streamed, "Streaming")
			assert.NotEmpty(t, want.Notes)
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("MISTRAL_API_KEY", "k")
	tests := []struct {
		name string
		cfg  Config
		want error
		text string
	}{
		{"unknown provider", Config{Provider: "palm", Model: "m"}, ErrUnknownProvider, `"palm"`},
		{"empty provider", Config{Model: "m"}, ErrUnknownProvider, "use one of"},
		{"no model", Config{Provider: "openai"}, ErrInvalidConfig, "model is required"},
		{"negative temperature", Config{Provider: "openai", Model: "m", Temperature: ptr(-0.1)}, ErrInvalidConfig, "temperature"},
		{"negative max tokens", Config{Provider: "openai", Model: "m", MaxTokens: -1}, ErrInvalidConfig, "max tokens"},
		{"negative timeout", Config{Provider: "openai", Model: "m", Timeout: -1}, ErrInvalidConfig, "timeout"},
		{"base url without scheme", Config{Provider: "ollama", Model: "m", BaseURL: "localhost:11434"}, ErrInvalidConfig, "absolute http(s) URL"},
		{"unparsable base url", Config{Provider: "ollama", Model: "m", BaseURL: "http://[::1"}, ErrInvalidConfig, "absolute http(s) URL"},
		{"base url with query", Config{Provider: "openai", Model: "m", BaseURL: "http://h/v1?key=x"}, ErrInvalidConfig, "query"},
		{"mistral base url with path", Config{Provider: "mistral", Model: "m", BaseURL: "https://proxy.example/mistral"}, ErrInvalidConfig, "path"},
		{"mistral with http client", Config{Provider: "mistral", Model: "m", HTTPClient: &http.Client{}}, ErrUnsupported, "HTTPClient"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(context.Background(), tc.cfg)
			require.ErrorIs(t, err, tc.want)
			assert.Nil(t, m)
			assert.Contains(t, err.Error(), tc.text)
		})
	}
}

func TestNewBadOpenAIBaseURLFromEnvironmentNamesTheVariable(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OPENAI_BASE_URL", "api.example.com/v1")

	_, err := New(context.Background(), Config{Provider: "openai", Model: "m"})
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "$OPENAI_BASE_URL")
}

func TestNewMissingKeyNamesTheVariable(t *testing.T) {
	for _, name := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY",
		"MISTRAL_API_KEY", "TEST_CUSTOM_KEY"} {
		t.Setenv(name, "")
	}
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Provider: "openai", Model: "m"}, "OPENAI_API_KEY"},
		{Config{Provider: "openai", Model: "m", BaseURL: "https://api.deepseek.com/v1"}, "OPENAI_API_KEY"},
		{Config{Provider: "anthropic", Model: "m"}, "ANTHROPIC_API_KEY"},
		{Config{Provider: "googleai", Model: "m"}, "GOOGLE_API_KEY or GEMINI_API_KEY"},
		{Config{Provider: "mistral", Model: "m"}, "MISTRAL_API_KEY"},
		{Config{Provider: "anthropic", Model: "m", APIKeyEnv: "TEST_CUSTOM_KEY"}, "TEST_CUSTOM_KEY"},
		{Config{Provider: "ollama", Model: "m", APIKeyEnv: "TEST_CUSTOM_KEY"}, "TEST_CUSTOM_KEY"},
		{Config{Provider: "openai", Model: "m", BaseURL: "http://127.0.0.1:8000/v1", APIKeyEnv: "TEST_CUSTOM_KEY"},
			"TEST_CUSTOM_KEY"},
	}
	for _, tc := range tests {
		t.Run(tc.cfg.Provider+"/"+tc.want, func(t *testing.T) {
			_, err := New(context.Background(), tc.cfg)
			require.ErrorIs(t, err, ErrMissingKey)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestNewReadsGeminiKeyWhenGoogleKeyIsUnset(t *testing.T) {
	srv := newFakeServer(t, geminiReply)
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", testSecret)
	m, err := New(context.Background(), geminiConfig(srv.URL))
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.(interface{ Close() error }).Close() })

	_, err = m.GenerateContent(context.Background(),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Hi")})
	require.NoError(t, err)
	assert.Equal(t, testSecret, srv.only(t).Header.Get("x-goog-api-key"))
}

func TestCallOptionsOverrideConfigDefaults(t *testing.T) {
	srv, m := openAIWire.start(t, tuned(0.9, 100))

	_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"),
		llms.WithTemperature(0.1), llms.WithMaxTokens(7))
	require.NoError(t, err)

	body := srv.only(t).JSON(t)
	assert.InDelta(t, 0.1, body["temperature"], 1e-9)
	assert.EqualValues(t, 7, body["max_tokens"])
}

func TestCallGoesThroughTheWrapper(t *testing.T) {
	srv, m := ollamaKeyless.start(t, func(c *Config) { c.MaxTokens = 33 })

	caller, ok := m.(interface {
		Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error)
	})
	require.True(t, ok)
	out, err := caller.Call(context.Background(), "Capital of France?")
	require.NoError(t, err)
	assert.Equal(t, "Paris is the capital.", out)
	assert.EqualValues(t, 33, path(t, srv.only(t).JSON(t), "options", "num_predict"))
}

func TestTimeoutBoundsEachRequest(t *testing.T) {
	release := make(chan struct{})
	_, m := ollamaKeyless.serve(t, func(w http.ResponseWriter, r *http.Request, _ int, _ []byte) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}, func(c *Config) { c.Timeout = 50 * time.Millisecond })
	t.Cleanup(func() { close(release) })

	_, err := m.GenerateContent(context.Background(), conversation("Be brief.", "Hi"))
	var netErr net.Error
	require.ErrorAs(t, err, &netErr)
	assert.True(t, netErr.Timeout(), err.Error())
}
