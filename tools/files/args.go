package files

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/tools"
)

// argSpec lists a tool's arguments for parseArgs: main is the argument
// plain-text input fills (empty when the tool needs JSON), names are the
// canonical argument names and aliases maps other spellings models use to
// them.
type argSpec struct {
	tool    string
	main    string
	names   []string
	aliases map[string]string
}

// args are one call's arguments by canonical name.
type args map[string]json.RawMessage

// parseArgs reads a tool input: a JSON object of arguments or, when the
// tool has a main argument, plain text that is its value. Keys are matched
// case-insensitively, with '-' and ' ' read as '_', and through the
// aliases; an unknown key is an error that lists the known ones.
func parseArgs(spec argSpec, input string) (args, error) {
	s := strings.TrimSpace(input)
	if !strings.HasPrefix(s, "{") {
		if spec.main == "" {
			return nil, tools.BadInput(ErrBadArgument, "%s takes a JSON object of arguments (%s)", spec.tool, strings.Join(spec.names, ", "))
		}
		raw, _ := json.Marshal(tools.Unquote(s, "\"'`"))
		return args{spec.main: raw}, nil
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&obj); err != nil || dec.More() {
		if err == nil {
			err = fmt.Errorf("text after the object")
		}
		return nil, tools.BadInput(ErrBadArgument, "%s: the input starts with '{' but is not one JSON object (%v); send {%s}", spec.tool, err, example(spec))
	}
	out := args{}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name := strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(k)))
		if a, ok := spec.aliases[name]; ok {
			name = a
		}
		known := false
		for _, n := range spec.names {
			if n == name {
				known = true
				break
			}
		}
		if !known {
			return nil, tools.BadInput(ErrBadArgument, "%s has no argument %q; its arguments are %s", spec.tool, k, strings.Join(spec.names, ", "))
		}
		if _, dup := out[name]; dup {
			return nil, tools.BadInput(ErrBadArgument, "%s: argument %q is given twice", spec.tool, name)
		}
		if v := bytes.TrimSpace(obj[k]); !bytes.Equal(v, []byte("null")) {
			out[name] = v
		}
	}
	return out, nil
}

func example(spec argSpec) string {
	if len(spec.names) == 0 {
		return ""
	}
	return fmt.Sprintf("%q: ...", spec.names[0])
}

// str returns a string argument; a number or boolean is taken as its text.
func (a args) str(tool, name string) (string, bool, error) {
	raw, ok := a[name]
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), true, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		return strconv.FormatBool(b), true, nil
	}
	return "", false, tools.BadInput(ErrBadArgument, "%s: argument %q must be a string", tool, name)
}

// integer returns an integer argument, given as a number or as a string
// of digits.
func (a args) integer(tool, name string) (int, bool, error) {
	raw, ok := a[name]
	if !ok {
		return 0, false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = []byte(strings.TrimSpace(s))
		if len(raw) == 0 {
			return 0, false, nil
		}
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f < -1e9 || f > 1e9 || f != float64(int(f)) {
		return 0, false, tools.BadInput(ErrBadArgument, "%s: argument %q must be a whole number, not %s", tool, name, raw)
	}
	return int(f), true, nil
}

// boolean returns a boolean argument, given as true/false or as a string
// such as "yes" or "1".
func (a args) boolean(tool, name string) (bool, bool, error) {
	raw, ok := a[name]
	if !ok {
		return false, false, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, true, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw)
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "y", "1", "on":
		return true, true, nil
	case "false", "no", "n", "0", "off", "":
		return false, true, nil
	}
	return false, false, tools.BadInput(ErrBadArgument, "%s: argument %q must be true or false, not %s", tool, name, raw)
}

// itoa formats n with thousands separators.
func itoa[T int | int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// plural returns "1 thing" or "n things".
func plural[T int | int64](n T, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return itoa(n) + " " + many
}
