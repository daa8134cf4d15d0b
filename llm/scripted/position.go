package scripted

import (
	"context"
	"sync/atomic"

	"github.com/planner-engine/planner/tools"
)

// perRunKey is the key, in a run's tools.RunState, of whether the run
// keeps places of its own in the scripts of its Models (PositionPerRun).
type perRunKey struct{}

// perRunFlag returns the flag of the run of ctx: whether it keeps places
// of its own. ctx holds a RunState.
func perRunFlag(ctx context.Context) *atomic.Bool {
	return tools.State(ctx, perRunKey{}, func() *atomic.Bool { return new(atomic.Bool) })
}

// PositionPerRun makes the run of ctx (its tools.RunState, which a
// pipeline attaches to each run's context) keep a place of its own in the
// script of every Model it calls, from the script's first reply, whatever
// other runs of the same model used; a journaled run resumed in a new run
// carries on where its journal left off (see Model). Call it inside the
// run before its model calls, from a run hook say; outside a run (no
// RunState in ctx) it does nothing. A program that serves many
// independent runs with one model, such as a Temporal worker, marks its
// runs so; TaskModel keeps a place per run always.
func PositionPerRun(ctx context.Context) {
	if tools.RunStateFrom(ctx) != nil {
		perRunFlag(ctx).Store(true)
	}
}

// runPositionKey is the key of a run's place in m's script in the run's
// tools.RunState.
type runPositionKey struct{ model *Model }

// positionFor returns the place in the script of the call of ctx: its
// run's own when the run keeps its own (PositionPerRun), else the
// model's. m.mu is held.
func (m *Model) positionFor(ctx context.Context) *position {
	if tools.RunStateFrom(ctx) == nil || !perRunFlag(ctx).Load() {
		return &m.shared
	}
	return tools.State(ctx, runPositionKey{model: m}, func() *position {
		return &position{used: make([]int, len(m.script.Replies))}
	})
}
