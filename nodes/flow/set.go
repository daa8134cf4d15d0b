package flow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
)

// ErrAssign means a set node's assign setting is malformed: not a
// mapping or a list of {var, expr}, a var assigned twice, or more
// assignments than a run can hold vars.
var ErrAssign = errors.New("bad assignments")

// SetSettings configure a `set` node.
type SetSettings struct {
	// Assign maps var names to expressions over the run state (ExprEnv),
	// in one of two forms:
	//
	//	assign: {total: "vars.a + vars.b", tries: "string(usage.model_calls)"}
	//	assign:
	//	  - {var: E1, expr: "trim(vars.E1)"}
	//	  - {var: kind, expr: "vars.E1 == '' ? 'none' : 'some'"}
	//
	// A mapping is assigned in the order of its names, sorted; a list in
	// its own order. The pipeline loader reads a mapping's keys
	// lower-cased, so a var whose name has capitals needs the list form.
	// Each expression sees the vars the assignments before it set. Its
	// value is stored as text: strings as they are, numbers and booleans
	// as written, nil as "", lists and maps as JSON.
	Assign any `mapstructure:"assign"`
}

// assignSetting is one entry of the list form of assign.
type assignSetting struct {
	Var  string `mapstructure:"var"`
	Expr string `mapstructure:"expr"`
}

// Set is a `set` node: it assigns vars from expressions, in order.
type Set struct {
	id, kind string
	assigns  []assignment
}

// assignment is one compiled assignment.
type assignment struct {
	name string
	expr *program
}

// NewSet builds a `set` node. Its expressions are compiled and
// type-checked against ExprEnv here, and its var names checked
// (state.CheckVarName); errors name the setting (assign.NAME or
// assign[i].expr).
func NewSet(_ nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s SetSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	entries, err := assignEntries(s.Assign)
	if err != nil {
		return nodekind.Built{}, err
	}
	if len(entries) > state.MaxVars {
		return nodekind.Built{}, &config.SettingError{Key: "assign", Err: fmt.Errorf("%w: %w: %w: %d assignments, and a run holds at most %d vars",
			config.ErrSettings, ErrAssign, state.ErrTooManyVars, len(entries), state.MaxVars)}
	}
	n := &Set{id: spec.ID, kind: spec.Type}
	for _, e := range entries {
		if err := state.CheckVarName(e.name); err != nil {
			return nodekind.Built{}, &config.SettingError{Key: e.varKey, Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
		}
		if slices.ContainsFunc(n.assigns, func(a assignment) bool { return a.name == e.name }) {
			return nodekind.Built{}, &config.SettingError{Key: e.varKey, Err: fmt.Errorf("%w: %w: var %s is assigned twice", config.ErrSettings, ErrAssign, e.name)}
		}
		p, err := compileExpr(e.exprKey, e.src, false)
		if err != nil {
			return nodekind.Built{}, err
		}
		n.assigns = append(n.assigns, assignment{name: e.name, expr: p})
	}
	return nodekind.Built{Node: n}, nil
}

// assignEntry is one assignment as written, with the settings its name
// and its expression sit under.
type assignEntry struct {
	name, src       string
	varKey, exprKey string
}

// assignEntries reads the two forms of assign (see SetSettings.Assign).
func assignEntries(raw any) ([]assignEntry, error) {
	bad := func(key, format string, args ...any) error {
		return &config.SettingError{Key: key, Err: fmt.Errorf("%w: %w: %s", config.ErrSettings, ErrAssign, fmt.Sprintf(format, args...))}
	}
	switch a := raw.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		var out []assignEntry
		for _, name := range slices.Sorted(maps.Keys(a)) {
			key := "assign." + name
			src, err := exprText(a[name])
			if err != nil {
				return nil, bad(key, "%v", err)
			}
			out = append(out, assignEntry{name: name, src: src, varKey: key, exprKey: key})
		}
		return out, nil
	case []any:
		out := make([]assignEntry, 0, len(a))
		for i, item := range a {
			key := fmt.Sprintf("assign[%d]", i)
			m, ok := item.(map[string]any)
			if !ok {
				return nil, bad(key, "want {var: NAME, expr: EXPRESSION}, got %T", item)
			}
			var as assignSetting
			if err := config.Decode(m, &as); err != nil {
				return nil, config.NestSetting(key, err)
			}
			out = append(out, assignEntry{name: as.Var, src: as.Expr, varKey: key + ".var", exprKey: key + ".expr"})
		}
		return out, nil
	}
	return nil, bad("assign", "want a mapping of var names to expressions, or a list of {var: NAME, expr: EXPRESSION}, got %T", raw)
}

// exprText is the text of an expression written as a mapping's value: a
// string, or a number or boolean YAML read as one.
func exprText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(x), nil
	}
	return "", fmt.Errorf("want an expression, got %T", v)
}

// WritesVars returns the names of the vars the node sets, in assignment
// order. The pipeline reads it (pipeline.VarWriter) to check that a set
// node on a parallel branch writes only what the branch's join takes.
func (n *Set) WritesVars() []string {
	out := make([]string, len(n.assigns))
	for i, a := range n.assigns {
		out[i] = a.name
	}
	return out
}

// ReadsVars returns the var names the node's expressions read (vars.NAME),
// sorted, each once.
func (n *Set) ReadsVars() []string {
	var out []string
	for _, a := range n.assigns {
		out = append(out, a.expr.vars...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Run evaluates the assignments in order, each seeing the vars set before
// it, and stores each value with state.Vars.Set. An expression that fails
// to evaluate, or a value the vars refuse (state.ErrVarTooLong,
// state.ErrTooManyVars), is an error naming the node and the var; the
// assignments before it stay made.
func (n *Set) Run(ctx context.Context, st *state.State) (string, error) {
	if len(n.assigns) == 0 {
		return "", nil
	}
	tr := trace.From(ctx)
	env := NewExprEnv(st)
	for _, a := range n.assigns {
		v, err := a.expr.run(env)
		if err != nil {
			return "", fmt.Errorf("%s %s: %s: %w", n.kind, n.id, a.expr.setting, err)
		}
		s, err := exprString(v)
		if err != nil {
			return "", fmt.Errorf("%s %s: %s: %w", n.kind, n.id, a.expr.setting, &ExprError{Setting: a.expr.setting, Expr: a.expr.src, Msg: err.Error(), Err: err})
		}
		if err := st.Vars.Set(a.name, s); err != nil {
			return "", fmt.Errorf("%s %s: var %s: %w", n.kind, n.id, a.name, err)
		}
		env.Vars[a.name] = s
		tr.Emit(trace.Event{Node: n.id, Kind: trace.KindInfo, Text: "var " + a.name + " = " + s, Data: map[string]any{"var": a.name, "expr": a.expr.src}})
	}
	return "", nil
}
