package scripted_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/assert"
)

// perRun is ctx whose run keeps places of its own (PositionPerRun).
func perRun(ctx context.Context) context.Context {
	scripted.PositionPerRun(ctx)
	return ctx
}

// TestPositionPerRunGivesEachRunTheWholeScript: one model serving several
// runs, as a Temporal worker's does, each marked with PositionPerRun: every run
// starts at the first reply, whatever the runs before it used; without
// it the runs share the model's one place.
func TestPositionPerRunGivesEachRunTheWholeScript(t *testing.T) {
	t.Parallel()
	m := load(t, writeScript(t, reactScript))
	for run := range 3 {
		ctx := perRun(process(t, memstore.New(), "th"))
		assert.Equal(t, "reply 1", reactCall(ctx, t, m, "", 1), "run %d", run)
		assert.Equal(t, "reply 2", reactCall(ctx, t, m, "", 2), "run %d", run)
	}
	assert.Equal(t, 6, m.Calls(), "calls of every run")
	assert.Equal(t, 6, m.Remaining(), "the model's own place is untouched")

	shared := load(t, writeScript(t, reactScript))
	assert.Equal(t, "reply 1", reactCall(process(t, memstore.New(), "a"), t, shared, "", 1))
	assert.Equal(t, "reply 2", reactCall(process(t, memstore.New(), "b"), t, shared, "", 1), "without it, a second run continues the first's place")
}

// TestPositionPerRunResumesFromTheJournal: a run resumed in a new run
// (a new journal session and RunState) of the same model, as each
// Temporal activity that rebuilds a run does, carries on after the
// replies its journal used rather than starting over.
func TestPositionPerRunResumesFromTheJournal(t *testing.T) {
	t.Parallel()
	m := load(t, writeScript(t, reactScript))
	store := memstore.New()
	ctx := perRun(process(t, store, "th"))
	for n := 1; n <= 3; n++ {
		reactCall(ctx, t, m, "", n)
	}
	ctx = perRun(process(t, store, "th"))
	for n := 1; n <= 3; n++ {
		reactCall(ctx, t, m, "", n) // replayed
	}
	assert.Equal(t, "reply 3", reactCall(ctx, t, m, "", 4))
	assert.Equal(t, 4, m.Calls())
}

// TestPositionPerRunOutsideARunUsesTheModelsPlace: without a RunState
// there is no run to keep a place for.
func TestPositionPerRunOutsideARunUsesTheModelsPlace(t *testing.T) {
	t.Parallel()
	m := scripted.Texts("one", "two")
	ctx := perRun(context.Background())
	assert.Nil(t, tools.RunStateFrom(ctx))
	for _, want := range []string{"one", "two"} {
		got, err := m.Call(ctx, "q")
		assert.NoError(t, err)
		assert.Equal(t, want, got)
	}
	assert.Zero(t, m.Remaining())
}
