package journal_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
)

// budgeted opens a session of thread name with a live budget of n.
func budgeted(t *testing.T, s journal.Store, name string, n int) (context.Context, *journal.Run) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Thread(ctx, name); err != nil {
		require.NoError(t, s.Create(ctx, journal.Thread{Name: name, Pipeline: "p", Status: journal.StatusRunning}))
	}
	r, err := journal.Open(ctx, s, name, journal.LiveCalls(n))
	require.NoError(t, err)
	return journal.WithScope(journal.WithRun(ctx, r), journal.NodeScope(1, "act")), r
}

func tool(ctx context.Context, r *journal.Run, calls *atomic.Int64, input string) (journal.ToolResult, error) {
	return r.Tool(ctx, "act", "calc", input, func(context.Context) (journal.ToolResult, error) {
		calls.Add(1)
		return journal.ToolResult{Output: "= " + input}, nil
	})
}

// script is a run of three calls: a model call, a tool call, a model call,
// then a node transition.
func script(ctx context.Context, r *journal.Run, m *echoModel, tools *atomic.Int64) error {
	if _, err := ask(ctx, r, m, "", "one"); err != nil {
		return err
	}
	if _, err := tool(ctx, r, tools, "1+1"); err != nil {
		return err
	}
	if _, err := ask(ctx, r, m, "", "two"); err != nil {
		return err
	}
	return r.Node(ctx, 1, "act", "")
}

func TestLiveBudgetReplaysThenMakesOneLiveCall(t *testing.T) {
	s := memstore.New()
	m := &echoModel{}
	var tools atomic.Int64
	wantKinds := []journal.Kind{journal.KindTool, journal.KindModel}
	for i, kind := range wantKinds {
		ctx, r := budgeted(t, s, "t", 1)
		err := script(ctx, r, m, &tools)
		var se *journal.SuspendedError
		require.ErrorAs(t, err, &se, "session %d", i)
		require.ErrorIs(t, err, journal.ErrSuspended)
		assert.Equal(t, kind, se.Kind, "session %d stops at the next call's kind", i)
		assert.Equal(t, "1:act", se.Scope)
		assert.Equal(t, "act", se.Node)
		assert.NotEmpty(t, se.Digest)
		assert.Equal(t, se.Kind, r.Suspension().Kind)
		replayed, live, unused := r.Stats()
		assert.Equal(t, [3]int{i, 1, 0}, [3]int{replayed, live, unused}, "session %d", i)
	}
	ctx, r := budgeted(t, s, "t", 1)
	require.NoError(t, script(ctx, r, m, &tools), "the last call is made, and the transition journaled")
	assert.Nil(t, r.Suspension())
	assert.Equal(t, int64(2), m.calls.Load(), "each model call made once")
	assert.Equal(t, int64(1), tools.Load(), "the tool call made once")
	es, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)
	kinds := make([]journal.Kind, len(es))
	for i, e := range es {
		kinds[i] = e.Kind
	}
	assert.Equal(t, []journal.Kind{journal.KindModel, journal.KindTool, journal.KindModel, journal.KindNode}, kinds)

	// Once every call is journaled, a budget of 0 replays the whole run.
	ctx, r = budgeted(t, s, "t", 0)
	require.NoError(t, r.Node(ctx, 1, "act", ""), "replayed transitions are free")
}

func TestLiveBudgetZeroSuspendsAtTheFirstCall(t *testing.T) {
	s := memstore.New()
	var tools atomic.Int64
	ctx, r := budgeted(t, s, "t", 0)
	_, err := tool(ctx, r, &tools, "2*3")
	var se *journal.SuspendedError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, journal.KindTool, se.Kind)
	assert.Zero(t, tools.Load())
	err = r.Node(ctx, 1, "act", "")
	require.ErrorIs(t, err, journal.ErrSuspended, "nothing is journaled after a suspension")
	_, err = r.Approve(ctx, journal.Defer(), journal.Approval{Tool: "calc", Input: "x"})
	require.ErrorIs(t, err, journal.ErrSuspended)
	es, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)
	assert.Empty(t, es)
}

func TestLiveBudgetBranchesWaitForTheAllowedCall(t *testing.T) {
	s := memstore.New()
	ctx, r := budgeted(t, s, "t", 1)
	started := make(chan struct{})
	finish := make(chan struct{})
	var calls atomic.Int64
	slow := func(ctx context.Context) (*llms.ContentResponse, error) {
		calls.Add(1)
		close(started)
		select {
		case <-finish:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "slow answer"}}}, nil
	}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "q")}
	// The first branch takes the budget; when the others fail, they cancel
	// the fan-out's context, as a parallel step does.
	fan, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var first error
	var wg sync.WaitGroup
	wg.Go(func() {
		_, first = r.Model(journal.Branch(fan, "b0"), "act", "", msgs, nil, slow)
	})
	<-started
	errs := make([]error, 4)
	returned := make(chan int, len(errs))
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = r.Model(journal.Branch(ctx, fmt.Sprintf("b%d", i+1)), "act", "", msgs, nil, slow)
			returned <- i
		})
	}
	select {
	case i := <-returned:
		t.Fatalf("branch %d returned (%v) while the allowed call was in flight", i+1, errs[i])
	case <-time.After(50 * time.Millisecond):
	}
	close(finish)
	wg.Wait()
	require.NoError(t, first, "the allowed call finished")
	for i, err := range errs {
		var se *journal.SuspendedError
		require.ErrorAs(t, err, &se, "branch %d", i+1)
		assert.Equal(t, journal.KindModel, se.Kind)
		assert.Equal(t, fmt.Sprintf("1:act/b%d", i+1), se.Scope)
	}
	cancel(fmt.Errorf("a branch failed"))
	assert.Equal(t, int64(1), calls.Load())
	es, err := s.Entries(context.Background(), "t")
	require.NoError(t, err)
	require.Len(t, es, 1, "the allowed call was journaled")
	assert.Equal(t, "1:act/b0", es[0].Scope)
}

func TestLiveBudgetCarriesTheFailedLiveCall(t *testing.T) {
	s := memstore.New()
	ctx, r := budgeted(t, s, "t", 1)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "x")}
	_, err := r.Model(ctx, "act", "", msgs, nil, func(context.Context) (*llms.ContentResponse, error) {
		return nil, fmt.Errorf("HTTP 503")
	})
	require.Error(t, err)
	var tools atomic.Int64
	_, err = tool(ctx, r, &tools, "1")
	var se *journal.SuspendedError
	require.ErrorAs(t, err, &se)
	require.Error(t, se.LiveErr, "the suspension says the live call failed")
	assert.Contains(t, se.Error(), "HTTP 503")
}

func TestNoBudgetIsUnlimited(t *testing.T) {
	s := memstore.New()
	ctx, r := budgeted(t, s, "t", -1)
	m := &echoModel{}
	var tools atomic.Int64
	require.NoError(t, script(ctx, r, m, &tools))
	assert.Nil(t, r.Suspension())
}
