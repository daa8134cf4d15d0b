// Package provider builds real LLM clients (langchaingo v0.1.14 adapters)
// from a declarative Config: openai (and every OpenAI-compatible server),
// ollama, anthropic, googleai (Gemini API) and mistral.
//
// [New] returns an llms.Model that wraps the langchaingo adapter and
// smooths over its known differences:
//
//   - API keys come only from the environment variable named by
//     Config.APIKeyEnv (or the provider default). A missing key fails with
//     [ErrMissingKey] naming the variable. No error ever contains the key:
//     every error text is scrubbed of it, and scrubbed errors do not expose
//     the original through Unwrap.
//   - HTTP failures become a [*StatusError] that matches [ErrAuth],
//     [ErrRateLimited], [ErrServer] or [ErrBadRequest] and carries
//     Retry-After. The status is read from the transport, not parsed from
//     the adapters' inconsistent messages (mistral aside, whose SDK owns its
//     HTTP client).
//   - The native ollama adapter has no tool calling; calls carrying tools or
//     tool messages fail with [ErrUnsupported] and a hint to use provider
//     openai with base_url http://HOST:11434/v1 instead.
//   - Multi-part messages the adapters mishandle are split into one message
//     per part: anthropic assistant and tool messages (the adapter sends
//     only the first part, losing parallel tool calls; the API merges
//     consecutive same-role turns) and openai tool messages (the adapter
//     rejects several llms.ToolCallResponse parts in one message).
//   - An error returned by an llms.WithStreamingFunc callback always aborts
//     the call and is returned (googleai's adapter would swallow it).
//   - openai sends max_tokens rather than max_completion_tokens to any host
//     other than api.openai.com, since OpenAI-compatible servers may ignore
//     the newer field; local servers without a key get a placeholder key.
//
// # Capabilities
//
// Which call options each adapter turns into request fields (see
// [CapabilitiesOf]; every cell is checked against a fake server by the
// tests):
//
//	provider   StopWords            ToolCalls            JSONMode                     Streaming
//	openai     stop                 yes                  response_format json_object  SSE
//	ollama     options.stop         no (ErrUnsupported)  format "json"                NDJSON
//	anthropic  stop_sequences       yes, later choices   ignored                      SSE (text only)
//	googleai   stopSequences        yes, no call IDs     responseMimeType JSON        JSON-array stream
//	mistral    ignored              yes                  ignored                      SSE
//
// Anthropic turns every content block into its own llms.ContentChoice: the
// text block comes first and each tool_use block follows as a later choice,
// so callers must scan all choices for tool calls. Gemini function calls
// carry no ID; set llms.ToolCallResponse.Name, which becomes
// functionResponse.name. Mistral drops stop words, so a ReAct parser must
// cut invented "Observation:" text itself.
//
// # Usage in GenerationInfo
//
// Keys and Go types langchaingo v0.1.14 puts in each choice's
// GenerationInfo (verified by the tests):
//
//	openai     PromptTokens, CompletionTokens, TotalTokens, PromptCachedTokens,
//	           PromptAudioTokens, ReasoningTokens, CompletionReasoningTokens,
//	           ThinkingTokens, CompletionAudioTokens,
//	           CompletionAcceptedPredictionTokens,
//	           CompletionRejectedPredictionTokens                     int
//	           ThinkingContent                                        string
//	           (streamed: from the include_usage chunk; 0 if the server sends none)
//	anthropic  InputTokens, OutputTokens, CacheCreationInputTokens,
//	           CacheReadInputTokens                                   int
//	           text choices add ThinkingContent, OutputContent         string
//	           thinking choices add ThinkingContent, ThinkingSignature string
//	           (on every choice; InputTokens excludes cached tokens;
//	           streamed: input from message_start, output from message_delta)
//	googleai   input_tokens, output_tokens, total_tokens,
//	           PromptTokens, CompletionTokens, TotalTokens            int32
//	           CachedTokens, CacheReadInputTokens,
//	           NonCachedInputTokens (only when cached tokens > 0)      int32
//	           ThinkingTokens (always 0)                               int
//	           ThinkingContent (always "")                             string
//	           citations *genai.CitationMetadata, safety []*genai.SafetyRating
//	           (usage keys only when the reply has usageMetadata; for
//	           streamed calls and conversations of more than one message the
//	           counts come from the FIRST stream chunk, so output_tokens is
//	           usually 0)
//	ollama     PromptTokens, CompletionTokens, TotalTokens            int
//	           ThinkingTokens (always 0)                               int
//	           ThinkingContent (always "")                             string
//	mistral    usage    mistral.UsageInfo (struct value from
//	                    github.com/gage-technologies/mistral-go with int
//	                    fields PromptTokens, CompletionTokens, TotalTokens)
//	           created  int
//	           model    string
//	           (streamed: the last chunk's usage)
package provider
