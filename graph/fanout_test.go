package graph_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner/graph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fstate is a state that forks: vals is what nodes write, log what they
// did, in order.
type fstate struct {
	vals map[string]string
	log  []string
}

func newFState() *fstate { return &fstate{vals: map[string]string{}} }

func (s *fstate) Fork() *fstate {
	c := &fstate{vals: map[string]string{}, log: append([]string(nil), s.log...)}
	for k, v := range s.vals {
		c.vals[k] = v
	}
	return c
}

// put is a node that sets key to value and logs its id.
func put(id, key, value string) graph.NodeFunc[*fstate] {
	return func(_ context.Context, s *fstate) (string, error) {
		s.vals[key] = value
		s.log = append(s.log, id)
		return "", nil
	}
}

// tjoin is a join for tests: it needs need branches (0: all) and merges
// each successful branch's "out" into the parent's "merged", in branch
// order, comma separated.
type tjoin struct {
	need int
	seen []graph.Branch[*fstate]
}

func (j *tjoin) Run(context.Context, *fstate) (string, error) { return "", errors.New("not a node") }

func (j *tjoin) Needs(n int) int {
	if j.need == 0 {
		return n
	}
	return j.need
}

func (j *tjoin) Merge(_ context.Context, s *fstate, bs []graph.Branch[*fstate]) (string, error) {
	j.seen = bs
	var parts []string
	for _, b := range bs {
		if b.Err == nil {
			parts = append(parts, b.State.vals["out"])
		}
	}
	s.vals["merged"] = strings.Join(parts, ",")
	return "", nil
}

// diamond builds START -> [a, b, c] -> join -> END, with a two-node branch
// a -> a2.
func diamond(t *testing.T, j *tjoin, a, b, c graph.Node[*fstate]) *graph.Compiled[*fstate] {
	t.Helper()
	g, err := graph.New[*fstate]().
		AddNode("a", a).AddNode("a2", put("a2", "seen-a2", "yes")).AddNode("b", b).AddNode("c", c).AddNode("join", j).
		AddFanOut(graph.START, "a", "b", "c").
		AddEdge("a", "a2").AddEdge("a2", "join").AddEdge("b", "join").AddEdge("c", "join").AddEdge("join", graph.END).
		Compile()
	require.NoError(t, err)
	return g
}

func TestBranchesRunConcurrentlyOnTheirOwnStateAndMergeInBranchOrder(t *testing.T) {
	var started sync.WaitGroup
	started.Add(3)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	// Each branch waits until all three started: they run at once. The
	// last to start finishes first.
	node := func(id, out string, delay time.Duration) graph.NodeFunc[*fstate] {
		return func(ctx context.Context, s *fstate) (string, error) {
			started.Done()
			select {
			case <-all:
			case <-time.After(5 * time.Second):
				return "", errors.New("branches did not run concurrently")
			}
			time.Sleep(delay)
			_, sibling := s.vals["out"]
			assert.False(t, sibling, "a branch never sees its sibling's write")
			s.vals["out"] = out
			s.log = append(s.log, id)
			return "", nil
		}
	}
	j := &tjoin{}
	g := diamond(t, j, node("a", "A", 30*time.Millisecond), node("b", "B", 15*time.Millisecond), node("c", "C", 0))
	var (
		mu     sync.Mutex
		events []graph.Event
	)
	st := newFState()
	st.vals["given"] = "x"
	res, err := g.Run(context.Background(), st, graph.WithObserver(graph.ObserverFunc(func(_ context.Context, e graph.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	})))
	require.NoError(t, err)
	assert.Equal(t, "A,B,C", st.vals["merged"], "merged in branch order, not completion order")
	assert.NotContains(t, st.vals, "out", "nothing a branch writes reaches the parent but through the join")
	assert.NotContains(t, st.vals, "seen-a2")
	assert.Equal(t, []string{"a", "a2", "b", "c", "join"}, res.Steps, "steps in branch order")
	require.Len(t, j.seen, 3)
	assert.Equal(t, []string{"0.1", "0.2", "0.3"}, []string{j.seen[0].ID, j.seen[1].ID, j.seen[2].ID})
	assert.Equal(t, "x", j.seen[2].State.vals["given"], "a branch starts from a copy of the parent")
	assert.Equal(t, []int{3, 2, 1}, []int{j.seen[0].Rank, j.seen[1].Rank, j.seen[2].Rank}, "ranks follow completion")

	branchOf := map[string]string{}
	for _, e := range events {
		if e.Kind == graph.EventNodeStart {
			branchOf[e.Node] = e.Branch
		}
	}
	assert.Equal(t, map[string]string{"a": "0.1", "a2": "0.1", "b": "0.2", "c": "0.3", "join": ""}, branchOf)
	assert.Equal(t, graph.EventFork, events[0].Kind)
	assert.Equal(t, []string{"a", "b", "c"}, events[0].Branches)
	assert.Equal(t, "join", events[0].To)
}

// block is a node that waits for its context's end and fails with it.
func block(ran *atomic.Int32) graph.NodeFunc[*fstate] {
	return func(ctx context.Context, _ *fstate) (string, error) {
		ran.Add(1)
		<-ctx.Done()
		return "", context.Cause(ctx)
	}
}

func TestJoinWaitModes(t *testing.T) {
	boom := errors.New("boom")
	fail := graph.NodeFunc[*fstate](func(context.Context, *fstate) (string, error) { return "", boom })
	t.Run("first cancels the others once one succeeded", func(t *testing.T) {
		var blocked atomic.Int32
		j := &tjoin{need: 1}
		g := diamond(t, j, block(&blocked), put("b", "out", "B"), block(&blocked))
		st := newFState()
		res, err := g.Run(context.Background(), st)
		require.NoError(t, err)
		assert.Equal(t, "B", st.vals["merged"])
		assert.ErrorIs(t, j.seen[0].Err, graph.ErrBranchCancelled)
		assert.ErrorIs(t, j.seen[2].Err, graph.ErrBranchCancelled)
		assert.Equal(t, []string{"b", "join"}, res.Steps, "only the merged branches' steps count")
	})
	t.Run("a quorum tolerates failures it can afford", func(t *testing.T) {
		j := &tjoin{need: 2}
		g := diamond(t, j, put("a", "out", "A"), fail, put("c", "out", "C"))
		st := newFState()
		_, err := g.Run(context.Background(), st)
		require.NoError(t, err)
		assert.Equal(t, "A,C", st.vals["merged"])
		assert.Error(t, j.seen[1].Err, "failed, or cancelled when it finished after the quorum")
	})
	t.Run("all fails the run with the branch's error", func(t *testing.T) {
		var blocked atomic.Int32
		j := &tjoin{}
		g := diamond(t, j, block(&blocked), fail, block(&blocked))
		st := newFState()
		_, err := g.Run(context.Background(), st)
		require.ErrorIs(t, err, graph.ErrBranchFailed)
		require.ErrorIs(t, err, boom)
		var be *graph.BranchError
		require.ErrorAs(t, err, &be)
		assert.Equal(t, "0.2", be.Branch)
		var ne *graph.NodeError
		require.ErrorAs(t, err, &ne)
		assert.Equal(t, "b", ne.Node)
		assert.NotContains(t, st.vals, "merged", "the join never ran")
	})
	t.Run("a quorum that can no longer be met fails at once", func(t *testing.T) {
		var blocked atomic.Int32
		j := &tjoin{need: 3}
		g := diamond(t, j, fail, block(&blocked), block(&blocked))
		_, err := g.Run(context.Background(), newFState())
		require.ErrorIs(t, err, boom)
	})
}

func TestMaxParallelBoundsBranchExecutions(t *testing.T) {
	var inFlight, peak atomic.Int32
	node := func(out string) graph.NodeFunc[*fstate] {
		return func(_ context.Context, s *fstate) (string, error) {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			inFlight.Add(-1)
			s.vals["out"] = out
			return "", nil
		}
	}
	j := &tjoin{}
	g := diamond(t, j, node("A"), node("B"), node("C"))
	st := newFState()
	_, err := g.Run(context.Background(), st, graph.WithMaxParallel(1))
	require.NoError(t, err)
	assert.Equal(t, int32(1), peak.Load())
	assert.Equal(t, "A,B,C", st.vals["merged"])
}

func TestBranchStepsCountDeterministically(t *testing.T) {
	j := &tjoin{}
	g := diamond(t, j, put("a", "out", "A"), put("b", "out", "B"), put("c", "out", "C"))
	// Five executions: a, a2, b, c, join. Four leave no room for the join.
	for range 20 {
		res, err := g.Run(context.Background(), newFState(), graph.WithMaxSteps(4))
		var mse *graph.MaxStepsError
		require.ErrorAs(t, err, &mse)
		assert.Equal(t, []string{"a", "a2", "b", "c"}, res.Steps)
	}
	// A branch alone cannot pass what the limit left at the fan-out.
	_, err := g.Run(context.Background(), newFState(), graph.WithMaxSteps(1))
	require.ErrorIs(t, err, graph.ErrMaxSteps)
	require.ErrorIs(t, err, graph.ErrBranchFailed)
	_, err = g.Run(context.Background(), newFState(), graph.WithMaxSteps(5))
	require.NoError(t, err)
}

func TestExecWrapSeesEachBranch(t *testing.T) {
	j := &tjoin{}
	g := diamond(t, j, put("a", "out", "A"), put("b", "out", "B"), put("c", "out", "C"))
	var (
		mu   sync.Mutex
		seen []string
	)
	wrap := func(ctx context.Context, x graph.Exec, run func(context.Context) (string, error)) (string, error) {
		mu.Lock()
		seen = append(seen, x.Branch+"|"+x.Node+"|"+string(rune('0'+x.Step)))
		mu.Unlock()
		return run(ctx)
	}
	_, err := g.Run(context.Background(), newFState(), graph.WithExecWrap(wrap))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"0.1|a|1", "0.1|a2|2", "0.2|b|1", "0.3|c|1", "|join|5"}, seen)
}

func TestFanOutFromANodeAndRunCancellation(t *testing.T) {
	j := &tjoin{}
	var blocked atomic.Int32
	g, err := graph.New[*fstate]().
		AddNode("pre", put("pre", "pre", "1")).AddNode("a", block(&blocked)).AddNode("b", block(&blocked)).AddNode("join", j).
		AddEdge(graph.START, "pre").AddFanOut("pre", "a", "b").
		AddEdge("a", "join").AddEdge("b", "join").AddEdge("join", graph.END).Compile()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for blocked.Load() < 2 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err = g.Run(ctx, newFState())
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), `fan-out from "pre"`)
}

func TestCompileChecksFanOutsAndJoins(t *testing.T) {
	noop := put("x", "k", "v")
	base := func(j *tjoin) *graph.Graph[*fstate] {
		return graph.New[*fstate]().AddNode("a", noop).AddNode("b", noop).AddNode("join", j)
	}
	cases := []struct {
		name  string
		build func() *graph.Graph[*fstate]
		want  error
		text  string
	}{
		{"branch reaches END", func() *graph.Graph[*fstate] {
			return base(&tjoin{}).AddFanOut(graph.START, "a", "b").AddEdge("a", "join").AddEdge("b", graph.END).AddEdge("join", graph.END)
		}, graph.ErrBranchNoJoin, `the branch from "b" reaches END`},
		{"branches reach different joins", func() *graph.Graph[*fstate] {
			return base(&tjoin{}).AddNode("join2", &tjoin{}).AddFanOut(graph.START, "a", "b").
				AddEdge("a", "join").AddEdge("b", "join2").AddEdge("join", graph.END).AddEdge("join2", graph.END)
		}, graph.ErrBranchesDiverge, `the branch from "b" reaches the join "join2"`},
		{"join without branches", func() *graph.Graph[*fstate] {
			return base(&tjoin{}).AddEdge(graph.START, "a").AddEdge("a", "join").AddEdge("join", "b").AddEdge("b", graph.END)
		}, graph.ErrJoinNoBranches, `no fan-out's branches reach the join "join"`},
		{"a branch entered from outside", func() *graph.Graph[*fstate] {
			return base(&tjoin{}).AddNode("c", noop, "side").AddEdge(graph.START, "c").AddRoute("c", "side", "b").AddFanOut("c", "a", "b").
				AddEdge("a", "join").AddEdge("b", "join").AddEdge("join", graph.END)
		}, graph.ErrBranchEntered, `node "c" enters the branch from "b"`},
		{"two branches share a node", func() *graph.Graph[*fstate] {
			return base(&tjoin{}).AddNode("m", noop).AddFanOut(graph.START, "a", "b").AddEdge("a", "m").AddEdge("b", "m").AddEdge("m", "join").AddEdge("join", graph.END)
		}, graph.ErrBranchEntered, `node "m" is on the branches from "a" and "b"`},
		{"nested fan-out", func() *graph.Graph[*fstate] {
			return base(&tjoin{}).AddNode("c", noop).AddNode("d", noop).AddFanOut(graph.START, "a", "b").AddFanOut("a", "c", "d").
				AddEdge("c", "join").AddEdge("d", "join").AddEdge("b", "join").AddEdge("join", graph.END)
		}, graph.ErrNestedFanOut, "nested fan-outs are not supported"},
		{"straight to the join", func() *graph.Graph[*fstate] {
			return base(&tjoin{}).AddFanOut(graph.START, "a", "join").AddEdge("a", "join").AddEdge("b", graph.END).AddEdge("join", graph.END)
		}, graph.ErrBranchNoJoin, "a branch needs a node before its join"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.build().Compile()
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.text)
		})
	}
	t.Run("a state that cannot fork", func(t *testing.T) {
		j := graph.NodeFunc[*counter](func(context.Context, *counter) (string, error) { return "", nil })
		_, err := graph.New[*counter]().AddNode("a", j).AddNode("b", j).AddFanOut(graph.START, "a", "b").AddEdge("a", graph.END).AddEdge("b", graph.END).Compile()
		require.Error(t, err)
		assert.ErrorIs(t, err, graph.ErrNoFork)
	})
}

func TestRenderDrawsFanOutsAndJoins(t *testing.T) {
	g := diamond(t, &tjoin{}, put("a", "out", "A"), put("b", "out", "B"), put("c", "out", "C"))
	dot := g.DOT("p", map[string]string{"join": "join"})
	assert.Contains(t, dot, `"START" -> "a" [style=bold, color="#1f5fbf", label=" fork "];`)
	assert.Contains(t, dot, `"join" [shape=invtrapezium, label="join"];`)
	mm := g.Mermaid(nil)
	assert.Contains(t, mm, "start ==>|fork| n0")
	assert.Contains(t, mm, `n4[/"join"\]`)
	assert.Equal(t, []graph.FanOut{{From: graph.START, Branches: [][]string{{"a", "a2"}, {"b"}, {"c"}}, Join: "join"}}, g.FanOuts())
}

func TestAPanicOfTheWrapInABranchFailsTheRun(t *testing.T) {
	g := diamond(t, &tjoin{}, put("a", "out", "A"), put("b", "out", "B"), put("c", "out", "C"))
	wrap := func(ctx context.Context, x graph.Exec, run func(context.Context) (string, error)) (string, error) {
		if x.Node == "b" {
			panic("hook bug")
		}
		return run(ctx)
	}
	_, err := g.Run(context.Background(), newFState(), graph.WithExecWrap(wrap))
	require.ErrorIs(t, err, graph.ErrNodePanic)
	assert.Contains(t, err.Error(), "hook bug")
}
