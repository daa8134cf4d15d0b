package compare

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// traceFile appends whole runs' JSONL traces to one file per config, each
// run's events on consecutive lines, so that a comparison of thousands of
// runs writes a handful of files instead of one per run. It is safe for
// concurrent use.
type traceFile struct {
	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	rel   string // slash-separated path relative to the output folder
	lines int    // lines in the file, written or buffered
	err   error  // first write error; later runs are then not traced
}

// openTraceFile opens (creating or appending to) traces/<config>.jsonl in
// outDir and counts the lines already there, so that new runs' line
// numbers are right after a resume.
func openTraceFile(outDir, config string) (*traceFile, error) {
	rel := filepath.Join("traces", safeName(config)+".jsonl")
	path := filepath.Join(outDir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("compare: creating the trace folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("compare: opening the trace file: %w", err)
	}
	lines, last, err := countLines(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("compare: reading %s: %w", path, err)
	}
	t := &traceFile{f: f, w: bufio.NewWriterSize(f, 64<<10), rel: filepath.ToSlash(rel), lines: lines}
	if last != 0 && last != '\n' {
		// A killed compare left half a line: end it so the next run starts
		// on a line of its own.
		_ = t.w.WriteByte('\n')
		t.lines++
	}
	return t, nil
}

// countLines counts the newline-terminated lines of r and returns its last
// byte (0 when empty).
func countLines(r io.Reader) (int, byte, error) {
	buf := make([]byte, 64<<10)
	lines, last := 0, byte(0)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			lines += bytes.Count(buf[:n], []byte{'\n'})
			last = buf[n-1]
		}
		if errors.Is(err, io.EOF) {
			return lines, last, nil
		}
		if err != nil {
			return 0, 0, err
		}
	}
}

// add appends one run's trace (complete JSONL lines) and returns where it
// is, as "traces/<config>.jsonl:<first>-<last>" (1-based lines), or "" when
// nothing was written.
func (t *traceFile) add(run []byte) string {
	n := bytes.Count(run, []byte{'\n'})
	if n == 0 {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return ""
	}
	if _, err := t.w.Write(run); err != nil {
		t.err = err
		return ""
	}
	first := t.lines + 1
	t.lines += n
	return fmt.Sprintf("%s:%d-%d", t.rel, first, t.lines)
}

// flush writes buffered traces to the file.
func (t *traceFile) flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = t.w.Flush()
	}
	return t.err
}

// close flushes and closes the file.
func (t *traceFile) close() error {
	err := t.flush()
	return errors.Join(err, t.f.Close())
}

// traceSet holds the trace files of a comparison, one per config.
type traceSet struct {
	byConfig map[string]*traceFile
	files    []*traceFile
}

// openTraces opens a trace file per config name; names that map to the
// same file name share it.
func openTraces(outDir string, configs []string) (*traceSet, error) {
	ts := &traceSet{byConfig: map[string]*traceFile{}}
	byFile := map[string]*traceFile{}
	for _, c := range configs {
		key := safeName(c)
		if tf, ok := byFile[key]; ok {
			ts.byConfig[c] = tf
			continue
		}
		tf, err := openTraceFile(outDir, c)
		if err != nil {
			_ = ts.close()
			return nil, err
		}
		byFile[key] = tf
		ts.byConfig[c] = tf
		ts.files = append(ts.files, tf)
	}
	return ts, nil
}

// add appends a run's trace to its config's file; see traceFile.add.
func (ts *traceSet) add(config string, run []byte) string {
	if ts == nil || ts.byConfig[config] == nil {
		return ""
	}
	return ts.byConfig[config].add(run)
}

// flush flushes every file. A nil set does nothing.
func (ts *traceSet) flush() error { return ts.each((*traceFile).flush) }

// close closes every file. A nil set does nothing.
func (ts *traceSet) close() error { return ts.each((*traceFile).close) }

// each calls fn on every file, all of them even when some fail, and joins
// the errors. A nil set does nothing.
func (ts *traceSet) each(fn func(*traceFile) error) error {
	if ts == nil {
		return nil
	}
	var errs []error
	for _, tf := range ts.files {
		errs = append(errs, fn(tf))
	}
	return errors.Join(errs...)
}
