package code

import (
	"regexp"
	"strings"
)

// Hints turn the errors a model that writes Python meets most often into
// advice. Each table is read in order; the first match wins.

// Patterns of offending source lines.
var (
	importLine    = regexp.MustCompile(`^\s*(import|from)\s`)
	assertLine    = regexp.MustCompile(`^\s*assert\b`)
	fStringLine   = regexp.MustCompile(`(^|[^\w])[fF][rR]?["']`)
	printStmt     = regexp.MustCompile(`^\s*print\s+[^(\s]`)
	underscoreNo  = regexp.MustCompile(`\d_\d`)
	chainedAssign = regexp.MustCompile(`^\s*[\w.\[\]"']+\s*=\s*[\w.\[\]"']+\s*=[^=]`)
)

// syntaxHintTable is the advice for parser errors: each entry matches a
// substring of the parser's message ("got X, want Y") and/or a pattern of
// the offending line.
func syntaxHintTable() []struct {
	msg  string
	line *regexp.Regexp
	hint string
} {
	return []struct {
		msg  string
		line *regexp.Regexp
		hint string
	}{
		{line: importLine, hint: "there are no imports: the modules math and json are already loaded, and no other module exists"},
		{msg: "got class", hint: "classes are not supported; use dicts and functions"},
		{msg: "got try", hint: "exceptions are not supported; test conditions with if, and call fail(\"message\") to stop with an error"},
		{msg: "got raise", hint: "exceptions are not supported; call fail(\"message\") to stop with an error"},
		{msg: "got except", hint: "exceptions are not supported; test conditions with if instead"},
		{msg: "got with", hint: "with statements are not supported, and there is no file access"},
		{msg: "got is", hint: "there is no is operator; use == and != (x == None)"},
		{msg: "got del", hint: "del is not supported; use d.pop(key) or list.pop(i), or build a new list"},
		{msg: "got global", hint: "global and nonlocal are not supported; pass values as arguments and return results"},
		{msg: "got nonlocal", hint: "global and nonlocal are not supported; pass values as arguments and return results"},
		{msg: "got yield", hint: "generators are not supported; build and return a list"},
		{msg: "got async", hint: "async code is not supported"},
		{line: assertLine, hint: "assert is not supported; write: if not cond: fail(\"message\")"},
		{line: fStringLine, hint: "f-strings are not supported; use \"{} {}\".format(a, b) or \"%s\" % x"},
		{msg: "'**'", hint: "there is no ** operator; use pow(x, y) (or math.pow for floats), and dict(a, **b) to merge dicts"},
		{line: printStmt, hint: "print is a function: print(x)"},
		{line: underscoreNo, hint: "underscores in numbers (1_000) are not supported; write 1000"},
		{line: chainedAssign, hint: "chained assignment (a = b = 0) is not supported; assign each name on its own"},
		{msg: "got ':'", hint: "type annotations are not supported; remove them"},
		{msg: "got '->'", hint: "type annotations are not supported; remove them"},
		{msg: "got else", hint: "for/while ... else is not supported"},
	}
}

// syntaxHint returns advice for a parser error, or "".
func syntaxHint(msg, line string) string {
	for _, h := range syntaxHintTable() {
		if h.msg != "" && !strings.Contains(msg, h.msg) {
			continue
		}
		if h.line != nil && !h.line.MatchString(line) {
			continue
		}
		return h.hint
	}
	return ""
}

// nameHint returns advice for a name the resolver finds undefined, or "".
func nameHint(name string) string {
	switch name {
	case "open":
		return "there is no file access here"
	case "os", "sys", "subprocess", "socket":
		return "there is no OS, file or network access here; only the modules math and json exist"
	case "requests", "urllib":
		return "there is no network access here; only the modules math and json exist"
	case "time":
		return "there is no clock here; put dates and times in the program as data"
	case "datetime":
		return "there is no clock or datetime module here; put dates in the program as data"
	case "random":
		return "there is no random module; the sandbox is deterministic"
	case "re":
		return "there is no regular-expression module; use string methods such as find, split, replace, startswith"
	case "isinstance":
		return "use type(x) == \"int\" (type returns the type's name as a string)"
	case "input":
		return "there is no input; put the data in the program"
	case "eval", "exec":
		return "eval and exec are not available"
	case "__import__":
		return "there are no imports: the modules math and json are already loaded"
	case "collections":
		return "only the modules math and json exist; use a dict (d.get(k, 0) + 1 counts)"
	case "Counter":
		return "use a dict: d[k] = d.get(k, 0) + 1"
	case "defaultdict":
		return "use a dict with d.get(k, default) or d.setdefault(k, [])"
	case "itertools", "functools":
		return "only the modules math and json exist; write the loop yourself"
	case "statistics":
		return "only the modules math and json exist; compute with sum(xs) / len(xs) and sorted(xs)"
	case "numpy", "np":
		return "only the modules math and json exist; use lists"
	case "pandas":
		return "only the modules math and json exist; use lists and dicts"
	case "true", "false":
		return "write True, False and None"
	case "null":
		return "write None"
	}
	return ""
}

// undefinedName matches a resolver's "undefined: NAME" message.
var undefinedName = regexp.MustCompile(`^undefined: ([\w]+)`)

// resolveHint returns advice for a resolver error, or "".
func resolveHint(msg string) string {
	if m := undefinedName.FindStringSubmatch(msg); m != nil {
		return nameHint(m[1])
	}
	return ""
}

// runtimeHint returns advice for a runtime error, or "".
func runtimeHint(msg string) string {
	hints := []struct{ msg, hint string }{
		{"got string, want iterable", "strings are not iterable; use s.elems() for the characters"},
		{"string value is not iterable", "strings are not iterable; use s.elems() for the characters"},
		{"string + int", "convert first: str(n) or int(s)"},
		{"int + string", "convert first: str(n) or int(s)"},
		{"not in dict", "use d.get(key, default), or test key in d first"},
		{"unhashable type: list", "use a tuple as a dict key or set element"},
		{"unhashable type", "only immutable values (numbers, strings, tuples) can be dict keys or set elements"},
	}
	for _, h := range hints {
		if strings.Contains(msg, h.msg) {
			return h.hint
		}
	}
	return ""
}
