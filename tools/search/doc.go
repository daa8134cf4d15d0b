// Package search implements the "search" tool: BM25 full-text search over a
// local corpus of documents, backed by an in-memory bleve index.
//
// A corpus comes from a Source: a directory tree of Markdown or text files
// (FromFS, FromPath), a JSON Lines file of {"id","title","text"} objects
// (FromJSONL), or documents built in code (FromDocuments). NewIndex analyses
// the documents with bleve's English analyzer (lower-casing, stop words,
// Porter stemming) and ranks matches with bleve's BM25 scoring over the
// title and the body.
//
// The Tool wraps an Index for agents: Call takes a plain query or the JSON
// object {"query": "..."} and returns the top k documents as numbered blocks,
//
//	[1] Titan (source: titan.md)
//	Titan is the largest moon of Saturn ...
//
// where the snippet is the passage of the body that best covers the query
// terms. An Index and a Tool are immutable after construction and safe for
// concurrent use; Close releases the index.
package search
