package search

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrBadSource means a corpus source could not be read or holds a malformed
// document; the message names the file (and line, for JSON Lines).
var ErrBadSource = errors.New("bad corpus source")

// ErrEmptyCorpus means a source yielded no documents, so there is nothing to
// search. Check the directory or file the source points at.
var ErrEmptyCorpus = errors.New("corpus has no documents")

// maxJSONLLine bounds one JSON Lines record, in bytes.
const maxJSONLLine = 16 << 20

// Document is one searchable page of a corpus.
type Document struct {
	// ID identifies the document uniquely within its corpus: the file path
	// for files, the "id" field (or "file:line") for JSON Lines records.
	ID string `json:"id"`
	// Title is the page title: the first "# " heading of a Markdown or text
	// file, the file name without extension otherwise, or the "title" field.
	Title string `json:"title"`
	// Text is the body of the page, without the title heading. Paragraphs are
	// separated by blank lines.
	Text string `json:"text"`
	// Source says where the document came from, for citations: a file path,
	// or "file.jsonl:line" for JSON Lines records.
	Source string `json:"source"`
}

// Source supplies the documents of a corpus.
type Source interface {
	// Documents reads and returns every document of the source, in a stable
	// order. Errors wrap ErrBadSource when the data is unreadable or malformed.
	Documents(ctx context.Context) ([]Document, error)
}

// SourceFunc adapts a function to the Source interface.
type SourceFunc func(ctx context.Context) ([]Document, error)

// Documents calls f.
func (f SourceFunc) Documents(ctx context.Context) ([]Document, error) { return f(ctx) }

// FromDocuments returns a Source that yields copies of docs. Documents with an
// empty ID get their position ("1", "2", ...) as ID; an empty Title falls back
// to the ID.
func FromDocuments(docs ...Document) Source {
	own := append([]Document(nil), docs...)
	return SourceFunc(func(ctx context.Context) ([]Document, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out := make([]Document, len(own))
		for i, d := range own {
			if d.ID == "" {
				d.ID = strconv.Itoa(i + 1)
			}
			if d.Title == "" {
				d.Title = d.ID
			}
			out[i] = d
		}
		return out, checkUnique(out)
	})
}

// FromFS returns a Source that walks fsys in lexical order and reads every
// Markdown (.md, .markdown), text (.txt) and JSON Lines (.jsonl) file, skipping
// hidden files and directories. Markdown and text files become one document
// each: the title is the first line starting with "# " (the line is removed
// from the body), or the file name without extension, with underscores read
// as spaces, when there is no such heading. Empty files are skipped.
func FromFS(fsys fs.FS) Source {
	return SourceFunc(func(ctx context.Context) ([]Document, error) {
		var docs []Document
		err := WalkCorpus(ctx, fsys, func(p, ext string) error {
			if ext == ".jsonl" {
				more, err := readJSONL(ctx, fsys, p)
				docs = append(docs, more...)
				return err
			}
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return fmt.Errorf("%w: read %s: %w", ErrBadSource, p, err)
			}
			if doc, ok := parseTextFile(p, data); ok {
				docs = append(docs, doc)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return docs, checkUnique(docs)
	})
}

// WalkCorpus walks fsys in lexical order, skipping hidden files and
// folders, and calls visit with the path and the lower-cased extension of
// every corpus file: Markdown (.md, .markdown), text (.txt) and JSON Lines
// (.jsonl). It stops at the first error visit returns, or when ctx ends; a
// walk error wraps ErrBadSource.
func WalkCorpus(ctx context.Context, fsys fs.FS, visit func(p, ext string) error) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%w: walk %s: %w", ErrBadSource, p, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		switch ext := strings.ToLower(path.Ext(p)); ext {
		case ".md", ".markdown", ".txt", ".jsonl":
			return visit(p, ext)
		}
		return nil
	})
}

// FromJSONL returns a Source that reads the JSON Lines file name inside fsys.
// Each non-blank line is an object with a "text" field and optional "title"
// and "id" fields (other fields are ignored). A missing id becomes
// "name:line"; a missing title falls back to the id.
func FromJSONL(fsys fs.FS, name string) Source {
	return SourceFunc(func(ctx context.Context) ([]Document, error) {
		docs, err := readJSONL(ctx, fsys, name)
		if err != nil {
			return nil, err
		}
		return docs, checkUnique(docs)
	})
}

// FromPath returns a Source for a path on the local file system: a directory
// is read like FromFS, a .jsonl file like FromJSONL, and a single .md, .markdown
// or .txt file becomes a one-document corpus. The path is resolved when
// Documents is called.
func FromPath(p string) Source {
	return SourceFunc(func(ctx context.Context) ([]Document, error) {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSource, err)
		}
		if info.IsDir() {
			return FromFS(os.DirFS(p)).Documents(ctx)
		}
		dir, base := filepath.Split(p)
		if dir == "" {
			dir = "."
		}
		switch strings.ToLower(filepath.Ext(base)) {
		case ".jsonl":
			return FromJSONL(os.DirFS(dir), base).Documents(ctx)
		case ".md", ".markdown", ".txt":
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrBadSource, err)
			}
			doc, ok := parseTextFile(base, data)
			if !ok {
				return nil, nil
			}
			return []Document{doc}, nil
		default:
			return nil, fmt.Errorf("%w: %s: want a directory or a .md, .txt or .jsonl file", ErrBadSource, p)
		}
	})
}

// parseTextFile turns a Markdown or text file into a document. It reports
// false for a blank file.
func parseTextFile(p string, data []byte) (Document, bool) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if strings.TrimSpace(text) == "" {
		return Document{}, false
	}
	title := ""
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "# "); ok {
			title = strings.TrimSpace(h)
			text = strings.Join(append(lines[:i:i], lines[i+1:]...), "\n")
			break
		}
	}
	text = strings.TrimSpace(text)
	if title == "" {
		base := path.Base(p)
		title = strings.TrimSpace(strings.ReplaceAll(strings.TrimSuffix(base, path.Ext(base)), "_", " "))
	}
	return Document{ID: p, Title: title, Text: text, Source: p}, true
}

// jsonlRecord is one line of a JSON Lines corpus.
type jsonlRecord struct {
	ID    json.RawMessage `json:"id"`
	Title string          `json:"title"`
	Text  string          `json:"text"`
}

// readJSONL parses the JSON Lines file name in fsys.
func readJSONL(ctx context.Context, fsys fs.FS, name string) ([]Document, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSource, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxJSONLLine)
	var docs []Document
	_, err = ScanJSONL(ctx, sc, name, func(rec jsonlRecord, where string, _ int) error {
		if strings.TrimSpace(rec.Text) == "" {
			return fmt.Errorf("%w: %s: record has no \"text\"", ErrBadSource, where)
		}
		id, err := recordID(rec.ID)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrBadSource, where, err)
		}
		if id == "" {
			id = where
		}
		title := strings.TrimSpace(rec.Title)
		if title == "" {
			title = id
		}
		docs = append(docs, Document{ID: id, Title: title, Text: strings.TrimSpace(rec.Text), Source: where})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrBadSource, name, err)
	}
	return docs, nil
}

// ScanJSONL reads the JSON Lines text of sc, named name in messages, and
// calls fn with each line that is not blank decoded into a new T, with the
// line's place, "name:line", and its number (from 1). It stops at the
// first error and returns it: ctx's, that of a line that is not valid JSON
// for T (wrapping ErrBadSource and naming the place), or fn's as it is.
// It returns how many lines it read; a read error is left in sc.Err for
// the caller to report.
func ScanJSONL[T any](ctx context.Context, sc *bufio.Scanner, name string, fn func(rec T, where string, line int) error) (int, error) {
	line := 0
	for sc.Scan() {
		line++
		if err := ctx.Err(); err != nil {
			return line, err
		}
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		where := name + ":" + strconv.Itoa(line)
		var rec T
		if err := json.Unmarshal(raw, &rec); err != nil {
			return line, fmt.Errorf("%w: %s: %w", ErrBadSource, where, err)
		}
		if err := fn(rec, where, line); err != nil {
			return line, err
		}
	}
	return line, nil
}

// recordID accepts a JSON string or number as a record id.
func recordID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.TrimSpace(s), nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	return "", fmt.Errorf("\"id\" must be a string or a number, got %s", raw)
}

// checkUnique rejects a corpus in which two documents share an ID.
func checkUnique(docs []Document) error {
	seen := make(map[string]string, len(docs))
	for _, d := range docs {
		if prev, ok := seen[d.ID]; ok {
			return fmt.Errorf("%w: duplicate document id %q (%s and %s)", ErrBadSource, d.ID, prev, d.Source)
		}
		seen[d.ID] = d.Source
	}
	return nil
}
