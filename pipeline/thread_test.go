package pipeline_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cancelOnLock is a store whose Lock cancels the run's context, as a
// Ctrl-C arriving right after the thread was created does.
type cancelOnLock struct {
	journal.Store
	cancel context.CancelFunc
}

func (s cancelOnLock) Lock(ctx context.Context, name string) (func() error, error) {
	s.cancel()
	return s.Store.Lock(ctx, name)
}

func TestAThreadCancelledBeforeItsRunStartsIsNotLeftRunning(t *testing.T) {
	script := write(t, "s.yaml", "replies:\n  - text: \"Answer: 4\"\n")
	p, err := build(t, write(t, "d.yaml", "name: d\nllm: {provider: scripted, script: "+script+"}\nnodes:\n  - {id: answer, type: direct}\nedges:\n  - {from: START, to: answer}\n  - {from: answer, to: END}\n"))
	require.NoError(t, err)
	db, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "threads.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, _, err = p.RunThread(ctx, state.Task{Question: "2+2?"}, nil, pipeline.Thread{Store: cancelOnLock{Store: db, cancel: cancel}, Name: "early"})
	require.Error(t, err)
	th, err := db.Thread(context.Background(), "early")
	require.NoError(t, err)
	assert.Equal(t, journal.StatusInterrupted, th.Status, "the thread it created says it was interrupted")
}

// cancelAfterLock is a store whose Lock takes the lock and then cancels
// the run's context, as a Ctrl-C arriving right after it does.
type cancelAfterLock struct {
	journal.Store
	cancel context.CancelFunc
}

func (s cancelAfterLock) Lock(ctx context.Context, name string) (func() error, error) {
	unlock, err := s.Store.Lock(ctx, name)
	s.cancel()
	return unlock, err
}

// A waiting thread whose resume is cancelled before its run starts keeps
// waiting, with its pending call: the resume never set it running.
func TestAWaitingThreadCancelledBeforeItsResumeStartsKeepsWaiting(t *testing.T) {
	script := write(t, "s.yaml", "replies:\n  - text: \"Answer: 4\"\n")
	p, err := build(t, write(t, "d.yaml", "name: d\nllm: {provider: scripted, script: "+script+"}\nnodes:\n  - {id: answer, type: direct}\nedges:\n  - {from: START, to: answer}\n  - {from: answer, to: END}\n"))
	require.NoError(t, err)
	db, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "threads.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	bg := context.Background()
	pending := &journal.Approval{Node: "answer", Tool: "calculator", Input: "2+2"}
	require.NoError(t, db.Create(bg, journal.Thread{Name: "waits", Pipeline: "d", Task: []byte(`{"question":"2+2?"}`), Status: journal.StatusRunning}))
	require.NoError(t, db.SetStatus(bg, "waits", journal.Update{Status: journal.StatusWaiting, Pending: pending}))
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	_, _, err = p.RunThread(ctx, state.Task{Question: "2+2?"}, nil, pipeline.Thread{Store: cancelAfterLock{Store: db, cancel: cancel}, Name: "waits"})
	require.Error(t, err)
	th, err := db.Thread(bg, "waits")
	require.NoError(t, err)
	assert.Equal(t, journal.StatusWaiting, th.Status)
	require.NotNil(t, th.Pending)
	assert.Equal(t, *pending, *th.Pending)
}
