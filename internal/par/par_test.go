package par_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner/internal/par"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gauge counts calls in flight and remembers the most at once.
type gauge struct {
	now, peak atomic.Int32
}

func (g *gauge) enter() {
	n := g.now.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (g *gauge) leave() { g.now.Add(-1) }

func TestMapMergesByIndexAndNeverExceedsTheBound(t *testing.T) {
	cases := []struct {
		name     string
		n, limit int
		wantPeak int // the bound; 0: not checked beyond n
	}{
		{"empty", 0, 3, 0},
		{"one", 1, 1, 1},
		{"sequential", 8, 1, 1},
		{"bounded", 20, 3, 3},
		{"bound above n", 4, 10, 4},
		{"unbounded (0)", 16, 0, 16},
		{"unbounded (negative)", 16, -1, 16},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var g gauge
			out, errs := par.Map(context.Background(), tc.limit, tc.n, func(_ context.Context, i int) (string, error) {
				g.enter()
				defer g.leave()
				// Later indexes finish first, so any completion-order merge
				// would show.
				time.Sleep(time.Duration(tc.n-i) * time.Millisecond)
				if i%5 == 4 {
					return "", fmt.Errorf("item %d failed", i)
				}
				return fmt.Sprint("item ", i), nil
			})
			require.Len(t, out, tc.n)
			require.Len(t, errs, tc.n)
			for i := range tc.n {
				if i%5 == 4 {
					assert.EqualError(t, errs[i], fmt.Sprintf("item %d failed", i))
					assert.Empty(t, out[i])
					continue
				}
				assert.NoError(t, errs[i])
				assert.Equal(t, fmt.Sprint("item ", i), out[i])
			}
			assert.LessOrEqual(t, int(g.peak.Load()), max(tc.wantPeak, 0))
			if tc.limit <= 0 && tc.n > 0 {
				assert.Greater(t, int(g.peak.Load()), 1, "unbounded calls overlap")
			}
		})
	}
}

func TestMapStartsCallsInIndexOrder(t *testing.T) {
	var mu sync.Mutex
	var order []int
	_, errs := par.Map(context.Background(), 1, 6, func(_ context.Context, i int) (struct{}, error) {
		mu.Lock()
		order = append(order, i)
		mu.Unlock()
		return struct{}{}, nil
	})
	require.NoError(t, par.First(errs))
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, order)
}

func TestMapStopsStartingCallsWhenTheContextEnds(t *testing.T) {
	cause := errors.New("the run was stopped")
	ctx, cancel := context.WithCancelCause(context.Background())
	var started atomic.Int32
	var sawEnd atomic.Int32
	out, errs := par.Map(ctx, 2, 10, func(ctx context.Context, i int) (int, error) {
		started.Add(1)
		if i == 1 {
			cancel(cause)
		}
		<-ctx.Done()
		sawEnd.Add(1)
		return i, context.Cause(ctx)
	})
	require.Len(t, errs, 10)
	assert.EqualValues(t, 2, started.Load(), "no call starts after the context ended")
	assert.Equal(t, started.Load(), sawEnd.Load(), "Map waited for the running calls")
	for i, err := range errs {
		assert.ErrorIs(t, err, cause, "index %d", i)
	}
	assert.Equal(t, []int{0, 1}, out[:2])
}

func TestMapOnAnEndedContextStartsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, limit := range []int{0, 3} {
		_, errs := par.Map(ctx, limit, 3, func(context.Context, int) (int, error) {
			t.Error("a call started")
			return 0, nil
		})
		for _, err := range errs {
			assert.ErrorIs(t, err, context.Canceled)
		}
	}
}

func TestMapTurnsAPanicIntoAnErrorOfItsIndexOnly(t *testing.T) {
	out, errs := par.Map(context.Background(), 2, 3, func(_ context.Context, i int) (int, error) {
		switch i {
		case 1:
			panic("index out of range")
		case 2:
			panic(io.ErrUnexpectedEOF)
		}
		return 7, nil
	})
	assert.Equal(t, 7, out[0])
	assert.NoError(t, errs[0])

	require.ErrorIs(t, errs[1], par.ErrPanic)
	var pe *par.PanicError
	require.ErrorAs(t, errs[1], &pe)
	assert.Equal(t, "index out of range", pe.Value)
	assert.Contains(t, string(pe.Stack), "par_test", "the stack is kept for logs")
	assert.Equal(t, "worker panicked: index out of range", errs[1].Error())
	assert.NotContains(t, errs[1].Error(), "goroutine", "the message never carries the stack")

	assert.ErrorIs(t, errs[2], par.ErrPanic)
	assert.ErrorIs(t, errs[2], io.ErrUnexpectedEOF, "an error panic value unwraps")
	assert.Equal(t, errs[1], par.First(errs))
}

func TestMapBoundSharesOneBoundAcrossCalls(t *testing.T) {
	b := par.NewBound(3)
	assert.Equal(t, 3, b.Limit())
	var g gauge
	work := func(_ context.Context, i int) (int, error) {
		g.enter()
		defer g.leave()
		time.Sleep(2 * time.Millisecond)
		return i, nil
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_, errs := par.MapBound(context.Background(), b, 10, work)
			assert.NoError(t, par.First(errs))
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, int(g.peak.Load()), 3, "four concurrent maps share three slots")
	assert.Nil(t, par.NewBound(0))
	assert.Equal(t, 0, par.NewBound(-2).Limit())
}

func TestPoolRunsAtMostLimitAndReturnsEachCallOnce(t *testing.T) {
	cases := []struct{ limit, n int }{{1, 5}, {3, 10}, {0, 6}}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("limit=%d/n=%d", tc.limit, tc.n), func(t *testing.T) {
			var g gauge
			p := par.NewPool[string](tc.limit)
			_, ok := p.Wait()
			assert.False(t, ok, "nothing to wait for")
			next, got := 0, map[int]string{}
			for next < tc.n || p.Running() > 0 {
				for next < tc.n && !p.Full() {
					p.Go(context.Background(), next, func(_ context.Context, i int) (string, error) {
						g.enter()
						defer g.leave()
						time.Sleep(time.Millisecond)
						if i == 2 {
							panic("step two")
						}
						return strings.Repeat("x", i), nil
					})
					next++
				}
				if tc.limit > 0 {
					assert.LessOrEqual(t, p.Running(), tc.limit)
				}
				r, ok := p.Wait()
				require.True(t, ok)
				_, dup := got[r.Key]
				require.False(t, dup, "key %d returned twice", r.Key)
				if r.Key == 2 {
					assert.ErrorIs(t, r.Err, par.ErrPanic)
					got[r.Key] = ""
					continue
				}
				require.NoError(t, r.Err)
				got[r.Key] = r.Value
			}
			assert.Len(t, got, tc.n)
			assert.Equal(t, "xxxx", got[4])
			if tc.limit > 0 {
				assert.LessOrEqual(t, int(g.peak.Load()), tc.limit)
			}
		})
	}
}

func TestPoolGoOnAFullPoolPanics(t *testing.T) {
	p := par.NewPool[int](1)
	release := make(chan struct{})
	p.Go(context.Background(), 0, func(context.Context, int) (int, error) { <-release; return 0, nil })
	assert.True(t, p.Full())
	assert.Panics(t, func() { p.Go(context.Background(), 1, func(context.Context, int) (int, error) { return 1, nil }) })
	close(release)
	r, ok := p.Wait()
	assert.True(t, ok)
	assert.Equal(t, 0, r.Key)
	assert.False(t, p.Full())
}

func BenchmarkMap(b *testing.B) {
	for _, limit := range []int{0, 8} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			for b.Loop() {
				_, _ = par.Map(context.Background(), limit, 64, func(_ context.Context, i int) (int, error) { return i * i, nil })
			}
		})
	}
}
