package nodekind_test

import (
	"context"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
)

// auditorKey carries a test's auditor (see audited) to callTool.
type auditorKey struct{}

// approverKey carries a test's approver (see withApprover) to callTool.
type approverKey struct{}

// withApprover returns ctx whose tool calls callTool has decided by a.
func withApprover(ctx context.Context, a journal.Approver) context.Context {
	return context.WithValue(ctx, approverKey{}, a)
}

// withHooks gives st the engine's hooks for a run with the services the
// test put in ctx (its tracer, journal session, auditor and approver), as
// pipeline.Run would.
func withHooks(ctx context.Context, st *state.State) *state.State {
	if st == nil {
		return nil
	}
	var opts []pipeline.RunOption
	if a, ok := ctx.Value(auditorKey{}).(pipeline.ToolAuditor); ok {
		opts = append(opts, pipeline.WithAudit(a))
	}
	if a, ok := ctx.Value(approverKey{}).(journal.Approver); ok {
		opts = append(opts, pipeline.WithApprover(a))
	}
	if j := journal.From(ctx); j != nil {
		opts = append(opts, pipeline.WithJournal(j))
	}
	p := &pipeline.Pipeline{Config: &config.Pipeline{}}
	st.SetHooks(p.Hooks(st, trace.From(ctx), opts...))
	return st
}

// callTool is nodekind.CallTool in a run whose hooks come from ctx.
func callTool(ctx context.Context, st *state.State, meta llm.CallMeta, reg *tools.Registry, name, input string, opts nodekind.ToolOptions) (nodekind.ToolResult, error) {
	return nodekind.CallTool(ctx, withHooks(ctx, st), meta, reg, name, input, opts)
}
