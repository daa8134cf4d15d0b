package nodekind_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// journaled returns a context whose tool calls are journaled in thread t
// of s, resuming what s already holds.
func journaled(t *testing.T, s journal.Store) context.Context {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Thread(ctx, "t"); err != nil {
		require.NoError(t, s.Create(ctx, journal.Thread{Name: "t", Status: journal.StatusRunning}))
	}
	r, err := journal.Open(ctx, s, "t")
	require.NoError(t, err)
	return journal.WithScope(journal.WithRun(ctx, r), journal.NodeScope(1, "act"))
}

// A tool failure replays as the same observation, matching the same
// sentinel, without running the tool again.
func TestJournaledToolFailureReplaysTheSameWay(t *testing.T) {
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "j.db"))
	require.NoError(t, err)
	defer s.Close()
	runs := 0
	reg, err := tools.NewRegistry([]tools.Tool{funcTool{name: "boom", fn: func(context.Context, string) (string, error) {
		runs++
		panic("kaboom")
	}}})
	require.NoError(t, err)
	meta := llm.CallMeta{Node: "act", Kind: "react"}

	live, err := callTool(journaled(t, s), state.NewState(state.Task{}), meta, reg, "boom", "x", nodekind.ToolOptions{})
	require.NoError(t, err)
	require.ErrorIs(t, live.Err, tools.ErrToolPanic)
	replayed, err := callTool(journaled(t, s), state.NewState(state.Task{}), meta, reg, "boom", "x", nodekind.ToolOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1, runs, "the journaled call is not run again")
	assert.ErrorIs(t, replayed.Err, tools.ErrToolPanic)
	assert.Equal(t, live.Observation, replayed.Observation)
	assert.Equal(t, live.Err.Error(), replayed.Err.Error())
}

// A tool marked for approval asks the approver in the context: a denial
// becomes an observation with the reason, a deferral stops the call, and
// nobody to ask is an error, never a silent run.
func TestApprovalGatesTheCall(t *testing.T) {
	runs := 0
	rm := tools.RequireApproval(funcTool{name: "rm", fn: func(context.Context, string) (string, error) { runs++; return "removed", nil }})
	assert.True(t, tools.MetaOf(rm).NeedsApproval)
	reg, err := tools.NewRegistry([]tools.Tool{rm})
	require.NoError(t, err)
	meta := llm.CallMeta{Node: "act"}
	st := state.NewState(state.Task{})
	decide := func(d journal.Decision) context.Context {
		return withApprover(context.Background(), journal.ApproverFunc(func(context.Context, journal.Approval) (journal.Decision, error) { return d, nil }))
	}

	res, err := callTool(decide(journal.Decision{Approved: false, Reason: "not today", By: "ops"}), st, meta, reg, "rm", "/tmp/x", nodekind.ToolOptions{})
	require.NoError(t, err)
	assert.ErrorIs(t, res.Err, tools.ErrNotApproved)
	assert.Equal(t, "Error: tool call not approved: a human denied this call of rm (ops): not today", res.Observation)
	assert.Zero(t, runs)

	res, err = callTool(decide(journal.Decision{Approved: true, By: "ops"}), st, meta, reg, "rm", "/tmp/x", nodekind.ToolOptions{})
	require.NoError(t, err)
	assert.Equal(t, "removed", res.Observation)
	assert.Equal(t, 1, runs)

	_, err = callTool(withApprover(context.Background(), journal.Defer()), st, meta, reg, "rm", "/tmp/x", nodekind.ToolOptions{})
	require.ErrorIs(t, err, journal.ErrWaiting)
	_, err = callTool(context.Background(), st, meta, reg, "rm", "/tmp/x", nodekind.ToolOptions{})
	require.ErrorIs(t, err, journal.ErrNoApprover)
	assert.Equal(t, 1, runs)
}

// pager is a stateful tool: each call of a run returns the next page of
// its input, counted in the run's tools.RunState.
type pager struct{ prefix string }

type pageKey struct{}

func (p pager) Name() string        { return "page" }
func (p pager) Description() string { return "pages" }
func (p pager) Meta() tools.Meta    { return tools.Meta{ReadOnly: true, Stateful: true} }
func (p pager) Call(ctx context.Context, in string) (string, error) {
	n := tools.State(ctx, pageKey{}, func() *int { return new(int) })
	*n++
	return fmt.Sprintf("%s%s page %d", p.prefix, in, *n), nil
}

// A resumed run re-runs the journaled calls of a stateful tool, so that the
// first live call continues where the interrupted run was, and a re-run
// that no longer matches the journal is a divergence.
func TestStatefulToolCallsAreReRunOnReplay(t *testing.T) {
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "j.db"))
	require.NoError(t, err)
	defer s.Close()
	meta := llm.CallMeta{Node: "act"}
	call := func(ctx context.Context, reg *tools.Registry) (nodekind.ToolResult, error) {
		return callTool(ctx, state.NewState(state.Task{}), meta, reg, "page", "x", nodekind.ToolOptions{})
	}
	reg, err := tools.NewRegistry([]tools.Tool{pager{}})
	require.NoError(t, err)

	first := tools.WithRunState(journaled(t, s), tools.NewRunState())
	for _, want := range []string{"x page 1", "x page 2"} {
		res, err := call(first, reg)
		require.NoError(t, err)
		require.Equal(t, want, res.Observation)
	}

	resumed := tools.WithRunState(journaled(t, s), tools.NewRunState())
	for _, want := range []string{"x page 1", "x page 2", "x page 3"} {
		res, err := call(resumed, reg)
		require.NoError(t, err)
		assert.Equal(t, want, res.Observation, "the replayed calls rebuilt the page count")
	}

	changed, err := tools.NewRegistry([]tools.Tool{pager{prefix: "v2 "}})
	require.NoError(t, err)
	_, err = call(tools.WithRunState(journaled(t, s), tools.NewRunState()), changed)
	require.ErrorIs(t, err, journal.ErrDiverged)
	assert.Contains(t, err.Error(), `gave "v2 x page 1", the journal holds "x page 1"`)
}
