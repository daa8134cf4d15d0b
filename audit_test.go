package planner_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WithAudit records a scripted thread's tool calls: the searches, the
// calculator call that waited for approval, and the approved call the
// resume made; the resume's replayed calls are not recorded twice.
func TestWithAuditRecordsAThreadsToolCalls(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "threads.db"))
	require.NoError(t, err)
	defer store.Close()
	log, err := audit.Open(ctx, filepath.Join(dir, audit.FileName))
	require.NoError(t, err)
	defer log.Close()
	eng, err := planner.New(full.Options()...)
	require.NoError(t, err)
	defer eng.Close()
	p, err := eng.Load(ctx, "examples/pipelines/react_approval.yaml", planner.WithLLM("scripted:examples/scripts/react_demo.yaml"))
	require.NoError(t, err)
	defer p.Close()

	q := "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?"
	first, err := p.Run(ctx, q, planner.WithThread(store, "jupiter"), planner.WithAudit(log))
	require.ErrorIs(t, err, journal.ErrWaiting)
	res, err := p.Resume(ctx, store, "jupiter", planner.WithDecision(journal.Decision{Approved: true, By: "test"}), planner.WithAudit(log))
	require.NoError(t, err)
	assert.Equal(t, "22448", res.Answer)

	rs, err := log.Query(ctx, audit.Filter{Thread: "jupiter"})
	require.NoError(t, err)
	require.Len(t, rs, 4, "%+v", rs)
	assert.Equal(t, []string{"search", "search", "calculator", "calculator"}, []string{rs[0].Tool, rs[1].Tool, rs[2].Tool, rs[3].Tool})
	assert.Equal(t, first.RunID, rs[0].Run)
	assert.Equal(t, audit.DecisionPending, rs[2].Decision)
	assert.Equal(t, audit.DecisionApproved, rs[3].Decision)
	assert.Equal(t, "test", rs[3].DecidedBy)
	assert.Equal(t, res.RunID, rs[3].Run)
	assert.Equal(t, audit.Digest("22448"), rs[3].OutputSHA256)
}
