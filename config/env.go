package config

import (
	"bytes"
	"fmt"
	"strings"
)

// EnvAllowList names the environment variables that ${VAR} references in
// YAML from an untrusted source may read (ParseAllowed): exact names
// (DEMO_MODEL) or prefixes ending in '*' (PLANNER_PUBLIC_*). The empty
// list, the default, allows none.
type EnvAllowList []string

// Allows reports whether the list names the variable name.
func (a EnvAllowList) Allows(name string) bool {
	for _, pat := range a {
		if prefix, ok := strings.CutSuffix(pat, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if pat == name {
			return true
		}
	}
	return false
}

// Lookup returns a lookup for Parse that sees only the variables the list
// allows: lookup's answer for those, "not set" for every other.
func (a EnvAllowList) Lookup(lookup func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if !a.Allows(name) {
			return "", false
		}
		return lookup(name)
	}
}

// Check returns an error for an entry that is not a variable name or a
// prefix followed by '*'.
func (a EnvAllowList) Check() error {
	for _, pat := range a {
		name := strings.TrimSuffix(pat, "*")
		ok := name != "" && isNameStart(name[0])
		for i := 1; ok && i < len(name); i++ {
			ok = isNameByte(name[i])
		}
		if !ok {
			return fmt.Errorf("%w: environment allow-list entry %q: want a variable name (A_NAME) or a prefix ending in * (PUBLIC_*)", ErrInvalid, pat)
		}
	}
	return nil
}

// maxEnvNesting bounds how deeply ${VAR:-default} references may nest inside
// defaults, as in ${A:-${B:-${C}}} (depth 3).
const maxEnvNesting = 8

// envNestingError reports defaults nested deeper than maxEnvNesting.
type envNestingError struct {
	// Offset is the byte offset of the outermost reference's "${".
	Offset int
}

func (e *envNestingError) Error() string {
	return fmt.Sprintf("${...} references are nested more than %d deep in defaults", maxEnvNesting)
}

// envMissing is a reference to an unset variable that has no default.
type envMissing struct {
	// Name is the variable's name.
	Name string
	// Offset is the byte offset of the reference's "${" in the source.
	Offset int
}

// expandEnv replaces ${VAR} and ${VAR:-default} references, where VAR is a
// letter or underscore followed by letters, digits and underscores, in one
// pass:
//
//   - ${VAR} becomes VAR's value. A set variable's value is used even when
//     empty.
//   - ${VAR:-default} becomes VAR's value when VAR is set, and otherwise
//     the default. The default runs to the matching "}" and may itself
//     contain references, expanded the same way (only when the default is
//     used), up to maxEnvNesting levels; deeper nesting is an error.
//   - Values are inserted verbatim and never expanded again, so a value
//     containing "${X}" stays as written.
//   - Anything else is left alone: bare $VAR (prompts may contain dollar
//     signs), "${" not followed by a name and "}" or ":-", and a reference
//     without its closing "}".
//
// A reference to an unset variable without a default is reported in
// missing, in source order, and expands to nothing. Too deep nesting
// fails with an *envNestingError.
func expandEnv(src []byte, lookup func(string) (string, bool)) (out []byte, missing []envMissing, err error) {
	e := envExpander{src: src, lookup: lookup}
	out, err = e.expand(0, len(src), 0, make([]byte, 0, len(src)))
	return out, e.missing, err
}

// envExpander holds the state of one expandEnv call.
type envExpander struct {
	src     []byte
	lookup  func(string) (string, bool)
	missing []envMissing
}

// expand appends the expansion of src[from:to] at nesting depth to out.
func (e *envExpander) expand(from, to, depth int, out []byte) ([]byte, error) {
	i := from
	for i < to {
		j := bytes.Index(e.src[i:to], []byte("${"))
		if j < 0 {
			break
		}
		start := i + j
		out = append(out, e.src[i:start]...)
		ref, ok, err := e.parseRef(start, to, depth)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, '$')
			i = start + 1
			continue
		}
		switch v, set := e.lookup(ref.name); {
		case set:
			out = append(out, v...)
		case ref.hasDefault:
			if out, err = e.expand(ref.defStart, ref.defEnd, depth+1, out); err != nil {
				return nil, err
			}
		default:
			e.missing = append(e.missing, envMissing{Name: ref.name, Offset: start})
		}
		i = ref.end
	}
	return append(out, e.src[i:to]...), nil
}

// envRefSpan is one parsed reference: src[start:end] is the whole
// "${...}", and src[defStart:defEnd] its default when hasDefault.
type envRefSpan struct {
	name             string
	hasDefault       bool
	defStart, defEnd int
	end              int
}

// parseRef reads the reference starting with the "${" at src[start],
// ending before to. ok is false when the text there is not a reference.
func (e *envExpander) parseRef(start, to, depth int) (ref envRefSpan, ok bool, err error) {
	src := e.src[:to]
	i := start + 2
	if i >= len(src) || !isNameStart(src[i]) {
		return ref, false, nil
	}
	n := i
	for n < len(src) && isNameByte(src[n]) {
		n++
	}
	ref.name = string(src[i:n])
	switch {
	case n < len(src) && src[n] == '}':
		ref.end = n + 1
		return ref, true, nil
	case !bytes.HasPrefix(src[n:], []byte(":-")):
		return ref, false, nil
	}
	// The default runs to the "}" that balances this "${", counting every
	// nested "${" as an opener.
	ref.hasDefault, ref.defStart = true, n+2
	open := 0
	for k := ref.defStart; k < len(src); k++ {
		switch {
		case src[k] == '$' && k+1 < len(src) && src[k+1] == '{':
			open++
			if depth+1+open > maxEnvNesting {
				return ref, false, &envNestingError{Offset: start}
			}
			k++
		case src[k] == '}' && open > 0:
			open--
		case src[k] == '}':
			ref.defEnd, ref.end = k, k+1
			return ref, true, nil
		}
	}
	return ref, false, nil
}

func isNameStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isNameByte(c byte) bool { return isNameStart(c) || ('0' <= c && c <= '9') }

// lineAt returns the 1-based line of byte offset off in src.
func lineAt(src []byte, off int) int {
	return bytes.Count(src[:min(max(off, 0), len(src))], []byte("\n")) + 1
}
