package usage

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tmc/langchaingo/llms"
)

func choices(infos ...map[string]any) *llms.ContentResponse {
	resp := &llms.ContentResponse{}
	for _, info := range infos {
		resp.Choices = append(resp.Choices, &llms.ContentChoice{GenerationInfo: info})
	}
	return resp
}

// mistralUsage mirrors the JSON shape of mistral-go's UsageInfo struct.
type mistralUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
}

func TestFromResponseNormalisesProviderKeys(t *testing.T) {
	tests := []struct {
		name   string
		resp   *llms.ContentResponse
		want   Usage
		wantOK bool
	}{
		{
			name: "openai int counts",
			resp: choices(map[string]any{"PromptTokens": 12, "CompletionTokens": 5, "TotalTokens": 17, "ReasoningTokens": 0}),
			want: Usage{PromptTokens: 12, CompletionTokens: 5}, wantOK: true,
		},
		{
			name: "anthropic adds cache writes and reads to the prompt",
			resp: choices(map[string]any{"InputTokens": 10, "OutputTokens": 4, "CacheCreationInputTokens": 100, "CacheReadInputTokens": 1000}),
			want: Usage{PromptTokens: 1110, CompletionTokens: 4, CachedPromptTokens: 1000}, wantOK: true,
		},
		{
			name: "googleai int32 counts",
			resp: choices(map[string]any{"input_tokens": int32(30), "output_tokens": int32(7), "PromptTokens": int32(30), "CompletionTokens": int32(7)}),
			want: Usage{PromptTokens: 30, CompletionTokens: 7}, wantOK: true,
		},
		{
			name: "vertex lower-case int32 keys only",
			resp: choices(map[string]any{"input_tokens": int32(8), "output_tokens": int32(2), "total_tokens": int32(10)}),
			want: Usage{PromptTokens: 8, CompletionTokens: 2}, wantOK: true,
		},
		{
			name: "json decoded float64 and int64",
			resp: choices(map[string]any{"prompt_tokens": float64(40), "completion_tokens": int64(9)}),
			want: Usage{PromptTokens: 40, CompletionTokens: 9}, wantOK: true,
		},
		{
			name: "json.Number",
			resp: choices(map[string]any{"PromptTokens": json.Number("3"), "CompletionTokens": json.Number("1")}),
			want: Usage{PromptTokens: 3, CompletionTokens: 1}, wantOK: true,
		},
		{
			name: "mistral nested struct",
			resp: choices(map[string]any{"usage": mistralUsage{PromptTokens: 21, TotalTokens: 27, CompletionTokens: 6}}),
			want: Usage{PromptTokens: 21, CompletionTokens: 6}, wantOK: true,
		},
		{
			name: "nested map",
			resp: choices(map[string]any{"usage": map[string]any{"input_tokens": 5, "output_tokens": 2}}),
			want: Usage{PromptTokens: 5, CompletionTokens: 2}, wantOK: true,
		},
		{
			name: "only completion reported",
			resp: choices(map[string]any{"CompletionTokens": uint16(11)}),
			want: Usage{CompletionTokens: 11}, wantOK: true,
		},
		{name: "nil response", resp: nil, wantOK: false},
		{name: "no choices", resp: &llms.ContentResponse{}, wantOK: false},
		{name: "nil choice", resp: &llms.ContentResponse{Choices: []*llms.ContentChoice{nil}}, wantOK: false},
		{name: "no usage keys", resp: choices(map[string]any{"model": "x"}), wantOK: false},
		{name: "zero usage means not reported", resp: choices(map[string]any{"PromptTokens": 0, "CompletionTokens": 0}), wantOK: false},
		{name: "negative and fractional rejected", resp: choices(map[string]any{"PromptTokens": -1, "CompletionTokens": 2.5}), wantOK: false},
		{name: "non-numeric rejected", resp: choices(map[string]any{"PromptTokens": "12"}), wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FromResponse(tt.resp)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFromResponseCombinesChoices(t *testing.T) {
	tests := []struct {
		name string
		resp *llms.ContentResponse
		want Usage
	}{
		{
			name: "repeated response-level usage is counted once",
			resp: choices(
				map[string]any{"InputTokens": 50, "OutputTokens": 20, "ThinkingContent": "x"},
				map[string]any{"InputTokens": 50, "OutputTokens": 20},
				map[string]any{"InputTokens": 50, "OutputTokens": 20},
			),
			want: Usage{PromptTokens: 50, CompletionTokens: 20},
		},
		{
			name: "per-choice completion counts are summed and the prompt is taken once",
			resp: choices(
				map[string]any{"input_tokens": 9, "output_tokens": 4},
				map[string]any{"input_tokens": 9, "output_tokens": 6},
			),
			want: Usage{PromptTokens: 9, CompletionTokens: 10},
		},
		{
			name: "choices without usage are ignored",
			resp: choices(
				map[string]any{"PromptTokens": 7, "CompletionTokens": 3},
				nil,
				map[string]any{"citations": []string{}},
			),
			want: Usage{PromptTokens: 7, CompletionTokens: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FromResponse(tt.resp)
			assert.True(t, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestUsageArithmetic(t *testing.T) {
	a := Usage{PromptTokens: 3, CompletionTokens: 4}
	b := Usage{PromptTokens: 10, CompletionTokens: 1, Estimated: true}
	assert.Equal(t, 7, a.Total())
	assert.Equal(t, Usage{PromptTokens: 13, CompletionTokens: 5, Estimated: true}, a.Add(b))
	assert.False(t, a.Add(a).Estimated)
}

func TestUsageJSONFieldNames(t *testing.T) {
	b, err := json.Marshal(Usage{PromptTokens: 1, CompletionTokens: 2, Estimated: true})
	assert.NoError(t, err)
	assert.JSONEq(t, `{"prompt_tokens":1,"completion_tokens":2,"estimated":true}`, string(b))
}
