package memstore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/journaltest"
	"github.com/planner-engine/planner/journal/memstore"
)

func TestConformance(t *testing.T) {
	journaltest.Run(t, func(*testing.T) journal.Store { return memstore.New() })
}

func TestLoadRenumbers(t *testing.T) {
	ctx := context.Background()
	raw := json.RawMessage(`{}`)
	s, err := memstore.Load(ctx, journal.Thread{Name: "w", Pipeline: "p", Status: journal.StatusRunning},
		[]journal.Entry{{Seq: 9, Kind: journal.KindNode, Request: raw, Response: raw}, {Seq: 4, Kind: journal.KindModel, Request: raw, Response: raw}})
	require.NoError(t, err)
	es, err := s.Entries(ctx, "w")
	require.NoError(t, err)
	require.Len(t, es, 2)
	assert.Equal(t, []int64{1, 2}, []int64{es[0].Seq, es[1].Seq})
	th, err := s.Thread(ctx, "w")
	require.NoError(t, err)
	assert.Equal(t, int64(1), th.ModelCalls)
}
