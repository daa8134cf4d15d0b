package parse

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// callStatus is the outcome of reading a Tool[input] call.
type callStatus uint8

const (
	callNone     callStatus = iota // s does not start with Name[
	callOK                         // a complete call
	callUnclosed                   // Name[ with no closing bracket
)

// call is one Tool[input] call read from text.
type call struct {
	name  string
	input string
	end   int // index just after the closing bracket
}

// isNameRune reports whether r may appear in a tool name; first reports
// whether it may start one.
func isNameRune(r rune, first bool) bool {
	if unicode.IsLetter(r) || r == '_' {
		return true
	}
	return !first && (unicode.IsDigit(r) || r == '-' || r == '.')
}

// readCall reads a call Name[input] at the start of s. spaced allows blanks
// between the name and the bracket. Brackets inside the input nest; when they
// never balance, the input runs to the last ']' in s.
func readCall(s string, spaced bool) (call, callStatus) {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isNameRune(r, i == 0) {
			break
		}
		i += n
	}
	if i == 0 {
		return call{}, callNone
	}
	name := s[:i]
	if spaced {
		i = skipBytes(s, i, " \t")
	}
	if i >= len(s) || s[i] != '[' {
		return call{}, callNone
	}
	open := i
	depth := 0
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return call{name: name, input: s[open+1 : j], end: j + 1}, callOK
			}
		}
	}
	if last := strings.LastIndexByte(s, ']'); last > open {
		return call{name: name, input: s[open+1 : last], end: last + 1}, callOK
	}
	return call{name: name}, callUnclosed
}

// callTrailer holds the characters that may follow a call without making the
// rest of the line text: separators between calls and closing Markdown marks.
const callTrailer = " \t,;.`*"

// readCalls reads the calls at the start of s, one after another, separated
// by commas, semicolons or blanks. It returns the first call, how many calls
// the first line holds, and the text left after the last call read (trimmed
// of separators). status is that of the first call.
func readCalls(s string, spaced bool) (first call, count int, rest string, status callStatus) {
	first, status = readCall(s, spaced)
	if status != callOK {
		return first, 0, s, status
	}
	count = 1
	i := first.end
	lineEnd := strings.IndexByte(s[i:], '\n') // further calls must be on this line
	if lineEnd < 0 {
		lineEnd = len(s)
	} else {
		lineEnd += i
	}
	for {
		j := skipBytes(s[:lineEnd], i, callTrailer)
		if j >= lineEnd {
			break
		}
		next, st := readCall(s[j:lineEnd], spaced)
		if st != callOK {
			break
		}
		count++
		i = j + next.end
	}
	return first, count, strings.TrimLeft(s[i:], callTrailer), status
}

// bareCall reads a line that consists only of calls ("Search[x]" or
// "Search[A], Search[B]"), as models write when they drop the Action label.
func bareCall(line string) (call, int, bool) {
	s := strings.TrimSpace(line)
	s = strings.TrimLeft(s, "*`")
	if strings.IndexByte(s, '[') < 0 {
		return call{}, 0, false
	}
	c, n, rest, st := readCalls(s, false)
	if st != callOK || strings.TrimSpace(rest) != "" {
		return call{}, 0, false
	}
	return c, n, true
}
