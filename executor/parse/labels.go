package parse

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// label identifies a ReAct section label.
type label uint8

const (
	labelNone label = iota // text before the first label
	labelThought
	labelAction
	labelActionInput
	labelFinalAnswer
	labelObservation
	labelQuestion
)

// labelSpec spells one label: ASCII words matched case-insensitively with
// optional ' ', '_' or '-' between them, or one word matched exactly.
type labelSpec struct {
	kind  label
	words []string
}

// labelSpecs is ordered so that a label that is a prefix of another
// ("Action" of "Action Input") is tried after it.
var labelSpecs = [...]labelSpec{
	{labelActionInput, []string{"action", "input"}},
	{labelFinalAnswer, []string{"final", "answer"}},
	{labelThought, []string{"thought"}},
	{labelAction, []string{"action"}},
	{labelObservation, []string{"observation"}},
	{labelQuestion, []string{"question"}},
	{labelActionInput, []string{"行动输入"}},
	{labelFinalAnswer, []string{"最终答案"}},
	{labelThought, []string{"思考"}},
	{labelAction, []string{"行动"}},
	{labelObservation, []string{"观察"}},
	{labelQuestion, []string{"问题"}},
}

// isDecoration reports whether r may precede a label at the start of a line:
// white space, Markdown emphasis, heading, quote and list marks, and quotes.
func isDecoration(r rune) bool {
	switch r {
	case '*', '_', '#', '>', '-', '`', '"', '\'':
		return true
	}
	return unicode.IsSpace(r)
}

// skipDecoration returns the index of the first byte of s at or after i that
// is not decoration.
func skipDecoration(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isDecoration(r) {
			break
		}
		i += n
	}
	return i
}

// skipBytes returns the index of the first byte of s at or after i that is
// not in set.
func skipBytes(s string, i int, set string) int {
	for i < len(s) && strings.IndexByte(set, s[i]) >= 0 {
		i++
	}
	return i
}

// hasFoldPrefix reports whether s[i:] starts with the lower-case ASCII word w,
// ignoring ASCII case.
func hasFoldPrefix(s string, i int, w string) bool {
	if len(s)-i < len(w) {
		return false
	}
	for j := 0; j < len(w); j++ {
		c := s[i+j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[j] {
			return false
		}
	}
	return true
}

// matchLabel reports the label that line starts with, if any, and the index
// just after its colon (and any closing emphasis marks).
func matchLabel(line string) (label, int) {
	start := skipDecoration(line, 0)
	if start == len(line) {
		return labelNone, 0
	}
	for _, spec := range labelSpecs {
		i := start
		ok := true
		for k, w := range spec.words {
			if k > 0 {
				i = skipBytes(line, i, " _-")
			}
			if !hasFoldPrefix(line, i, w) {
				ok = false
				break
			}
			i += len(w)
		}
		if !ok {
			continue
		}
		i = skipBytes(line, i, " \t")
		i = skipBytes(line, i, "0123456789")
		i = skipBytes(line, i, " \t*_")
		switch {
		case strings.HasPrefix(line[i:], ":"):
			i++
		case strings.HasPrefix(line[i:], "："):
			i += len("：")
		default:
			continue
		}
		return spec.kind, skipBytes(line, i, "*_")
	}
	return labelNone, 0
}

// CutObservation removes an invented observation: it finds the first line
// that starts (after white space, Markdown marks or quotes) with an
// Observation label ("Observation:", "observation 3:", "**Observation:**",
// "观察：") and returns the text before that line with trailing white space
// removed, and cut = true. Text without such a line is returned unchanged
// with cut = false.
func CutObservation(text string) (kept string, cut bool) {
	for start, line := range lines(text) {
		if l, _ := matchLabel(line); l == labelObservation {
			return strings.TrimRightFunc(text[:start], unicode.IsSpace), true
		}
	}
	return text, false
}

// lines yields the lines of text, without their line breaks, each with the
// byte offset where it starts. Text that ends in a line break ends with an
// empty line.
func lines(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for start := 0; start <= len(text); {
			end := strings.IndexByte(text[start:], '\n')
			if end < 0 {
				end = len(text)
			} else {
				end += start
			}
			if !yield(start, text[start:end]) {
				return
			}
			start = end + 1
		}
	}
}

// section is one labelled part of a reply: the label and its raw value, from
// just after the colon up to the next label line.
type section struct {
	kind  label
	value string
}

// fenceToggles reports whether line opens or closes a code fence, that is
// whether it holds an odd number of ``` markers.
func fenceToggles(line string) bool {
	return strings.Count(line, "```")%2 == 1
}

// splitSections splits text into sections at label lines. Text before the
// first label becomes a labelNone section. Inside a code fence that opens in
// an Action Input or Final Answer value, lines are never read as labels.
func splitSections(text string) []section {
	secs := make([]section, 0, 8)
	cur := section{kind: labelNone}
	curStart := 0 // byte offset of cur.value in text
	inFence := false
	for start, line := range lines(text) {
		if inFence {
			if fenceToggles(line) {
				inFence = false
			}
		} else if l, at := matchLabel(line); l != labelNone {
			if cur.kind != labelNone || start > 0 {
				cur.value = text[curStart:max(start-1, curStart)]
				secs = append(secs, cur)
			}
			cur = section{kind: l}
			curStart = start + at
			if (l == labelActionInput || l == labelFinalAnswer) && fenceToggles(line[at:]) {
				inFence = true
			}
		} else if (cur.kind == labelActionInput || cur.kind == labelFinalAnswer) && fenceToggles(line) {
			inFence = true
		}
	}
	cur.value = text[curStart:]
	return append(secs, cur)
}
