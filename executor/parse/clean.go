package parse

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/tools"
)

// NormalizeToolName returns the form of a tool name used to match it
// tolerantly against registered tools: tools.NormalizeName, the fold the
// tool registry itself uses (lower case, with white space, '_', '-' and '.'
// removed), so "Web Search", "web_search" and "web-search" are all
// "websearch".
func NormalizeToolName(s string) string {
	return tools.NormalizeName(s)
}

// isFinishTool reports whether an action's tool is really the final answer.
func isFinishTool(tool string) bool {
	switch NormalizeToolName(tool) {
	case "finish", "finalanswer", "最终答案":
		return true
	}
	return false
}

// isNoTool reports whether an action's tool says that there is no action.
func isNoTool(tool string) bool {
	switch strings.ToLower(strings.TrimSpace(tool)) {
	case "", "none", "n/a", "na", "null", "nil", "no action", "无":
		return true
	}
	return false
}

// stripWrapping removes pairs of matching quotes or backticks that wrap the
// whole of s, but only when the character does not occur inside, so a quote
// that belongs to the text stays.
func stripWrapping(s, chars string) string {
	for len(s) >= 2 {
		c := s[0]
		if strings.IndexByte(chars, c) < 0 || s[len(s)-1] != c {
			break
		}
		inner := s[1 : len(s)-1]
		if strings.IndexByte(inner, c) >= 0 {
			break
		}
		s = strings.TrimSpace(inner)
	}
	return s
}

// firstLine returns the first non-blank line of s, trimmed, and the text
// after it.
func firstLine(s string) (line, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	line, rest, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(line), rest
}

// toolTrim holds what cleanTool trims from both ends of a tool name: blanks,
// quotes, backticks, Markdown emphasis and closing punctuation.
const toolTrim = " \t*`\"'.:"

// cleanTool tidies a tool name written after "Action:".
func cleanTool(s string) string {
	return strings.Trim(s, toolTrim)
}

// isLoneFence reports whether line is only a code fence marker, possibly with
// a language tag ("```", "```json").
func isLoneFence(line string) bool {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "```") {
		return false
	}
	return isFenceTag(line[3:])
}

// isFenceTag reports whether s could be a code fence's language tag.
func isFenceTag(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("+-_.#", r) {
			return false
		}
	}
	return true
}

// dropStrayFence removes one code fence line left unbalanced, as when a
// whole reply is wrapped in a code fence and a label splits it: a leading
// lone fence line or else a trailing lone "```" line. Balanced fences stay.
func dropStrayFence(s string) string {
	s = strings.TrimSpace(s)
	if strings.Count(s, "```")%2 == 0 {
		return s
	}
	if line, rest, _ := strings.Cut(s, "\n"); isLoneFence(line) {
		return strings.TrimSpace(rest)
	}
	i := strings.LastIndexByte(s, '\n')
	if strings.TrimSpace(s[i+1:]) == "```" {
		return strings.TrimSpace(s[:max(i, 0)])
	}
	return s
}

// unfence removes a code fence that starts s. It reports whether s was
// fenced and whether non-blank text followed the closing fence (dropped).
func unfence(s string) (inner string, fenced, dropped bool) {
	if !strings.HasPrefix(s, "```") {
		return s, false, false
	}
	body := s[3:]
	if tag, after, ok := strings.Cut(body, "\n"); ok && isFenceTag(strings.TrimSpace(tag)) {
		body = after
	}
	if end := strings.Index(body, "```"); end >= 0 {
		dropped = strings.TrimSpace(body[end+3:]) != ""
		body = body[:end]
	}
	return strings.TrimSpace(body), true, dropped
}

// jsonObjectEnd returns the length of the JSON object that starts s, or -1
// when s does not start with a well-formed object. It finds the closing brace
// by counting braces outside strings, then lets encoding/json validate.
func jsonObjectEnd(s string) int {
	if !strings.HasPrefix(s, "{") {
		return -1
	}
	var scan textutil.JSONScanner
	for i := 0; i < len(s); i++ {
		c := s[i]
		if scan.Step(c) && scan.Depth == 0 {
			// s starts with '{', so depth 0 comes back only with the
			// bracket or brace that closes it.
			if c == '}' && json.Valid([]byte(s[:i+1])) {
				return i + 1
			}
			return -1
		}
	}
	return -1
}

// cleanInput tidies a tool input and appends notes about what it dropped.
func cleanInput(s string, notes *[]string) string {
	s = dropStrayFence(s)
	s, fenced, dropped := unfence(s)
	if dropped {
		*notes = append(*notes, "ignored text after the code fence around the input")
	}
	if end := jsonObjectEnd(s); end > 0 {
		if strings.TrimSpace(s[end:]) != "" {
			*notes = append(*notes, "ignored text after the JSON input")
		}
		return strings.TrimSpace(s[:end])
	}
	if !fenced {
		s = stripWrapping(s, "\"'`")
	}
	return s
}

// cleanText tidies a thought or an answer: trimmed, without a stray code
// fence line.
func cleanText(s string) string {
	return dropStrayFence(s)
}
