package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/tools"
)

// Defaults of the search tool's options.
const (
	// DefaultName is the tool name the model calls.
	DefaultName = "search"
	// DefaultTopK is how many documents one call returns.
	DefaultTopK = 3
	// DefaultSnippetLength is the snippet length per document, in runes.
	DefaultSnippetLength = 300
)

// ErrInvalidOption means an Option was given an unusable value.
var ErrInvalidOption = errors.New("invalid search tool option")

// config holds the tool settings; see the With* options for meanings.
type config struct {
	name        string
	description string
	topK        int
	snippetLen  int
}

// Option configures a Tool.
type Option func(*config)

// WithTopK sets how many documents one call returns, best first. It must be
// at least 1. Default DefaultTopK (3).
func WithTopK(k int) Option { return func(c *config) { c.topK = k } }

// WithSnippetLength sets the maximum length, in runes, of the passage shown
// for each document. It must be at least 1. Default DefaultSnippetLength (300).
func WithSnippetLength(n int) Option { return func(c *config) { c.snippetLen = n } }

// WithName sets the tool name. It must not be blank. Default DefaultName
// ("search").
func WithName(name string) Option { return func(c *config) { c.name = strings.TrimSpace(name) } }

// WithDescription replaces the tool description shown to the model. It must
// not be blank. Default: a description of BM25 search over the corpus that
// states the top-k setting.
func WithDescription(d string) Option {
	return func(c *config) { c.description = strings.TrimSpace(d) }
}

// Tool is the "search" tool: BM25 search over an Index. It implements
// tools.Tool, tools.Schemer and tools.MetaProvider and is safe for concurrent
// use.
type Tool struct {
	idx *Index
	cfg config
	// ownsIndex is true when the tool created idx and must close it.
	ownsIndex bool
}

// New indexes the documents of src and returns a search tool over them. It
// fails with ErrEmptyCorpus, ErrBadSource, ErrInvalidOption or ctx's error.
// Close the tool to release the index.
func New(ctx context.Context, src Source, opts ...Option) (*Tool, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	idx, err := NewIndex(ctx, src)
	if err != nil {
		return nil, err
	}
	return &Tool{idx: idx, cfg: cfg, ownsIndex: true}, nil
}

// NewTool returns a search tool over an existing index, which may be shared
// with other tools. The caller keeps ownership: closing the tool leaves the
// index open.
func NewTool(idx *Index, opts ...Option) (*Tool, error) {
	if idx == nil {
		return nil, fmt.Errorf("%w: nil index", ErrInvalidOption)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Tool{idx: idx, cfg: cfg}, nil
}

// newConfig applies opts over the defaults and validates the result.
func newConfig(opts []Option) (config, error) {
	cfg := config{name: DefaultName, topK: DefaultTopK, snippetLen: DefaultSnippetLength}
	for _, o := range opts {
		o(&cfg)
	}
	switch {
	case cfg.topK < 1:
		return cfg, fmt.Errorf("%w: top k must be at least 1, got %d", ErrInvalidOption, cfg.topK)
	case cfg.snippetLen < 1:
		return cfg, fmt.Errorf("%w: snippet length must be at least 1 rune, got %d", ErrInvalidOption, cfg.snippetLen)
	case cfg.name == "":
		return cfg, fmt.Errorf("%w: tool name must not be blank", ErrInvalidOption)
	}
	if cfg.description == "" {
		cfg.description = fmt.Sprintf("Full-text (BM25) search over a local document collection. "+
			"Input: a search query, such as an entity name plus the fact you need "+
			"(for example \"Titan moon discovered by\"). Returns the %d best matching documents, "+
			"each with its title, source file and the passage that best matches the query.", cfg.topK)
	}
	return cfg, nil
}

// Name returns the tool name ("search" by default).
func (t *Tool) Name() string { return t.cfg.name }

// Description tells the model what the tool does and what input it takes.
func (t *Tool) Description() string { return t.cfg.description }

// Schema declares the single string argument "query".
func (t *Tool) Schema() map[string]any {
	return tools.StringSchema("query", "Search terms, for example an entity name and the attribute wanted.")
}

// Meta reports that searching has no side effects and needs no network.
func (t *Tool) Meta() tools.Meta { return tools.Meta{ReadOnly: true} }

// Index returns the index the tool searches.
func (t *Tool) Index() *Index { return t.idx }

// Close releases the index when the tool created it (New); a tool made by
// NewTool leaves the caller's index open.
func (t *Tool) Close() error {
	if !t.ownsIndex {
		return nil
	}
	return t.idx.Close()
}

// Call searches for the query in input, given either as plain text or as the
// JSON object {"query": "..."} (a JSON string is accepted too). It returns the
// top documents as numbered blocks,
//
//	[1] <Title> (source: <file>)
//	<snippet>
//
// separated by blank lines, or an observation saying that nothing matched.
// A blank query fails with tools.ErrBadInput; a cancelled ctx with its error.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	q, err := parseQuery(input)
	if err != nil {
		return "", err
	}
	hits, err := t.idx.Search(ctx, q, t.cfg.topK)
	if err != nil {
		return "", err
	}
	if len(hits) == 0 {
		return fmt.Sprintf("No documents matched %q. Try a different query: other or fewer words, "+
			"for example just the name of the entity you are looking for.", q), nil
	}
	return format(hits, t.cfg.snippetLen), nil
}

// format renders hits as the tool's observation: numbered blocks
// "[n] <Title> (source: <file>)" followed by a snippet of at most snippetLen
// runes, separated by blank lines.
func format(hits []Hit, snippetLen int) string {
	var b strings.Builder
	for i, h := range hits {
		if i > 0 {
			b.WriteString("\n\n")
		}
		src := h.Doc.Source
		if src == "" {
			src = h.Doc.ID
		}
		b.WriteString("[" + strconv.Itoa(i+1) + "] " + h.Doc.Title + " (source: " + src + ")")
		if s := h.Snippet(snippetLen); s != "" {
			b.WriteString("\n" + s)
		}
	}
	return b.String()
}

// parseQuery extracts the query from a tool input: the "query" field of a JSON
// object, a JSON string, or else the trimmed text itself. It fails with
// tools.ErrBadInput when the query is blank or a JSON object lacks a string
// "query" field.
func parseQuery(input string) (string, error) {
	s := strings.TrimSpace(input)
	switch {
	case strings.HasPrefix(s, "{"):
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &obj); err == nil {
			var q string
			if err := json.Unmarshal(obj["query"], &q); err != nil {
				return "", fmt.Errorf("%w: JSON input needs a string field \"query\", as in {\"query\": \"Titan\"}", tools.ErrBadInput)
			}
			s = strings.TrimSpace(q)
		}
	case strings.HasPrefix(s, `"`):
		var q string
		if err := json.Unmarshal([]byte(s), &q); err == nil {
			s = strings.TrimSpace(q)
		}
	}
	if s == "" {
		return "", fmt.Errorf("%w: empty search query; give some search terms, such as the name of an entity", tools.ErrBadInput)
	}
	return s, nil
}
