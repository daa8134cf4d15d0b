package usage

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// openaiInfo has the shape langchaingo v0.1.14's openai client gives every
// choice's GenerationInfo (llms/openai/openaillm.go), for a reply whose usage
// is prompt_tokens 2006, completion_tokens 300,
// prompt_tokens_details.cached_tokens 1920.
func openaiInfo() map[string]any {
	return map[string]any{
		"CompletionTokens":                   300,
		"PromptTokens":                       2006,
		"TotalTokens":                        2306,
		"ReasoningTokens":                    0,
		"PromptAudioTokens":                  0,
		"ThinkingContent":                    "",
		"ThinkingTokens":                     0,
		"PromptCachedTokens":                 1920,
		"CompletionAudioTokens":              0,
		"CompletionReasoningTokens":          0,
		"CompletionAcceptedPredictionTokens": 0,
		"CompletionRejectedPredictionTokens": 0,
	}
}

// anthropicInfo has the shape langchaingo v0.1.14's anthropic client gives a
// text choice's GenerationInfo (llms/anthropic/anthropicllm.go) for usage
// input_tokens 50, cache_creation_input_tokens 200,
// cache_read_input_tokens 3000, output_tokens 120.
func anthropicInfo() map[string]any {
	return map[string]any{
		"InputTokens":              50,
		"OutputTokens":             120,
		"CacheCreationInputTokens": 200,
		"CacheReadInputTokens":     3000,
		"ThinkingContent":          "",
		"OutputContent":            "Final Answer: 42",
	}
}

func TestFromResponseReadsCachedPromptTokens(t *testing.T) {
	anthropicTool := anthropicInfo()
	delete(anthropicTool, "OutputContent")
	tests := []struct {
		name string
		resp *llms.ContentResponse
		want Usage
	}{
		{
			name: "openai prompt_tokens_details.cached_tokens",
			resp: choices(openaiInfo()),
			want: Usage{PromptTokens: 2006, CompletionTokens: 300, CachedPromptTokens: 1920},
		},
		{
			name: "openai without a cache hit",
			resp: choices(map[string]any{"PromptTokens": 12, "CompletionTokens": 5, "TotalTokens": 17, "PromptCachedTokens": 0}),
			want: Usage{PromptTokens: 12, CompletionTokens: 5},
		},
		{
			name: "anthropic cache reads are cached, cache writes are not",
			// The text block and a tool_use block each become a choice
			// carrying the same response-level usage.
			resp: choices(anthropicInfo(), anthropicTool),
			want: Usage{PromptTokens: 3250, CompletionTokens: 120, CachedPromptTokens: 3000},
		},
		{
			name: "googleai cached content tokens (int32, included in the prompt count)",
			resp: choices(map[string]any{
				"input_tokens": int32(5000), "output_tokens": int32(40), "total_tokens": int32(5040),
				"PromptTokens": int32(5000), "CompletionTokens": int32(40), "TotalTokens": int32(5040),
				"CachedTokens": int32(4096), "CacheReadInputTokens": int32(4096), "NonCachedInputTokens": int32(904),
			}),
			want: Usage{PromptTokens: 5000, CompletionTokens: 40, CachedPromptTokens: 4096},
		},
		{
			name: "raw OpenAI-compatible usage with prompt_tokens_details",
			resp: choices(map[string]any{"usage": map[string]any{
				"prompt_tokens": float64(900), "completion_tokens": float64(10),
				"prompt_tokens_details": map[string]any{"cached_tokens": float64(768)},
			}}),
			want: Usage{PromptTokens: 900, CompletionTokens: 10, CachedPromptTokens: 768},
		},
		{
			name: "raw DeepSeek usage with prompt_cache_hit_tokens",
			resp: choices(map[string]any{
				"prompt_tokens": json.Number("1000"), "completion_tokens": json.Number("20"),
				"prompt_cache_hit_tokens": json.Number("640"), "prompt_cache_miss_tokens": json.Number("360"),
			}),
			want: Usage{PromptTokens: 1000, CompletionTokens: 20, CachedPromptTokens: 640},
		},
		{
			name: "cached count above the prompt count is capped",
			resp: choices(map[string]any{"PromptTokens": 10, "CompletionTokens": 1, "PromptCachedTokens": 64}),
			want: Usage{PromptTokens: 10, CompletionTokens: 1, CachedPromptTokens: 10},
		},
		{
			name: "invalid cached count is ignored",
			resp: choices(map[string]any{"PromptTokens": 10, "CompletionTokens": 1, "PromptCachedTokens": -3}),
			want: Usage{PromptTokens: 10, CompletionTokens: 1},
		},
		{
			name: "per-choice usage takes the cached count once",
			resp: choices(
				map[string]any{"input_tokens": 9, "output_tokens": 4, "CachedTokens": 8},
				map[string]any{"input_tokens": 9, "output_tokens": 6, "CachedTokens": 8},
			),
			want: Usage{PromptTokens: 9, CompletionTokens: 10, CachedPromptTokens: 8},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FromResponse(tt.resp)
			require.True(t, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestUsageCachedArithmeticAndJSON(t *testing.T) {
	a := Usage{PromptTokens: 100, CompletionTokens: 4, CachedPromptTokens: 64}
	b := Usage{PromptTokens: 200, CompletionTokens: 1, CachedPromptTokens: 128}
	assert.Equal(t, Usage{PromptTokens: 300, CompletionTokens: 5, CachedPromptTokens: 192}, a.Add(b))

	out, err := json.Marshal(a)
	require.NoError(t, err)
	assert.JSONEq(t, `{"prompt_tokens":100,"completion_tokens":4,"cached_prompt_tokens":64}`, string(out))
}

func TestPriceTableCostPricesCachedTokensAtTheCachedRate(t *testing.T) {
	table := PriceTable{
		"gpt-4o":     {InputPerMTok: 2.50, OutputPerMTok: 10, CachedInputPerMTok: 1.25},
		"no-cached":  {InputPerMTok: 2.00, OutputPerMTok: 8},
		"free-local": {},
	}
	tests := []struct {
		name  string
		model string
		u     Usage
		want  float64
	}{
		{
			name:  "cached at the cached rate, the rest at the input rate",
			model: "gpt-4o-2024-08-06",
			u:     Usage{PromptTokens: 3_000_000, CompletionTokens: 1_000_000, CachedPromptTokens: 2_000_000},
			want:  1*2.50 + 2*1.25 + 1*10,
		},
		{
			name:  "no cached tokens",
			model: "gpt-4o",
			u:     Usage{PromptTokens: 1_000_000},
			want:  2.50,
		},
		{
			name:  "no cached rate falls back to the full input rate",
			model: "no-cached",
			u:     Usage{PromptTokens: 1_000_000, CachedPromptTokens: 600_000},
			want:  2.00,
		},
		{
			name:  "cached count is capped at the prompt count",
			model: "gpt-4o",
			u:     Usage{PromptTokens: 1_000_000, CachedPromptTokens: 5_000_000},
			want:  1.25,
		},
		{
			name:  "free model",
			model: "free-local",
			u:     Usage{PromptTokens: 10, CachedPromptTokens: 5},
			want:  0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			usd, known := table.Cost(tt.model, tt.u)
			assert.True(t, known)
			assert.InDelta(t, tt.want, usd, 1e-9)
		})
	}
}

func TestParsePriceTableCachedInput(t *testing.T) {
	got, err := ParsePriceTable(strings.NewReader("models:\n  m: {input: 1, output: 2, cached_input: 0.1}\n  n: {input: 1, output: 2}\n"))
	require.NoError(t, err)
	assert.Equal(t, PriceTable{
		"m": {InputPerMTok: 1, OutputPerMTok: 2, CachedInputPerMTok: 0.1},
		"n": {InputPerMTok: 1, OutputPerMTok: 2},
	}, got)

	_, err = ParsePriceTable(strings.NewReader("models:\n  m: {input: 1, output: 2, cached_input: -0.1}\n"))
	assert.ErrorIs(t, err, ErrBadPriceTable)
}

func TestDefaultPriceTableCachedRates(t *testing.T) {
	table := DefaultPriceTable()
	for name, p := range table {
		assert.LessOrEqual(t, p.CachedInputPerMTok, p.InputPerMTok, "%s: cached input must not cost more than input", name)
	}
	tests := []struct {
		model  string
		cached float64
	}{
		{"gpt-4o-2024-08-06", 1.25},        // 50% of input
		{"gpt-4o-mini", 0.075},             // 50% of input
		{"claude-sonnet-4-20250514", 0.30}, // cache reads: 10% of input
		{"claude-opus-4-1", 1.50},
		{"deepseek-chat", 0.07},
		{"gemini-2.5-pro", 0}, // not published in the table: full input price
	}
	for _, tt := range tests {
		p, ok := table.Lookup(tt.model)
		require.True(t, ok, tt.model)
		assert.InDelta(t, tt.cached, p.CachedInputPerMTok, 1e-12, tt.model)
	}
	usd, known := table.Cost("claude-3-5-haiku-20241022", Usage{PromptTokens: 1_000_000, CachedPromptTokens: 1_000_000})
	require.True(t, known)
	assert.InDelta(t, 0.08, usd, 1e-12)
}
