package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/planner-engine/planner/tools"
)

const (
	// maxPatternLen caps a search pattern, in bytes.
	maxPatternLen = 1000
	// matchWidth is how much of a matching line a result shows, in bytes.
	matchWidth = 200
)

// searchTool is search_files.
type searchTool struct{ fs *FS }

var (
	_ tools.Tool         = (*searchTool)(nil)
	_ tools.Schemer      = (*searchTool)(nil)
	_ tools.MetaProvider = (*searchTool)(nil)
)

func (t *searchTool) spec() argSpec {
	return argSpec{
		tool: SearchName, main: "pattern",
		names: []string{"pattern", "path", "literal", "ignore_case", "glob"},
		aliases: map[string]string{
			"input": "pattern", "query": "pattern", "regex": "pattern", "regexp": "pattern", "text": "pattern", "search": "pattern", "q": "pattern",
			"dir": "path", "directory": "path", "folder": "path", "file": "path",
			"fixed": "literal", "fixed_string": "literal", "fixed_strings": "literal",
			"case_insensitive": "ignore_case", "nocase": "ignore_case", "i": "ignore_case",
			"include": "glob", "file_pattern": "glob", "files": "glob",
		},
	}
}

// Name returns "search_files".
func (t *searchTool) Name() string { return SearchName }

// Description tells the model what search_files does.
func (t *searchTool) Description() string {
	return fmt.Sprintf("Searches the text files under a folder of the file area for lines matching a regular expression (Go RE2 syntax) "+
		"or, with literal: true, containing the exact text. Input: the pattern, or JSON arguments pattern, path (a folder or file, "+
		"default the root), glob (file names to search, such as \"*.md\"), literal and ignore_case. Returns up to %d matching lines "+
		"as path:line: text; binary files and files over %s bytes are skipped.", t.fs.cfg.MaxMatches, itoa(t.fs.cfg.MaxSearchFileBytes))
}

// Schema declares the arguments pattern, path, glob, literal and
// ignore_case.
func (t *searchTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"pattern":     map[string]any{"type": "string", "description": "Regular expression (Go RE2 syntax) to find, or exact text with literal: true."},
			"path":        map[string]any{"type": "string", "description": "Folder or file to search, relative to the root folder. Default \".\", the root."},
			"glob":        map[string]any{"type": "string", "description": "Only search files whose names match this glob, such as \"*.go\"."},
			"literal":     map[string]any{"type": "boolean", "description": "Search for the pattern as exact text, not a regular expression. Default false."},
			"ignore_case": map[string]any{"type": "boolean", "description": "Match letters in either case. Default false."},
		},
		"required": []any{"pattern"},
	}
}

// Meta reports a read-only tool.
func (t *searchTool) Meta() tools.Meta { return t.fs.readMeta() }

// searchQuery is one search_files call.
type searchQuery struct {
	pattern, path, glob string
	literal, ignoreCase bool
}

// Call searches files.
func (t *searchTool) Call(ctx context.Context, input string) (string, error) {
	a, err := parseArgs(t.spec(), input)
	if err != nil {
		return "", err
	}
	var q searchQuery
	if q.pattern, _, err = a.str(SearchName, "pattern"); err != nil {
		return "", err
	}
	if q.path, _, err = a.str(SearchName, "path"); err != nil {
		return "", err
	}
	if q.glob, _, err = a.str(SearchName, "glob"); err != nil {
		return "", err
	}
	if q.literal, _, err = a.boolean(SearchName, "literal"); err != nil {
		return "", err
	}
	if q.ignoreCase, _, err = a.boolean(SearchName, "ignore_case"); err != nil {
		return "", err
	}
	return t.fs.search(ctx, q)
}

// compile builds the search's regular expression.
func (q searchQuery) compile() (*regexp.Regexp, error) {
	if q.pattern == "" {
		return nil, tools.BadInput(ErrBadPattern, "the pattern is empty; give the text or regular expression to find")
	}
	if len(q.pattern) > maxPatternLen {
		return nil, tools.BadInput(ErrBadPattern, "the pattern is %s long; at most %s are allowed", plural(len(q.pattern), "byte", "bytes"), itoa(maxPatternLen))
	}
	expr := q.pattern
	if q.literal {
		expr = regexp.QuoteMeta(expr)
	}
	if q.ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, tools.BadInput(ErrBadPattern, "%q is not a valid regular expression (%v); to search for the text as it is, set literal: true", q.pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

// searchStats counts what a search did.
type searchStats struct {
	files, matchedFiles, matches, shown int
	binary, big, unreadable, linked     int
	// linkErr is the refusal of the last file skipped for its hard
	// links, for a search of that one file.
	linkErr error
}

func (f *FS) search(ctx context.Context, q searchQuery) (string, error) {
	re, err := q.compile()
	if err != nil {
		return "", err
	}
	q.glob = strings.TrimSpace(q.glob)
	if q.glob != "" {
		if err := checkGlob(q.glob); err != nil {
			return "", err
		}
	}
	rel, err := cleanPath(q.path, true)
	if err != nil {
		return "", err
	}
	root, info, err := f.openStat(rel)
	if err != nil {
		return "", err
	}
	defer root.Close()

	var out strings.Builder
	var st searchStats
	scan := func(e entry) {
		st.files++
		if e.size > f.cfg.MaxSearchFileBytes {
			st.big++
			return
		}
		data, err := readSmall(root, e.rel, f.cfg.MaxSearchFileBytes)
		switch {
		case errors.Is(err, ErrHardLink):
			st.linked++
			st.linkErr = err
			return
		case err != nil:
			st.unreadable++
			return
		case int64(len(data)) > f.cfg.MaxSearchFileBytes:
			st.big++
			return
		case looksBinary(data[:min(len(data), sniffLen)]):
			st.binary++
			return
		}
		f.matchLines(&out, &st, display(e.rel), data, re)
	}

	var end walkEnd
	if !info.IsDir() {
		if !info.Mode().IsRegular() {
			return "", tools.BadInput(ErrNotFile, "%q is a special file, not a regular file", display(rel))
		}
		scan(entry{rel: rel, kind: kindFile, size: info.Size()})
		if st.linkErr != nil {
			return "", st.linkErr
		}
		if st.binary > 0 {
			return "", tools.BadInput(ErrBinary, "%q looks like a binary file; %s searches text files only", display(rel), SearchName)
		}
	} else {
		w := &walker{root: root, maxDepth: 1 << 20, includeGit: f.cfg.IncludeGit, deadline: f.softDeadline()}
		end, err = w.walk(ctx, rel, 1, func(e entry) bool {
			below, _ := filepath.Rel(rel, e.rel)
			// Links are not followed: a linked file is searched where it
			// lives, once (name a link as the path to search it).
			if e.kind == kindFile && !e.link && matchGlob(q.glob, below) {
				scan(e)
			}
			return true
		})
		if err != nil {
			return "", err
		}
		st.unreadable += w.unreadable
	}

	where := display(rel)
	if q.glob != "" {
		where += fmt.Sprintf(" (files matching %q)", q.glob)
	}
	switch {
	case st.matches == 0:
		fmt.Fprintf(&out, "No matches for %q in %s under %s.\n", q.pattern, plural(st.files-st.binary-st.big-st.unreadable-st.linked, "text file", "text files"), where)
	case st.shown < st.matches:
		fmt.Fprintf(&out, "(%s of %s matching lines shown, from %s; narrow the pattern, path or glob to see the rest)\n",
			itoa(st.shown), itoa(st.matches), plural(st.matchedFiles, "file", "files"))
	default:
		fmt.Fprintf(&out, "(%s in %s)\n", plural(st.matches, "matching line", "matching lines"), plural(st.matchedFiles, "file", "files"))
	}
	var skipped []string
	if st.binary > 0 {
		skipped = append(skipped, plural(st.binary, "binary file", "binary files"))
	}
	if st.big > 0 {
		skipped = append(skipped, fmt.Sprintf("%s over %s bytes", plural(st.big, "file", "files"), itoa(f.cfg.MaxSearchFileBytes)))
	}
	if st.unreadable > 0 {
		skipped = append(skipped, plural(st.unreadable, "unreadable file or folder", "unreadable files or folders"))
	}
	if st.linked > 0 {
		skipped = append(skipped, plural(st.linked, "file with several hard links", "files with several hard links"))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&out, "(skipped %s)\n", strings.Join(skipped, ", "))
	}
	if n := end.note(); n != "" {
		fmt.Fprintf(&out, "(%s; not every file was searched)\n", n)
	}
	return out.String(), nil
}

// matchLines appends the lines of data that re matches, while fewer than
// MaxMatches are shown, and counts them all.
func (f *FS) matchLines(out *strings.Builder, st *searchStats, name string, data []byte, re *regexp.Regexp) {
	found := false
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		loc := re.FindIndex(line)
		if loc == nil {
			continue
		}
		found = true
		st.matches++
		if st.shown < f.cfg.MaxMatches {
			st.shown++
			fmt.Fprintf(out, "%s:%d: %s\n", name, n, excerpt(line, loc))
		}
	}
	if found {
		st.matchedFiles++
	}
}

// excerpt returns a matching line for display: trimmed, valid UTF-8, and
// cut to about matchWidth bytes around the match, with "…" where cut.
func excerpt(line []byte, loc []int) string {
	line = bytes.TrimRight(line, "\r")
	start, end := 0, len(line)
	if end > matchWidth {
		start = max(loc[0]-matchWidth/4, 0)
		end = min(start+matchWidth, len(line))
		for start > 0 && start < len(line) && line[start]&0xC0 == 0x80 {
			start--
		}
		for end < len(line) && line[end]&0xC0 == 0x80 {
			end--
		}
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(line[start:end]), "\uFFFD"))
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}

// readSmall reads a file of the root, at most limit+1 bytes of it. A file
// with more than one hard link is refused with an error wrapping
// ErrHardLink.
func readSmall(root *os.Root, rel string, limit int64) ([]byte, error) {
	fh, err := openRead(root, rel)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%q is not a regular file", display(rel))
	}
	if err := checkLinks(rel, SearchName, fh, info); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(fh, limit+1))
}
