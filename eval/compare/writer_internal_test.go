package compare

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteResultsStoresEveryRecord sends records faster than batchWait
// and slower, and checks that each is stored once and counted.
func TestWriteResultsStoresEveryRecord(t *testing.T) {
	ctx := context.Background()
	store, err := OpenStore(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	in := make(chan Record, 8)
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := writeResults(ctx, store, nil, in, nil)
		done <- result{n, err}
	}()
	const total = 2*maxBatch + 7
	for i := range total {
		in <- Record{Config: "c", TaskID: fmt.Sprintf("t%04d", i), Seed: 1}
		if i%100 == 0 {
			time.Sleep(2 * batchWait) // a batch closed by its wait, not by size
		}
	}
	close(in)
	res := <-done
	require.NoError(t, res.err)
	assert.Equal(t, total, res.n)
	recs, err := store.All(ctx, 1)
	require.NoError(t, err)
	assert.Len(t, recs, total)
}

// TestWriteResultsDoesNotHoldALoneRecord checks that a record is stored
// once the batch wait is over, without waiting for more records or for
// the channel to close.
func TestWriteResultsDoesNotHoldALoneRecord(t *testing.T) {
	ctx := context.Background()
	store, err := OpenStore(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	in := make(chan Record, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = writeResults(ctx, store, nil, in, nil)
	}()
	in <- Record{Config: "c", TaskID: "t", Seed: 1}
	assert.Eventually(t, func() bool {
		recs, err := store.All(ctx, 1)
		return err == nil && len(recs) == 1
	}, 10*time.Second, 5*time.Millisecond, "the record is stored while the channel stays open")
	close(in)
	<-done
}

// TestTraceBufferRefusesWritesAfterRelease checks that a late write to a
// released trace buffer fails rather than reach the pooled buffer that
// the next run gets, which starts empty.
func TestTraceBufferRefusesWritesAfterRelease(t *testing.T) {
	ts := &traceSet{}
	a := ts.buffer()
	_, err := a.Write([]byte("run a\n"))
	require.NoError(t, err)
	assert.Equal(t, "run a\n", string(a.bytes()))
	a.release()
	_, err = a.Write([]byte("late\n"))
	assert.ErrorIs(t, err, errTraceReleased)
	assert.Nil(t, a.bytes())
	a.release() // twice is harmless

	b := ts.buffer()
	defer b.release()
	assert.Empty(t, b.bytes(), "a buffer from the pool starts empty")
	_, err = b.Write([]byte("run b\n"))
	require.NoError(t, err)
	assert.Equal(t, "run b\n", string(b.bytes()))
}
