package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/clipperhouse/uax29/v2/sentences"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Field names of the bleve index.
const (
	fieldTitle = "title"
	fieldText  = "text"
)

// titleBoost weighs a query term found in a title against the same term in
// a body. Titles are so short that BM25 already scores a title match far above
// a body match; halving it keeps a page that merely names a query word in its
// title (for example "Juno (spacecraft)" for "spacecraft") from outranking the
// page whose body answers the query, while a page about the queried entity
// still ranks first. Tuned on the demo corpus.
const titleBoost = 0.5

// batchSize is how many documents go into one bleve batch; ctx is checked
// between batches.
const batchSize = 256

// ErrClosed means the index was used after Close.
var ErrClosed = errors.New("search index is closed")

// Index is an in-memory BM25 index over a corpus. It is safe for concurrent
// use. Close releases it.
type Index struct {
	bleve bleve.Index
	docs  []Document
	// flat holds each document's body with runs of white space collapsed to
	// one space: the text that is indexed, and that snippets are cut from.
	flat []string
	// bodies holds what snippets need of each flat body, computed once at
	// indexing instead of at every search.
	bodies []body
	// titleTerms holds each document's analysed title terms, which tell
	// snippets which matched terms the title already shows.
	titleTerms [][]string
	// cache keeps the hits of recent searches (see hitCache).
	cache hitCache
	// closed is set by Close: a closed index serves nothing, cached or not.
	closed atomic.Bool
	// closeOnce guards bleve.Close, which must run at most once.
	closeOnce sync.Once
	closeErr  error
}

// cacheSize bounds the searches an Index remembers.
const cacheSize = 1024

// hitCache remembers the hits of the last cacheSize distinct searches
// (least recently used first out), keyed by the query and k. The index
// never changes once built, so a search's hits depend on nothing else, and
// a search repeated (the same entity looked up by several runs, configs or
// steps) costs a map lookup instead of a BM25 query. The zero value is an
// empty cache; it is safe for concurrent use.
type hitCache struct {
	once  sync.Once
	cache *lru.Cache[hitKey, []Hit]
	off   bool // tests: never cache
}

type hitKey struct {
	query string
	k     int
}

func (c *hitCache) lru() *lru.Cache[hitKey, []Hit] {
	c.once.Do(func() { c.cache, _ = lru.New[hitKey, []Hit](cacheSize) }) // New fails only for a size below 1
	return c.cache
}

// get returns a copy of the hits cached for key.
func (c *hitCache) get(key hitKey) ([]Hit, bool) {
	hits, ok := c.lru().Get(key)
	return slices.Clone(hits), ok
}

// put caches a copy of hits for key. Hits share their match slices with
// the cache; nothing writes to them after Search.
func (c *hitCache) put(key hitKey, hits []Hit) {
	if !c.off {
		c.lru().ContainsOrAdd(key, slices.Clone(hits))
	}
}

// len returns how many searches are cached.
func (c *hitCache) len() int { return c.lru().Len() }

// Hit is one ranked search result.
type Hit struct {
	// Doc is the matching document.
	Doc Document
	// Score is the BM25 relevance score; higher is better. Scores are only
	// comparable within one query.
	Score float64
	// flat is the document body with white space collapsed.
	flat string
	// body holds flat's sentence starts and whether it is ASCII; nil for
	// a zero Hit.
	body *body
	// matches locate the query terms in flat, ordered by offset.
	matches []match
	// terms is the number of distinct terms in matches; match.id is below it.
	terms int
}

// body is what Snippet needs of a flat body besides its text.
type body struct {
	// sentences are the byte offsets of the body's sentence starts
	// (Unicode sentence segmentation), in order.
	sentences []int
	// ascii is true when every byte of the body is below utf8.RuneSelf,
	// so that a rune count is a byte count.
	ascii bool
}

// newBody segments text into sentences and checks whether it is ASCII.
func newBody(text string) body {
	b := body{ascii: isASCII(text)}
	seg := sentences.FromString(text)
	for seg.Next() {
		b.sentences = append(b.sentences, seg.Start())
	}
	return b
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// match is one occurrence of an analysed query term in a body: the byte
// range [start, end), the term (its stem) and its number among the hit's
// distinct terms, and whether the term also occurs in the document's title.
type match struct {
	start, end int
	term       string
	id         int
	inTitle    bool
}

// NewIndex reads every document of src and indexes it in memory. It fails
// with ErrEmptyCorpus when src yields no documents and with ctx's error when
// ctx ends first.
func NewIndex(ctx context.Context, src Source) (*Index, error) {
	docs, err := src.Documents(ctx)
	if err != nil {
		return nil, fmt.Errorf("load corpus: %w", err)
	}
	if len(docs) == 0 {
		return nil, ErrEmptyCorpus
	}
	b, err := bleve.NewUsing("", indexMapping(), scorch.Name, bleve.Config.DefaultMemKVStore, nil)
	if err != nil {
		return nil, fmt.Errorf("create search index: %w", err)
	}
	idx := &Index{bleve: b, docs: docs, flat: make([]string, len(docs)), bodies: make([]body, len(docs)), titleTerms: make([][]string, len(docs))}
	if err := idx.add(ctx); err != nil {
		_ = b.Close()
		return nil, err
	}
	return idx, nil
}

// indexMapping analyses the title and the body with the English analyzer and
// scores with BM25. Only the body keeps term vectors, which locate matches for
// snippets; nothing is stored, since the documents are kept in Index.docs.
func indexMapping() *mapping.IndexMappingImpl {
	title := bleve.NewTextFieldMapping()
	title.Analyzer = en.AnalyzerName
	title.Store = false
	title.IncludeInAll = false
	title.IncludeTermVectors = false
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = false
	text.IncludeInAll = false
	text.IncludeTermVectors = true
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldTitle, title)
	dm.AddFieldMappingsAt(fieldText, text)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = dm
	m.DefaultAnalyzer = en.AnalyzerName
	m.ScoringModel = index.BM25Scoring
	m.IndexDynamic = false
	m.StoreDynamic = false
	m.DocValuesDynamic = false
	return m
}

// add indexes idx.docs in batches.
func (idx *Index) add(ctx context.Context) error {
	batch := idx.bleve.NewBatch()
	for i, d := range idx.docs {
		idx.flat[i] = strings.Join(strings.Fields(d.Text), " ")
		idx.bodies[i] = newBody(idx.flat[i])
		terms, err := idx.terms(d.Title)
		if err != nil {
			return err
		}
		idx.titleTerms[i] = terms
		err = batch.Index(docKey(i), map[string]any{fieldTitle: d.Title, fieldText: idx.flat[i]})
		if err != nil {
			return fmt.Errorf("index document %q: %w", d.ID, err)
		}
		if batch.Size() >= batchSize || i == len(idx.docs)-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := idx.bleve.Batch(batch); err != nil {
				return fmt.Errorf("index documents: %w", err)
			}
			batch.Reset()
		}
	}
	return nil
}

// Len returns the number of documents in the index.
func (idx *Index) Len() int { return len(idx.docs) }

// Documents returns a copy of the indexed documents, in source order.
func (idx *Index) Documents() []Document { return append([]Document(nil), idx.docs...) }

// Search returns up to k documents matching q, best first. The query is
// analysed like the documents; any of its terms may match (OR semantics), in
// the title or the body, and documents matching more of the query's
// term-field pairs rank higher. A query with no
// searchable terms (empty, or only stop words) yields no hits and no error.
// Search fails with ctx's error when ctx ends first, and with ErrClosed after
// Close.
func (idx *Index) Search(ctx context.Context, q string, k int) ([]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k < 1 || strings.TrimSpace(q) == "" {
		return nil, nil
	}
	key := hitKey{query: q, k: k}
	if !idx.closed.Load() {
		if hits, ok := idx.cache.get(key); ok {
			return hits, nil
		}
	}
	terms, err := idx.terms(q)
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 {
		return nil, nil
	}
	k = min(k, len(idx.docs))
	clauses := make([]query.Query, 0, 2*len(terms))
	for _, term := range terms {
		inTitle := bleve.NewTermQuery(term)
		inTitle.SetField(fieldTitle)
		inTitle.SetBoost(titleBoost)
		inText := bleve.NewTermQuery(term)
		inText.SetField(fieldText)
		clauses = append(clauses, inTitle, inText)
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(clauses...), k, 0, false)
	req.IncludeLocations = true
	req.SortBy([]string{"-_score", "_id"})
	res, err := idx.bleve.SearchInContext(ctx, req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if errors.Is(err, bleve.ErrorIndexClosed) {
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("search %q: %w", q, err)
	}
	hits := make([]Hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		i, err := strconv.Atoi(h.ID)
		if err != nil || i < 0 || i >= len(idx.docs) {
			return nil, fmt.Errorf("search %q: index returned unknown document %q", q, h.ID)
		}
		var ms []match
		id := 0
		for term, locs := range h.Locations[fieldText] {
			inTitle := slices.Contains(idx.titleTerms[i], term)
			for _, l := range locs {
				ms = append(ms, match{start: int(l.Start), end: int(l.End), term: term, id: id, inTitle: inTitle})
			}
			id++
		}
		slices.SortFunc(ms, func(a, b match) int {
			return cmp.Or(cmp.Compare(a.start, b.start), strings.Compare(a.term, b.term))
		})
		hits = append(hits, Hit{Doc: idx.docs[i], Score: h.Score, flat: idx.flat[i], body: &idx.bodies[i], matches: ms, terms: id})
	}
	idx.cache.put(key, hits)
	return hits, nil
}

// terms analyses q the way document fields are analysed and returns its
// distinct terms in order of first occurrence.
func (idx *Index) terms(q string) ([]string, error) {
	analyzer := idx.bleve.Mapping().AnalyzerNamed(en.AnalyzerName)
	if analyzer == nil {
		return nil, fmt.Errorf("search %q: analyzer %q is not registered", q, en.AnalyzerName)
	}
	var terms []string
	for _, tok := range analyzer.Analyze([]byte(q)) {
		if t := string(tok.Term); !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	return terms, nil
}

// Close releases the index. Later calls do nothing and return the first
// call's result. Searching a closed index fails with ErrClosed.
func (idx *Index) Close() error {
	idx.closed.Store(true)
	idx.closeOnce.Do(func() {
		if err := idx.bleve.Close(); err != nil {
			idx.closeErr = fmt.Errorf("close search index: %w", err)
		}
	})
	return idx.closeErr
}

// docKey is the bleve id of the i-th document: zero-padded so that ties in
// score resolve in source order.
func docKey(i int) string { return fmt.Sprintf("%09d", i) }
