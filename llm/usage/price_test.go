package usage

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePriceTable(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    PriceTable
		wantErr bool
	}{
		{
			name: "flow and block styles, names lower-cased",
			doc:  "models:\n  GPT-4o-mini: {input: 0.15, output: 0.60}\n  local:\n    input: 0\n    output: 0\n",
			want: PriceTable{"gpt-4o-mini": {InputPerMTok: 0.15, OutputPerMTok: 0.60}, "local": {}},
		},
		{name: "empty document", doc: "", want: PriceTable{}},
		{name: "unknown field", doc: "models:\n  m: {input: 1, outptu: 2}\n", wantErr: true},
		{name: "unknown top-level key", doc: "prices:\n  m: {input: 1}\n", wantErr: true},
		{name: "negative price", doc: "models:\n  m: {input: -1, output: 2}\n", wantErr: true},
		{name: "empty name", doc: "models:\n  '': {input: 1, output: 2}\n", wantErr: true},
		{name: "names differing in case", doc: "models:\n  M: {input: 1}\n  m: {input: 2}\n", wantErr: true},
		{name: "not yaml", doc: "models: [", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePriceTable(strings.NewReader(tt.doc))
			if tt.wantErr {
				assert.ErrorIs(t, err, ErrBadPriceTable)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestPriceTableLookupPrefersExactThenLongestPrefix(t *testing.T) {
	table := PriceTable{
		"gpt-4o":      {InputPerMTok: 2.5, OutputPerMTok: 10},
		"gpt-4o-mini": {InputPerMTok: 0.15, OutputPerMTok: 0.6},
		"o3":          {InputPerMTok: 2, OutputPerMTok: 8},
		"o3-mini":     {InputPerMTok: 1.1, OutputPerMTok: 4.4},
	}
	tests := []struct {
		model  string
		want   Price
		wantOK bool
	}{
		{"gpt-4o", table["gpt-4o"], true},
		{"gpt-4o-mini", table["gpt-4o-mini"], true},
		{"gpt-4o-mini-2024-07-18", table["gpt-4o-mini"], true},
		{"gpt-4o-2024-08-06", table["gpt-4o"], true},
		{"GPT-4O-MINI", table["gpt-4o-mini"], true},
		{"o3-mini-high", table["o3-mini"], true},
		{"o3-pro", table["o3"], true},
		{"gpt-4", Price{}, false},
		{"", Price{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got, ok := table.Lookup(tt.model)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestPriceTableCost(t *testing.T) {
	table := PriceTable{"gpt-4o-mini": {InputPerMTok: 0.15, OutputPerMTok: 0.60}}
	usd, known := table.Cost("gpt-4o-mini-2024-07-18", Usage{PromptTokens: 2_000_000, CompletionTokens: 500_000})
	assert.True(t, known)
	assert.InDelta(t, 0.30+0.30, usd, 1e-12)

	usd, known = table.Cost("unknown-model", Usage{PromptTokens: 10})
	assert.False(t, known)
	assert.Zero(t, usd)
}

func TestPriceTableMergeOverrides(t *testing.T) {
	base := PriceTable{"a": {InputPerMTok: 1, OutputPerMTok: 2}, "b": {InputPerMTok: 3, OutputPerMTok: 4}}
	merged := base.Merge(PriceTable{"B": {InputPerMTok: 9, OutputPerMTok: 9}, "c": {InputPerMTok: 5}})
	assert.Equal(t, PriceTable{
		"a": {InputPerMTok: 1, OutputPerMTok: 2},
		"b": {InputPerMTok: 9, OutputPerMTok: 9},
		"c": {InputPerMTok: 5},
	}, merged)
	assert.Equal(t, Price{InputPerMTok: 3, OutputPerMTok: 4}, base["b"], "Merge must not modify the receiver")
}

func TestDefaultPriceTableIsValidAndFresh(t *testing.T) {
	table := DefaultPriceTable()
	require.NotEmpty(t, table)
	for name, p := range table {
		assert.Positive(t, p.InputPerMTok, name)
		assert.GreaterOrEqual(t, p.OutputPerMTok, p.InputPerMTok, name)
	}
	mini, ok := table.Lookup("gpt-4o-mini-2024-07-18")
	require.True(t, ok)
	assert.Equal(t, Price{InputPerMTok: 0.15, OutputPerMTok: 0.60, CachedInputPerMTok: 0.075}, mini)

	table["gpt-4o-mini"] = Price{}
	assert.NotEqual(t, Price{}, DefaultPriceTable()["gpt-4o-mini"], "each call must return a fresh copy")
}
