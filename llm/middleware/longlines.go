package middleware

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Sizes of the long-line rewriting of LongLineTransport.
const (
	// LongStreamLine is the longest line of a streamed response that
	// LongLineTransport passes through as it is: half of the 64 KiB
	// (bufio.MaxScanTokenSize) that langchaingo's openai and anthropic
	// stream readers take, whose bufio.Scanner fails the whole call with
	// "token too long" on a longer line.
	LongStreamLine = 32 << 10
	// StreamPiece is the most bytes of one string that an event rewritten
	// by LongLineTransport carries: even with every byte escaped as
	// \u00XX it stays well within LongStreamLine's reader.
	StreamPiece = 8 << 10
	// DefaultMaxStreamedString bounds each string of a streamed event
	// when the call has no reply limit (NewReplyLimit): 64 MiB, the
	// planner's largest llm.max_reply_bytes.
	DefaultMaxStreamedString = 64 << 20
	// minStreamedString is the least a string of a streamed event is cut
	// to, whatever the reply limit: object keys are strings too.
	minStreamedString = 4 << 10
)

// SplitFunc rewrites one JSON event of a streamed response (the JSON of
// an SSE "data:" line) that is too long for the provider's stream reader
// as several events, each a JSON value, that the reader assembles into
// the same reply: their strings hold at most piece bytes. It returns nil
// when it cannot split event.
type SplitFunc func(event []byte, piece int) [][]byte

// LongLineTransport is an http.RoundTripper that makes every line of a
// streamed response fit the stream readers of langchaingo's clients, so
// that one big chunk of a reply (a proxy that buffers, a server that
// sends a whole plan or tool call at once) does not fail the call. It
// changes only 2xx responses whose Content-Type is text/event-stream
// (SSE), and in them only lines over LongStreamLine bytes, which
// langchaingo would fail on:
//
//   - each string of a line is cut, as the line is read, to the call's
//     reply limit plus one byte (the limit of NewReplyLimit, which then
//     sees the reply as too long and cuts it at its limit, with its
//     marker and its WithOnTruncate note; never below 4 KiB, so keys stay
//     whole), or to DefaultMaxStreamedString without one; the cut falls
//     on a character and escape boundary, so the JSON stays valid, and
//     memory stays bounded however long the line;
//   - the JSON of a "data:" line is then given to Split with StreamPiece,
//     and each event it returns is written as an SSE event of its own,
//     with the "event:" line of the original repeated.
//
// A line Split cannot rewrite (nil Split, JSON it does not know) is
// passed on, cut strings and all, and the reader then fails as before.
// Lines up to LongStreamLine bytes pass unchanged.
type LongLineTransport struct {
	// Base performs the requests. Nil means http.DefaultTransport.
	Base http.RoundTripper
	// Split rewrites a long line's JSON as shorter events.
	Split SplitFunc
}

// RoundTrip implements http.RoundTripper.
func (t *LongLineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || resp.StatusCode/100 != 2 || resp.Body == nil {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); !strings.EqualFold(mt, "text/event-stream") {
		return resp, nil
	}
	maxString := replyLimitFrom(req.Context())
	if maxString <= 0 {
		maxString = DefaultMaxStreamedString
	} else {
		// One byte over: the reply limit cuts the reply and says so. Not
		// below minStreamedString, which leaves keys and other short
		// strings alone.
		maxString = max(maxString+1, minStreamedString)
	}
	resp.Body = &longLineBody{
		r: bufio.NewReaderSize(resp.Body, 64<<10), closer: resp.Body,
		split: t.Split, capper: stringCapper{max: maxString},
	}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// longLineBody is the body of a streamed response, rewritten line by line
// (see LongLineTransport).
type longLineBody struct {
	r      *bufio.Reader
	closer io.Closer
	split  SplitFunc
	capper stringCapper
	// line is the line being read, its strings cut; out is what Read
	// returns next; err ends the body once out is read.
	line, out []byte
	err       error
	// event is the "event:" line of the SSE event being read, if any.
	event []byte
}

// Read implements io.Reader.
func (b *longLineBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 && b.err == nil {
		b.readLine()
	}
	if len(b.out) == 0 {
		return 0, b.err
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

// Close implements io.Closer.
func (b *longLineBody) Close() error { return b.closer.Close() }

// readLine reads the next line, cutting its strings as it goes, and puts
// it, rewritten when too long, in out; or sets err.
func (b *longLineBody) readLine() {
	b.line = b.line[:0]
	b.capper.reset()
	for {
		chunk, err := b.r.ReadSlice('\n')
		b.line = b.capper.append(b.line, chunk)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			b.err = err
		}
		break
	}
	if len(b.line) == 0 {
		return
	}
	b.out = b.rewrite(b.line)
}

// rewrite returns line, or the events Split makes of it when it is longer
// than LongStreamLine.
func (b *longLineBody) rewrite(line []byte) []byte {
	body := bytes.TrimRight(line, "\r\n")
	switch {
	case len(body) == 0:
		b.event = b.event[:0]
	case bytes.HasPrefix(body, []byte("event:")):
		b.event = append(append(b.event[:0], body...), '\n')
	}
	if len(line) <= LongStreamLine || b.split == nil || !bytes.HasPrefix(body, []byte("data:")) {
		return line
	}
	events := b.split(bytes.TrimSpace(body[len("data:"):]), StreamPiece)
	if len(events) == 0 {
		return line
	}
	var out []byte
	for i, ev := range events {
		if i > 0 {
			out = append(append(out, '\n'), b.event...)
		}
		out = append(append(append(out, "data: "...), ev...), '\n')
	}
	return out
}

// stringCapper copies JSON text, line by line, keeping at most max
// decoded bytes of each string literal: the rest of a longer string is
// dropped up to its closing quote, never within a UTF-8 character or an
// escape, so valid JSON stays valid. Text outside strings is copied.
type stringCapper struct {
	max int
	// inString says a string literal is open; kept counts the decoded
	// bytes kept of it; dropping says the rest of it is dropped; keep says
	// whether the current character is kept (for its continuation
	// bytes); esc holds an escape being read.
	inString, dropping, keep bool
	kept                     int
	esc                      []byte
}

// reset starts a new line.
func (c *stringCapper) reset() {
	c.inString, c.dropping, c.keep, c.kept, c.esc = false, false, false, 0, c.esc[:0]
}

// append appends src to dst, cut, and returns dst.
func (c *stringCapper) append(dst, src []byte) []byte {
	for len(src) > 0 {
		if !c.inString {
			i := bytes.IndexByte(src, '"')
			if i < 0 {
				return append(dst, src...)
			}
			dst = append(dst, src[:i+1]...)
			src = src[i+1:]
			c.inString, c.dropping, c.kept = true, false, 0
			continue
		}
		b := src[0]
		src = src[1:]
		switch {
		case len(c.esc) > 0:
			c.esc = append(c.esc, b)
			if len(c.esc) == 2 && b == 'u' || len(c.esc) > 2 && len(c.esc) < 6 {
				continue // \uXXXX: wait for its four digits
			}
			dst = c.keepOrDrop(dst, c.esc, escapeSize(c.esc))
			c.esc = c.esc[:0]
		case b == '\\':
			c.esc = append(c.esc, b)
		case b == '"':
			dst = append(dst, b)
			c.inString = false
		case b&0xc0 == 0x80: // a continuation byte goes with its character
			if c.keep {
				dst = append(dst, b)
			}
		default:
			dst = c.keepOrDrop(dst, []byte{b}, utf8Len(b))
		}
	}
	return dst
}

// keepOrDrop appends the start of a character (or a whole escape), which
// decodes to size bytes, when the string has room left for it.
func (c *stringCapper) keepOrDrop(dst, p []byte, size int) []byte {
	c.keep = !c.dropping && c.kept+size <= c.max
	if !c.keep {
		c.dropping = true
		return dst
	}
	c.kept += size
	return append(dst, p...)
}

// utf8Len is the length of the UTF-8 sequence that lead starts (1 for a
// byte that starts none).
func utf8Len(lead byte) int {
	switch {
	case lead >= 0xf0:
		return 4
	case lead >= 0xe0:
		return 3
	case lead >= 0xc0:
		return 2
	}
	return 1
}

// escapeSize is how many bytes the JSON escape esc decodes to: 1, or for
// \uXXXX the code point's UTF-8 length (2 for each half of a surrogate
// pair, which together make 4).
func escapeSize(esc []byte) int {
	if len(esc) != 6 {
		return 1
	}
	var r rune
	for _, h := range esc[2:] {
		switch {
		case '0' <= h && h <= '9':
			r = r<<4 | rune(h-'0')
		case 'a' <= h && h <= 'f':
			r = r<<4 | rune(h-'a'+10)
		case 'A' <= h && h <= 'F':
			r = r<<4 | rune(h-'A'+10)
		}
	}
	switch {
	case r < 0x80:
		return 1
	case r < 0x800, r >= 0xd800 && r <= 0xdfff:
		return 2
	}
	return 3
}

// withReplyLimit returns ctx carrying the reply limit of the call, for
// LongLineTransport.
func withReplyLimit(ctx context.Context, n int) context.Context {
	return withValues(ctx, func(v *callValues) { v.replyLimit = n })
}

// replyLimitFrom returns the reply limit ctx carries, 0 if none.
func replyLimitFrom(ctx context.Context) int { return valuesOf(ctx).replyLimit }
