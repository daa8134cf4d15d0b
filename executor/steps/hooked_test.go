package steps_test

import (
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
)

// hookedState is a run state for task with the engine's hooks whose
// services come from each call's context (pipeline.ContextHooks), as the
// nodes under test get them in a pipeline's run.
func hookedState(task state.Task) *state.State {
	st := state.NewState(task)
	st.SetHooks(pipeline.ContextHooks(st))
	return st
}
