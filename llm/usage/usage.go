// Package usage normalises token usage reported by langchaingo providers,
// estimates token counts offline when a provider reports none, and prices
// usage with a model price table.
//
// # Reported usage
//
// langchaingo v0.1.14 puts token counts into each choice's GenerationInfo map
// under provider-specific keys. [FromResponse] recognises these pairs
// (prompt key / completion key), tried in this order:
//
//   - "PromptTokens" / "CompletionTokens": openai, ollama, maritaca, and the
//     standardised fields googleai adds (values int or int32).
//   - "InputTokens" / "OutputTokens": anthropic (int). Anthropic reports
//     cache writes and reads separately, in "CacheCreationInputTokens" and
//     "CacheReadInputTokens"; they are added to the prompt count so that
//     PromptTokens means "all input tokens processed" as it does for OpenAI
//     and Google, whose prompt counts already include cached tokens.
//   - "input_tokens" / "output_tokens": googleai, googleai/vertex (int32) and
//     the bedrock providers (int).
//   - "prompt_tokens" / "completion_tokens": OpenAI-compatible raw maps.
//   - "usage": a nested map or struct (mistral puts its sdk.UsageInfo here),
//     read through its JSON form with the snake_case keys above.
//
// # Cached prompt tokens
//
// CachedPromptTokens is the part of PromptTokens the provider served from its
// prompt cache (billed at a reduced rate, see [Price]). It is read from:
//
//   - "PromptCachedTokens": openai (int; prompt_tokens_details.cached_tokens
//     of the reply, streamed or not). OpenAI-compatible servers that fill in
//     prompt_tokens_details.cached_tokens report through the same key.
//   - "CachedTokens", then "CacheReadInputTokens": googleai (int32; present
//     only when the count is above zero).
//   - "CacheReadInputTokens": anthropic (int). Cache writes
//     ("CacheCreationInputTokens") are not cached reads: they count as
//     ordinary prompt tokens.
//   - "prompt_tokens_details.cached_tokens", then "prompt_cache_hit_tokens"
//     (DeepSeek's own field): raw snake_case usage maps, top level or under
//     "usage".
//
// langchaingo v0.1.14's openai client decodes only
// prompt_tokens_details.cached_tokens, so DeepSeek's prompt_cache_hit_tokens
// never reaches GenerationInfo through it; a DeepSeek cache hit is seen only
// when the server also fills in prompt_tokens_details.cached_tokens.
// A cached count larger than the prompt count is capped at the prompt count.
//
// A pair whose prompt and completion counts are both zero counts as not
// reported: providers fill in zeros when the server omits usage.
//
// Any integer kind, float64 (as produced by JSON decoding, e.g. a replayed
// cassette) and json.Number are accepted; negative or fractional values are
// ignored.
//
// # Several choices
//
// Most providers (openai with n > 1, anthropic, which turns every content
// block into its own choice, googleai with several candidates) copy the
// response-level usage onto every choice. Bedrock's AI21 and Titan models
// instead report the prompt count on every choice and a separate completion
// count per choice. The rule applied is therefore: when every choice that
// reports usage reports the same pair, the pair is counted once; otherwise
// PromptTokens is the largest prompt count (the prompt was sent once) and
// CompletionTokens is the sum of the completion counts. The only case this
// gets wrong is per-choice reporting where all choices happen to have equal
// completion counts, which undercounts completion tokens.
package usage

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// Usage is the token usage of one model call.
type Usage struct {
	// PromptTokens is the number of input tokens, including cached ones.
	PromptTokens int `json:"prompt_tokens" yaml:"prompt_tokens"`
	// CompletionTokens is the number of generated tokens, including any
	// reasoning tokens the provider bills as output.
	CompletionTokens int `json:"completion_tokens" yaml:"completion_tokens"`
	// CachedPromptTokens is the part of PromptTokens read from the provider's
	// prompt cache; 0 when the provider reports none. It never exceeds
	// PromptTokens.
	CachedPromptTokens int `json:"cached_prompt_tokens,omitempty" yaml:"cached_prompt_tokens,omitempty"`
	// Estimated is true when the counts come from the local tokenizer rather
	// than from the provider.
	Estimated bool `json:"estimated,omitempty" yaml:"estimated,omitempty"`
}

// Total returns PromptTokens + CompletionTokens.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// Add returns the sum of u and o. The result is Estimated when either is.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:       u.PromptTokens + o.PromptTokens,
		CompletionTokens:   u.CompletionTokens + o.CompletionTokens,
		CachedPromptTokens: u.CachedPromptTokens + o.CachedPromptTokens,
		Estimated:          u.Estimated || o.Estimated,
	}
}

// keyPair names the GenerationInfo keys one provider family uses.
type keyPair struct {
	prompt, completion string
	// extraPrompt lists keys whose values are added to the prompt count.
	extraPrompt []string
	// cached lists the keys of the cached prompt-token count, first found
	// wins. A key "a.b" names key b of the nested map or struct under a.
	cached []string
}

// keyPairs is the ordered list of key pairs FromResponse tries.
var keyPairs = []keyPair{
	{
		prompt: "PromptTokens", completion: "CompletionTokens",
		cached: []string{"PromptCachedTokens", "CachedTokens", "CacheReadInputTokens"},
	},
	{
		prompt: "InputTokens", completion: "OutputTokens",
		extraPrompt: []string{"CacheCreationInputTokens", "CacheReadInputTokens"},
		cached:      []string{"CacheReadInputTokens"},
	},
	{
		prompt: "input_tokens", completion: "output_tokens",
		cached: []string{"CachedTokens", "CacheReadInputTokens"},
	},
	{
		prompt: "prompt_tokens", completion: "completion_tokens",
		cached: []string{"prompt_tokens_details.cached_tokens", "prompt_cache_hit_tokens"},
	},
}

// FromResponse extracts the provider-reported usage from resp. It returns
// false when resp is nil or no choice reports usage. See the package
// documentation for the keys recognised and how choices are combined.
func FromResponse(resp *llms.ContentResponse) (Usage, bool) {
	if resp == nil {
		return Usage{}, false
	}
	var found []Usage
	for _, choice := range resp.Choices {
		if choice == nil {
			continue
		}
		if u, ok := fromInfo(choice.GenerationInfo); ok {
			found = append(found, u)
		}
	}
	if len(found) == 0 {
		return Usage{}, false
	}
	// found only holds non-zero usages; see fromInfo.
	same := true
	for _, u := range found[1:] {
		if u != found[0] {
			same = false
			break
		}
	}
	if same {
		return found[0], true
	}
	var total Usage
	for _, u := range found {
		total.PromptTokens = max(total.PromptTokens, u.PromptTokens)
		total.CachedPromptTokens = max(total.CachedPromptTokens, u.CachedPromptTokens)
		total.CompletionTokens += u.CompletionTokens
	}
	return total, true
}

// fromInfo reads one GenerationInfo map.
func fromInfo(info map[string]any) (Usage, bool) {
	if len(info) == 0 {
		return Usage{}, false
	}
	for _, kp := range keyPairs {
		p, okP := toInt(info[kp.prompt])
		c, okC := toInt(info[kp.completion])
		if !okP && !okC {
			continue
		}
		for _, k := range kp.extraPrompt {
			if n, ok := toInt(info[k]); ok {
				p += n
			}
		}
		if p == 0 && c == 0 {
			// Providers fill in zeros when the server sent no usage (for
			// example a stream without a usage chunk); no real call consumes
			// zero tokens, so treat it as not reported.
			continue
		}
		return Usage{PromptTokens: p, CompletionTokens: c, CachedPromptTokens: min(cachedCount(info, kp.cached), p)}, true
	}
	if nested, ok := info["usage"]; ok && nested != nil {
		if m, ok := asMap(nested); ok {
			return fromInfo(m)
		}
	}
	return Usage{}, false
}

// cachedCount returns the value of the first of keys present in info as a
// valid count, or 0. See keyPair.cached for the key syntax.
func cachedCount(info map[string]any, keys []string) int {
	for _, k := range keys {
		v, ok := info[k]
		if outer, inner, nested := strings.Cut(k, "."); nested {
			v, ok = nil, false
			if sub, present := info[outer]; present && sub != nil {
				if m, isMap := asMap(sub); isMap {
					v, ok = m[inner]
				}
			}
		}
		if !ok {
			continue
		}
		if n, valid := toInt(v); valid {
			return n
		}
	}
	return 0
}

// asMap converts a nested usage value (a map or a struct with JSON tags) to a
// map through its JSON form.
func asMap(v any) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, false
	}
	return m, true
}

// toInt converts a token count of any numeric type to int. It rejects
// missing, negative, fractional and non-numeric values.
func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case nil:
		return 0, false
	case int:
		return n, n >= 0
	case json.Number:
		i, err := n.Int64()
		if err != nil || i < 0 {
			return 0, false
		}
		return int(i), true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := rv.Int()
		return int(i), i >= 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt {
			return 0, false
		}
		return int(u), true
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if f < 0 || f != math.Trunc(f) || f >= float64(math.MaxInt) {
			return 0, false
		}
		return int(f), true
	default:
		return 0, false
	}
}
