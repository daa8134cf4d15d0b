package nodekind

import (
	"context"

	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
)

// withVars returns ctx carrying st's vars (State.Vars) for c's tool
// (tools.VarsFrom): writable for a tool marked Stateful, whose recorded
// calls a resumed thread runs again (so the vars it set are set again),
// read-only for any other tool (tools.ErrVarsReadOnly), whose recorded
// calls are replayed without running. Without a state ctx is returned as
// it is.
func (c ToolCall) withVars(ctx context.Context, st *state.State) context.Context {
	if st == nil || c.Tool == nil {
		return ctx
	}
	if tools.MetaOf(c.Tool).Stateful {
		return tools.WithVars(ctx, &st.Vars)
	}
	return tools.WithVars(ctx, tools.ReadOnlyVars(&st.Vars, c.Name))
}
