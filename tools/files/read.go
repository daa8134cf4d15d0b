package files

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/planner-engine/planner/tools"
)

// sniffLen is how much of a file decides whether it is text.
const sniffLen = 8 << 10

// readTool is read_file.
type readTool struct{ fs *FS }

var (
	_ tools.Tool         = (*readTool)(nil)
	_ tools.Schemer      = (*readTool)(nil)
	_ tools.MetaProvider = (*readTool)(nil)
)

func (t *readTool) spec() argSpec {
	return argSpec{
		tool: ReadName, main: "path",
		names: []string{"path", "start_line", "end_line", "line_numbers"},
		aliases: map[string]string{
			"input": "path", "file": "path", "filename": "path", "file_path": "path", "filepath": "path", "file_name": "path",
			"start": "start_line", "from": "start_line", "from_line": "start_line", "line": "start_line", "offset": "start_line",
			"end": "end_line", "to": "end_line", "to_line": "end_line",
			"numbers": "line_numbers", "numbered": "line_numbers", "show_line_numbers": "line_numbers", "line_number": "line_numbers",
		},
	}
}

// Name returns "read_file".
func (t *readTool) Name() string { return ReadName }

// Description tells the model what read_file does.
func (t *readTool) Description() string {
	return fmt.Sprintf("Reads a text file of the file area. Input: the file's path relative to the root folder, or JSON arguments path, "+
		"start_line and end_line (1-based, inclusive; to read part of a file) and line_numbers (true to number the lines). "+
		"Shows at most %s bytes; a longer read ends with a note giving the start_line to read on from. Binary files are refused.",
		itoa(t.fs.cfg.MaxReadBytes))
}

// Schema declares the arguments path, start_line, end_line and
// line_numbers.
func (t *readTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path":         map[string]any{"type": "string", "description": "The file's path, relative to the root folder."},
			"start_line":   map[string]any{"type": "integer", "minimum": 1, "description": "First line to show, 1-based. Default 1."},
			"end_line":     map[string]any{"type": "integer", "minimum": 1, "description": "Last line to show, inclusive. Default: the end of the file."},
			"line_numbers": map[string]any{"type": "boolean", "description": fmt.Sprintf("Number the lines shown. Default %t.", t.fs.cfg.LineNumbers)},
		},
		"required": []any{"path"},
	}
}

// Meta reports a read-only tool.
func (t *readTool) Meta() tools.Meta { return t.fs.readMeta() }

// Call reads a file.
func (t *readTool) Call(ctx context.Context, input string) (string, error) {
	a, err := parseArgs(t.spec(), input)
	if err != nil {
		return "", err
	}
	p, _, err := a.str(ReadName, "path")
	if err != nil {
		return "", err
	}
	start, _, err := a.integer(ReadName, "start_line")
	if err != nil {
		return "", err
	}
	end, hasEnd, err := a.integer(ReadName, "end_line")
	if err != nil {
		return "", err
	}
	numbers, set, err := a.boolean(ReadName, "line_numbers")
	if err != nil {
		return "", err
	}
	if !set {
		numbers = t.fs.cfg.LineNumbers
	}
	return t.fs.read(ctx, p, readRange{start: start, end: end, hasEnd: hasEnd}, numbers)
}

// readRange is the lines a read_file call asks for.
type readRange struct {
	start, end int
	hasEnd     bool
}

func (f *FS) read(ctx context.Context, p string, r readRange, numbers bool) (string, error) {
	rel, err := cleanPath(p, false)
	if err != nil {
		return "", err
	}
	switch {
	case r.start < 0:
		return "", tools.BadInput(ErrBadArgument, "%s: start_line must be 1 or more (lines are numbered from 1)", ReadName)
	case r.start == 0:
		r.start = 1
	}
	if r.hasEnd && r.end < r.start {
		return "", tools.BadInput(ErrBadArgument, "%s: end_line %d is before start_line %d", ReadName, r.end, r.start)
	}
	root, err := f.openRoot()
	if err != nil {
		return "", err
	}
	defer root.Close()
	fh, size, err := openRegular(root, rel)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	br := bufio.NewReaderSize(fh, 64<<10)
	sample, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", pathError(rel, err)
	}
	if looksBinary(sample) {
		return "", tools.BadInput(ErrBinary, "%q looks like a binary file (%s); %s shows text files only", display(rel), plural(size, "byte", "bytes"), ReadName)
	}
	if size == 0 && len(sample) == 0 {
		return "(empty file)\n", nil
	}

	budget := f.cfg.MaxReadBytes
	var out strings.Builder
	line, last := 0, 0
	for {
		if line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		text, clipped, err := readLine(br, budget+1)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", pathError(rel, err)
		}
		line++
		if line < r.start {
			continue
		}
		if r.hasEnd && line > r.end {
			break
		}
		s := strings.ToValidUTF8(string(text), "\uFFFD")
		prefix := ""
		if numbers {
			prefix = fmt.Sprintf("%6d| ", line)
		}
		if out.Len()+len(prefix)+len(s)+1 > budget || clipped {
			if last == 0 {
				// The first line asked for is longer than the whole cap:
				// show its beginning.
				room := max(budget-len(prefix), budget/2)
				cut := clipUTF8(s, room)
				fmt.Fprintf(&out, "%s%s\n[line %d is longer than the %s-byte cap; only its first %s are shown. Read on from the next line with start_line=%d]\n",
					prefix, cut, line, itoa(budget), plural(len(cut), "byte", "bytes"), line+1)
				return out.String(), nil
			}
			fmt.Fprintf(&out, "[output capped at %s bytes: lines %d-%d shown of a %s file. To read on, call %s with start_line=%d]\n",
				itoa(budget), r.start, last, plural(size, "byte", "bytes"), ReadName, last+1)
			return out.String(), nil
		}
		out.WriteString(prefix)
		out.WriteString(s)
		out.WriteByte('\n')
		last = line
	}
	if last == 0 {
		return "", tools.BadInput(ErrBadArgument, "start_line %d is past the end of %q, which has %s", r.start, display(rel), plural(line, "line", "lines"))
	}
	if r.start > 1 || r.hasEnd {
		eof := ""
		if last == line && (!r.hasEnd || r.end > line) {
			eof = "; the file ends there"
		}
		fmt.Fprintf(&out, "[lines %d-%d shown%s]\n", r.start, last, eof)
	}
	return out.String(), nil
}

// openRegular opens a regular file of the root and returns it with its
// size. Folders and special files (devices, pipes) are refused before and
// after the open, and so are files with more than one hard link
// (ErrHardLink), checked on the open file.
func openRegular(root *os.Root, rel string) (*os.File, int64, error) {
	info, err := root.Stat(rel)
	if err != nil {
		return nil, 0, pathError(rel, err)
	}
	if info.IsDir() {
		return nil, 0, tools.BadInput(ErrNotFile, "%q is a folder; list_files shows what is in it", display(rel))
	}
	if !info.Mode().IsRegular() {
		return nil, 0, tools.BadInput(ErrNotFile, "%q is a special file (a device, pipe or socket), not a regular file", display(rel))
	}
	fh, err := openRead(root, rel)
	if err != nil {
		return nil, 0, pathError(rel, err)
	}
	info, err = fh.Stat()
	if err != nil || !info.Mode().IsRegular() {
		_ = fh.Close()
		return nil, 0, tools.BadInput(ErrNotFile, "%q is not a regular file", display(rel))
	}
	if err := checkLinks(rel, ReadName, fh, info); err != nil {
		_ = fh.Close()
		return nil, 0, err
	}
	return fh, info.Size(), nil
}

// readLine reads one line, without its line ending, keeping at most limit
// bytes of it and discarding the rest (clipped is then true). It returns
// io.EOF only when no bytes are left.
func readLine(br *bufio.Reader, limit int) (line []byte, clipped bool, err error) {
	got := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			got = true
			take := min(len(chunk), max(limit-len(line), 0))
			line = append(line, chunk[:take]...)
			if take < len(chunk) && !(take == len(chunk)-1 && chunk[take] == '\n') {
				clipped = true
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !got {
				return nil, false, io.EOF
			}
		case err != nil:
			return nil, false, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, clipped, nil
	}
}

// looksBinary reports whether a file's first bytes are not text: they hold
// a NUL byte, or more than one in ten of them are invalid UTF-8 or control
// characters other than white space and escape.
func looksBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	bad, n := 0, 0
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			if !utf8.FullRune(b[i:]) {
				break // a rune cut by the end of the sample
			}
			bad++
		} else if r < 0x20 && !strings.ContainsRune("\t\n\r\f\v\x1b", r) || r == 0x7f {
			bad++
		}
		n++
		i += size
	}
	return bad*10 > n
}

// clipUTF8 returns the longest prefix of s of at most n bytes that does
// not split a rune.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
