package executor

import (
	"context"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
)

// ReAct is the `react` node: it runs the loop on the task's question (with
// the state's reflections as lessons), stores the entries in the state's
// scratchpad and sets the answer, complete or best effort.
type ReAct struct {
	id, kind string
	loop     *Loop
}

// NewReAct builds a `react` nodekind. Its settings are the ReActConfig keys.
func NewReAct(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var cfg ReActConfig
	if err := config.Decode(spec.Settings, &cfg); err != nil {
		return nodekind.Built{}, err
	}
	l, err := NewLoop(env, cfg)
	if err != nil {
		return nodekind.Built{}, err
	}
	return nodekind.Built{Node: &ReAct{id: spec.ID, kind: spec.Type, loop: l}}, nil
}

// Run runs the loop and records its outcome in st.
func (n *ReAct) Run(ctx context.Context, st *state.State) (string, error) {
	out, err := n.loop.Run(ctx, st, Input{NodeID: n.id, Kind: n.kind, Task: st.Task.Question, Reflections: st.Reflections})
	st.Scratchpad = out.Entries
	if err != nil {
		return "", err
	}
	if out.Complete {
		st.SetAnswer(out.Answer)
	} else {
		st.SetPartial(out.Answer, out.Reason, out.Failure)
	}
	data := map[string]any{"complete": out.Complete, "iterations": out.Iterations}
	if out.Failure != "" {
		data["failure"] = out.Failure
		data["reason"] = out.Reason
	}
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindAnswer, Text: out.Answer, Data: data})
	return "", nil
}
