package search

import (
	"context"

	"github.com/planner-engine/planner/tools/keyword"
)

// Keywords builds this package's BM25 indexes (NewIndex) for the engine's
// keyword ranking: it implements keyword.Indexer, which the ReAct
// engine's BM25 tool retrieval and the recall tool's word search use
// (planner.WithKeywordIndex). The zero value is ready to use.
type Keywords struct{}

// Index implements keyword.Indexer: NewIndex over docs (an empty Title
// falls back to the ID, as with FromDocuments). It fails with
// ErrEmptyCorpus for no documents and with ErrBadSource when two share an
// ID.
func (Keywords) Index(ctx context.Context, docs []keyword.Document) (keyword.Index, error) {
	in := make([]Document, len(docs))
	for i, d := range docs {
		in[i] = Document{ID: d.ID, Title: d.Title, Text: d.Text}
	}
	idx, err := NewIndex(ctx, FromDocuments(in...))
	if err != nil {
		return nil, err
	}
	return keywordIndex{idx: idx}, nil
}

// keywordIndex is an Index seen as a keyword.Index.
type keywordIndex struct{ idx *Index }

// Search implements keyword.Index: Index.Search, with each hit's Snippet
// as its passage when one is asked for.
func (k keywordIndex) Search(ctx context.Context, query string, n, passage int) ([]keyword.Hit, error) {
	hits, err := k.idx.Search(ctx, query, n)
	if err != nil {
		return nil, err
	}
	out := make([]keyword.Hit, len(hits))
	for i, h := range hits {
		out[i] = keyword.Hit{ID: h.Doc.ID, Score: h.Score}
		if passage > 0 {
			out[i].Passage = h.Snippet(passage)
		}
	}
	return out, nil
}

// Close implements keyword.Index.
func (k keywordIndex) Close() error { return k.idx.Close() }

var _ keyword.Indexer = Keywords{}
