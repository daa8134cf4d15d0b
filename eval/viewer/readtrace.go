package viewer

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/trace"
)

// ReadTrace's bounds.
const (
	// MaxTraceLines is the most lines (events) one ReadTrace returns.
	MaxTraceLines = 5000
	// MaxTraceBytes is the most bytes the lines of one ReadTrace may
	// hold.
	MaxTraceBytes = 16 << 20
)

// ErrBadRef marks a trace reference ReadTrace refuses: not of the form
// "traces/<model>/<config>.jsonl:<first>-<last>", a path leaving the
// traces folder, or lines the file does not have.
var ErrBadRef = errors.New("viewer: bad trace reference")

// ErrTooLarge marks a trace reference whose lines are over MaxTraceLines
// or MaxTraceBytes.
var ErrTooLarge = errors.New("viewer: trace too large")

// ParseRef splits a trace reference "traces/<model>/<config>.jsonl:<first>-<last>"
// into the file's path (slash-separated, relative to the run folder) and
// its 1-based line range. It refuses, wrapping ErrBadRef, any other form:
// an absolute path, a "..", a backslash, a path outside traces/ or not
// ending in .jsonl, a range that is not first <= last with first >= 1.
// It wraps ErrTooLarge when the range holds more than MaxTraceLines lines.
func ParseRef(ref string) (path string, first, last int, err error) {
	const form = `want "traces/<model>/<config>.jsonl:<first>-<last>", as a comparison's results store it`
	i := strings.LastIndexByte(ref, ':')
	if i < 0 {
		return "", 0, 0, fmt.Errorf("%w: %q has no line range: %s", ErrBadRef, ref, form)
	}
	path, lines := ref[:i], ref[i+1:]
	a, b, ok := strings.Cut(lines, "-")
	if ok {
		first, err = strconv.Atoi(a)
		if err == nil {
			last, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || first < 1 || last < first {
		return "", 0, 0, fmt.Errorf("%w: %q: line range %q is not <first>-<last> with 1 <= first <= last: %s", ErrBadRef, ref, lines, form)
	}
	switch {
	case strings.ContainsAny(path, "\\\x00"), strings.HasPrefix(path, "/"), filepath.IsAbs(path):
		return "", 0, 0, fmt.Errorf("%w: %q: the path must be relative to the run folder, with '/' only: %s", ErrBadRef, ref, form)
	case !filepath.IsLocal(filepath.FromSlash(path)) || containsDotDot(path):
		return "", 0, 0, fmt.Errorf("%w: %q: the path may not contain '..': %s", ErrBadRef, ref, form)
	case !strings.HasPrefix(path, "traces/") || !strings.HasSuffix(path, ".jsonl") || filepath.ToSlash(filepath.Clean(path)) != path:
		return "", 0, 0, fmt.Errorf("%w: %q: the path must be a clean path to a .jsonl file under traces/: %s", ErrBadRef, ref, form)
	}
	if n := last - first + 1; n > MaxTraceLines {
		return "", 0, 0, fmt.Errorf("%w: %q asks for %d lines, over the limit of %d: ask for a smaller range", ErrTooLarge, ref, n, MaxTraceLines)
	}
	return path, first, last, nil
}

// containsDotDot reports whether a slash-separated path has a ".."
// element.
func containsDotDot(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

// ReadTrace reads the events of one run from a run folder's trace files:
// ref is the run's trace reference as its result stores it,
// "traces/<model>/<config>.jsonl:<first>-<last>" (1-based lines of JSONL
// trace.Event, as trace.JSONL writes them), relative to dir. The file is
// opened through dir as a root (os.Root), so that neither a ".." nor a
// symbolic link leads out of dir. It refuses, wrapping ErrBadRef, a
// reference ParseRef refuses or lines the file does not have, and,
// wrapping ErrTooLarge, a range over MaxTraceLines lines or
// MaxTraceBytes bytes.
func ReadTrace(dir, ref string) ([]trace.Event, error) {
	path, first, last, err := ParseRef(ref)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("viewer: opening the run folder %s: %w", dir, err)
	}
	defer root.Close()
	f, err := openTrace(root, dir, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var events []trace.Event
	read := 0 // bytes of the range read so far
	for n := 1; n <= last; n++ {
		want := n >= first
		line, err := readLine(r, want, MaxTraceBytes-read)
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s has %d lines; the reference asks for lines %d-%d", ErrBadRef, path, n-1, first, last)
		}
		if errors.Is(err, errLineTooLong) {
			return nil, fmt.Errorf("%w: lines %d-%d of %s hold more than %d bytes", ErrTooLarge, first, last, path, MaxTraceBytes)
		}
		if err != nil {
			return nil, fmt.Errorf("viewer: reading %s: %w", path, err)
		}
		if !want {
			continue
		}
		read += len(line)
		var e trace.Event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%w: %s line %d is not a trace event: %w", ErrBadRef, path, n, err)
		}
		events = append(events, e)
	}
	return events, nil
}

// openTrace opens the trace file at path (checked by ParseRef) in root,
// the run folder dir, refusing what is not a regular file.
func openTrace(root *os.Root, dir, path string) (*os.File, error) {
	f, err := root.Open(filepath.FromSlash(path))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: no such trace file in the run folder %s", ErrBadRef, path, dir)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrBadRef, path, err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrBadRef, path)
	}
	return f, nil
}

// ReadTraces is ReadTrace for many references at once, as a report needs
// for every run of a comparison: it reads each trace file once, however
// many runs it holds, and returns the events of each reference it could
// read, by reference. A reference ReadTrace would refuse is left out of
// the map, and the error joins why (the references read are still
// returned).
func ReadTraces(dir string, refs []string) (map[string][]trace.Event, error) {
	type span struct {
		ref         string
		first, last int
	}
	byFile := map[string][]span{}
	var errs []error
	for _, ref := range refs {
		path, first, last, err := ParseRef(ref)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		byFile[path] = append(byFile[path], span{ref, first, last})
	}
	out := make(map[string][]trace.Event, len(refs))
	if len(byFile) == 0 {
		return out, errors.Join(errs...)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return out, fmt.Errorf("viewer: opening the run folder %s: %w", dir, err)
	}
	defer root.Close()
	for path, spans := range byFile {
		slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.first, b.first) })
		f, err := openTrace(root, dir, path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got, size := map[string][]trace.Event{}, map[string]int{}
		bad := map[string]error{}
		r := bufio.NewReaderSize(f, 64<<10)
		end := 0
		for _, s := range spans {
			end = max(end, s.last)
		}
		k := 0       // spans before k end before the current line
		tooLong := 0 // a line over MaxTraceBytes, where reading stopped
		n := 1
		for ; n <= end; n++ {
			for k < len(spans) && spans[k].last < n {
				k++
			}
			want := k < len(spans) && spans[k].first <= n
			line, err := readLine(r, want, MaxTraceBytes)
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, errLineTooLong) {
				tooLong = n // the rest of the file is left unread
				break
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("viewer: reading %s: %w", path, err))
				break
			}
			for j := k; j < len(spans) && spans[j].first <= n; j++ {
				s := spans[j]
				if n > s.last || bad[s.ref] != nil {
					continue
				}
				if size[s.ref] += len(line); size[s.ref] > MaxTraceBytes {
					bad[s.ref] = fmt.Errorf("%w: lines %d-%d of %s hold more than %d bytes", ErrTooLarge, s.first, s.last, path, MaxTraceBytes)
					continue
				}
				var e trace.Event
				if err := json.Unmarshal(line, &e); err != nil {
					bad[s.ref] = fmt.Errorf("%w: %s line %d is not a trace event: %w", ErrBadRef, path, n, err)
					continue
				}
				got[s.ref] = append(got[s.ref], e)
			}
		}
		f.Close()
		for _, s := range spans {
			switch {
			case bad[s.ref] != nil:
				errs = append(errs, bad[s.ref])
			case tooLong > 0 && s.last >= tooLong:
				errs = append(errs, fmt.Errorf("%w: line %d of %s holds more than %d bytes; lines %d-%d were not read", ErrTooLarge, tooLong, path, MaxTraceBytes, s.first, s.last))
			case s.last >= n:
				errs = append(errs, fmt.Errorf("%w: %s has %d lines; the reference asks for lines %d-%d", ErrBadRef, path, n-1, s.first, s.last))
			default:
				out[s.ref] = got[s.ref]
			}
		}
	}
	return out, errors.Join(errs...)
}

// errLineTooLong is readLine's answer to a line over its limit.
var errLineTooLong = errors.New("line too long")

// readLine reads one line (without its '\n') of r. When keep is false the
// line is skipped and nil returned; when it is true, a line of more than
// limit bytes answers errLineTooLong. A last line without '\n' counts;
// io.EOF means there was no line left.
func readLine(r *bufio.Reader, keep bool, limit int) ([]byte, error) {
	var line []byte
	got := false
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 {
			got = true
			if keep {
				if len(line)+len(chunk) > limit+1 {
					return nil, errLineTooLong
				}
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			return trimEOL(line), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && got:
			return trimEOL(line), nil
		default:
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
