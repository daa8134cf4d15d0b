package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// Anthropic prompt caching.
//
// A request whose blocks carry cache_control {"type": "ephemeral"} has its
// prefix, up to and including each marked block (tools, then system, then
// messages), written to Anthropic's prompt cache for five minutes; a later
// request that starts with the same prefix reads it from the cache. Cache
// reads are billed at a tenth of the input price and writes at 1.25 times
// it; the reply reports them as usage.cache_read_input_tokens and
// cache_creation_input_tokens. Anthropic ignores a breakpoint whose prefix
// is shorter than the model's minimum (1024 tokens; 2048 for the Haiku
// models), and allows at most four in a request.
//
// langchaingo v0.1.14 sends the system prompt as a plain string, which
// cannot carry cache_control, and marks only user text and images
// (llms.CachedContent). So the breakpoints are set on the request as it
// goes out (cacheTransport), where every block can be marked and the
// recorded cassettes and journals, which see the langchaingo messages, do
// not change with the setting.

// PromptCacheMinTokens is the shortest prefix, in estimated tokens (four
// bytes of the request's JSON a token), that a cache breakpoint is set
// after: Anthropic caches nothing shorter than 1024 tokens.
const PromptCacheMinTokens = 1024

// promptCacheBytesPerToken estimates tokens from the request's JSON bytes.
const promptCacheBytesPerToken = 4

// ephemeral is the cache_control value of a breakpoint.
var ephemeral = json.RawMessage(`{"type":"ephemeral"}`)

// cacheTransport sets prompt-cache breakpoints on Anthropic Messages
// requests (see markCacheBreakpoints) before passing them on to base.
type cacheTransport struct {
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper. A request it does not change,
// or whose body it cannot read as a Messages request, goes out as it came.
func (t *cacheTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/messages") || req.Body == nil || req.GetBody == nil {
		return t.base.RoundTrip(req)
	}
	body, err := req.GetBody() // a fresh copy: req.Body is left for the fallback
	if err != nil {
		return t.base.RoundTrip(req)
	}
	raw, err := io.ReadAll(body)
	body.Close()
	if err != nil {
		return t.base.RoundTrip(req)
	}
	marked, ok := markCacheBreakpoints(raw, PromptCacheMinTokens*promptCacheBytesPerToken)
	if !ok {
		return t.base.RoundTrip(req)
	}
	// The original body is replaced: close it, as the contract requires of
	// a request body the transport does not send.
	req.Body.Close()
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(marked))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(marked)), nil }
	out.ContentLength = int64(len(marked))
	return t.base.RoundTrip(out)
}

// markCacheBreakpoints adds cache_control breakpoints to an Anthropic
// Messages request body, on the blocks that end the stable prefix of the
// conversation:
//
//   - the system prompt (after the tools): the same for every call of a
//     node, across tasks;
//   - in a conversation with assistant turns (a ReAct loop, a tool loop),
//     the last message before the newest turn (the newest turn begins at
//     the last assistant message), which is where the previous call's
//     request ended, so this call reads it from the cache;
//   - and the last message, so that the next call of the loop, which
//     repeats this request and adds a turn, reads all of it.
//
// A breakpoint is set only where the request up to it has at least
// minBytes of JSON (see PromptCacheMinTokens): shorter prompts are sent as
// they are. Thinking blocks are never marked. A request that already has
// a cache_control anywhere is left alone, as is anything that is not a
// Messages request. ok is false when nothing was changed.
func markCacheBreakpoints(body []byte, minBytes int) (_ []byte, ok bool) {
	if bytes.Contains(body, []byte(`"cache_control"`)) {
		return nil, false
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, false
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(req["messages"], &msgs); err != nil || len(msgs) == 0 {
		return nil, false
	}
	// prefix[i] is the size of the request's prefix through message i:
	// tools, system, then the messages, as the cache orders them.
	size := len(req["tools"]) + len(req["system"])
	systemSize := size
	prefix := make([]int, len(msgs))
	lastAssistant := -1
	for i, m := range msgs {
		size += len(m["content"])
		prefix[i] = size
		var role string
		if json.Unmarshal(m["role"], &role) == nil && role == "assistant" {
			lastAssistant = i
		}
	}
	changed := false
	if sys, ok := systemBlocks(req["system"]); ok && systemSize >= minBytes {
		if marked, ok := markLast(sys); ok {
			req["system"] = marked
			changed = true
		}
	}
	var marks []int
	if lastAssistant > 0 {
		marks = append(marks, lastAssistant-1)
	}
	if lastAssistant >= 0 {
		marks = append(marks, len(msgs)-1)
	}
	for _, i := range marks {
		if prefix[i] < minBytes {
			continue
		}
		if marked, ok := markLast(msgs[i]["content"]); ok {
			msgs[i]["content"] = marked
			changed = true
		}
	}
	if !changed {
		return nil, false
	}
	js, err := json.Marshal(msgs)
	if err != nil {
		return nil, false
	}
	req["messages"] = js
	out, err := json.Marshal(req)
	if err != nil {
		return nil, false
	}
	return out, true
}

// systemBlocks returns the system prompt as a list of content blocks: a
// string as one text block, a list as it is. ok is false when there is
// none.
func systemBlocks(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, false
		}
		js, err := json.Marshal([]map[string]string{{"type": "text", "text": s}})
		return js, err == nil
	}
	return raw, true
}

// markLast returns content (a string, or a list of blocks) as a list of
// blocks whose last one carries the ephemeral cache_control. ok is false
// when it cannot be marked: empty, not a list of objects, or ending in a
// thinking block.
func markLast(content json.RawMessage) (json.RawMessage, bool) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		if s == "" {
			return nil, false
		}
		content, _ = json.Marshal([]map[string]string{{"type": "text", "text": s}})
	}
	var blocks []map[string]json.RawMessage
	if err := json.Unmarshal(content, &blocks); err != nil || len(blocks) == 0 {
		return nil, false
	}
	last := blocks[len(blocks)-1]
	var typ string
	_ = json.Unmarshal(last["type"], &typ)
	if typ == "thinking" || typ == "redacted_thinking" {
		return nil, false
	}
	last["cache_control"] = ephemeral
	js, err := json.Marshal(blocks)
	return js, err == nil
}
