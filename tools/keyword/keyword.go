// Package keyword declares the keyword index the ReAct engine ranks texts
// with: the tools' descriptions for BM25 tool retrieval (tools/retrieve,
// the executor's tool_retrieval) and a run's earlier tool outputs for the
// recall tool's word search. The engine depends on this contract only, so
// that an embedding program that needs neither does not compile a search
// engine; package tools/search provides the implementation the command
// line uses (search.Keywords, BM25 over a bleve index), which a program
// passes to planner.WithKeywordIndex.
package keyword

import "context"

// Document is one text an Index ranks.
type Document struct {
	// ID identifies the document in the Hits; unique within an Index.
	ID string
	// Title is a short text that is ranked with the body (a tool's name
	// split into words, a tool call's tool and input).
	Title string
	// Text is the body.
	Text string
}

// Hit is one document that matched a query.
type Hit struct {
	// ID is the matching Document's ID.
	ID string
	// Score is the hit's relevance (BM25 for search.Keywords); higher is
	// better. Scores are comparable only within one query; 0 when the
	// index does not score.
	Score float64
	// Passage is the part of the document's body that best covers the
	// query, at most the number of characters Search was asked for; ""
	// when it was asked for none.
	Passage string
}

// Index ranks a fixed set of documents against queries. It is safe for
// concurrent use until Close.
type Index interface {
	// Search returns up to k documents that match query, best first, ties
	// in the order the documents were indexed. A query that matches
	// nothing (no term in common, or only stop words) yields no hits and
	// no error. passage > 0 asks for each hit's Passage, of at most that
	// many characters. Search fails with ctx's error when ctx ends first.
	Search(ctx context.Context, query string, k, passage int) ([]Hit, error)
	// Close releases the index; Search fails after it.
	Close() error
}

// Indexer builds indexes.
type Indexer interface {
	// Index indexes docs, which must not be empty and whose IDs must be
	// unique.
	Index(ctx context.Context, docs []Document) (Index, error)
}
