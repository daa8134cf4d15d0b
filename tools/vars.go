package tools

import (
	"context"
	"errors"
	"fmt"
)

// VarStore is a run's working memory as tools see it: named string values
// that prompt templates read as {{.Vars.NAME}}. The engine attaches the
// run's vars (state.State.Vars) to the context of every tool call
// (WithVars); a tool reads them with VarsFrom. Implementations are safe
// for concurrent use.
type VarStore interface {
	// Get returns the value of the var name and whether it is set.
	Get(name string) (string, bool)
	// Set sets the var name to value, or fails (a bad name, a value too
	// long, too many vars, or a store the tool may only read).
	Set(name, value string) error
	// Delete removes the var name; a var that is not set is no error.
	Delete(name string) error
	// Names returns the names of the vars in display order.
	Names() []string
	// Block lists every var, one "name = value" line each in display
	// order, values folded onto one line and cut to maxValue characters,
	// all read at one moment; "" when no var is set.
	Block(maxValue int) string
}

// ErrVarsReadOnly means a tool tried to change the run's vars without
// being marked Stateful (Meta.Stateful): a resumed thread replays such a
// tool's recorded calls without running them, so its changes would be
// lost.
var ErrVarsReadOnly = errors.New("vars are read-only for this tool")

// WithVars returns ctx carrying the run's vars for the tool calls made
// with it.
func WithVars(ctx context.Context, v VarStore) context.Context {
	return withEnv(ctx, func(e *callEnv) { e.vars = v })
}

// VarsFrom returns the vars in ctx, or nil outside a run (a one-off call
// such as `planner tools call`).
func VarsFrom(ctx context.Context) VarStore {
	if e := envOf(ctx); e != nil {
		return e.vars
	}
	return nil
}

// ReadOnlyVars returns v for a tool that may read the vars but not change
// them: Set and Delete fail with ErrVarsReadOnly, naming tool. The engine
// gives it to tools that are not Stateful.
func ReadOnlyVars(v VarStore, tool string) VarStore {
	return readOnlyVars{VarStore: v, tool: tool}
}

type readOnlyVars struct {
	VarStore
	tool string
}

func (r readOnlyVars) Set(name, _ string) error { return r.refuse("set", name) }

func (r readOnlyVars) Delete(name string) error { return r.refuse("delete", name) }

func (r readOnlyVars) refuse(op, name string) error {
	return fmt.Errorf("%w: tool %q cannot %s var %s: only a tool whose metadata says Stateful may change vars, so that a resumed thread runs its calls again", ErrVarsReadOnly, r.tool, op, name)
}
