package mcp

import (
	"strings"
	"sync"
)

// ring keeps the last bytes written to it. It is safe for concurrent use.
type ring struct {
	mu    sync.Mutex
	buf   []byte
	size  int
	total int64
}

func newRing(size int) *ring { return &ring{size: size} }

// Write implements io.Writer; it never fails.
func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(len(p))
	if len(p) >= r.size {
		r.buf = append(r.buf[:0], p[len(p)-r.size:]...)
		return len(p), nil
	}
	if over := len(r.buf) + len(p) - r.size; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	r.buf = append(r.buf, p...)
	return len(p), nil
}

// tail returns at most max bytes of the end of what was written, starting
// at a line boundary when the kept bytes do not reach back to the start,
// with surrounding white space trimmed.
func (r *ring) tail(max int) string {
	r.mu.Lock()
	b := r.buf
	cut := int64(len(b)) < r.total
	if len(b) > max {
		b = b[len(b)-max:]
		cut = true
	}
	s := string(b)
	r.mu.Unlock()
	if cut {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
		s = strings.TrimSpace(s)
		if s != "" {
			s = "…" + s
		}
		return s
	}
	return strings.TrimSpace(s)
}
