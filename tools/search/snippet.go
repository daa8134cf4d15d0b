package search

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Ellipsis marks text cut from either end of a snippet.
const Ellipsis = "…"

// Snippet returns a passage of at most maxRunes runes (plus ellipsis marks)
// from the hit's body, with white space collapsed. The passage is the window
// that covers the most distinct query terms not already in the title (the
// title is shown anyway), then the most distinct query terms; ties go to a
// window that leaves some context after its last match, then to more term
// occurrences, then to a window starting at a sentence boundary, then to the
// earlier window. A body that fits is returned whole; maxRunes < 1 returns "".
func (h Hit) Snippet(maxRunes int) string {
	text := h.flat
	if maxRunes < 1 {
		return ""
	}
	b := h.body
	if b == nil {
		nb := newBody(text)
		b = &nb
	}
	if b.ascii {
		if len(text) <= maxRunes {
			return text
		}
	} else if utf8.RuneCountInString(text) <= maxRunes {
		return text
	}
	// ends finds the end of the window of maxRunes runes from a start; in
	// ASCII text a rune is a byte. The sentence starts, and the windows
	// before the matches, come in increasing order, so each pass over the
	// text decodes it about once.
	ends := runeWindow{text: text, n: maxRunes, ascii: b.ascii}
	seen := make([]bool, h.terms) // reused by every window's score
	best := window{start: 0, end: ends.from(0), sentence: true}
	best.score(h.matches, len(text), seen)
	try := func(start int, sentence bool) {
		w := window{start: start, end: ends.from(start), sentence: sentence}
		w.score(h.matches, len(text), seen)
		if w.better(best) {
			best = w
		}
	}
	for _, start := range b.sentences {
		try(start, true)
	}
	lead := maxRunes / 4
	for _, m := range h.matches {
		try(wordStartBefore(text, m.start, lead, b.ascii), false)
	}
	return cut(text, best.start, best.end)
}

// window is a candidate snippet: the byte range [start, end) of a body.
type window struct {
	start, end int
	// sentence is true when start is a sentence boundary.
	sentence bool
	// fresh, distinct and total count the query terms not in the title, all
	// query terms and all term occurrences inside the window.
	fresh, distinct, total int
	// context is true when the window ends at the end of the text or at
	// least tailContext bytes after its last match.
	context bool
}

// tailContext is how many bytes should follow the last match of a snippet,
// so that the fact next to a matched term is not cut off.
const tailContext = 40

// score counts the matches that lie entirely inside w, whose text is
// textLen bytes long. ms is ordered by start offset; seen has a slot for
// each match id, and is cleared here.
func (w *window) score(ms []match, textLen int, seen []bool) {
	clear(seen)
	w.fresh, w.distinct, w.total = 0, 0, 0
	last := w.start
	// Matches that start before the window are skipped at once; from the
	// first that starts after the window's end, none fits.
	first, _ := slices.BinarySearchFunc(ms, w.start, func(m match, start int) int { return cmp.Compare(m.start, start) })
	for _, m := range ms[first:] {
		if m.start > w.end {
			break
		}
		if m.end > w.end {
			continue
		}
		w.total++
		last = m.end
		if !seen[m.id] {
			seen[m.id] = true
			w.distinct++
			if !m.inTitle {
				w.fresh++
			}
		}
	}
	w.context = w.end == textLen || w.end-last >= tailContext
}

// better reports whether w should replace the best window so far, b.
func (w window) better(b window) bool {
	switch {
	case w.fresh != b.fresh:
		return w.fresh > b.fresh
	case w.distinct != b.distinct:
		return w.distinct > b.distinct
	case w.context != b.context:
		return w.context
	case w.total != b.total:
		return w.total > b.total
	case w.sentence != b.sentence:
		return w.sentence
	default:
		return w.start < b.start
	}
}

// runeWindow computes advance(text, start, n) for a series of starts,
// each a rune boundary, carrying the last window over to the next start
// when it is not earlier. The zero start, end and runes are the window at 0.
type runeWindow struct {
	text  string
	n     int
	ascii bool
	// start and end bound the last window; runes counts the runes in it
	// (at most n).
	start, end, runes int
}

// from returns advance(w.text, start, w.n).
func (w *runeWindow) from(start int) int {
	if w.ascii {
		return min(start+w.n, len(w.text))
	}
	if start < w.start {
		w.start, w.end, w.runes = start, start, 0
	}
	for w.start < start {
		if w.start == w.end {
			w.start, w.end, w.runes = start, start, 0
			break
		}
		_, size := utf8.DecodeRuneInString(w.text[w.start:])
		w.start += size
		w.runes--
	}
	for w.runes < w.n && w.end < len(w.text) {
		_, size := utf8.DecodeRuneInString(w.text[w.end:])
		w.end += size
		w.runes++
	}
	return w.end
}

// advance returns the byte offset n runes after start in s, or len(s).
func advance(s string, start, n int) int {
	i := start
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// wordStartBefore returns the start of the word that begins at most lead runes
// before offset at in s (0 if there is none); ascii says s is ASCII.
func wordStartBefore(s string, at, lead int, ascii bool) int {
	i := at
	if ascii {
		i = max(at-lead, 0)
	}
	for ; !ascii && lead > 0 && i > 0; lead-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	if i == 0 {
		return 0
	}
	if sp := strings.IndexByte(s[i:at], ' '); sp >= 0 {
		return i + sp + 1
	}
	return at
}

// cut returns s[start:end] trimmed to whole words, with ellipsis marks where
// text was dropped.
func cut(s string, start, end int) string {
	part := s[start:end]
	if end < len(s) && s[end] != ' ' {
		if sp := strings.LastIndexByte(part, ' '); sp > 0 {
			part = part[:sp]
		}
	}
	part = strings.TrimSpace(part)
	if start > 0 {
		part = Ellipsis + " " + part
	}
	if end < len(s) {
		part += " " + Ellipsis
	}
	return part
}
