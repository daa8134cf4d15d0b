package general

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
)

// Where a node's `output:` setting sends its result.
const (
	outAnswer = "answer"
	outNote   = "note"
	outVar    = "var"
	outVars   = "vars"
)

// output is a parsed `output:` setting: "answer", "note:KEY", "var:NAME",
// or (for an llm node with an object schema) "vars:PREFIX".
type output struct {
	kind string
	// name is the note key, the var name or the vars' prefix.
	name string
}

// parseOutput parses the `output:` setting s; def is taken when s is
// empty, and spread allows the form "vars" / "vars:PREFIX" (prefix
// defaulting to nodeID).
func parseOutput(s, def, nodeID string, spread bool) (output, error) {
	if s == "" {
		s = def
	}
	forms := `"answer", "note:<key>" or "var:<name>"`
	if spread {
		forms = `"answer", "note:<key>", "var:<name>" or "vars:<prefix>"`
	}
	kind, name, _ := strings.Cut(s, ":")
	switch {
	case s == outAnswer:
		return output{kind: outAnswer}, nil
	case kind == outNote && name != "":
		return output{kind: outNote, name: name}, nil
	case kind == outVar:
		if err := state.CheckVarName(name); err != nil {
			return output{}, &config.SettingError{Key: "output", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
		}
		return output{kind: outVar, name: name}, nil
	case spread && kind == outVars:
		if name == "" {
			name = nodeID
		}
		if err := state.CheckVarName(name); err != nil {
			return output{}, &config.SettingError{Key: "output", Err: fmt.Errorf("%w: prefix: %w", config.ErrSettings, err)}
		}
		return output{kind: outVars, name: name}, nil
	}
	return output{}, config.SettingErrorf("output", "want %s, got %q", forms, s)
}

// notes are the note keys o writes.
func (o output) notes() []string {
	if o.kind == outNote {
		return []string{o.name}
	}
	return nil
}

// storeText records text, a node's result, where o says: the answer (an
// empty one marks the run incomplete, as other answer nodes do), a note,
// or a var (cut to state.MaxVarValue characters when clip is true, else
// an error when longer, for values such as JSON that a cut would spoil).
func (o output) storeText(ctx context.Context, st *state.State, node, text string, clip bool) error {
	tr := trace.From(ctx)
	switch o.kind {
	case outNote:
		st.Note(o.name, text)
		tr.Emit(trace.Event{Node: node, Kind: trace.KindInfo, Text: o.name + ": " + text})
	case outVar:
		set := st.Vars.Set
		if clip {
			set = st.Vars.SetClipped
		}
		if err := set(o.name, text); err != nil {
			return fmt.Errorf("%s: output var:%s: %w", node, o.name, err)
		}
		tr.Emit(trace.Event{Node: node, Kind: trace.KindInfo, Text: "var " + o.name + " = " + text, Data: map[string]any{"var": o.name}})
	default:
		if strings.TrimSpace(text) == "" {
			st.SetPartial("", "the node's result was empty", state.FailureParse)
		} else {
			st.SetAnswer(text)
		}
		tr.Emit(trace.Event{Node: node, Kind: trace.KindAnswer, Text: text})
	}
	return nil
}

// spread stores the top-level fields of obj, a JSON object decoded with
// numbers as json.Number, as vars PREFIX.FIELD: strings as they are,
// numbers, booleans and null as their JSON text, objects and arrays as
// compact JSON. A field whose name cannot end a var name is an error, as
// is a value too long for a var.
func (o output) spread(ctx context.Context, st *state.State, node string, obj map[string]any) error {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tr := trace.From(ctx)
	for _, k := range keys {
		name := o.name + "." + k
		if err := state.CheckVarName(name); err != nil {
			return fmt.Errorf("%s: output vars:%s: field %q: %w", node, o.name, k, err)
		}
		var text string
		switch v := obj[k].(type) {
		case string:
			text = v
		case json.Number:
			text = v.String()
		default:
			s, err := canonicalJSON(v)
			if err != nil {
				return fmt.Errorf("%s: output vars:%s: field %q: %w", node, o.name, k, err)
			}
			text = s
		}
		if err := st.Vars.Set(name, text); err != nil {
			return fmt.Errorf("%s: output vars:%s: %w", node, o.name, err)
		}
		tr.Emit(trace.Event{Node: node, Kind: trace.KindInfo, Text: "var " + name + " = " + text, Data: map[string]any{"var": name}})
	}
	return nil
}
