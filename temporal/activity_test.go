package temporal_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/temporal"
)

// then returns the input of the Advance after in, which returned out.
func then(in temporal.AdvanceInput, out *temporal.AdvanceOutput, held []journal.Entry) (temporal.AdvanceInput, []journal.Entry) {
	held = append(held, out.Entries...)
	in.Run, in.Seq, in.Base, in.Digest, in.Events, in.Kind = nil, in.Seq+1, len(held), temporal.JournalDigest(held), out.EventCount, out.Kind
	return in, held
}

func TestAdvanceMakesOneCallThenSuspends(t *testing.T) {
	eng, calls, tasks := simEngine(t)
	acts := newActivities(t, eng)
	run := temporal.RunInput{Config: "../configs/react.yaml", LLM: "sim", Task: tasks["demo-21"].Task}
	in := temporal.AdvanceInput{Run: &run, Thread: "t", Seq: 1}
	out, err := acts.Advance(t.Context(), in)
	require.NoError(t, err)
	assert.Equal(t, temporal.StatusSuspended, out.Status)
	assert.Equal(t, journal.KindTool, out.Kind, "ReAct's first model call names a tool")
	assert.Equal(t, int64(1), calls.Load())
	require.Len(t, out.Entries, 1)
	assert.Equal(t, journal.KindModel, out.Entries[0].Kind)
	assert.NotEmpty(t, out.Events)
	assert.Equal(t, len(out.Events), out.EventCount)
	assert.Positive(t, out.Policy.Timeout)

	in, held := then(in, out, nil)
	out, err = acts.Advance(t.Context(), in)
	require.NoError(t, err)
	assert.Equal(t, temporal.StatusSuspended, out.Status)
	assert.Equal(t, journal.KindModel, out.Kind)
	assert.Equal(t, int64(1), calls.Load(), "the worker's run went on from where it paused")
	require.Len(t, out.Entries, 1)
	assert.Equal(t, journal.KindTool, out.Entries[0].Kind)
	assert.Equal(t, in.Events+len(out.Events), out.EventCount, "only the events since the last Advance")

	// A retry of the same Advance (its result was lost) makes no call:
	// it reports what its first try did.
	again, err := acts.Advance(t.Context(), in)
	require.NoError(t, err)
	assert.Equal(t, out.Entries, again.Entries)
	assert.Equal(t, int64(1), calls.Load())

	in, _ = then(in, out, held)
	out, err = acts.Advance(t.Context(), in)
	require.NoError(t, err)
	assert.Equal(t, int64(2), calls.Load(), "the next Advance makes the next call")
	require.Len(t, out.Entries, 1)
	assert.Equal(t, journal.KindModel, out.Entries[0].Kind)
}

// TestAWorkerWithoutTheRunAsksForIt: a worker that never saw the run (or
// restarted) fails the Advance with a BehindError saying what it holds;
// given the journal it rebuilds the run without making its journaled
// calls again.
func TestAWorkerWithoutTheRunAsksForIt(t *testing.T) {
	eng, calls, tasks := simEngine(t)
	run := temporal.RunInput{Config: "../configs/react.yaml", LLM: "sim", Task: tasks["demo-21"].Task}
	in := temporal.AdvanceInput{Run: &run, Thread: "t", Seq: 1}
	first := newActivities(t, eng)
	out, err := first.Advance(t.Context(), in)
	require.NoError(t, err)
	in, held := then(in, out, nil)

	other := newActivities(t, eng)
	_, err = other.Advance(t.Context(), in)
	require.ErrorIs(t, err, temporal.ErrBehind)
	var app *sdktemporal.ApplicationError
	require.True(t, errors.As(err, &app))
	assert.Equal(t, temporal.BehindError, app.Type())
	assert.True(t, app.NonRetryable())
	var b temporal.Behind
	require.NoError(t, app.Details(&b))
	assert.Equal(t, temporal.Behind{}, b)

	// The form a workflow of an earlier version sends: the whole journal.
	legacy := temporal.AdvanceInput{Run: &run, Entries: held}
	out, err = other.Advance(t.Context(), legacy)
	require.NoError(t, err)
	assert.Equal(t, temporal.StatusSuspended, out.Status)
	require.Len(t, out.Entries, 1)
	assert.Equal(t, journal.KindTool, out.Entries[0].Kind)
	assert.Equal(t, int64(1), calls.Load(), "the journaled model call is replayed, not made again")
}

func TestAdvanceOfAnotherTaskDivergesWithoutRetries(t *testing.T) {
	eng, _, tasks := simEngine(t)
	acts := newActivities(t, eng)
	run := temporal.RunInput{Config: "../configs/react.yaml", LLM: "sim", Task: tasks["demo-21"].Task}
	out, err := acts.Advance(t.Context(), temporal.AdvanceInput{Run: &run, Thread: "a", Seq: 1})
	require.NoError(t, err)
	run.Task = tasks["demo-01"].Task
	_, err = newActivities(t, eng).Advance(t.Context(), temporal.AdvanceInput{Run: &run, Entries: out.Entries})
	require.ErrorIs(t, err, journal.ErrDiverged)
	var app *sdktemporal.ApplicationError
	require.True(t, errors.As(err, &app))
	assert.True(t, app.NonRetryable())
}

func TestNoEngine(t *testing.T) {
	_, err := temporal.NewActivities(nil)
	require.ErrorIs(t, err, temporal.ErrNoEngine)
	_, err = temporal.NewWorker(nil, "q", temporal.Options{})
	require.ErrorIs(t, err, temporal.ErrNoEngine)
}
