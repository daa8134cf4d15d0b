package usage

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrBadPriceTable is returned when a price table document is malformed.
var ErrBadPriceTable = errors.New("usage: bad price table")

//go:embed prices.yaml
var defaultPrices []byte

// Price is the list price of one model.
type Price struct {
	// InputPerMTok is the price in US dollars per million prompt tokens.
	InputPerMTok float64 `yaml:"input" json:"input" mapstructure:"input"`
	// OutputPerMTok is the price in US dollars per million completion tokens.
	OutputPerMTok float64 `yaml:"output" json:"output" mapstructure:"output"`
	// CachedInputPerMTok is the price in US dollars per million prompt tokens
	// read from the provider's prompt cache ([Usage.CachedPromptTokens]).
	// Zero, the default, means the provider publishes no cached rate (or the
	// table does not know it): cached tokens are then priced at InputPerMTok,
	// which never understates a cost.
	CachedInputPerMTok float64 `yaml:"cached_input,omitempty" json:"cached_input,omitempty" mapstructure:"cached_input"`
}

// cachedRate is the price per million cached prompt tokens: the cached rate
// when set, else the full input rate.
func (p Price) cachedRate() float64 {
	if p.CachedInputPerMTok > 0 {
		return p.CachedInputPerMTok
	}
	return p.InputPerMTok
}

// PriceTable maps a model name, or a prefix of model names, to its price.
// Keys are compared case-insensitively.
//
// The YAML form read by ParsePriceTable is
//
//	models:
//	  gpt-4o-mini: {input: 0.15, output: 0.60}
//	  claude-3-5-haiku:
//	    input: 0.80
//	    output: 4.00
//	    cached_input: 0.08
//
// where input, output and the optional cached_input (prompt tokens served
// from the provider's prompt cache; see [Price.CachedInputPerMTok]) are US
// dollars per million tokens.
type PriceTable map[string]Price

// priceDoc is the YAML document layout.
type priceDoc struct {
	Models map[string]Price `yaml:"models"`
}

// ParsePriceTable decodes a YAML price table. Unknown fields, empty model
// names, duplicate names (ignoring case) and negative prices are rejected
// with ErrBadPriceTable.
func ParsePriceTable(r io.Reader) (PriceTable, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	var doc priceDoc
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return PriceTable{}, nil
		}
		return nil, fmt.Errorf("%w: %w", ErrBadPriceTable, err)
	}
	t := make(PriceTable, len(doc.Models))
	seen := make(map[string]string, len(doc.Models))
	for name, p := range doc.Models {
		key := strings.ToLower(strings.TrimSpace(name))
		if key == "" {
			return nil, fmt.Errorf("%w: empty model name", ErrBadPriceTable)
		}
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("%w: models %q and %q differ only in case", ErrBadPriceTable, prev, name)
		}
		seen[key] = name
		if p.InputPerMTok < 0 || p.OutputPerMTok < 0 || p.CachedInputPerMTok < 0 {
			return nil, fmt.Errorf("%w: model %q has a negative price", ErrBadPriceTable, name)
		}
		t[key] = p
	}
	return t, nil
}

// DefaultPriceTable returns a fresh copy of the embedded prices.yaml. Its
// prices are illustrative list prices as of the date stated in that file and
// must be checked by the user before any cost figure is relied upon.
func DefaultPriceTable() PriceTable {
	t, err := ParsePriceTable(bytes.NewReader(defaultPrices))
	if err != nil {
		// The embedded file is covered by tests; reaching this is a build defect.
		panic(fmt.Sprintf("usage: embedded prices.yaml is invalid: %v", err))
	}
	return t
}

// Merge returns a new table holding t's entries overridden by those of
// overrides.
func (t PriceTable) Merge(overrides PriceTable) PriceTable {
	out := make(PriceTable, len(t)+len(overrides))
	for k, v := range t {
		out[strings.ToLower(k)] = v
	}
	for k, v := range overrides {
		out[strings.ToLower(k)] = v
	}
	return out
}

// Lookup finds the price of model: an exact (case-insensitive) match first,
// then the longest key that is a prefix of the model name, so that
// "gpt-4o-mini-2024-07-18" resolves to "gpt-4o-mini" rather than "gpt-4o".
func (t PriceTable) Lookup(model string) (Price, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if m == "" {
		return Price{}, false
	}
	var (
		best    Price
		bestLen = -1
	)
	for _, k := range sortedKeys(t) {
		key := strings.ToLower(k)
		if key == m {
			return t[k], true
		}
		if key != "" && strings.HasPrefix(m, key) && len(key) > bestLen {
			best, bestLen = t[k], len(key)
		}
	}
	return best, bestLen >= 0
}

// Cost returns the cost in US dollars of u on model. known is false, and usd
// 0, when the model has no price in the table. u.CachedPromptTokens (capped
// at u.PromptTokens) are priced at the model's cached input rate, the rest of
// u.PromptTokens at its input rate.
func (t PriceTable) Cost(model string, u Usage) (usd float64, known bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	cached := min(max(u.CachedPromptTokens, 0), u.PromptTokens)
	uncached := u.PromptTokens - cached
	return (float64(uncached)*p.InputPerMTok + float64(cached)*p.cachedRate() +
		float64(u.CompletionTokens)*p.OutputPerMTok) / 1e6, true
}

// sortedKeys makes Lookup deterministic when a caller-built table holds keys
// that differ only in case.
func sortedKeys(t PriceTable) []string {
	return slices.Sorted(maps.Keys(t))
}
