package verify

// Answers are read and prepared for comparison here: Extract finds the answer
// a model committed to, Normalize folds text the way the HotpotQA and SQuAD
// evaluation scripts do, and Number reads a numeric answer as an exact
// rational.

import (
	"regexp"
	"strings"
)

// Source names the rule that produced an extracted answer. The rules are
// tried in the order of the constants below; the first rule that yields a
// non-empty answer wins.
type Source int

const (
	// SourceNone means no answer was found (the text was blank).
	SourceNone Source = iota
	// SourceAnswerLine is a line starting with "Answer:" or "Final Answer:"
	// (any case, ASCII or full-width colon, optional markdown such as "**").
	// The last such line wins; when the text after the colon is empty the
	// next non-empty line is the answer.
	SourceAnswerLine
	// SourceChinese is "答案：18", "答案是18", "答案为18" or "最终答案：18"
	// anywhere in the text. The last one wins; the answer runs to the end of
	// its sentence ("。", "；" or the line end).
	SourceChinese
	// SourceHashes is a GSM8K-style "#### 18" line. The text after the marks
	// must start with a number (optionally signed or with a currency sign) so
	// that markdown headings such as "#### Step 2" are not taken for answers.
	// The last such line wins.
	SourceHashes
	// SourceBoxed is the content of the last \boxed{...}, with nested braces.
	SourceBoxed
	// SourceAnswerIs is the text after the last "the answer is" (optionally
	// followed by a colon), up to the end of its sentence or line.
	SourceAnswerIs
	// SourceFinish is the content of the last ReAct-style Finish[...], with
	// nested brackets.
	SourceFinish
	// SourceLastLine is the last non-empty line, used when no marker exists.
	SourceLastLine
)

// String returns a short lower-case name of the rule, for traces and reports.
func (s Source) String() string {
	switch s {
	case SourceAnswerLine:
		return "answer-line"
	case SourceChinese:
		return "chinese"
	case SourceHashes:
		return "hashes"
	case SourceBoxed:
		return "boxed"
	case SourceAnswerIs:
		return "answer-is"
	case SourceFinish:
		return "finish"
	case SourceLastLine:
		return "last-line"
	default:
		return "none"
	}
}

// Match is an extracted answer together with the rule that found it.
type Match struct {
	// Answer is the cleaned answer text.
	Answer string
	// Source is the rule that produced Answer.
	Source Source
}

// Explicit reports whether the answer came from an explicit marker rather
// than from the last-line fallback.
func (m Match) Explicit() bool {
	return m.Source != SourceNone && m.Source != SourceLastLine
}

var (
	answerLineRe = regexp.MustCompile(`(?im)^[ \t]*(?:[*_#>\-][ \t]*)*(?:final[ \t]+answer|answer)[ \t*_]*[:：](?:[ \t]*(?:\*\*|__)(?:[ \t]|$))?(.*)$`)
	chineseRe    = regexp.MustCompile(`(?:最终答案|答案)[ \t]*(?:是|为|為|：|:)[ \t]*[:：]?`)
	hashesRe     = regexp.MustCompile(`(?m)^[ \t]*####[ \t]*([-−+$¥€£]?[ \t]*[0-9.][^\n]*)$`)
	boxedRe      = regexp.MustCompile(`\\boxed[ \t]*\{`)
	answerIsRe   = regexp.MustCompile(`(?i)\banswer[ \t]+is\b[ \t]*[:：]?`)
	finishRe     = regexp.MustCompile(`(?i)\bfinish[ \t]*\[`)
	textWrapRe   = regexp.MustCompile(`^\\(?:text|textbf|mathrm)\{(.*)\}$`)
)

// Extract returns the final answer in text, cleaned of a trailing period,
// surrounding quotes, markdown emphasis and code marks. ok is false only when
// text holds nothing but white space. The rules, in priority order, are the
// Source constants: an "Answer:"/"Final Answer:" line, a Chinese 答案 marker,
// a GSM8K "####" line, \boxed{}, "the answer is", Finish[...], and finally
// the last non-empty line.
func Extract(text string) (ans string, ok bool) {
	m, ok := Find(text)
	return m.Answer, ok
}

// Find is Extract that also reports which rule found the answer.
func Find(text string) (Match, bool) {
	rules := []struct {
		src  Source
		find func(string) string
	}{
		{SourceAnswerLine, findAnswerLine},
		{SourceChinese, findChinese},
		{SourceHashes, findHashes},
		{SourceBoxed, func(s string) string { return findBalanced(s, boxedRe, '{', '}') }},
		{SourceAnswerIs, findAnswerIs},
		{SourceFinish, func(s string) string { return findBalanced(s, finishRe, '[', ']') }},
		{SourceLastLine, findLastLine},
	}
	for _, r := range rules {
		if a := r.find(text); a != "" {
			return Match{Answer: a, Source: r.src}, true
		}
	}
	return Match{}, false
}

// findAnswerLine returns the answer of the last "Answer:" line that has one.
func findAnswerLine(text string) string {
	locs := answerLineRe.FindAllStringSubmatchIndex(text, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		rest := clean(text[locs[i][2]:locs[i][3]])
		if rest == "" {
			rest = clean(nextLine(text[locs[i][1]:]))
		}
		if rest != "" {
			return rest
		}
	}
	return ""
}

// findChinese returns the answer after the last 答案 marker that has one.
func findChinese(text string) string {
	locs := chineseRe.FindAllStringIndex(text, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		rest := text[locs[i][1]:]
		line, _, _ := strings.Cut(rest, "\n")
		if cut := strings.IndexAny(line, "。；;"); cut >= 0 {
			line = line[:cut]
		}
		a := clean(line)
		if a == "" && strings.TrimSpace(line) == "" {
			a = clean(nextLine(rest))
		}
		if a != "" {
			return a
		}
	}
	return ""
}

// findHashes returns the answer of the last GSM8K "####" line.
func findHashes(text string) string {
	locs := hashesRe.FindAllStringSubmatchIndex(text, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		if a := clean(text[locs[i][2]:locs[i][3]]); a != "" {
			return a
		}
	}
	return ""
}

// findAnswerIs returns the sentence after the last "the answer is".
func findAnswerIs(text string) string {
	locs := answerIsRe.FindAllStringIndex(text, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		line, _, _ := strings.Cut(text[locs[i][1]:], "\n")
		if a := clean(firstSentence(line)); a != "" {
			return a
		}
	}
	return ""
}

// findBalanced returns the content between the delimiters opened by the last
// match of open (whose match ends with the opening delimiter), honouring
// nesting. An unclosed delimiter runs to the end of the text.
func findBalanced(text string, open *regexp.Regexp, left, right byte) string {
	locs := open.FindAllStringIndex(text, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		start := locs[i][1]
		depth, end := 1, len(text)
		for j := start; j < len(text); j++ {
			switch text[j] {
			case left:
				depth++
			case right:
				depth--
			}
			if depth == 0 {
				end = j
				break
			}
		}
		if a := clean(text[start:end]); a != "" {
			return a
		}
	}
	return ""
}

// findLastLine returns the last non-empty line after cleaning.
func findLastLine(text string) string {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if a := clean(lines[i]); a != "" {
			return a
		}
	}
	return ""
}

// nextLine returns the first non-blank line of s after its first line break.
func nextLine(s string) string {
	_, rest, found := strings.Cut(s, "\n")
	if !found {
		return ""
	}
	for line := range strings.SplitSeq(rest, "\n") {
		if strings.TrimSpace(line) != "" {
			return line
		}
	}
	return ""
}

// firstSentence cuts s at the first sentence end: a period, question or
// exclamation mark followed by white space, or a full-width "。". A period
// inside a number such as 3.5 does not end the sentence.
func firstSentence(s string) string {
	if i := strings.Index(s, "。"); i >= 0 {
		s = s[:i]
	}
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case '.', '!', '?':
			if s[i+1] == ' ' || s[i+1] == '\t' {
				return s[:i]
			}
		}
	}
	return s
}

// wrappers are the paired marks clean strips from both ends of an answer.
var wrappers = [][2]string{
	{"**", "**"}, {"__", "__"}, {"*", "*"}, {"_", "_"}, {"`", "`"},
	{`"`, `"`}, {"'", "'"}, {"“", "”"}, {"‘", "’"}, {"「", "」"}, {"『", "』"},
	{`\(`, `\)`}, {`\[`, `\]`}, {"$", "$"},
}

// clean trims white space, trailing sentence periods and surrounding quotes
// or markdown marks until nothing more changes.
func clean(s string) string {
	for {
		before := s
		s = strings.TrimSpace(s)
		s = strings.TrimRight(s, ".。")
		s = strings.TrimSpace(s)
		for _, w := range wrappers {
			if len(s) >= len(w[0])+len(w[1]) && strings.HasPrefix(s, w[0]) && strings.HasSuffix(s, w[1]) {
				s = s[len(w[0]) : len(s)-len(w[1])]
				break
			}
		}
		if m := textWrapRe.FindStringSubmatch(s); m != nil {
			s = m[1]
		}
		if s == before {
			return s
		}
	}
}
