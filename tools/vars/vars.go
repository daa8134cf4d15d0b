// Package vars is the `vars` tool: the model's handle on the run's working
// memory (state.State.Vars, which prompt templates read as {{.Vars.NAME}}).
// One call sets, reads, lists or deletes vars.
//
// Input, as JSON (what native tool calling sends):
//
//	{"set": {"city": "Paris", "n": 3}}   set vars (a null value deletes)
//	{"get": "city"}                      read one ({"get": ["a", "b"]} several)
//	{"delete": "city"}                   delete one (or a list)
//	{"list": true}                       list every var
//	{"op": "set", "name": "city", "value": "Paris"}  the same, spelled out
//
// or as text, one command a line:
//
//	city = Paris     set (quotes around the value are dropped)
//	city             read (also: get city)
//	delete city      delete (also: unset city)
//	list             list every var (so does an empty input)
//
// The keys of one JSON object run in the order set, delete, get, list;
// text lines run in their order. The tool is Stateful: a resumed thread
// runs its recorded calls again, in order, so the vars it set are there
// again.
package vars

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/tools"
)

// Name is the tool's name.
const Name = "vars"

// ListValueLimit caps each value in a listing, in characters; "get NAME"
// shows a value whole.
const ListValueLimit = 200

// ErrNoRun means the tool was called outside a run (a one-off call such
// as `planner tools call`): there are no vars to work on.
var ErrNoRun = errors.New("the vars tool has no run to keep vars for")

// Tool is the vars tool. The zero value is ready to use.
type Tool struct{}

// New returns the tool.
func New() *Tool { return &Tool{} }

// Name implements tools.Tool.
func (*Tool) Name() string { return Name }

// Description implements tools.Tool.
func (*Tool) Description() string {
	return `Working memory for this task: named values you keep between steps. ` +
		`Input "name = value" sets a var, "name" reads it, "delete name" deletes it, "list" lists all; ` +
		`or JSON {"set": {"name": "value"}}, {"get": "name"}, {"delete": "name"}, {"list": true}. ` +
		`Names start with a letter or _ and hold letters, digits, _ and . only.`
}

// Schema implements tools.Schemer.
func (*Tool) Schema() map[string]any {
	names := map[string]any{"type": "string", "description": "a var name: a letter or _, then letters, digits, _ or ."}
	return map[string]any{"type": "object", "properties": map[string]any{
		"set":    map[string]any{"type": "object", "description": "vars to set, name to value (a null value deletes the var)", "additionalProperties": map[string]any{"type": "string"}},
		"get":    names,
		"delete": names,
		"list":   map[string]any{"type": "boolean", "description": "true lists every var"},
	}}
}

// Meta implements tools.MetaProvider: the tool changes the run's vars, so
// it is Stateful (a resumed thread runs its recorded calls again).
func (*Tool) Meta() tools.Meta { return tools.Meta{Stateful: true} }

// op is one command of a call.
type op struct {
	kind  string // "set", "get", "delete" or "list"
	name  string
	value string
}

// Call runs the commands of input on the vars of the run in ctx and
// reports what each did, one line each.
func (*Tool) Call(ctx context.Context, input string) (string, error) {
	v := tools.VarsFrom(ctx)
	if v == nil {
		return "", fmt.Errorf("%w: vars live for one run of a pipeline; call the tool from a node", ErrNoRun)
	}
	ops, err := parse(input)
	if err != nil {
		return "", err
	}
	var out []string
	for _, o := range ops {
		line, err := apply(v, o)
		if err != nil {
			if len(out) > 0 {
				err = fmt.Errorf("%w (done before it: %s)", err, strings.Join(out, "; "))
			}
			return "", err
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n"), nil
}

func apply(v tools.VarStore, o op) (string, error) {
	switch o.kind {
	case "set":
		if err := v.Set(o.name, o.value); err != nil {
			return "", storeError(err)
		}
		return fmt.Sprintf("set %s = %s", o.name, textutil.Clip(textutil.OneLine(o.value), ListValueLimit)), nil
	case "delete":
		_, had := v.Get(o.name)
		if err := v.Delete(o.name); err != nil {
			return "", storeError(err)
		}
		if !had {
			return o.name + " was not set", nil
		}
		return "deleted " + o.name, nil
	case "get":
		if val, ok := v.Get(o.name); ok {
			return o.name + " = " + val, nil
		}
		if names := v.Names(); len(names) > 0 {
			return fmt.Sprintf("%s is not set (set: %s)", o.name, strings.Join(names, ", ")), nil
		}
		return o.name + " is not set (no vars are set)", nil
	}
	if block := v.Block(ListValueLimit); block != "" {
		return strings.TrimSuffix(block, "\n"), nil
	}
	return "no vars are set", nil
}

// storeError is the error of a store's refusal: bad input (a name, a
// length, a count), unless the store is read-only.
func storeError(err error) error {
	if errors.Is(err, tools.ErrVarsReadOnly) {
		return err
	}
	return fmt.Errorf("%w: %w", tools.ErrBadInput, err)
}

// parse reads the commands of an input, JSON or text.
func parse(input string) ([]op, error) {
	s := strings.TrimSpace(input)
	if strings.HasPrefix(s, "{") {
		return parseJSON(s)
	}
	return parseText(s)
}

func badInput(format string, args ...any) error {
	return fmt.Errorf("%w: vars: "+format+`; use "name = value", "name", "delete name", "list", or JSON {"set": {"name": "value"}}, {"get": "name"}, {"delete": "name"}, {"list": true}`,
		append([]any{tools.ErrBadInput}, args...)...)
}

func parseJSON(s string) ([]op, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil {
		return nil, badInput("the input is not a JSON object: %v", err)
	}
	if _, spelled := obj["op"]; spelled || obj["action"] != nil {
		return spelledOut(obj)
	}
	var ops []op
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.Contains([]string{"set", "get", "delete", "list"}, k) {
			return nil, badInput("unknown key %q (the keys are set, get, delete and list)", k)
		}
	}
	if raw, ok := obj["set"]; ok {
		var set map[string]json.RawMessage
		if err := json.Unmarshal(raw, &set); err != nil {
			return nil, badInput(`"set" must be an object of name to value: %v`, err)
		}
		for _, name := range slices.Sorted(maps.Keys(set)) {
			val, null := scalarText(set[name])
			if null {
				ops = append(ops, op{kind: "delete", name: name})
				continue
			}
			ops = append(ops, op{kind: "set", name: name, value: val})
		}
	}
	for _, kind := range []string{"delete", "get"} {
		raw, ok := obj[kind]
		if !ok {
			continue
		}
		names, err := nameList(raw)
		if err != nil {
			return nil, badInput("%q: %v", kind, err)
		}
		for _, n := range names {
			ops = append(ops, op{kind: kind, name: n})
		}
	}
	if raw, ok := obj["list"]; ok {
		var list bool
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, badInput(`"list" must be true or false`)
		}
		if list {
			ops = append(ops, op{kind: "list"})
		}
	}
	if len(ops) == 0 {
		ops = append(ops, op{kind: "list"})
	}
	return ops, nil
}

// spelledOut reads {"op": "set", "name": "x", "value": "y"} (or "action"
// for "op").
func spelledOut(obj map[string]json.RawMessage) ([]op, error) {
	var a struct {
		Op     string          `json:"op"`
		Action string          `json:"action"`
		Name   string          `json:"name"`
		Value  json.RawMessage `json:"value"`
	}
	b, err := json.Marshal(obj)
	if err == nil {
		err = json.Unmarshal(b, &a)
	}
	if err != nil {
		return nil, badInput(`"op", "name" must be strings: %v`, err)
	}
	kind := strings.ToLower(strings.TrimSpace(cmp.Or(a.Op, a.Action)))
	name := strings.TrimSpace(a.Name)
	switch kind {
	case "list":
		return []op{{kind: "list"}}, nil
	case "get", "read", "delete", "unset", "set", "write":
	default:
		return nil, badInput("unknown op %q (the ops are set, get, delete and list)", kind)
	}
	if name == "" {
		return nil, badInput("op %q needs a \"name\"", kind)
	}
	switch kind {
	case "get", "read":
		return []op{{kind: "get", name: name}}, nil
	case "delete", "unset":
		return []op{{kind: "delete", name: name}}, nil
	}
	if a.Value == nil {
		return nil, badInput("op %q needs a \"value\"", kind)
	}
	val, null := scalarText(a.Value)
	if null {
		return []op{{kind: "delete", name: name}}, nil
	}
	return []op{{kind: "set", name: name, value: val}}, nil
}

// scalarText is a JSON value as a var's text: a string as it is, null as
// null (true), anything else as its compact JSON.
func scalarText(raw json.RawMessage) (string, bool) {
	if t := bytes.TrimSpace(raw); string(t) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, false
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String(), false
	}
	return string(raw), false
}

// nameList reads a name or a list of names.
func nameList(raw json.RawMessage) ([]string, error) {
	want := errors.New("want a name or a list of names")
	var one string
	if string(bytes.TrimSpace(raw)) != "null" && json.Unmarshal(raw, &one) == nil {
		raw, _ = json.Marshal([]string{one})
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return nil, want
	}
	for i := range many {
		if many[i] = strings.TrimSpace(many[i]); many[i] == "" {
			return nil, want
		}
	}
	return many, nil
}

// parseText reads text commands, one a line.
func parseText(s string) ([]op, error) {
	var ops []op
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if name, value, ok := strings.Cut(line, "="); ok {
			name = strings.TrimSpace(name)
			if rest, ok := cutWord(name, "set", "let"); ok {
				name = rest
			}
			ops = append(ops, op{kind: "set", name: tools.Unquote(name, "\"'`"), value: tools.Unquote(strings.TrimSpace(value), "\"'`")})
			continue
		}
		switch strings.ToLower(line) {
		case "list", "all", "*", "list all", "list vars":
			ops = append(ops, op{kind: "list"})
			continue
		}
		if rest, ok := cutWord(line, "delete", "unset", "del", "remove"); ok {
			ops = append(ops, op{kind: "delete", name: tools.Unquote(rest, "\"'`")})
			continue
		}
		if rest, ok := cutWord(line, "get", "read", "show"); ok {
			line = rest
		}
		if strings.ContainsAny(line, " \t") {
			return nil, badInput("cannot read the line %q", textutil.Clip(line, 80))
		}
		ops = append(ops, op{kind: "get", name: tools.Unquote(line, "\"'`")})
	}
	if len(ops) == 0 {
		ops = append(ops, op{kind: "list"})
	}
	return ops, nil
}

// cutWord returns line without a leading command word (any of words, any
// case) and the space after it.
func cutWord(line string, words ...string) (string, bool) {
	first, rest, ok := strings.Cut(line, " ")
	if !ok {
		return line, false
	}
	for _, w := range words {
		if strings.EqualFold(first, w) {
			return strings.TrimSpace(rest), true
		}
	}
	return line, false
}
