package plan

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Stream reads a plan while the model is still writing it: Write takes
// each chunk of the reply and returns the steps whose text became complete
// with it, so that a scheduler can start them before the rest of the plan
// exists (LLMCompiler's streamed task fetching).
//
// It follows the formats Parse reads, committing to one by how the reply
// begins: JSON (a line starting with '{' or '[', inside a ``` fence or
// not), whose step objects are complete when their closing brace arrives;
// or lines, complete at their line feed: ReWOO's "#E1 = Tool[input]" (once
// a "Plan:" or "#E" line is seen) or a numbered list. Each step is read as
// Parse reads it (the same field names and tolerance); its dependencies
// are resolved against the steps seen so far, and #E references in its
// input are added to them.
//
// Streamed steps are a forecast: Parse on the whole reply stays the
// authority. A caller checks that the final plan starts with the steps it
// streamed (see Same) and handles any difference. A Stream is not safe for
// concurrent use.
type Stream struct {
	text  []byte
	steps []Step
	ids   map[string]bool

	mode streamMode
	// line is the offset where the current (incomplete) line starts.
	line int
	// rewooDesc is the pending "Plan:" description in ReWOO mode.
	rewooDesc string

	// JSON scanning state, from the value's start: pos is the next byte to
	// scan; stack holds the open containers ('{' or '['); inStr and esc
	// track strings; keyStart is where the root object's current key
	// string starts (-1 outside one), key is the last key read and
	// expectKey whether the root object expects one; stepsDepth is the
	// depth of the steps array (0: not seen) and stepStart where the open
	// step object starts (-1: none).
	pos        int
	stack      []byte
	inStr, esc bool
	keyStart   int
	key        string
	expectKey  bool
	stepsDepth int
	stepStart  int
	jsonDone   bool
}

type streamMode int

const (
	modeUnknown streamMode = iota
	modeJSON
	modeReWOO
	modeNumbered
)

// NewStream returns an empty Stream.
func NewStream() *Stream {
	return &Stream{ids: map[string]bool{}, keyStart: -1, stepStart: -1}
}

// Text returns the reply written so far.
func (s *Stream) Text() string { return string(s.text) }

// Steps returns the steps read so far, in order.
func (s *Stream) Steps() []Step { return s.steps }

// Write adds a chunk of the reply and returns the steps it completed, in
// order (nil when none).
func (s *Stream) Write(chunk string) []Step {
	n := len(s.steps)
	s.text = append(s.text, chunk...)
	for {
		if s.mode == modeJSON {
			s.scanJSON()
			break
		}
		nl := bytes.IndexByte(s.text[s.line:], '\n') // no copy of the open line per chunk
		if s.mode == modeUnknown {
			// A line that starts a JSON value decides at its first
			// character; other lines only once complete.
			if start, ok := s.jsonStart(nl); ok {
				s.mode, s.pos = modeJSON, start
				continue
			}
		}
		if nl < 0 {
			break
		}
		s.readLine(string(s.text[s.line : s.line+nl]))
		s.line += nl + 1
	}
	if len(s.steps) == n {
		return nil
	}
	return s.steps[n:]
}

// Close ends the reply: a last line without a line feed is read. It
// returns the steps it completed.
func (s *Stream) Close() []Step {
	n := len(s.steps)
	if s.mode != modeJSON && s.line < len(s.text) {
		s.readLine(string(s.text[s.line:]))
		s.line = len(s.text)
	}
	return s.steps[n:]
}

// jsonStart reports whether the current line starts a JSON value, and
// where; nl is the offset of the line's end (-1: not yet written).
func (s *Stream) jsonStart(nl int) (int, bool) {
	rest := s.text[s.line:]
	if nl >= 0 {
		rest = rest[:nl]
	}
	trimmed := bytes.TrimLeft(rest, " \t\r")
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		return 0, false
	}
	if trimmed[0] == '[' && nl < 0 && len(trimmed) < 2 {
		return 0, false // "[" alone could still become "[1] ..."
	}
	if trimmed[0] == '[' {
		// A JSON array of steps goes on with an object or whitespace; a
		// bracketed label ("[1] Search") does not.
		if next := bytes.TrimLeft(trimmed[1:], " \t\r"); len(next) > 0 && next[0] != '{' {
			return 0, false
		}
	}
	return s.line + len(rest) - len(trimmed), true
}

// readLine reads one complete line in a line mode (or decides the mode).
func (s *Stream) readLine(line string) {
	if s.mode == modeUnknown {
		switch {
		case rewooPlanLine.MatchString(line) || rewooCallLine.MatchString(line):
			s.mode = modeReWOO
		case numberedLine.MatchString(line):
			s.mode = modeNumbered
		default:
			return
		}
	}
	switch s.mode {
	case modeReWOO:
		if m := rewooPlanLine.FindStringSubmatch(line); m != nil {
			s.rewooDesc = strings.TrimSpace(m[1])
			return
		}
		if m := rewooCallLine.FindStringSubmatch(line); m != nil {
			s.add(Step{ID: m[1], Description: s.rewooDesc, Tool: m[2], Input: strings.TrimSpace(m[3])})
			s.rewooDesc = ""
		}
	case modeNumbered:
		m := numberedLine.FindStringSubmatch(line)
		if m == nil {
			return
		}
		body := strings.TrimSpace(strings.Trim(strings.TrimSpace(m[2]), "*"))
		st := Step{ID: m[1], Description: body}
		if c := callText.FindStringSubmatch(body); c != nil {
			st.Tool, st.Input = c[1], strings.TrimSpace(c[2])
		}
		for _, prev := range s.steps[max(len(s.steps)-numberedWindow, 0):] {
			st.DependsOn = append(st.DependsOn, prev.ID)
		}
		s.add(st)
	}
}

// scanJSON scans the JSON value from s.pos to the end of the text,
// reading each step object as it closes.
func (s *Stream) scanJSON() {
	for ; s.pos < len(s.text) && !s.jsonDone; s.pos++ {
		c := s.text[s.pos]
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.keyStart >= 0 {
					var k string
					if json.Unmarshal(s.text[s.keyStart:s.pos+1], &k) == nil {
						s.key = k
					}
					s.keyStart = -1
				}
			}
			continue
		}
		depth := len(s.stack)
		switch c {
		case '"':
			s.inStr = true
			if depth == 1 && s.stack[0] == '{' && s.expectKey {
				s.keyStart = s.pos
			}
		case ':':
			if depth == 1 {
				s.expectKey = false
			}
		case ',':
			if depth == 1 && s.stack[0] == '{' {
				s.expectKey = true
			}
		case '{', '[':
			if c == '[' && s.stepsDepth == 0 && (depth == 0 || (depth == 1 && s.stack[0] == '{' && isStepsKey(s.key))) {
				s.stepsDepth = depth + 1
			}
			if c == '{' && s.stepsDepth > 0 && depth == s.stepsDepth {
				s.stepStart = s.pos
			}
			s.stack = append(s.stack, c)
			if depth == 0 && c == '{' {
				s.expectKey = true
			}
		case '}', ']':
			if depth == 0 {
				s.jsonDone = true
				return
			}
			s.stack = s.stack[:depth-1]
			if c == '}' && s.stepStart >= 0 && depth-1 == s.stepsDepth {
				if st, err := decodeStep(s.text[s.stepStart:s.pos+1], len(s.steps)); err == nil {
					s.add(st)
				}
				s.stepStart = -1
			}
			if c == ']' && depth == s.stepsDepth {
				s.stepsDepth = -1 // the steps array ended; later arrays are not steps
			}
			if len(s.stack) == 0 {
				s.jsonDone = true
			}
		}
	}
}

func isStepsKey(k string) bool { return k == "steps" || k == "plan" || k == "tasks" }

// add resolves st's dependencies against the steps so far, adds its #E
// references, and appends it.
func (s *Stream) add(st Step) {
	s.ids[st.ID] = true
	var deps []string
	seen := map[string]bool{}
	for _, d := range st.DependsOn {
		if d = resolveID(d, s.ids); !seen[d] {
			seen[d] = true
			deps = append(deps, d)
		}
	}
	for _, r := range References(st.Input) {
		if r != st.ID && !seen[r] {
			seen[r] = true
			deps = append(deps, r)
		}
	}
	st.DependsOn = deps
	s.steps = append(s.steps, st)
}

// Same reports whether a and b are the same step as far as running it
// goes: id, tool, input and dependencies (the description may differ).
func Same(a, b Step) bool {
	if a.ID != b.ID || a.Tool != b.Tool || a.Input != b.Input || len(a.DependsOn) != len(b.DependsOn) {
		return false
	}
	for i := range a.DependsOn {
		if a.DependsOn[i] != b.DependsOn[i] {
			return false
		}
	}
	return true
}
