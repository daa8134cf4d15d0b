package provider

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

	sdkmistral "github.com/gage-technologies/mistral-go"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/googleai"
	"github.com/tmc/langchaingo/llms/mistral"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
	"google.golang.org/api/option"
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

	defaultOpenAIURL = "https://api.openai.com/v1"
	openAIHost       = "api.openai.com"
	// localPlaceholderKey is sent to local OpenAI-compatible servers when no
	// key is configured: langchaingo's openai client refuses an empty key.
	localPlaceholderKey = "sk-local-no-key-required"
	// legacyMaxTokensKey is langchaingo's openai metadata switch that sends
	// max_tokens instead of max_completion_tokens.
	legacyMaxTokensKey = "openai:use_legacy_max_tokens"
)

// resolved is a validated Config with every default filled in.
type resolved struct {
	provider string
	model    string
	baseURL  string // "" means the adapter's built-in default
	keyEnv   string // variable the key came from; "" when none is used
	key      string // value sent to the provider
	secret   string // value redacted from errors ("" for placeholders)
	timeout  time.Duration
	client   *http.Client // caller's base client, may be nil
	defaults []llms.CallOption
	// promptCache sets Anthropic prompt-cache breakpoints (Config.PromptCache).
	promptCache bool
	// embedModel is the embedding model; "" when the provider has none.
	embedModel string
}

// New builds the model for cfg. It fails with ErrUnknownProvider,
// ErrInvalidConfig, ErrMissingKey or ErrUnsupported (mistral with an
// HTTPClient). Construction does no network I/O: googleai's SDK prepares
// but does not dial its connections, and gets ctx for that. The returned
// model implements io.Closer; call Close when done (it releases googleai's
// connections and is a no-op elsewhere).
func New(ctx context.Context, cfg Config) (llms.Model, error) {
	r, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	m := &model{
		name:     r.provider,
		defaults: r.defaults,
		secret:   r.secret,
		keyEnv:   r.keyEnv,

		embedModel: r.embedModel,
	}
	switch r.provider {
	case OpenAI:
		err = m.buildOpenAI(r)
	case Ollama:
		err = m.buildOllama(r)
	case Anthropic:
		err = m.buildAnthropic(r)
	case GoogleAI:
		err = m.buildGoogleAI(ctx, r)
	case Mistral:
		err = m.buildMistral(r)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: creating client: %w", r.provider, redact(err, r.secret))
	}
	return m, nil
}

func (m *model) buildOpenAI(r resolved) error {
	llm, err := openai.New(
		openai.WithToken(r.key),
		openai.WithModel(r.model),
		openai.WithBaseURL(r.baseURL),
		openai.WithHTTPClient(newHTTPClient(r.client, r.timeout, "", "")),
		openai.WithEmbeddingModel(r.embedModel),
	)
	if err != nil {
		return err
	}
	m.inner = llm
	m.embed = llm
	m.splitRoles = []llms.ChatMessageType{llms.ChatMessageTypeTool}
	if u, err := url.Parse(r.baseURL); err == nil && !strings.EqualFold(u.Hostname(), openAIHost) {
		m.legacyMaxTokens = true
	}
	return nil
}

func (m *model) buildOllama(r resolved) error {
	header, value := "", ""
	if r.key != "" {
		header, value = "Authorization", "Bearer "+r.key
	}
	hc := newHTTPClient(r.client, r.timeout, header, value)
	llm, err := ollama.New(
		ollama.WithModel(r.model),
		// BaseURL was parsed in resolve: langchaingo's WithServerURL calls
		// log.Fatal on an unparsable URL.
		ollama.WithServerURL(r.baseURL),
		ollama.WithHTTPClient(hc),
	)
	if err != nil {
		return err
	}
	// The adapter embeds with its chat model: embeddings get a client of
	// their own, for the embedding model.
	embed, err := ollama.New(ollama.WithModel(r.embedModel), ollama.WithServerURL(r.baseURL), ollama.WithHTTPClient(hc))
	if err != nil {
		return err
	}
	m.inner = llm
	m.embed = embed
	m.rejectTools = true
	m.baseURL = r.baseURL
	return nil
}

func (m *model) buildAnthropic(r resolved) error {
	hc := newHTTPClient(r.client, r.timeout, "", "")
	if r.promptCache {
		hc.Transport = &cacheTransport{base: hc.Transport}
	}
	opts := []anthropic.Option{
		anthropic.WithToken(r.key),
		anthropic.WithModel(r.model),
		anthropic.WithHTTPClient(hc),
	}
	if r.baseURL != "" {
		opts = append(opts, anthropic.WithBaseURL(r.baseURL))
	}
	llm, err := anthropic.New(opts...)
	if err != nil {
		return err
	}
	m.inner = llm
	m.splitRoles = []llms.ChatMessageType{llms.ChatMessageTypeAI, llms.ChatMessageTypeTool}
	return nil
}

// googleAPIKeyHeader carries the key for the Gemini REST API. Google's own
// transport would put it in the "key" query parameter, but it is bypassed
// once a custom HTTP client is supplied; the header also keeps the key out
// of URLs, and so out of *url.Error messages and proxy logs.
const googleAPIKeyHeader = "x-goog-api-key"

func (m *model) buildGoogleAI(ctx context.Context, r resolved) error {
	opts := []googleai.Option{
		googleai.WithDefaultModel(r.model),
		// The REST clients use this HTTP client, which adds the key header.
		googleai.WithHTTPClient(newHTTPClient(r.client, r.timeout, googleAPIKeyHeader, r.key)),
		// The SDK's gRPC cache client ignores the HTTP client and needs the
		// key option to build without searching for Google Cloud
		// credentials; it is never dialled by GenerateContent.
		googleai.WithAPIKey(r.key),
		googleai.WithDefaultEmbeddingModel(r.embedModel),
	}
	if r.baseURL != "" {
		endpoint := option.WithEndpoint(r.baseURL)
		opts = append(opts, func(o *googleai.Options) {
			o.ClientOptions = append(o.ClientOptions, endpoint)
		})
	}
	llm, err := googleai.New(ctx, opts...)
	if err != nil {
		return err
	}
	m.inner = llm
	m.embed = llm
	m.closer = llm
	return nil
}

func (m *model) buildMistral(r resolved) error {
	endpoint := r.baseURL
	if endpoint == "" {
		endpoint = sdkmistral.Endpoint
	}
	llm, err := mistral.New(
		mistral.WithAPIKey(r.key),
		mistral.WithModel(r.model),
		mistral.WithEndpoint(endpoint),
		mistral.WithTimeout(r.timeout),
		// mistral-go v1.1.0 re-sends a drained request body on retry, which
		// turns every 429/5xx into a misleading "ContentLength ... with Body
		// length 0" error. One attempt surfaces the real status.
		mistral.WithMaxRetries(1),
	)
	if err != nil {
		return err
	}
	m.inner = llm
	m.embed = llm
	return nil
}

// resolve validates cfg and fills in defaults.
func resolve(cfg Config) (resolved, error) {
	r := resolved{
		provider:    normalizeProvider(cfg.Provider),
		model:       strings.TrimSpace(cfg.Model),
		client:      cfg.HTTPClient,
		promptCache: cfg.PromptCache == nil || *cfg.PromptCache,
	}
	if _, err := CapabilitiesOf(r.provider); err != nil {
		return r, err
	}
	if r.model == "" {
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
	r.timeout = cfg.Timeout
	if r.timeout == 0 && cfg.HTTPClient != nil {
		r.timeout = cfg.HTTPClient.Timeout
	}
	if r.timeout == 0 {
		r.timeout = DefaultTimeout
	}
	if r.provider == Mistral && cfg.HTTPClient != nil {
		return r, fmt.Errorf("%w: mistral: the mistral-go SDK builds its own HTTP client; leave HTTPClient nil",
			ErrUnsupported)
	}

	base, err := resolveBaseURL(r.provider, cfg.BaseURL)
	if err != nil {
		return r, err
	}
	r.baseURL = base

	if r.embedModel, err = resolveEmbeddingModel(r.provider, cfg.EmbeddingModel); err != nil {
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
			r.keyEnv, r.key, r.secret = name, v, v
			return nil
		}
	}
	if r.provider == OpenAI && keyEnv == "" && isLocalURL(r.baseURL) {
		r.key = localPlaceholderKey
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
