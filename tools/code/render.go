package code

import (
	"math/bits"
	"slices"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// maxNest bounds how deeply nested a value is rendered or measured; a
// value nested deeper renders its inner part as "...".
const maxNest = 100

// limitWriter collects text up to max bytes; once more is written it is
// full and drops everything after, so a huge value costs no more than max
// bytes to render.
type limitWriter struct {
	buf  []byte
	max  int
	full bool
}

// WriteString appends s, or the part of it that fits.
func (w *limitWriter) WriteString(s string) {
	if w.full {
		return
	}
	room := w.max - len(w.buf)
	if len(s) > room {
		w.buf = append(w.buf, s[:runeStart(s, room)]...)
		w.full = true
		return
	}
	w.buf = append(w.buf, s...)
}

// room returns how many more bytes fit.
func (w *limitWriter) room() int { return w.max - len(w.buf) }

// renderer writes Starlark values as starlark's own String and print do,
// into a limitWriter, stopping early once it is full.
type renderer struct {
	w    *limitWriter
	path []starlark.Value // containers being rendered, to spot cycles
}

// printed writes v as print shows it: a string or bytes value as it is,
// any other value as its repr.
func (r *renderer) printed(v starlark.Value) {
	switch v := v.(type) {
	case starlark.String:
		r.w.WriteString(string(v))
	case starlark.Bytes:
		r.w.WriteString(string(v))
	default:
		r.repr(v, 0)
	}
}

// repr writes the repr of v.
func (r *renderer) repr(v starlark.Value, depth int) {
	if r.w.full {
		return
	}
	if depth > maxNest {
		r.w.WriteString("...")
		return
	}
	switch v := v.(type) {
	case starlark.String:
		r.quoted(string(v), false)
	case starlark.Bytes:
		r.quoted(string(v), true)
	case *starlark.List:
		r.w.WriteString("[")
		if slices.Contains(r.path, starlark.Value(v)) {
			r.w.WriteString("...")
		} else {
			r.path = append(r.path, v)
			for i := 0; i < v.Len() && !r.w.full; i++ {
				if i > 0 {
					r.w.WriteString(", ")
				}
				r.repr(v.Index(i), depth+1)
			}
			r.path = r.path[:len(r.path)-1]
		}
		r.w.WriteString("]")
	case starlark.Tuple:
		r.w.WriteString("(")
		for i, e := range v {
			if r.w.full {
				break
			}
			if i > 0 {
				r.w.WriteString(", ")
			}
			r.repr(e, depth+1)
		}
		if len(v) == 1 {
			r.w.WriteString(",")
		}
		r.w.WriteString(")")
	case *starlark.Dict:
		r.w.WriteString("{")
		if slices.Contains(r.path, starlark.Value(v)) {
			r.w.WriteString("...")
		} else {
			sep := ""
			for k, e := range v.Entries() {
				if r.w.full {
					break
				}
				r.w.WriteString(sep)
				r.repr(k, depth+1)
				r.w.WriteString(": ")
				r.path = append(r.path, v)
				r.repr(e, depth+1)
				r.path = r.path[:len(r.path)-1]
				sep = ", "
			}
		}
		r.w.WriteString("}")
	case *starlark.Set:
		r.w.WriteString("set([")
		sep := ""
		for e := range v.Elements() {
			if r.w.full {
				break
			}
			r.w.WriteString(sep)
			r.repr(e, depth+1)
			sep = ", "
		}
		r.w.WriteString("])")
	default:
		// Scalars, functions, modules and ranges render small.
		r.w.WriteString(v.String())
	}
}

// quoted writes s quoted as a Starlark string (or bytes) literal, quoting
// only as much of a long s as can show.
func (r *renderer) quoted(s string, isBytes bool) {
	if room := r.w.room(); len(s) > room {
		s = s[:runeStart(s, room)]
		r.w.WriteString(syntax.Quote(s, isBytes))
		r.w.full = true
		return
	}
	r.w.WriteString(syntax.Quote(s, isBytes))
}

// reprSize estimates the length of v's repr (escapes in strings aside),
// looking no further than needed to tell it exceeds limit. It returns a
// number above limit when the repr would be longer, or when v nests
// deeper than maxNest, which deep reports.
func reprSize(v starlark.Value, limit int) (n int, deep bool) {
	m := measure(v, limit)
	return m.n, m.deep
}

// measure measures v's repr as reprSize does, also counting elements and
// the deepest nesting.
func measure(v starlark.Value, limit int) sizer {
	s := sizer{limit: limit}
	s.value(v, 0)
	s.path = nil
	return s
}

// sizer measures reprs for reprSize and measure.
type sizer struct {
	limit    int
	n        int              // estimated length so far
	items    int              // values seen
	maxDepth int              // deepest nesting seen
	deep     bool             // nested deeper than maxNest
	path     []starlark.Value // containers being measured, to spot cycles
}

// over reports whether the measure already exceeds the limit.
func (s *sizer) over() bool { return s.n > s.limit }

func (s *sizer) value(v starlark.Value, depth int) {
	if s.over() {
		return
	}
	if depth > maxNest {
		s.deep = true
		s.n = s.limit + 1
		return
	}
	s.items++
	s.maxDepth = max(s.maxDepth, depth)
	switch v := v.(type) {
	case starlark.NoneType, starlark.Bool:
		s.n += 5
	case starlark.Int:
		s.n += intBits(v)*30103/100000 + 2
	case starlark.Float:
		s.n += 24
	case starlark.String:
		s.n += len(v) + 2
	case starlark.Bytes:
		s.n += len(v) + 3
	case *starlark.List:
		s.n += 2
		if slices.Contains(s.path, starlark.Value(v)) {
			s.n += 3
			return
		}
		s.path = append(s.path, v)
		for i := 0; i < v.Len() && !s.over(); i++ {
			s.n += 2
			s.value(v.Index(i), depth+1)
		}
		s.path = s.path[:len(s.path)-1]
	case starlark.Tuple:
		s.n += 3
		for _, e := range v {
			if s.over() {
				return
			}
			s.n += 2
			s.value(e, depth+1)
		}
	case *starlark.Dict:
		s.n += 2
		if slices.Contains(s.path, starlark.Value(v)) {
			s.n += 3
			return
		}
		s.path = append(s.path, v)
		for k, e := range v.Entries() {
			if s.over() {
				break
			}
			s.n += 4
			s.value(k, depth+1)
			s.value(e, depth+1)
		}
		s.path = s.path[:len(s.path)-1]
	case *starlark.Set:
		s.n += 7
		for e := range v.Elements() {
			if s.over() {
				return
			}
			s.n += 2
			s.value(e, depth+1)
		}
	default:
		s.n += len(v.String())
	}
}

// intBits returns the number of bits of |i|.
func intBits(i starlark.Int) int {
	if x, ok := i.Int64(); ok {
		u := uint64(x)
		if x < 0 {
			u = -u
		}
		return bits.Len64(u)
	}
	return i.BigInt().BitLen()
}
