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

func TestAdvanceMakesOneCallThenSuspends(t *testing.T) {
	eng, calls, tasks := simEngine(t)
	acts := newActivities(t, eng)
	in := temporal.AdvanceInput{Run: temporal.RunInput{Config: "../configs/react.yaml", LLM: "sim", Task: tasks["demo-21"].Task}}
	out, err := acts.Advance(t.Context(), in)
	require.NoError(t, err)
	assert.Equal(t, temporal.StatusSuspended, out.Status)
	assert.Equal(t, journal.KindTool, out.Kind, "ReAct's first model call names a tool")
	assert.Equal(t, int64(1), calls.Load())
	require.Len(t, out.Entries, 1)
	assert.Equal(t, journal.KindModel, out.Entries[0].Kind)
	assert.NotEmpty(t, out.Events)
	assert.Positive(t, out.Policy.Timeout)

	in.Entries = out.Entries
	out, err = acts.Advance(t.Context(), in)
	require.NoError(t, err)
	assert.Equal(t, temporal.StatusSuspended, out.Status)
	assert.Equal(t, journal.KindModel, out.Kind)
	assert.Equal(t, int64(1), calls.Load(), "the journaled model call is replayed")
	require.Len(t, out.Entries, 1)
	assert.Equal(t, journal.KindTool, out.Entries[0].Kind)
}

func TestAdvanceOfAnotherTaskDivergesWithoutRetries(t *testing.T) {
	eng, _, tasks := simEngine(t)
	acts := newActivities(t, eng)
	in := temporal.AdvanceInput{Run: temporal.RunInput{Config: "../configs/react.yaml", LLM: "sim", Task: tasks["demo-21"].Task}}
	out, err := acts.Advance(t.Context(), in)
	require.NoError(t, err)
	in.Entries = out.Entries
	in.Run.Task = tasks["demo-01"].Task
	_, err = acts.Advance(t.Context(), in)
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
