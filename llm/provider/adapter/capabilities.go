package adapter

import (
	"fmt"
	"strings"
)

// Capabilities says which langchaingo call options an adapter really turns
// into request fields. An option the adapter does not support is silently
// dropped by langchaingo v0.1.14 (except tools on ollama, which this package
// rejects with ErrUnsupported), so callers must consult this table rather
// than assume.
type Capabilities struct {
	// StopWords is true when llms.WithStopWords reaches the provider.
	StopWords bool
	// ToolCalls is true when llms.WithTools is sent and tool calls in the
	// reply come back as llms.ToolCall values.
	ToolCalls bool
	// JSONMode is true when llms.WithJSONMode asks the provider for JSON.
	JSONMode bool
	// Streaming is true when llms.WithStreamingFunc receives the reply
	// incrementally.
	Streaming bool
	// Notes lists the adapter's quirks that callers must handle.
	Notes string
}

// Provider names accepted in Config.Provider.
const (
	OpenAI    = "openai"
	Ollama    = "ollama"
	Anthropic = "anthropic"
	GoogleAI  = "googleai"
	Mistral   = "mistral"
)

// capabilityTable is the constant per-adapter table behind CapabilitiesOf,
// in Providers order. Each entry was checked against the langchaingo
// v0.1.14 source and is exercised by this package's tests.
var capabilityTable = [...]struct {
	name string
	caps Capabilities
}{
	{OpenAI, Capabilities{
		StopWords: true, ToolCalls: true, JSONMode: true, Streaming: true,
		Notes: "Stop words go in \"stop\", JSON mode sets response_format json_object, streaming is SSE " +
			"with stream_options.include_usage so usage arrives in the last chunk. " +
			"Temperature is always sent (0 when unset) except to o1/o3/gpt-5 models. MaxTokens goes in max_completion_tokens for " +
			"api.openai.com and in max_tokens for any other base URL (OpenAI-compatible servers). " +
			"While streaming with tools, the streaming func also receives the JSON of each tool-call delta, " +
			"so the concatenated chunks differ from the final content. A tool message with several " +
			"llms.ToolCallResponse parts is sent as one tool message per part.",
	}},
	{Ollama, Capabilities{
		StopWords: true, ToolCalls: false, JSONMode: true, Streaming: true,
		Notes: "Native /api/chat adapter: stop words go in options.stop, JSON mode sets format \"json\", " +
			"streaming is NDJSON. It has no tool calling; a call carrying tools or tool messages fails " +
			"with ErrUnsupported. For native tool calling use provider openai with base_url " +
			"http://HOST:11434/v1. Temperature is always sent (0 when unset).",
	}},
	{Anthropic, Capabilities{
		StopWords: true, ToolCalls: true, JSONMode: false, Streaming: true,
		Notes: "Every content block becomes its own choice: text first, then one choice per tool_use " +
			"block, so tool calls are in a later choice, never only the first; read all choices. " +
			"Stop words go in stop_sequences; JSON mode is ignored; streaming is SSE and only text " +
			"deltas reach the streaming func. max_tokens defaults to 2048 and temperature to 0. " +
			"The adapter sends only the first part of an assistant or tool message, so this package " +
			"splits such messages into one message per part (the API merges consecutive same-role turns).",
	}},
	{GoogleAI, Capabilities{
		StopWords: true, ToolCalls: true, JSONMode: true, Streaming: true,
		Notes: "Stop words go in generationConfig.stopSequences, JSON mode sets responseMimeType " +
			"application/json. Tool calls carry no ID: match them by name, and set " +
			"llms.ToolCallResponse.Name, which becomes functionResponse.name. Conversations of more " +
			"than one message and all streamed calls use :streamGenerateContent, whose usage is taken " +
			"from the first chunk (output tokens usually 0). Defaults when unset: maxOutputTokens 2048, " +
			"temperature 0.5, topK 3, topP 0.95. HTTP 503 is retried inside the SDK.",
	}},
	{Mistral, Capabilities{
		StopWords: false, ToolCalls: true, JSONMode: false, Streaming: true,
		Notes: "Stop words and JSON mode are dropped by the adapter (the ReAct parser must cut invented " +
			"Observations itself). The SDK ignores the context (no cancellation) and cannot take a " +
			"custom HTTP client; Timeout bounds each request. Tool results are sent without " +
			"tool_call_id. Usage is a mistral-go UsageInfo struct under GenerationInfo[\"usage\"]. " +
			"Defaults when unset: temperature 1, max_tokens 4000, random_seed 42069.",
	}},
}

// Providers returns the accepted provider names, in a fixed order.
func Providers() []string {
	names := make([]string, len(capabilityTable))
	for i, e := range capabilityTable {
		names[i] = e.name
	}
	return names
}

// CapabilitiesOf returns what the named adapter supports in langchaingo
// v0.1.14. The name is matched case-insensitively. An unknown name yields an
// error wrapping ErrUnknownProvider.
func CapabilitiesOf(provider string) (Capabilities, error) {
	name := normalizeProvider(provider)
	for _, e := range capabilityTable {
		if e.name == name {
			return e.caps, nil
		}
	}
	return Capabilities{}, unknownProvider(provider)
}

func normalizeProvider(p string) string {
	return strings.ToLower(strings.TrimSpace(p))
}

func unknownProvider(p string) error {
	return fmt.Errorf("%w %q: use one of %s", ErrUnknownProvider, p, strings.Join(Providers(), ", "))
}
