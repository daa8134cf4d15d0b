// Package docstore gives agents the Wikipedia-like page tools of the ReAct
// paper over a local corpus: Search[entity] opens the page whose title
// matches the entity and shows its first paragraph, or lists similar titles;
// Lookup[keyword] then returns, one per call, the sentences of the open page
// that contain the keyword.
//
// A Store holds the pages and their search index and is shared, read-only,
// by every run. The open page and the lookup cursor belong to a Session: each
// run calls Store.NewSession and registers that session's two tools, so that
// parallel runs never share a cursor. The tools are named "search_page" and
// "lookup" by default (WithNames changes them); "search_page" avoids a clash
// with the BM25 "search" tool of package search.
package docstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/clipperhouse/uax29/v2/sentences"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/planner-engine/planner/tools/search"
)

// Defaults of the store's options.
const (
	// DefaultSearchName is the name of the page search tool.
	DefaultSearchName = "search_page"
	// DefaultLookupName is the name of the keyword lookup tool.
	DefaultLookupName = "lookup"
	// DefaultSimilar is how many similar titles a failed search lists.
	DefaultSimilar = 5
)

// ErrInvalidOption means an Option was given an unusable value.
var ErrInvalidOption = errors.New("invalid docstore option")

// config holds the store settings; see the With* options for meanings.
type config struct {
	searchName string
	lookupName string
	similar    int
}

// Option configures a Store.
type Option func(*config)

// WithNames sets the tool names of the page search and the keyword lookup.
// Neither may be blank and they must differ. Default DefaultSearchName
// ("search_page") and DefaultLookupName ("lookup").
func WithNames(searchName, lookupName string) Option {
	return func(c *config) {
		c.searchName = strings.TrimSpace(searchName)
		c.lookupName = strings.TrimSpace(lookupName)
	}
}

// WithSimilar sets how many similar titles, ranked by search score, a search
// that matches no title lists. It must be at least 1. Default DefaultSimilar
// (5).
func WithSimilar(n int) Option { return func(c *config) { c.similar = n } }

// page is one document split for the tools.
type page struct {
	title string
	// first is the first paragraph, with white space collapsed.
	first string
	// sentences are the sentences of the whole body, in order.
	sentences []string
}

// Store holds the pages of a corpus and their search index. It is immutable
// and safe for concurrent use; per-run state lives in Sessions.
type Store struct {
	idx   *search.Index
	owns  bool
	cfg   config
	pages []page
	// byTitle maps a normalised title to its page; byBase does the same for
	// titles with a trailing "(qualifier)" removed, holding every page that
	// shares a base.
	byTitle map[string]int
	byBase  map[string][]int
}

// New indexes the documents of src and returns a store over them. It fails
// with search.ErrEmptyCorpus, search.ErrBadSource, ErrInvalidOption or ctx's
// error. Close the store to release its index.
func New(ctx context.Context, src search.Source, opts ...Option) (*Store, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	idx, err := search.NewIndex(ctx, src)
	if err != nil {
		return nil, err
	}
	s := newStore(idx, cfg)
	s.owns = true
	return s, nil
}

// NewFromIndex returns a store over an existing index, which may be shared
// with a search tool. The caller keeps ownership: closing the store leaves the
// index open.
func NewFromIndex(idx *search.Index, opts ...Option) (*Store, error) {
	if idx == nil {
		return nil, fmt.Errorf("%w: nil index", ErrInvalidOption)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return newStore(idx, cfg), nil
}

// newConfig applies opts over the defaults and validates the result.
func newConfig(opts []Option) (config, error) {
	cfg := config{searchName: DefaultSearchName, lookupName: DefaultLookupName, similar: DefaultSimilar}
	for _, o := range opts {
		o(&cfg)
	}
	switch {
	case cfg.searchName == "" || cfg.lookupName == "":
		return cfg, fmt.Errorf("%w: tool names must not be blank", ErrInvalidOption)
	case strings.EqualFold(cfg.searchName, cfg.lookupName):
		return cfg, fmt.Errorf("%w: search and lookup tools need different names, both are %q", ErrInvalidOption, cfg.searchName)
	case cfg.similar < 1:
		return cfg, fmt.Errorf("%w: similar titles must be at least 1, got %d", ErrInvalidOption, cfg.similar)
	}
	return cfg, nil
}

// newStore splits the indexed documents into pages. When two documents share
// a normalised title, the first one wins.
func newStore(idx *search.Index, cfg config) *Store {
	docs := idx.Documents()
	s := &Store{
		idx:     idx,
		cfg:     cfg,
		pages:   make([]page, len(docs)),
		byTitle: make(map[string]int, len(docs)),
		byBase:  make(map[string][]int, len(docs)),
	}
	for i, d := range docs {
		s.pages[i] = splitPage(d)
		key := normalize(d.Title)
		if _, dup := s.byTitle[key]; !dup {
			s.byTitle[key] = i
		}
		if base := normalize(stripQualifier(d.Title)); base != key {
			s.byBase[base] = append(s.byBase[base], i)
		}
	}
	return s
}

// splitPage extracts the first paragraph and the sentences of a document.
func splitPage(d search.Document) page {
	p := page{title: d.Title}
	for _, para := range strings.Split(strings.ReplaceAll(d.Text, "\r\n", "\n"), "\n\n") {
		flat := strings.Join(strings.Fields(para), " ")
		if flat == "" {
			continue
		}
		if p.first == "" {
			p.first = flat
		}
		seg := sentences.FromString(flat)
		for seg.Next() {
			if sent := strings.TrimSpace(seg.Value()); sent != "" {
				p.sentences = append(p.sentences, sent)
			}
		}
	}
	return p
}

// Close releases the index when the store created it (New); a store made by
// NewFromIndex leaves the caller's index open.
func (s *Store) Close() error {
	if !s.owns {
		return nil
	}
	return s.idx.Close()
}

// Titles returns the page titles, in corpus order.
func (s *Store) Titles() []string {
	out := make([]string, len(s.pages))
	for i, p := range s.pages {
		out[i] = p.title
	}
	return out
}

// NewSession starts a session with no page open. Each agent run should use
// its own session.
func (s *Store) NewSession() *Session { return &Session{store: s, page: noPage} }

// find resolves an entity to a page: first by exact normalised title, then by
// title without its "(qualifier)" when exactly one page has that base. It
// reports false when no single page matches.
func (s *Store) find(entity string) (int, bool) {
	key := normalize(entity)
	if i, ok := s.byTitle[key]; ok {
		return i, true
	}
	if base := normalize(stripQualifier(entity)); base != key {
		if i, ok := s.byTitle[base]; ok {
			return i, true
		}
	}
	if c := s.byBase[key]; len(c) == 1 {
		return c[0], true
	}
	return 0, false
}

// stripQualifier removes a trailing parenthesised qualifier, as in
// "Galileo (spacecraft)".
func stripQualifier(title string) string {
	t := strings.TrimSpace(title)
	if strings.HasSuffix(t, ")") {
		if open := strings.LastIndex(t, "("); open > 0 {
			return strings.TrimSpace(t[:open])
		}
	}
	return t
}

// normalize makes a title or entity comparable: accents removed, lower case,
// apostrophes dropped, other punctuation and underscores read as spaces, a
// leading "the" dropped, and spaces collapsed. "The Halley's_Comet" and
// "halleys comet" normalise alike, as do "São Paulo" and "sao paulo".
func normalize(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	if folded, _, err := transform.String(t, s); err == nil {
		s = folded
	}
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == '\'' || r == '’':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			b.WriteRune(' ')
		}
	}
	words := strings.Fields(b.String())
	if len(words) > 1 && words[0] == "the" {
		words = words[1:]
	}
	return strings.Join(words, " ")
}
