package docstore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/planner-engine/planner/tools/search"
)

// Errors of corpus loading. They are package search's sentinels, so that
// errors.Is works the same whichever package loaded the corpus.
var (
	// ErrBadSource means a corpus file could not be read or holds a
	// malformed record; the message names the file, and the line for JSON
	// Lines. It is search.ErrBadSource.
	ErrBadSource = search.ErrBadSource
	// ErrEmptyCorpus means a corpus has no pages. It is
	// search.ErrEmptyCorpus.
	ErrEmptyCorpus = search.ErrEmptyCorpus
)

// maxRecord bounds one JSON Lines record, in bytes.
const maxRecord = 16 << 20

// Corpus is what a Store serves: its pages, and the similar titles that
// failed searches listed in a recorded run. A *Corpus is a search.Source;
// New uses its Similar lists too.
type Corpus struct {
	// Pages are the pages in source order. Title is the page title that
	// searches match; Text is the page text, paragraphs separated by line
	// breaks (the wikienv format reads each line as a paragraph, the
	// langchain format splits the text at blank lines); Source says where
	// the page came from ("file.jsonl:3" or a file path) and ID is unique
	// within the corpus.
	Pages []search.Document
	// Similar maps an entity, exactly as it was searched for, to the page
	// titles that a failed search for it listed, best first. When a search
	// for exactly that entity fails, these titles are the similar ones it
	// lists, instead of titles ranked by the search index.
	Similar map[string][]string
}

// Documents returns a copy of the pages, so that a Corpus is a
// search.Source.
func (c *Corpus) Documents(ctx context.Context) ([]search.Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return slices.Clone(c.Pages), nil
}

// add appends more's pages and similar lists to c; an entity with similar
// lists in both fails with ErrBadSource.
func (c *Corpus) add(more *Corpus) error {
	c.Pages = append(c.Pages, more.Pages...)
	for _, entity := range slices.Sorted(maps.Keys(more.Similar)) {
		if _, dup := c.Similar[entity]; dup {
			return fmt.Errorf("%w: two similar lists for %q", ErrBadSource, entity)
		}
		if c.Similar == nil {
			c.Similar = map[string][]string{}
		}
		c.Similar[entity] = more.Similar[entity]
	}
	return nil
}

// record is one line of a docstore JSON Lines file: a page (title and
// text) or a recorded failed search (title and similar).
type record struct {
	Title   *string   `json:"title"`
	Text    *string   `json:"text"`
	Similar *[]string `json:"similar"`
}

// ReadJSONL reads a docstore corpus in JSON Lines from r; name is the file
// name that errors and page sources give. Each non-blank line is an object
// with a "title" and either a "text", for a page, or a "similar" list of
// titles, for a search for that title that failed and listed them (the
// list may be empty). Other fields are ignored. Titles are trimmed; texts
// are kept as they are. A malformed line, a record with neither or both of
// "text" and "similar", an empty title or text, or a second similar list
// for one title fails with ErrBadSource and names the line. Pages get
// "name:line" as ID and Source.
func ReadJSONL(ctx context.Context, r io.Reader, name string) (*Corpus, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxRecord)
	c := &Corpus{}
	similarLine := map[string]int{}
	lines, err := search.ScanJSONL(ctx, sc, name, func(rec record, where string, line int) error {
		if rec.Title == nil || strings.TrimSpace(*rec.Title) == "" {
			return fmt.Errorf("%w: %s: record has no \"title\"", ErrBadSource, where)
		}
		title := strings.TrimSpace(*rec.Title)
		switch {
		case rec.Text != nil && rec.Similar != nil:
			return fmt.Errorf("%w: %s: record %q has both \"text\" and \"similar\"; a page and a failed search are separate records", ErrBadSource, where, title)
		case rec.Similar != nil:
			if prev, dup := similarLine[title]; dup {
				return fmt.Errorf("%w: %s: a second similar list for %q (the first is on line %d)", ErrBadSource, where, title, prev)
			}
			similarLine[title] = line
			if c.Similar == nil {
				c.Similar = map[string][]string{}
			}
			c.Similar[title] = slices.Clone(*rec.Similar)
		case rec.Text == nil:
			return fmt.Errorf("%w: %s: record %q needs a \"text\" (a page) or a \"similar\" list (a failed search)", ErrBadSource, where, title)
		case strings.TrimSpace(*rec.Text) == "":
			return fmt.Errorf("%w: %s: page %q has an empty \"text\"", ErrBadSource, where, title)
		default:
			c.Pages = append(c.Pages, search.Document{ID: where, Title: title, Text: *rec.Text, Source: where})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s:%d: %w", ErrBadSource, name, lines+1, err)
	}
	return c, nil
}

// ReadFS reads a docstore corpus from every Markdown (.md, .markdown), text
// (.txt) and JSON Lines (.jsonl, read by ReadJSONL) file of fsys, walked in
// lexical order, skipping hidden files and folders. A Markdown or text file
// is one page, titled as package search titles it: by its first "# "
// heading (removed from the text), or else by its file name without
// extension, underscores read as spaces. Its text is reflowed into
// paragraphs: the lines of a paragraph are joined by spaces (a list item
// keeps its own line), paragraphs are separated by a blank line, and
// sub-headings are dropped. Blank files are skipped.
func ReadFS(ctx context.Context, fsys fs.FS) (*Corpus, error) {
	c := &Corpus{}
	err := search.WalkCorpus(ctx, fsys, func(p, ext string) error {
		if ext != ".jsonl" {
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return fmt.Errorf("%w: read %s: %w", ErrBadSource, p, err)
			}
			if doc, ok := textPage(p, data); ok {
				c.Pages = append(c.Pages, doc)
			}
			return nil
		}
		f, err := fsys.Open(p)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadSource, err)
		}
		more, err := ReadJSONL(ctx, f, p)
		_ = f.Close()
		if err != nil {
			return err
		}
		if err := c.add(more); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Load reads a docstore corpus from a path: a folder is read by ReadFS, a
// .jsonl file by ReadJSONL, and a single .md, .markdown or .txt file is a
// one-page corpus. Other paths fail with ErrBadSource.
func Load(ctx context.Context, p string) (*Corpus, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSource, err)
	}
	if info.IsDir() {
		return ReadFS(ctx, os.DirFS(p))
	}
	switch strings.ToLower(filepath.Ext(p)) {
	case ".jsonl":
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSource, err)
		}
		defer f.Close()
		return ReadJSONL(ctx, f, p)
	case ".md", ".markdown", ".txt":
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSource, err)
		}
		c := &Corpus{}
		if doc, ok := textPage(filepath.Base(p), data); ok {
			c.Pages = append(c.Pages, doc)
		}
		return c, nil
	default:
		return nil, fmt.Errorf("%w: %s: want a folder, a .jsonl file or a .md or .txt file", ErrBadSource, p)
	}
}

// textPage turns a Markdown or text file into a page; it reports false for
// a blank file.
func textPage(p string, data []byte) (search.Document, bool) {
	text := validUTF8(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if strings.TrimSpace(text) == "" {
		return search.Document{}, false
	}
	lines := strings.Split(text, "\n")
	title := ""
	for i, line := range lines {
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "# "); ok {
			title = strings.TrimSpace(h)
			lines = slices.Delete(lines, i, i+1)
			break
		}
	}
	if title == "" {
		base := path.Base(p)
		title = strings.TrimSpace(strings.ReplaceAll(strings.TrimSuffix(base, path.Ext(base)), "_", " "))
	}
	return search.Document{ID: p, Title: title, Text: reflow(lines), Source: p}, true
}

// reflow joins lines into paragraphs separated by blank lines: the lines
// of a paragraph are joined by single spaces, except that a list item
// starts a new line; heading lines are dropped.
func reflow(lines []string) string {
	var paras, cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, line := range lines {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			flush()
		case isHeading(t):
			flush()
		case len(cur) == 0 || isListItem(t):
			cur = append(cur, t)
		default:
			cur[len(cur)-1] += " " + t
		}
	}
	flush()
	return strings.Join(paras, "\n\n")
}

// isHeading reports whether a trimmed line is a Markdown ATX heading.
func isHeading(t string) bool {
	hashes := len(t) - len(strings.TrimLeft(t, "#"))
	return hashes >= 1 && hashes <= 6 && (len(t) == hashes || t[hashes] == ' ' || t[hashes] == '\t')
}

// isListItem reports whether a trimmed line starts a Markdown list item:
// "- ", "* ", "+ ", or a number followed by ". " or ") ".
func isListItem(t string) bool {
	if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "+ ") {
		return true
	}
	digits := len(t) - len(strings.TrimLeft(t, "0123456789"))
	rest := t[digits:]
	return digits > 0 && (strings.HasPrefix(rest, ". ") || strings.HasPrefix(rest, ") "))
}
