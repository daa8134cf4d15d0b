package redact

import (
	"strings"
	"unicode/utf8"
)

// MaxStreamHold is the most text, in bytes, a Stream holds back while it
// waits for a word to end; see Stream.
const MaxStreamHold = 8 << 10

// Stream scrubs a text that arrives in pieces, such as the chunks of a
// streamed model reply, so that a secret split across pieces is scrubbed
// as it would be in the whole text. Write takes the next piece and returns
// the scrubbed text that is safe to show now; Flush returns the rest at
// the end of the text. Concatenated, what they return is what
// Scrubber.String returns for the whole text.
//
// To get there, a Stream holds back the end of the text received so far
// until it can no longer be part of a secret:
//
//   - the start of a literal secret (an environment value or an extra
//     secret) that the next piece may complete, which holds at most the
//     longest secret's length less one byte;
//   - the last word, a run of the bytes key shapes and bearer tokens are
//     made of ([A-Za-z0-9._~+/=-]), with a "bearer " before it, since the
//     next piece may extend it into a key;
//   - the whole of a complete literal secret that the cut would split.
//
// Text is cut only after a byte that is in no key shape, at the start of
// a UTF-8 character, so each part is scrubbed exactly as in the whole
// text. A word longer than MaxStreamHold (a long base64 blob) is cut
// anyway, after its first bytes, so that the stream keeps moving: a key
// shape that long could then be scrubbed only in part, which no real key
// is.
//
// A Stream is for one text and one goroutine at a time; it is not safe
// for concurrent use. A Stream of a nil *Scrubber passes text through.
type Stream struct {
	s       *Scrubber
	pending string
}

// NewStream returns a Stream that scrubs one text with s.
func (s *Scrubber) NewStream() *Stream { return &Stream{s: s} }

// Write adds chunk to the text and returns the scrubbed text that can be
// shown now, possibly "" while Write holds the end back.
func (st *Stream) Write(chunk string) string {
	if st.s == nil {
		return chunk
	}
	st.pending += chunk
	c := st.s.streamCut(st.pending)
	if c == 0 {
		return ""
	}
	out := st.s.String(st.pending[:c])
	st.pending = st.pending[c:]
	return out
}

// Flush ends the text: it returns the scrubbed rest that Write held back
// and empties the Stream, which can then take a new text.
func (st *Stream) Flush() string {
	if st.s == nil || st.pending == "" {
		return ""
	}
	out := st.s.String(st.pending)
	st.pending = ""
	return out
}

// Pending returns how many bytes Write holds back.
func (st *Stream) Pending() int { return len(st.pending) }

// streamCut returns how much of text, from its start, can be scrubbed
// and shown now: a cut that no secret or pattern match can cross, however
// text continues.
func (s *Scrubber) streamCut(text string) int {
	c := len(text)
	if p := s.partialSecret(text); p >= 0 {
		c = p
	}
	c = s.straddleFree(text, prevCut(text, c))
	if c == 0 && len(text) > MaxStreamHold+s.longest() {
		// One word too long to wait for: cut it, keeping back what may
		// start a literal secret and never splitting one.
		c = len(text) - MaxStreamHold
		if p := s.partialSecret(text); p >= 0 {
			c = min(c, p)
		}
		for c > 0 && !utf8.RuneStart(text[c]) {
			c--
		}
		c = s.straddleFree(text, c)
	}
	return c
}

// longest returns the length of the longest literal secret.
func (s *Scrubber) longest() int {
	if len(s.secrets) == 0 {
		return 0
	}
	return len(s.secrets[0].value) // secrets are sorted longest first
}

// partialSecret returns the first offset i of text such that text[i:] is
// a proper prefix of a literal secret (a secret the next piece could
// complete), or -1.
func (s *Scrubber) partialSecret(text string) int {
	for i := max(0, len(text)-s.longest()+1); i < len(text); i++ {
		rest := text[i:]
		if len(rest) > 1 && s.pairs != nil {
			// Only where a secret's first two bytes are (pairs holds them).
			if k := pair(rest[0], rest[1]); s.pairs[k>>6]&(1<<(k&63)) == 0 {
				continue
			}
		}
		for _, sec := range s.secrets {
			if len(sec.value) > len(rest) && strings.HasPrefix(sec.value, rest) {
				return i
			}
		}
	}
	return -1
}

// straddleFree moves the cut c back until no complete literal secret in
// text crosses it, each time to a cut that prevCut allows, and returns it.
func (s *Scrubber) straddleFree(text string, c int) int {
	for moved := true; moved && c > 0; {
		moved = false
		for _, sec := range s.secrets {
			n := len(sec.value)
			if n < 2 {
				continue
			}
			lo, hi := max(0, c-n+1), min(len(text), c+n-1)
			if i := strings.Index(text[lo:hi], sec.value); i >= 0 && lo+i < c {
				c, moved = prevCut(text, lo+i), true
				break
			}
		}
	}
	return c
}

// prevCut returns the greatest cut at most c after which text can be
// scrubbed in two parts as in one: 0, or a cut after a byte that is in no
// key shape or bearer token and at the start of a character, not within
// the spaces after a "bearer".
func prevCut(text string, c int) int {
	for ; c > 0; c-- {
		if b := text[c-1]; isTokenByte(b) || c < len(text) && !utf8.RuneStart(text[c]) {
			continue
		}
		if isSpaceByte(text[c-1]) && endsWithBearer(text[:c]) {
			continue
		}
		return c
	}
	return 0
}

// endsWithBearer reports whether text ends with "bearer" (in any case) at
// the start of a word, then one or more spaces.
func endsWithBearer(text string) bool {
	t := strings.TrimRight(text, "\t\n\f\r ")
	const word = "bearer"
	if len(t) < len(word) || !strings.EqualFold(t[len(t)-len(word):], word) {
		return false
	}
	i := len(t) - len(word)
	return i == 0 || !isWordByte(t[i-1])
}

// isSpaceByte reports whether c is in \s, the spaces bearerToken allows
// after "bearer".
func isSpaceByte(c byte) bool { return strings.IndexByte("\t\n\f\r ", c) >= 0 }
