package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/planner-engine/planner/internal/textutil"
)

// Limits of a run's vars (State.Vars).
const (
	// MaxVars is how many vars a run may hold at once.
	MaxVars = 64
	// MaxVarValue is the longest value a var may hold, in characters
	// (runes).
	MaxVarValue = 4000
	// MaxVarName is the longest var name, in bytes (names are ASCII).
	MaxVarName = 64
)

// Errors of Vars. Each comes wrapped with the name and what to do.
var (
	// ErrVarName means a var name does not match [A-Za-z_][A-Za-z0-9_.]*
	// or is longer than MaxVarName.
	ErrVarName = errors.New("invalid var name")
	// ErrTooManyVars means setting one more var would pass MaxVars.
	ErrTooManyVars = errors.New("too many vars")
	// ErrVarTooLong means a value is longer than MaxVarValue characters.
	ErrVarTooLong = errors.New("var value too long")
)

// Vars is a run's working memory: named string values that nodes
// (`output: var:NAME`), tools (the `vars` tool, or any tool through
// tools.VarsFrom) and the execute node (each finished plan step's result)
// set, and prompt templates read as {{.Vars.NAME}}. Its zero value is
// empty and ready to use; it is safe for concurrent use. Names are listed
// in natural order (Names): sorted, with runs of digits compared by value,
// so E2 comes before E10 and the order never depends on which concurrent
// writer came first. It marshals to JSON as a plain object, so State stays
// plain data. A Vars must not be copied after first use.
type Vars struct {
	mu      sync.Mutex
	m       map[string]string
	version uint64
}

// ValidVarName reports whether name can name a var: a letter or '_', then
// letters, digits, '_' or '.', at most MaxVarName bytes.
func ValidVarName(name string) bool {
	if name == "" || len(name) > MaxVarName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c == '.' || c >= '0' && c <= '9'):
		default:
			return false
		}
	}
	return true
}

// CheckVarName returns nil for a valid name, or ErrVarName wrapped with
// the rule.
func CheckVarName(name string) error {
	if ValidVarName(name) {
		return nil
	}
	return fmt.Errorf("%w %q: a name starts with a letter or _ and goes on with letters, digits, _ or . (at most %d characters)", ErrVarName, name, MaxVarName)
}

// Get returns the value of the var name and whether it is set.
func (v *Vars) Get(name string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s, ok := v.m[name]
	return s, ok
}

// Set sets the var name to value. It fails with ErrVarName,
// ErrVarTooLong (value longer than MaxVarValue characters) or
// ErrTooManyVars (a new var past MaxVars), changing nothing. Setting a
// var to the value it holds is not a change (Version stays).
func (v *Vars) Set(name, value string) error {
	if err := CheckVarName(name); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(value); n > MaxVarValue {
		return fmt.Errorf("%w: %s: %d characters, at most %d are kept; store a summary or the part that matters", ErrVarTooLong, name, n, MaxVarValue)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	old, ok := v.m[name]
	switch {
	case ok && old == value:
		return nil
	case !ok && len(v.m) >= MaxVars:
		return fmt.Errorf("%w: cannot set %s: a run holds at most %d vars; delete one first", ErrTooManyVars, name, MaxVars)
	}
	if v.m == nil {
		v.m = map[string]string{}
	}
	v.m[name] = value
	v.version++
	return nil
}

// SetClipped sets the var name to value cut to MaxVarValue characters
// (ending with "…" when cut), for values that come from the run rather
// than from a caller who can shorten them (a node's output, a plan step's
// result). It fails with ErrVarName or ErrTooManyVars.
func (v *Vars) SetClipped(name, value string) error {
	if utf8.RuneCountInString(value) > MaxVarValue {
		value = textutil.Clip(value, MaxVarValue-1)
	}
	return v.Set(name, value)
}

// Delete removes the var name; removing a var that is not set does
// nothing. It fails only with ErrVarName.
func (v *Vars) Delete(name string) error {
	if err := CheckVarName(name); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.m[name]; ok {
		delete(v.m, name)
		v.version++
	}
	return nil
}

// All returns a copy of the vars; never nil.
func (v *Vars) All() map[string]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]string, len(v.m))
	maps.Copy(out, v.m)
	return out
}

// Names returns the names of the vars, in natural order.
func (v *Vars) Names() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return sortedNames(v.m)
}

// Len returns the number of vars.
func (v *Vars) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.m)
}

// IsZero reports whether no var is set (State's JSON then leaves "vars"
// out).
func (v *Vars) IsZero() bool { return v.Len() == 0 }

// Version counts the changes made to the vars: it goes up by one with
// every Set that changes a value and every Delete that removes a var, and
// never goes down. A caller that showed the vars at version n shows them
// again only once Version is past n (see Changed).
func (v *Vars) Version() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.version
}

// Block renders the vars compactly for a prompt, one line per var in
// natural order: "name = value", the value folded onto one line and cut
// to maxValue characters ("…" marks a cut; maxValue <= 0 keeps values
// whole). It returns "" when no var is set.
func (v *Vars) Block(maxValue int) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.block(maxValue)
}

func (v *Vars) block(maxValue int) string {
	var b strings.Builder
	for _, name := range sortedNames(v.m) {
		val := textutil.OneLine(v.m[name])
		if maxValue > 0 {
			val = textutil.Clip(val, maxValue)
		}
		b.WriteString(name)
		b.WriteString(" = ")
		b.WriteString(val)
		b.WriteByte('\n')
	}
	return b.String()
}

// Changed returns the block (Block(maxValue)) and the version it shows,
// read together, and whether the vars changed since version since. A
// prompt builder keeps the version it last showed and appends the block
// only when changed is true; with since 0 it is true once any var was
// ever set.
func (v *Vars) Changed(since uint64, maxValue int) (block string, version uint64, changed bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.version == since {
		return "", v.version, false
	}
	return v.block(maxValue), v.version, true
}

// MarshalJSON encodes the vars as a plain JSON object.
func (v *Vars) MarshalJSON() ([]byte, error) {
	return json.Marshal(v.All())
}

// UnmarshalJSON replaces the vars with those of a JSON object of strings;
// names and values must keep the limits (ErrVarName, ErrVarTooLong,
// ErrTooManyVars). null leaves the vars empty.
func (v *Vars) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("vars: want an object of string values: %w", err)
	}
	if len(m) > MaxVars {
		return fmt.Errorf("%w: %d vars, at most %d", ErrTooManyVars, len(m), MaxVars)
	}
	for _, name := range sortedNames(m) {
		if err := CheckVarName(name); err != nil {
			return err
		}
		if n := utf8.RuneCountInString(m[name]); n > MaxVarValue {
			return fmt.Errorf("%w: %s: %d characters, at most %d", ErrVarTooLong, name, n, MaxVarValue)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if !maps.Equal(v.m, m) {
		v.m = m
		v.version++
	}
	return nil
}

// sortedNames returns the keys of m in natural order.
func sortedNames(m map[string]string) []string {
	names := slices.Collect(maps.Keys(m))
	slices.SortFunc(names, naturalCompare)
	return names
}

// naturalCompare orders a before b as strings do, except that runs of
// ASCII digits compare by their value ("E2" < "E10"); equal values with a
// different number of leading zeros fall back to plain order.
func naturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := digitsEnd(a, i), digitsEnd(b, j)
			na, nb := strings.TrimLeft(a[i:ei], "0"), strings.TrimLeft(b[j:ej], "0")
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			i, j = ei, ej
			continue
		}
		if a[i] != b[j] {
			return int(a[i]) - int(b[j])
		}
		i++
		j++
	}
	if c := (len(a) - i) - (len(b) - j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// StepVar is the var name under which the execute node keeps the result
// of the plan step with id: "E" and the id for an id that starts with a
// digit ("1" and ReWOO's #E1 give E1), the id itself when it is already
// a valid name ("search", "E2"), a leading '#' dropped; characters a name
// cannot hold become '_'. It returns "" for an id that has no usable
// character.
func StepVar(id string) string {
	id = strings.TrimPrefix(strings.TrimSpace(id), "#")
	if id == "" {
		return ""
	}
	var b strings.Builder
	if isDigit(id[0]) || id[0] == '.' {
		b.WriteByte('E')
	}
	useful := false
	for _, c := range id {
		if c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			b.WriteRune(c)
			useful = useful || c != '.'
			continue
		}
		b.WriteByte('_')
	}
	name := b.String()
	if !useful || !ValidVarName(name) {
		return ""
	}
	return name
}
