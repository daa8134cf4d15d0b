package journal_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestACompactedJournalReplaysAsTheWholeOne(t *testing.T) {
	s := newStore(t)
	m := &echoModel{}
	ctx, r := session(t, s, "t", journal.KeepRequests())
	first, err := ask(ctx, r, m, "plan", "a long prompt that a workflow should not carry again and again")
	require.NoError(t, err)
	_, err = r.Tool(ctx, "act", "calc", "1+1", func(context.Context) (journal.ToolResult, error) {
		return journal.ToolResult{Output: "2"}, nil
	})
	require.NoError(t, err)
	whole, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)

	compact := make([]journal.Entry, len(whole))
	for i, e := range whole {
		compact[i] = journal.Compact(e)
		assert.Equal(t, e.Digest, compact[i].Digest)
		assert.Equal(t, e.Response, compact[i].Response)
	}
	assert.Less(t, len(compact[0].Request), len(whole[0].Request), "the model request is dropped")
	assert.NotContains(t, string(compact[0].Request), "long prompt")
	assert.Equal(t, whole[1].Request, compact[1].Request, "a tool entry is kept whole")
	assert.Equal(t, compact[0], journal.Compact(compact[0]), "compacting twice changes nothing")

	mem, err := memstore.Load(context.Background(), journal.Thread{Name: "c", Pipeline: "p"}, compact)
	require.NoError(t, err)
	ctx, r = session(t, mem, "c")
	again, err := ask(ctx, r, m, "plan", "a long prompt that a workflow should not carry again and again")
	require.NoError(t, err)
	assert.Equal(t, first, again, "replayed by digest")
	assert.Equal(t, int64(1), m.calls.Load(), "no call made again")

	// A diverging call says the journaled request was compacted.
	ctx, r = session(t, mustLoad(t, compact), "c")
	_, err = ask(ctx, r, m, "plan", "another prompt")
	require.ErrorIs(t, err, journal.ErrDiverged)
	assert.Contains(t, err.Error(), "compacted to its digest")
	assert.Contains(t, err.Error(), "another prompt")
}

func mustLoad(t *testing.T, entries []journal.Entry) journal.Store {
	t.Helper()
	mem, err := memstore.Load(context.Background(), journal.Thread{Name: "c", Pipeline: "p"}, entries)
	require.NoError(t, err)
	return mem
}
