package provider

import (
	"context"

	"github.com/planner-engine/planner/llm/provider/adapter"
	"github.com/planner-engine/planner/llm/provider/anthropic"
	"github.com/planner-engine/planner/llm/provider/googleai"
	"github.com/planner-engine/planner/llm/provider/mistral"
	"github.com/planner-engine/planner/llm/provider/ollama"
	"github.com/planner-engine/planner/llm/provider/openai"
	"github.com/tmc/langchaingo/llms"
)

// Config selects and configures a provider; see adapter.Config.
type Config = adapter.Config

// Capabilities says which langchaingo call options an adapter really turns
// into request fields; see adapter.Capabilities.
type Capabilities = adapter.Capabilities

// StatusError reports that the provider answered a model call with a
// non-2xx HTTP status; see adapter.StatusError.
type StatusError = adapter.StatusError

// UnreachableError reports that a model call reached no server at the
// provider's address, and says which server to start or which setting to
// fix; see adapter.UnreachableError.
type UnreachableError = adapter.UnreachableError

// Provider names accepted in Config.Provider.
const (
	OpenAI    = adapter.OpenAI
	Ollama    = adapter.Ollama
	Anthropic = adapter.Anthropic
	GoogleAI  = adapter.GoogleAI
	Mistral   = adapter.Mistral
)

// Default endpoints and limits.
const (
	// DefaultTimeout is the HTTP timeout used when Config.Timeout is zero.
	DefaultTimeout = adapter.DefaultTimeout
	// DefaultOllamaURL is the ollama server used when Config.BaseURL is empty.
	DefaultOllamaURL = adapter.DefaultOllamaURL
	// PromptCacheMinTokens is the shortest prefix, in estimated tokens,
	// that an Anthropic prompt-cache breakpoint is set after.
	PromptCacheMinTokens = anthropic.PromptCacheMinTokens
)

// Sentinel errors, those of package adapter. Test for them with errors.Is.
var (
	// ErrUnknownProvider means Config.Provider names no known adapter.
	ErrUnknownProvider = adapter.ErrUnknownProvider
	// ErrMissingKey means the environment variable that should hold the API
	// key is unset or empty. The message names the variable, never a value.
	ErrMissingKey = adapter.ErrMissingKey
	// ErrUnsupported means the adapter cannot do what the call or the config
	// asks (for example tool calls through the native Ollama adapter).
	ErrUnsupported = adapter.ErrUnsupported
	// ErrInvalidConfig means a Config field has a value no adapter accepts.
	ErrInvalidConfig = adapter.ErrInvalidConfig
	// ErrAuth matches a *StatusError with HTTP status 401 or 403.
	ErrAuth = adapter.ErrAuth
	// ErrRateLimited matches a *StatusError with HTTP status 429.
	ErrRateLimited = adapter.ErrRateLimited
	// ErrServer matches a *StatusError with an HTTP status of 500 or above.
	ErrServer = adapter.ErrServer
	// ErrBadRequest matches a *StatusError with any other 4xx status.
	ErrBadRequest = adapter.ErrBadRequest
	// ErrUnreachable matches an *UnreachableError: no server answered at
	// the provider's address (middleware.ErrUnreachable).
	ErrUnreachable = adapter.ErrUnreachable
)

// All returns the adapters of every real provider, in Providers order:
// what the command line registers (planner.WithProviders(provider.All()...)).
// A program that needs only some imports their packages instead
// (llm/provider/openai, ...), and compiles only those: googleai brings
// Google's SDK, gRPC and auth libraries.
func All() []adapter.Adapter {
	return []adapter.Adapter{openai.Adapter(), ollama.Adapter(), anthropic.Adapter(), googleai.Adapter(), mistral.Adapter()}
}

// New builds the model for cfg with every real provider's adapter (All).
// It fails with ErrUnknownProvider, ErrInvalidConfig, ErrMissingKey or
// ErrUnsupported (mistral with an HTTPClient). Construction does no
// network I/O: googleai's SDK prepares but does not dial its connections,
// and gets ctx for that. The returned model implements io.Closer; call
// Close when done (it releases googleai's connections and is a no-op
// elsewhere).
func New(ctx context.Context, cfg Config) (llms.Model, error) {
	return adapter.New(ctx, cfg, All()...)
}

// Providers returns the accepted provider names, in a fixed order.
func Providers() []string { return adapter.Providers() }

// CapabilitiesOf returns what the named adapter supports in langchaingo
// v0.1.14. The name is matched case-insensitively. An unknown name yields an
// error wrapping ErrUnknownProvider.
func CapabilitiesOf(provider string) (Capabilities, error) { return adapter.CapabilitiesOf(provider) }

// DefaultEmbeddingModel returns the embedding model used for provider when
// Config.EmbeddingModel is empty; see adapter.DefaultEmbeddingModel.
func DefaultEmbeddingModel(provider string) (model string, ok bool) {
	return adapter.DefaultEmbeddingModel(provider)
}
