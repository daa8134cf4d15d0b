package code

import (
	"encoding/json"
	"strings"

	"go.starlark.net/syntax"
)

// codeKeys are the JSON argument names accepted for the program, in order
// of preference.
func codeKeys() []string { return []string{"code", "input", "source", "program", "script"} }

// Program extracts the program from a tool input: the string field "code"
// (or "input", "source", "program", "script") of a JSON object, as native
// tool calling sends it, or else the text itself, as a text ReAct Action
// writes it. Windows line ends become "\n". Text that does not parse as
// Starlark is then repaired the ways models break it: the body of the
// first Markdown code fence is taken (with or without a language tag, and
// with prose around it), as is the text inside a pair of backquotes, and
// indentation common to the lines is removed. A JSON object without such
// a field, such as the dict literal {"a": 1}, is taken as the program.
func Program(input string) string {
	s := strings.ReplaceAll(input, "\r\n", "\n")
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") {
		if code, ok := jsonCode(t); ok {
			s = strings.ReplaceAll(code, "\r\n", "\n")
		}
	}
	for _, repair := range []func(string) string{unfence, dedent} {
		if parses(s) {
			break
		}
		s = repair(s)
	}
	return strings.TrimRight(strings.TrimLeft(s, "\n"), " \t\n")
}

// parses reports whether s parses as a program.
func parses(s string) bool {
	_, err := dialect().Parse(filename, s, 0)
	return err == nil
}

// dialect returns the Starlark dialect programs are written in: the
// options closest to Python.
func dialect() *syntax.FileOptions {
	return &syntax.FileOptions{
		Set:             true,
		While:           true,
		TopLevelControl: true,
		GlobalReassign:  true,
		Recursion:       true,
	}
}

// jsonCode returns the program field of a JSON object.
func jsonCode(s string) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) != nil {
		return "", false
	}
	for _, k := range codeKeys() {
		var code string
		if raw, ok := obj[k]; ok && json.Unmarshal(raw, &code) == nil {
			return code, true
		}
	}
	return "", false
}

// unfence returns the body of the first Markdown code fence in s (the
// rest of s when the fence is not closed), or s unchanged when s has none.
// A program wrapped whole in single backquotes loses them too.
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if len(t) >= 2 && t[0] == '`' && t[len(t)-1] == '`' && !strings.Contains(t[1:len(t)-1], "`") {
		return t[1 : len(t)-1]
	}
	lines := strings.Split(s, "\n")
	open := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			open = i
			break
		}
	}
	if open < 0 {
		return s
	}
	// The opening line may carry a language tag (python, starlark, py);
	// a one-line fence (```x = 1```) holds the program itself.
	first := strings.TrimSpace(lines[open])
	if inner, ok := strings.CutSuffix(first[3:], "```"); ok && len(first) > 6 {
		return inner
	}
	body := lines[open+1:]
	for i, l := range body {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			body = body[:i]
			break
		}
	}
	return strings.Join(body, "\n")
}

// dedent removes the indentation common to all non-blank lines of s. When
// the first line has none (a caller trimmed the input) but every later
// line does, and the first line does not open a block, the later lines
// lose their common indentation.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	firstIdx := -1
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			firstIdx = i
			break
		}
	}
	if firstIdx < 0 {
		return s
	}
	from := firstIdx
	if indentOf(lines[firstIdx]) == "" && !strings.HasSuffix(strings.TrimSpace(lines[firstIdx]), ":") {
		from = firstIdx + 1
	}
	prefix, found := "", false
	for _, l := range lines[from:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := indentOf(l)
		if !found {
			prefix, found = ind, true
			continue
		}
		prefix = commonPrefix(prefix, ind)
	}
	if prefix == "" {
		return s
	}
	for i := from; i < len(lines); i++ {
		lines[i] = strings.TrimPrefix(lines[i], prefix)
	}
	return strings.Join(lines, "\n")
}

// indentOf returns the leading spaces and tabs of l.
func indentOf(l string) string {
	return l[:len(l)-len(strings.TrimLeft(l, " \t"))]
}

// commonPrefix returns the longest common prefix of a and b.
func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}
