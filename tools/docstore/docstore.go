// Package docstore gives agents the Wikipedia-like page tools of the ReAct
// paper over a local corpus: Search[entity] opens the page whose title
// matches the entity and shows its beginning, or lists similar titles;
// Lookup[keyword] then returns, one per call, the passages of the open page
// that contain the keyword.
//
// A Store holds the pages and their search index, and is shared, read-only,
// by every run. The open page and the lookup cursor are per-run state: the
// tools of Store.Tools are shared objects that keep that state in the run's
// tools.RunState (see tools.State), so one pipeline serves concurrent runs
// correctly, and a call made outside a run starts from a fresh state. A Go
// caller that drives the tools itself can use a Session instead, which
// holds its own state. The tools are named "search_page" and "lookup" by
// default (WithNames changes them); "search_page" avoids a clash with the
// BM25 "search" tool of package search.
//
// The observations follow one of three formats (WithFormat):
//
//   - FormatDefault: the first paragraph of a page, and "(Result k / n)"
//     sentences, with titles matched loosely (case, accents, punctuation, a
//     leading "the", a trailing qualifier).
//   - FormatWikiEnv: the Wikipedia environment of the ReAct paper's code
//     (wikienv.py in github.com/ysymyth/ReAct), byte for byte: the first
//     five sentences of a page, "Could not find X. Similar: ['A', 'B']."
//     with Python's list repr, "(Result k / n) sentence" and "No more
//     results.\n".
//   - FormatLangChain: LangChain's DocstoreExplorer over its Wikipedia
//     docstore: the page summary, "Could not find [X]. Similar: ['A']",
//     "(Result k/n) paragraph", "No Results" and "No More Results".
//
// The corpus comes from a search.Source; a *Corpus (ReadJSONL, ReadFS, Load)
// also records the similar titles that failed searches listed in a real run,
// which a search for exactly that entity then lists again.
package docstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
	// DefaultSimilar is how many similar titles a failed search lists in
	// the default and wikienv formats (wikienv.py keeps five).
	DefaultSimilar = 5
	// DefaultLangChainSimilar is how many similar titles a failed search
	// lists in the langchain format (the ten results of
	// wikipedia.search).
	DefaultLangChainSimilar = 10
)

// ErrInvalidOption means an Option was given an unusable value.
var ErrInvalidOption = errors.New("invalid docstore option")

// Format selects whose observations the tools reproduce.
type Format string

// The formats; see the package documentation.
const (
	// FormatDefault is planner's own format. It is the default.
	FormatDefault Format = "default"
	// FormatWikiEnv reproduces the ReAct paper's WikiEnv. A page's text
	// is what wikienv.py keeps of a Wikipedia page (its self.page): the
	// paragraphs, one per line, already cleaned (clean_str) and without
	// those of two words or fewer.
	FormatWikiEnv Format = "wikienv"
	// FormatLangChain reproduces LangChain's DocstoreExplorer over its
	// Wikipedia docstore. A page's text is the wikipedia package's page
	// content: paragraphs split by line breaks, sections by blank lines
	// and "== Heading ==" lines.
	FormatLangChain Format = "langchain"
)

// Formats lists the formats, the default first.
func Formats() []Format { return []Format{FormatDefault, FormatWikiEnv, FormatLangChain} }

// ParseFormat returns the format named s (case-insensitive; "" is
// FormatDefault), or fails with ErrInvalidOption.
func ParseFormat(s string) (Format, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return FormatDefault, nil
	}
	for _, f := range Formats() {
		if string(f) == t {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w: unknown format %q (formats: default, wikienv, langchain)", ErrInvalidOption, s)
}

// config holds the store settings; see the With* options for meanings.
type config struct {
	searchName  string
	lookupName  string
	similar     int
	similarSet  bool
	format      Format
	autoSuggest bool
	recorded    map[string][]string
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

// WithSimilar sets how many similar titles a search that matches no page
// lists: the first n of a recorded list, or else the n best search
// results. It must be at least 1. Default DefaultSimilar (5), or
// DefaultLangChainSimilar (10) in the langchain format.
func WithSimilar(n int) Option {
	return func(c *config) { c.similar, c.similarSet = n, true }
}

// WithFormat selects the observation format, named as ParseFormat reads
// it (so "" is FormatDefault). Default FormatDefault.
func WithFormat(f Format) Option { return func(c *config) { c.format = f } }

// WithAutoSuggest sets whether, in the langchain format, a search whose
// term matches no title opens the best search result instead, as the
// wikipedia package's page(auto_suggest=True), which LangChain's docstore
// calls, does with Wikipedia's top search hit. Other formats ignore it.
// Default true.
func WithAutoSuggest(on bool) Option { return func(c *config) { c.autoSuggest = on } }

// WithSimilarTitles records the similar titles that failed searches listed,
// keyed by the entity exactly as searched (see Corpus.Similar). They add to
// those of a *Corpus given to New; these win for an entity in both.
func WithSimilarTitles(lists map[string][]string) Option {
	return func(c *config) {
		if c.recorded == nil {
			c.recorded = map[string][]string{}
		}
		maps.Copy(c.recorded, lists)
	}
}

// page is one document split for the tools; only the fields of the store's
// format are filled in.
type page struct {
	title string
	// first is the first paragraph with white space collapsed, and
	// sentences the sentences of the whole body (default format).
	first     string
	sentences []string
	// obs is the observation of a search that opens the page, parts the
	// passages a lookup walks and lower those passages in lower case
	// (wikienv: the first five sentences, and sentences; langchain: the
	// summary, and paragraphs).
	obs   string
	parts []string
	lower []string
	// disambiguation marks a page that says it "may refer to:" other
	// pages, which the wikienv and langchain formats do not open.
	disambiguation bool
}

// Store holds the pages of a corpus and their search index. It is immutable
// and safe for concurrent use; per-run state lives in the run's
// tools.RunState or in a Session.
type Store struct {
	idx   *search.Index
	owns  bool
	cfg   config
	pages []page
	// byTitle maps a normalised title to its page; byBase does the same for
	// titles with a trailing "(qualifier)" removed, holding every page that
	// shares a base (default format).
	byTitle map[string]int
	byBase  map[string][]int
	// titles matches entities to pages in the wikienv and langchain
	// formats.
	titles wikiTitles
	// byID maps a document ID to its page, for search hits.
	byID map[string]int
}

// New indexes the documents of src and returns a store over them; when src
// is a *Corpus, its similar lists are used too. It fails with
// ErrEmptyCorpus, ErrBadSource, ErrInvalidOption or ctx's error. Close the
// store to release its index.
func New(ctx context.Context, src search.Source, opts ...Option) (*Store, error) {
	if c, ok := src.(*Corpus); ok && len(c.Similar) > 0 {
		opts = append([]Option{WithSimilarTitles(c.Similar)}, opts...)
	}
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
	cfg := config{searchName: DefaultSearchName, lookupName: DefaultLookupName, format: FormatDefault, autoSuggest: true}
	for _, o := range opts {
		o(&cfg)
	}
	f, err := ParseFormat(string(cfg.format))
	if err != nil {
		return cfg, err
	}
	cfg.format = f
	if !cfg.similarSet {
		cfg.similar = DefaultSimilar
		if cfg.format == FormatLangChain {
			cfg.similar = DefaultLangChainSimilar
		}
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

// newStore splits the indexed documents into pages.
func newStore(idx *search.Index, cfg config) *Store { return storeOf(idx, idx.Documents(), cfg) }

// storeOf returns a store over docs, the documents of idx in index order.
// When two documents share a title, the first one wins.
func storeOf(idx *search.Index, docs []search.Document, cfg config) *Store {
	s := &Store{
		idx:   idx,
		cfg:   cfg,
		pages: make([]page, len(docs)),
		byID:  make(map[string]int, len(docs)),
	}
	if cfg.format == FormatDefault {
		s.byTitle = make(map[string]int, len(docs))
		s.byBase = make(map[string][]int, len(docs))
	} else {
		s.titles = newWikiTitles(len(docs))
	}
	for i, d := range docs {
		if _, dup := s.byID[d.ID]; !dup {
			s.byID[d.ID] = i
		}
		switch cfg.format {
		case FormatWikiEnv:
			s.pages[i] = wikiEnvPage(d)
			s.titles.add(d.Title, i)
		case FormatLangChain:
			s.pages[i] = langChainPage(d)
			s.titles.add(d.Title, i)
		default:
			s.pages[i] = splitPage(d)
			key := normalize(d.Title)
			if _, dup := s.byTitle[key]; !dup {
				s.byTitle[key] = i
			}
			if base := normalize(stripQualifier(d.Title)); base != key {
				s.byBase[base] = append(s.byBase[base], i)
			}
		}
	}
	return s
}

// splitPage extracts the first paragraph and the sentences of a document
// (default format).
func splitPage(d search.Document) page {
	p := page{title: d.Title}
	for _, para := range strings.Split(strings.ReplaceAll(validUTF8(d.Text), "\r\n", "\n"), "\n\n") {
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

// Format returns the store's observation format.
func (s *Store) Format() Format { return s.cfg.format }

// Titles returns the page titles, in corpus order.
func (s *Store) Titles() []string {
	out := make([]string, len(s.pages))
	for i, p := range s.pages {
		out[i] = p.title
	}
	return out
}

// similarTitles returns the titles a failed search for entity lists: the
// recorded list for entity (or for entity with its enclosing square
// brackets added or removed, the form WikiEnv and LangChain report a
// disambiguation page in), else the best search results for query; at most
// s.cfg.similar titles either way.
func (s *Store) similarTitles(ctx context.Context, entity, query string) ([]string, error) {
	if list, ok := s.recorded(entity); ok {
		return list[:min(len(list), s.cfg.similar)], nil
	}
	hits, err := s.idx.Search(ctx, query, s.cfg.similar)
	if err != nil {
		return nil, fmt.Errorf("search similar pages for %q: %w", query, err)
	}
	titles := make([]string, len(hits))
	for k, h := range hits {
		titles[k] = h.Doc.Title
	}
	return titles, nil
}

// recorded returns the recorded similar list of entity, trying entity as
// given, then with enclosing square brackets removed or added.
func (s *Store) recorded(entity string) ([]string, bool) {
	if list, ok := s.cfg.recorded[entity]; ok {
		return list, true
	}
	if inner, ok := strings.CutPrefix(entity, "["); ok {
		if inner, ok := strings.CutSuffix(inner, "]"); ok {
			list, ok := s.cfg.recorded[inner]
			return list, ok
		}
	}
	list, ok := s.cfg.recorded["["+entity+"]"]
	return list, ok
}

// topHit returns the page of the best search result for q, for the
// langchain format's auto-suggest.
func (s *Store) topHit(ctx context.Context, q string) (int, bool, error) {
	hits, err := s.idx.Search(ctx, q, 1)
	if err != nil {
		return 0, false, fmt.Errorf("search %q: %w", q, err)
	}
	if len(hits) == 0 {
		return 0, false, nil
	}
	i, ok := s.byID[hits[0].Doc.ID]
	return i, ok, nil
}

// find resolves an entity to a page: first by exact normalised title, then by
// title without its "(qualifier)" when exactly one page has that base. It
// reports false when no single page matches (default format).
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

// foldAccents removes combining marks after canonical decomposition, so
// that "São Paulo" reads as "Sao Paulo".
func foldAccents(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	if folded, _, err := transform.String(t, s); err == nil {
		return folded
	}
	return s
}

// normalize makes a title or entity comparable: accents removed, lower case,
// apostrophes dropped, other punctuation and underscores read as spaces, a
// leading "the" dropped, and spaces collapsed. "The Halley's_Comet" and
// "halleys comet" normalise alike, as do "São Paulo" and "sao paulo".
func normalize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(foldAccents(s)) {
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
