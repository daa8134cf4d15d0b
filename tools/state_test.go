package tools_test

import (
	"context"
	"sync"
	"testing"

	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/assert"
)

type counterKey struct{}

func bump(ctx context.Context) int {
	n := tools.State(ctx, counterKey{}, func() *int { return new(int) })
	*n++ // each run's counter is only touched by that run's goroutine here
	return *n
}

func TestStateIsKeptPerRun(t *testing.T) {
	a := tools.WithRunState(context.Background(), tools.NewRunState())
	b := tools.WithRunState(context.Background(), tools.NewRunState())
	assert.Equal(t, 1, bump(a))
	assert.Equal(t, 2, bump(a))
	assert.Equal(t, 1, bump(b), "another run starts from a fresh state")
	assert.Equal(t, 1, bump(context.Background()), "a call outside any run gets a fresh state")
	assert.Equal(t, 1, bump(context.Background()))
	assert.Nil(t, tools.RunStateFrom(context.Background()))
}

func TestStateCreatesOneValuePerKeyUnderConcurrency(t *testing.T) {
	ctx := tools.WithRunState(context.Background(), tools.NewRunState())
	var mu sync.Mutex
	created := 0
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			tools.State(ctx, counterKey{}, func() *int {
				mu.Lock()
				created++
				mu.Unlock()
				return new(int)
			})
		})
	}
	wg.Wait()
	assert.Equal(t, 1, created)
}

func TestWithApprovalSetsOrLiftsTheFlag(t *testing.T) {
	base := tools.RequireApproval(echo("fake"))
	assert.True(t, tools.MetaOf(base).NeedsApproval)
	lifted := tools.WithApproval(base, false)
	assert.False(t, tools.MetaOf(lifted).NeedsApproval)
	assert.Equal(t, "fake", lifted.Name())
}
