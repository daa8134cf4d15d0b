// Package adapter holds what the real model providers share: their
// declarative Config, its validation and defaults (API keys from the
// environment, base URLs, embedding models), the HTTP transport that reads
// each response's status, the wrapper that turns every adapter's errors
// into redacted, classified ones (*StatusError) and smooths over the
// adapters' differences, and each adapter's capabilities. What talks to a
// provider, a langchaingo adapter, is an Adapter, built by the
// provider's own package (llm/provider/openai, anthropic, ollama,
// googleai, mistral), so that a program compiles only the providers it
// names; package llm/provider has them all (provider.All). The package
// documentation of llm/provider describes the behaviour in full.
package adapter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"
)

// Config selects and configures a provider. The zero value of every field
// except Provider and Model means "use the default" stated on the field.
type Config struct {
	// Provider is the adapter: "openai", "ollama", "anthropic", "googleai" or
	// "mistral" (case-insensitive). Required; no default.
	Provider string

	// Model is the provider's model name, e.g. "gpt-4o-mini", "llama3.1:8b",
	// "claude-3-5-haiku-latest", "gemini-2.0-flash", "mistral-small-latest".
	// Required; no default (langchaingo's built-in defaults are stale).
	Model string

	// BaseURL is the provider endpoint, an absolute http(s) URL.
	//   - openai: the API root including /v1; also any OpenAI-compatible
	//     server: DeepSeek, vLLM, llama.cpp server, LM Studio, Ollama's /v1.
	//     Default: $OPENAI_BASE_URL, else https://api.openai.com/v1.
	//   - ollama: the server URL. Default http://localhost:11434.
	//   - anthropic: API root including /v1. Default https://api.anthropic.com/v1.
	//   - googleai: API root without version. Default
	//     https://generativelanguage.googleapis.com.
	//   - mistral: scheme and host only (the SDK replaces any path).
	//     Default https://api.mistral.ai.
	// Override anthropic, googleai and mistral only for tests and proxies.
	BaseURL string

	// APIKeyEnv names the environment variable holding the API key; the key
	// itself is never part of the config. Defaults: openai OPENAI_API_KEY,
	// anthropic ANTHROPIC_API_KEY, googleai GOOGLE_API_KEY (then
	// GEMINI_API_KEY), mistral MISTRAL_API_KEY. ollama takes no key by
	// default; when APIKeyEnv is set the key is sent as a Bearer token (for
	// an authenticating proxy or ollama.com). openai against a local
	// BaseURL (localhost, a loopback, private or link-local IP address) with
	// APIKeyEnv unset and no OPENAI_API_KEY sends a placeholder key, since
	// such servers need none. An APIKeyEnv that is set must name a
	// non-empty variable.
	APIKeyEnv string

	// Temperature is the sampling temperature sent with every call unless a
	// call passes llms.WithTemperature. Nil means the adapter's default:
	// openai 0, ollama 0, anthropic 0 (all always sent), googleai 0.5,
	// mistral 1. Must not be negative.
	Temperature *float64

	// MaxTokens caps generated tokens per call unless a call passes
	// llms.WithMaxTokens. Zero means the adapter's default: openai and
	// ollama send none (server default), anthropic 2048, googleai 2048,
	// mistral 4000. Must not be negative.
	MaxTokens int

	// Timeout bounds each HTTP request, including reading a streamed body.
	// Zero means HTTPClient.Timeout when HTTPClient is set and has one, else
	// 120s. Must not be negative.
	Timeout time.Duration

	// HTTPClient is the base client for requests (tests point it at a fake
	// server or add a proxy). It is copied, never modified; its Transport is
	// wrapped. Default: a client using http.DefaultTransport. mistral cannot
	// take one (its SDK builds its own client) and fails with ErrUnsupported.
	HTTPClient *http.Client

	// PromptCache sets Anthropic prompt-cache breakpoints (cache_control
	// "ephemeral") on the stable prefix of each request: the system prompt
	// and, in a conversation with assistant turns, the last message before
	// the newest turn and the last message, each only where the request up
	// to it is long enough to be cached (PromptCacheMinTokens). A cached
	// prefix is then read at a tenth of the input price by the next calls
	// within five minutes (the next step of a ReAct loop, the next task of
	// a node with the same system prompt); writing it costs 1.25 times the
	// input price once. Nil means the default: on. Other providers ignore
	// it (OpenAI caches long prefixes by itself; the replies of both say
	// how many prompt tokens came from the cache).
	PromptCache *bool

	// EmbeddingModel is the model that creates embeddings (the model's
	// EmbeddingClient), sent to the same endpoint with the same key and
	// HTTP client as chat calls. Empty means the provider's default
	// (DefaultEmbeddingModel): openai "text-embedding-3-small", ollama
	// "nomic-embed-text", googleai "text-embedding-004", mistral
	// "mistral-embed" (its adapter takes no other). anthropic offers no
	// embeddings and ignores it.
	EmbeddingModel string
}

// Default endpoints and limits.
const (
	// DefaultTimeout is the HTTP timeout used when Config.Timeout is zero.
	DefaultTimeout = 120 * time.Second
	// DefaultOllamaURL is the ollama server used when Config.BaseURL is empty.
	DefaultOllamaURL = "http://localhost:11434"

	// LocalPlaceholderKey is sent to local OpenAI-compatible servers when
	// no key is configured: langchaingo's openai client refuses an empty
	// key.
	LocalPlaceholderKey = "sk-local-no-key-required"

	defaultOpenAIURL = "https://api.openai.com/v1"
	// legacyMaxTokensKey is langchaingo's openai metadata switch that sends
	// max_tokens instead of max_completion_tokens.
	legacyMaxTokensKey = "openai:use_legacy_max_tokens"
)

// Adapter connects a provider to the langchaingo adapter that talks to it.
// The provider packages (openai.Adapter(), ...) make them.
type Adapter struct {
	// Name is the provider's name, one of Providers().
	Name string
	// Build builds the langchaingo client from the validated settings. It
	// does no network I/O.
	Build func(ctx context.Context, s Settings) (Client, error)
}

// Settings are a Config validated, with every default filled in, as an
// Adapter's Build gets them.
type Settings struct {
	// Model is the provider's model name.
	Model string
	// BaseURL is the endpoint without a trailing slash; "" keeps the
	// langchaingo adapter's default.
	BaseURL string
	// Key is the API key to send; "" when the provider takes none.
	Key string
	// Timeout bounds each HTTP request.
	Timeout time.Duration
	// EmbeddingModel is the embedding model; "" when the provider offers
	// no embeddings.
	EmbeddingModel string
	// PromptCache asks for Anthropic prompt-cache breakpoints.
	PromptCache bool
	// client is Config.HTTPClient, the base of HTTPClient; may be nil.
	client *http.Client
	// provider is the provider's name, which picks HTTPClient's splitter
	// of long stream lines.
	provider string
}

// HTTPClient returns the client an adapter sends its requests through: a
// copy of Config.HTTPClient (or a new client) with the settings' Timeout,
// whose transport records each response's status and Retry-After for the
// errors of New's model and, when header is not empty, sets header to
// value on every request (for adapters that cannot send a key
// themselves). For openai and anthropic it also rewrites a streamed
// reply's lines that are too long for langchaingo's stream readers
// (over 64 KiB, which fail the call) as shorter events of the same reply,
// each string cut to the call's reply limit (middleware.LongLineTransport).
func (s Settings) HTTPClient(header, value string) *http.Client {
	return newHTTPClient(s.client, s.Timeout, header, value, splitterFor(s.provider))
}

// Client is what an Adapter built: the langchaingo client, and what New's
// model must do around it.
type Client struct {
	// Chat answers the model calls. Required.
	Chat llms.Model
	// Embed creates embeddings with Settings.EmbeddingModel; nil when the
	// provider offers none.
	Embed embeddings.EmbedderClient
	// Closer releases the client's connections; nil when there are none.
	Closer io.Closer
	// SplitRoles lists the roles whose multi-part messages are sent as one
	// message per part, because the adapter mishandles them.
	SplitRoles []llms.ChatMessageType
	// RejectTools fails calls that carry tools or tool messages with
	// ErrUnsupported: the adapter has no tool calling.
	RejectTools bool
	// LegacyMaxTokens sends max_tokens instead of max_completion_tokens
	// (openai against an OpenAI-compatible server).
	LegacyMaxTokens bool
}

// resolved is a validated Config with every default filled in.
type resolved struct {
	Settings
	provider string
	keyEnv   string // variable the key came from; "" when none is used
	secret   string // value redacted from errors ("" for placeholders)
	// baseURLSource is where BaseURL came from: "llm.base_url",
	// "$OPENAI_BASE_URL", or "" for the provider's default.
	baseURLSource string
	defaults      []llms.CallOption
}

// New builds the model for cfg with the first of adapters whose Name is
// cfg.Provider (case-insensitively). It fails with ErrUnknownProvider (a provider that is
// not known, or whose adapter is not among adapters), ErrInvalidConfig,
// ErrMissingKey or ErrUnsupported (mistral with an HTTPClient).
// Construction does no network I/O. The returned model implements
// io.Closer; call Close when done (it releases googleai's connections and
// is a no-op elsewhere).
func New(ctx context.Context, cfg Config, adapters ...Adapter) (llms.Model, error) {
	r, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	var a *Adapter
	names := make([]string, 0, len(adapters))
	for i := range adapters {
		names = append(names, adapters[i].Name)
		if adapters[i].Name == r.provider && a == nil {
			a = &adapters[i]
		}
	}
	if a == nil || a.Build == nil {
		return nil, fmt.Errorf("%w %q: its adapter is not registered (registered: %s)", ErrUnknownProvider, r.provider, strings.Join(names, ", "))
	}
	c, err := a.Build(ctx, r.Settings)
	if err == nil && c.Chat == nil {
		err = fmt.Errorf("%w: the adapter built no chat client", ErrInvalidConfig)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: creating client: %w", r.provider, redact(err, r.secret))
	}
	m := &model{
		name:     r.provider,
		inner:    c.Chat,
		defaults: r.defaults,
		secret:   r.secret,
		keyEnv:   r.keyEnv,

		legacyMaxTokens: c.LegacyMaxTokens,
		rejectTools:     c.RejectTools,
		splitRoles:      c.SplitRoles,
		closer:          c.Closer,
	}
	m.baseURL, m.baseURLSource = r.BaseURL, r.baseURLSource
	if c.Embed != nil {
		m.embed, m.embedModel = c.Embed, r.EmbeddingModel
	}
	return m, nil
}

// resolve validates cfg and fills in defaults.
func resolve(cfg Config) (resolved, error) {
	r := resolved{
		provider: normalizeProvider(cfg.Provider),
		Settings: Settings{
			Model:       strings.TrimSpace(cfg.Model),
			client:      cfg.HTTPClient,
			PromptCache: cfg.PromptCache == nil || *cfg.PromptCache,
		},
	}
	r.Settings.provider = r.provider
	if _, err := CapabilitiesOf(r.provider); err != nil {
		return r, err
	}
	if r.Model == "" {
		return r, fmt.Errorf("%w: %s: model is required", ErrInvalidConfig, r.provider)
	}
	if cfg.Temperature != nil && *cfg.Temperature < 0 {
		return r, fmt.Errorf("%w: %s: temperature %v is negative", ErrInvalidConfig, r.provider, *cfg.Temperature)
	}
	if cfg.MaxTokens < 0 {
		return r, fmt.Errorf("%w: %s: max tokens %d is negative", ErrInvalidConfig, r.provider, cfg.MaxTokens)
	}
	if cfg.Timeout < 0 {
		return r, fmt.Errorf("%w: %s: timeout %s is negative", ErrInvalidConfig, r.provider, cfg.Timeout)
	}
	r.Timeout = cfg.Timeout
	if r.Timeout == 0 && cfg.HTTPClient != nil {
		r.Timeout = cfg.HTTPClient.Timeout
	}
	if r.Timeout == 0 {
		r.Timeout = DefaultTimeout
	}
	if r.provider == Mistral && cfg.HTTPClient != nil {
		return r, fmt.Errorf("%w: mistral: the mistral-go SDK builds its own HTTP client; leave HTTPClient nil",
			ErrUnsupported)
	}

	base, err := resolveBaseURL(r.provider, cfg.BaseURL)
	if err != nil {
		return r, err
	}
	r.BaseURL = base
	switch {
	case strings.TrimSpace(cfg.BaseURL) != "":
		r.baseURLSource = "llm.base_url"
	case r.provider == OpenAI && strings.TrimSpace(os.Getenv("OPENAI_BASE_URL")) != "":
		r.baseURLSource = "$OPENAI_BASE_URL"
	}

	if r.EmbeddingModel, err = resolveEmbeddingModel(r.provider, cfg.EmbeddingModel); err != nil {
		return r, err
	}

	if err := resolveKey(&r, strings.TrimSpace(cfg.APIKeyEnv)); err != nil {
		return r, err
	}

	if cfg.Temperature != nil {
		r.defaults = append(r.defaults, llms.WithTemperature(*cfg.Temperature))
	}
	if cfg.MaxTokens > 0 {
		r.defaults = append(r.defaults, llms.WithMaxTokens(cfg.MaxTokens))
	}
	return r, nil
}

// resolveBaseURL validates raw (or the provider's environment default) and
// returns it without a trailing slash; "" keeps the adapter's default.
func resolveBaseURL(provider, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	source := "base_url"
	if raw == "" {
		switch provider {
		case OpenAI:
			if env := strings.TrimSpace(os.Getenv("OPENAI_BASE_URL")); env != "" {
				raw, source = env, "$OPENAI_BASE_URL"
			} else {
				raw = defaultOpenAIURL
			}
		case Ollama:
			raw = DefaultOllamaURL
		default:
			return "", nil
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: %s: %s %q is not an absolute http(s) URL", ErrInvalidConfig, provider, source, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: %s: %s %q must not have a query or fragment", ErrInvalidConfig, provider, source, raw)
	}
	if provider == Mistral && strings.Trim(u.Path, "/") != "" {
		return "", fmt.Errorf("%w: mistral: base_url %q has a path, which the mistral-go SDK would drop; "+
			"give scheme and host only", ErrInvalidConfig, raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

// resolveKey reads the API key from the environment into r.
func resolveKey(r *resolved, keyEnv string) error {
	candidates := []string{keyEnv}
	if keyEnv == "" {
		switch r.provider {
		case OpenAI:
			candidates = []string{"OPENAI_API_KEY"}
		case Anthropic:
			candidates = []string{"ANTHROPIC_API_KEY"}
		case GoogleAI:
			candidates = []string{"GOOGLE_API_KEY", "GEMINI_API_KEY"}
		case Mistral:
			candidates = []string{"MISTRAL_API_KEY"}
		case Ollama:
			return nil // no key unless APIKeyEnv asks for one
		}
	}
	for _, name := range candidates {
		if v := strings.TrimSpace(os.Getenv(name)); v != "" {
			r.keyEnv, r.Key, r.secret = name, v, v
			return nil
		}
	}
	if r.provider == OpenAI && keyEnv == "" && isLocalURL(r.BaseURL) {
		r.Key = LocalPlaceholderKey
		return nil
	}
	return fmt.Errorf("%w: %s: set environment variable %s", ErrMissingKey, r.provider,
		strings.Join(candidates, " or "))
}

// isLocalURL reports whether raw points at this machine or a private
// network: localhost (or *.localhost), a loopback, private or link-local
// IP literal. Host names are not resolved.
func isLocalURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	return addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast()
}

// Compile-time checks.
var (
	_ llms.Model = (*model)(nil)
	_ io.Closer  = (*model)(nil)
)
