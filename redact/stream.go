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
	s *Scrubber
	// buf holds the text held back after its first off bytes, which were
	// shown (buf is empty when nothing is held back). A Builder's bytes
	// never change once written, so the held text is a view of buf, not a
	// copy, and what String returns as is (a part of it) stays valid.
	buf strings.Builder
	off int
	// The first noHeld cuts of the held text (after its first byte, its
	// second, ...) are known to be no cut however it continues; cuts are
	// looked for after them only, so a long held word is scanned once,
	// not at each Write. The first noCut of them (noCut <= noHeld) are no
	// cut wherever the text is cut before them too (noCuts), and stay
	// known when a word too long to hold is cut.
	noCut, noHeld int
}

// NewStream returns a Stream that scrubs one text with s.
func (s *Scrubber) NewStream() *Stream { return &Stream{s: s} }

// Write adds chunk to the text and returns the scrubbed text that can be
// shown now, possibly "" while Write holds the end back.
func (st *Stream) Write(chunk string) string {
	if st.s == nil {
		return chunk
	}
	text := chunk
	if st.buf.Len() > 0 {
		st.buf.WriteString(chunk)
		text = st.pending()
	}
	c := st.cut(text)
	out := ""
	if c > 0 {
		out = st.s.String(text[:c])
		if c <= st.noHeld {
			// A word too long to hold was cut: what is known of its rest
			// stays known.
			st.noCut = max(noCuts(text, st.noCut)-c, 0)
		} else {
			st.noCut = 0
		}
		st.noHeld = st.noCut
	}
	switch {
	case st.buf.Len() == 0:
		// Nothing was held back: text is chunk, and buf takes its rest.
		st.buf.WriteString(text[c:])
	case st.off+c == st.buf.Len():
		st.buf.Reset()
		st.off = 0
	default:
		st.off += c
		if st.off >= st.buf.Len()/2 {
			// Most of buf was shown: keep only what is held back, which
			// costs a copy of at most as many bytes as were shown.
			rest := st.pending()
			st.buf.Reset()
			st.buf.WriteString(rest)
			st.off = 0
		}
	}
	return out
}

// pending returns the text Write holds back.
func (st *Stream) pending() string { return st.buf.String()[st.off:] }

// Flush ends the text: it returns the scrubbed rest that Write held back
// and empties the Stream, which can then take a new text.
func (st *Stream) Flush() string {
	if st.s == nil || st.Pending() == 0 {
		return ""
	}
	out := st.s.String(st.pending())
	st.buf.Reset()
	st.off, st.noCut, st.noHeld = 0, 0, 0
	return out
}

// Pending returns how many bytes Write holds back.
func (st *Stream) Pending() int { return st.buf.Len() - st.off }

// noCuts returns how many of the first cuts of text are no cut whatever
// follows and wherever text is cut before them (see Stream.noCut), given
// that the first known are.
func noCuts(text string, known int) int {
	for c := known + 1; c <= len(text); c++ {
		if !isTokenByte(text[c-1]) && (c == len(text) || utf8.RuneStart(text[c])) {
			return c - 1
		}
	}
	return len(text)
}

// cut returns how much of text, the held text, from its start, can be
// scrubbed and shown now: a cut that no secret or pattern match can
// cross, however text continues.
func (st *Stream) cut(text string) int {
	s := st.s
	c := len(text)
	if p := s.partialSecret(text); p >= 0 {
		c = p
	}
	if from := c; from > st.noHeld {
		if c = prevCut(text, from, st.noHeld); c == 0 {
			// None of the first from cuts is one: remember it, so that
			// the next Write looks after them only.
			st.noHeld = from
		}
	} else {
		c = 0
	}
	c = s.straddleFree(text, c, st.noHeld)
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
		c = s.straddleFree(text, c, st.noHeld)
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
// The first noCut cuts of text are none.
func (s *Scrubber) straddleFree(text string, c, noCut int) int {
	for moved := true; moved && c > 0; {
		moved = false
		for _, sec := range s.secrets {
			n := len(sec.value)
			if n < 2 {
				continue
			}
			lo, hi := max(0, c-n+1), min(len(text), c+n-1)
			if i := strings.Index(text[lo:hi], sec.value); i >= 0 && lo+i < c {
				c, moved = prevCut(text, lo+i, noCut), true
				break
			}
		}
	}
	return c
}

// prevCut returns the greatest cut at most c after which text can be
// scrubbed in two parts as in one: 0, or a cut after a byte that is in no
// key shape or bearer token and at the start of a character, not within
// the spaces after a "bearer". The first noCut cuts of text are known to
// be none (noCuts), and are not looked at again.
func prevCut(text string, c, noCut int) int {
	for ; c > noCut; c-- {
		if b := text[c-1]; isTokenByte(b) || c < len(text) && !utf8.RuneStart(text[c]) {
			continue
		}
		if isSpaceByte(text[c-1]) && endsWithBearer(text[:c]) {
			// So do the cuts after the other spaces since "bearer": go on
			// from the cut after its "r".
			c = len(strings.TrimRight(text[:c], spaces)) + 1
			continue
		}
		return c
	}
	return 0
}

// endsWithBearer reports whether text ends with "bearer" (in any case) at
// the start of a word, then one or more spaces.
func endsWithBearer(text string) bool {
	t := strings.TrimRight(text, spaces)
	const word = "bearer"
	if len(t) < len(word) || !strings.EqualFold(t[len(t)-len(word):], word) {
		return false
	}
	i := len(t) - len(word)
	return i == 0 || !isWordByte(t[i-1])
}

// spaces are the bytes of \s, the spaces bearerToken allows after
// "bearer".
const spaces = "\t\n\f\r "

// isSpaceByte reports whether c is in \s.
func isSpaceByte(c byte) bool { return strings.IndexByte(spaces, c) >= 0 }
