// Package retrieve picks the tools of a large tool set that are relevant to
// a query, so that a model call can show a few tools instead of all of
// them. A Retriever ranks a registry's tools with BM25 over each tool's
// name (split into words), description and input schema (property names
// and descriptions), using a keyword index it is given (WithIndexer; the
// command line's is tools/search's, search.Keywords); with an Embedder it
// ranks by the cosine similarity of embeddings instead, or fuses both
// rankings (method "hybrid").
//
// Select returns the chosen names in the registry's order, not in rank
// order: a prompt that lists the same tools is then the same text, which
// keeps provider prompt caches hitting.
package retrieve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/keyword"
)

// Retrieval methods (WithMethod).
const (
	// MethodBM25 ranks tools by BM25 over their names, descriptions and
	// input schemas. It needs a keyword index (WithIndexer).
	MethodBM25 = "bm25"
	// MethodEmbedding ranks tools by the cosine similarity of the query's
	// embedding and each tool's; it needs WithEmbedder.
	MethodEmbedding = "embedding"
	// MethodHybrid fuses the BM25 and the embedding rankings (reciprocal
	// rank fusion); it needs WithEmbedder and WithIndexer.
	MethodHybrid = "hybrid"
)

// Methods lists the retrieval methods, the default first.
func Methods() []string { return []string{MethodBM25, MethodEmbedding, MethodHybrid} }

// rrfK is the constant of reciprocal rank fusion: a tool's fused score is
// the sum over rankings of 1/(rrfK + rank). 60 is the value of the paper
// that introduced it (Cormack et al., 2009).
const rrfK = 60

// Errors of New and Select.
var (
	// ErrNoTools means the registry has no tools to retrieve from.
	ErrNoTools = errors.New("retrieve: the registry has no tools")
	// ErrBadMethod means WithMethod named no known method.
	ErrBadMethod = errors.New("retrieve: unknown retrieval method")
	// ErrNoEmbedder means the method needs embeddings and no Embedder was
	// given (WithEmbedder).
	ErrNoEmbedder = errors.New("retrieve: the method needs an embedder")
	// ErrNoIndexer means the method ranks by BM25 and no keyword index
	// was given (WithIndexer).
	ErrNoIndexer = errors.New("retrieve: the method needs a keyword index")
	// ErrEmbedding means the Embedder failed or returned vectors of the
	// wrong number or size.
	ErrEmbedding = errors.New("retrieve: embedding failed")
	// ErrNoMatch means the query has no term or meaning that matches any
	// tool (an empty query, or only stop words): nothing tells which tools
	// are relevant. A caller usually shows every tool then.
	ErrNoMatch = errors.New("retrieve: the query matches no tool")
)

// Embedder computes vector embeddings of texts. It is the method set of
// langchaingo's embeddings.Embedder, so those plug in unchanged.
type Embedder interface {
	// EmbedDocuments returns one vector per text.
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery returns the vector of one query text.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// Option configures New.
type Option func(*options)

type options struct {
	method   string
	embedder Embedder
	indexer  keyword.Indexer
}

// WithMethod selects how tools are ranked: MethodBM25, MethodEmbedding or
// MethodHybrid. Optional. Defaults to MethodBM25, or to MethodEmbedding
// when WithEmbedder is given.
func WithMethod(m string) Option { return func(o *options) { o.method = m } }

// WithEmbedder sets the embedder of methods "embedding" and "hybrid". New
// embeds every tool's text once, in one EmbedDocuments call. Optional.
// Defaults to none.
func WithEmbedder(e Embedder) Option { return func(o *options) { o.embedder = e } }

// WithIndexer sets what builds the BM25 keyword index of methods "bm25"
// and "hybrid" (search.Keywords{} of package tools/search is the command
// line's). New indexes every tool's text once. Defaults to none, with
// which those methods fail with ErrNoIndexer.
func WithIndexer(ix keyword.Indexer) Option { return func(o *options) { o.indexer = ix } }

// Retriever ranks the tools of one registry against queries. It is
// immutable after New and safe for concurrent use; Close releases its
// search index.
type Retriever struct {
	method string
	// names are the registry's tool names, in its order.
	names []string
	// byNorm maps tools.NormalizeName of each name to its index in names.
	byNorm map[string]int
	idx    keyword.Index
	emb    Embedder
	// vecs are the tools' unit-length embeddings, in names' order.
	vecs [][]float32
}

// New builds a retriever over reg's tools: it indexes each tool's text
// (Text) for BM25 and, with an embedder, embeds it. It fails with
// ErrNoTools for an empty registry, ErrBadMethod, ErrNoEmbedder,
// ErrNoIndexer, ErrEmbedding, or ctx's error.
func New(ctx context.Context, reg *tools.Registry, opts ...Option) (*Retriever, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.method == "" {
		o.method = MethodBM25
		if o.embedder != nil {
			o.method = MethodEmbedding
		}
	}
	if !slices.Contains(Methods(), o.method) {
		return nil, fmt.Errorf("%w %q: want one of %s", ErrBadMethod, o.method, strings.Join(Methods(), ", "))
	}
	if o.method != MethodBM25 && o.embedder == nil {
		return nil, fmt.Errorf("%w: method %q ranks by embeddings; give one, or use method %q", ErrNoEmbedder, o.method, MethodBM25)
	}
	if o.method != MethodEmbedding && o.indexer == nil {
		return nil, fmt.Errorf("%w: method %q ranks by BM25; give one (WithIndexer), or use method %q with an embedder", ErrNoIndexer, o.method, MethodEmbedding)
	}
	if reg.Len() == 0 {
		return nil, ErrNoTools
	}
	r := &Retriever{method: o.method, names: reg.Names(), byNorm: map[string]int{}}
	infos := reg.Infos()
	texts := make([]string, len(infos))
	docs := make([]keyword.Document, len(infos))
	for i, in := range infos {
		r.byNorm[tools.NormalizeName(in.Name)] = i
		texts[i] = Text(in)
		docs[i] = keyword.Document{ID: in.Name, Title: SplitName(in.Name), Text: texts[i]}
	}
	if o.method != MethodEmbedding {
		idx, err := o.indexer.Index(ctx, docs)
		if err != nil {
			return nil, fmt.Errorf("retrieve: index the tools: %w", err)
		}
		r.idx = idx
	}
	if o.embedder != nil && o.method != MethodBM25 {
		vecs, err := o.embedder.EmbedDocuments(ctx, texts)
		if err == nil && len(vecs) != len(texts) {
			err = fmt.Errorf("got %d vectors for %d tools", len(vecs), len(texts))
		}
		if err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("%w: embed the tools: %w", ErrEmbedding, err)
		}
		r.emb = o.embedder
		for i, v := range vecs {
			if len(v) == 0 || len(v) != len(vecs[0]) {
				_ = r.Close()
				return nil, fmt.Errorf("%w: tool %q got a vector of %d dimensions, the first tool %d", ErrEmbedding, r.names[i], len(v), len(vecs[0]))
			}
			r.vecs = append(r.vecs, unit(v))
		}
	}
	return r, nil
}

// Method returns the retriever's method.
func (r *Retriever) Method() string { return r.method }

// Len returns the number of tools.
func (r *Retriever) Len() int { return len(r.names) }

// Close releases the keyword index. Select fails after Close (with the
// index's error) unless the method is MethodEmbedding.
func (r *Retriever) Close() error {
	if r.idx == nil {
		return nil
	}
	return r.idx.Close()
}

// Select returns the names of the up to k tools most relevant to query
// that always does not name, plus every tool named in always (matched as the registry matches names; names
// it does not have are ignored), in the registry's order. With k at least
// the number of tools it returns every tool without ranking; with k below
// 1, only the tools of always. It fails with ErrNoMatch when the query
// matches no tool (whatever always holds: nothing says which tools the
// query needs), with ErrEmbedding when the query cannot be embedded, and
// with ctx's error.
func (r *Retriever) Select(ctx context.Context, query string, k int, always []string) ([]string, error) {
	if k >= len(r.names) {
		return slices.Clone(r.names), nil
	}
	var ranked []string
	if k > 0 {
		var err error
		if ranked, err = r.Rank(ctx, query, k+len(always)); err != nil {
			return nil, err
		}
	}
	return r.SelectRanked(ranked, k, always), nil
}

// SelectRanked is Select over a ranking Rank returned (at least k+len(always) long when it can be).
func (r *Retriever) SelectRanked(ranked []string, k int, always []string) []string {
	keep := make([]bool, len(r.names))
	for _, a := range always {
		if i, ok := r.byNorm[tools.NormalizeName(a)]; ok {
			keep[i] = true
		}
	}
	added := 0
	for _, name := range ranked {
		if i := r.byNorm[tools.NormalizeName(name)]; !keep[i] && added < k {
			keep[i] = true
			added++
		}
	}
	var out []string
	for i, name := range r.names {
		if keep[i] {
			out = append(out, name)
		}
	}
	return out
}

// Rank returns the names of up to k tools most relevant to query, best
// first; ties keep the registry's order. Only tools that match the query
// are returned (with BM25, those that share a term with it; with
// embeddings, those of positive cosine similarity), so there may be fewer
// than k. It fails with ErrNoMatch when none matches.
func (r *Retriever) Rank(ctx context.Context, query string, k int) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k < 1 || strings.TrimSpace(query) == "" {
		return nil, ErrNoMatch
	}
	var order []int
	switch r.method {
	case MethodBM25:
		hits, err := r.bm25(ctx, query, k)
		if err != nil {
			return nil, err
		}
		order = hits
	case MethodEmbedding:
		sims, err := r.cosine(ctx, query)
		if err != nil {
			return nil, err
		}
		order = positive(sims)
	case MethodHybrid:
		lex, err := r.bm25(ctx, query, len(r.names))
		if err != nil && !errors.Is(err, ErrNoMatch) {
			return nil, err
		}
		sims, err := r.cosine(ctx, query)
		if err != nil {
			return nil, err
		}
		fused := make([]float64, len(r.names))
		for rank, i := range lex {
			fused[i] += 1 / float64(rrfK+rank+1)
		}
		for rank, i := range positive(sims) {
			fused[i] += 1 / float64(rrfK+rank+1)
		}
		order = positive(fused)
	}
	if len(order) == 0 {
		return nil, ErrNoMatch
	}
	out := make([]string, 0, min(k, len(order)))
	for _, i := range order[:min(k, len(order))] {
		out = append(out, r.names[i])
	}
	return out, nil
}

// bm25 returns the indexes of the k best BM25 matches of query, best
// first (the index breaks ties in document order, the registry's).
func (r *Retriever) bm25(ctx context.Context, query string, k int) ([]int, error) {
	hits, err := r.idx.Search(ctx, query, k, 0)
	if err != nil {
		return nil, fmt.Errorf("retrieve: search the tools: %w", err)
	}
	if len(hits) == 0 {
		return nil, ErrNoMatch
	}
	out := make([]int, 0, len(hits))
	for _, h := range hits {
		i, ok := r.byNorm[tools.NormalizeName(h.ID)]
		if !ok {
			return nil, fmt.Errorf("retrieve: the index returned unknown tool %q", h.ID)
		}
		out = append(out, i)
	}
	return out, nil
}

// cosine returns the cosine similarity of query's embedding with each
// tool's, in names' order.
func (r *Retriever) cosine(ctx context.Context, query string) ([]float64, error) {
	q, err := r.emb.EmbedQuery(ctx, query)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, fmt.Errorf("%w: embed the query: %w", ErrEmbedding, err)
	}
	if len(q) != len(r.vecs[0]) {
		return nil, fmt.Errorf("%w: the query's vector has %d dimensions, the tools' %d", ErrEmbedding, len(q), len(r.vecs[0]))
	}
	q = unit(q)
	sims := make([]float64, len(r.vecs))
	for i, v := range r.vecs {
		var dot float64
		for j := range v {
			dot += float64(v[j]) * float64(q[j])
		}
		sims[i] = dot
	}
	return sims, nil
}

// positive returns the indexes of the positive scores, highest score
// first, ties in index order. A tool whose embedding is orthogonal or
// opposite to the query's does not match it.
func positive(scores []float64) []int {
	var order []int
	for i, s := range scores {
		if s > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	return order
}

// unit returns v scaled to length 1 (a zero vector stays zero).
func unit(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if sum == 0 {
		return out
	}
	norm := math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(float64(x) / norm)
	}
	return out
}

// Text is what a tool is retrieved by: its name split into words and as
// written, its description, and the name (split) and description of each
// property of its input schema, in property-name order.
func Text(in tools.Info) string {
	var b strings.Builder
	split := SplitName(in.Name)
	b.WriteString(split)
	if split != in.Name {
		b.WriteString(" (" + in.Name + ")")
	}
	b.WriteString(". ")
	b.WriteString(tools.CleanDescription(in.Description))
	props, _ := in.Schema["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString("\n" + SplitName(k))
		p, _ := props[k].(map[string]any)
		if d, ok := p["description"].(string); ok && strings.TrimSpace(d) != "" {
			b.WriteString(": " + tools.CleanDescription(d))
		}
		if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
			if raw, err := json.Marshal(enum); err == nil {
				b.WriteString(" One of " + string(raw) + ".")
			}
		}
	}
	return b.String()
}

// SplitName splits a tool or property name into lower-case words at
// underscores, hyphens, dots, spaces, slashes and camel-case humps:
// "get_weather", "getWeather" and "HTTPFetch" become "get weather",
// "get weather" and "http fetch".
func SplitName(name string) string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, c := range rs {
		switch {
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			flush()
			continue
		case unicode.IsUpper(c) && len(cur) > 0:
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, c)
	}
	flush()
	return strings.Join(words, " ")
}

// Query is the retrieval query of a ReAct model call: the task, and the
// model's latest thought when there is one.
func Query(task, thought string) string {
	return strings.TrimSpace(task + "\n" + thought)
}
