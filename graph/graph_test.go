package graph_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/graph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type counter struct{ visits []string }

func step(id string, route string) graph.NodeFunc[*counter] {
	return func(_ context.Context, c *counter) (string, error) {
		c.visits = append(c.visits, id)
		return route, nil
	}
}

func TestCompileReportsEachStructuralError(t *testing.T) {
	noop := step("x", "")
	cases := []struct {
		name  string
		build func() *graph.Graph[*counter]
		want  error
		node  string
	}{
		{"duplicate id", func() *graph.Graph[*counter] {
			return graph.New[*counter]().AddNode("a", noop).AddNode("a", noop).AddEdge(graph.START, "a").AddEdge("a", graph.END)
		}, graph.ErrDuplicateNode, "a"},
		{"unknown target", func() *graph.Graph[*counter] {
			return graph.New[*counter]().AddNode("a", noop).AddEdge(graph.START, "a").AddEdge("a", "ghost")
		}, graph.ErrUnknownNode, "a"},
		{"unreachable node", func() *graph.Graph[*counter] {
			return graph.New[*counter]().AddNode("a", noop).AddNode("island", noop).
				AddEdge(graph.START, "a").AddEdge("a", graph.END).AddEdge("island", graph.END)
		}, graph.ErrUnreachable, "island"},
		{"no path to END", func() *graph.Graph[*counter] {
			return graph.New[*counter]().AddNode("a", noop).AddNode("b", noop).
				AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "a")
		}, graph.ErrNoPathToEnd, "a"},
		{"unmapped route", func() *graph.Graph[*counter] {
			return graph.New[*counter]().AddNode("judge", noop, "yes", "no").
				AddEdge(graph.START, "judge").AddRoute("judge", "yes", graph.END)
		}, graph.ErrUnmappedRoute, "judge"},
		{"undeclared route", func() *graph.Graph[*counter] {
			return graph.New[*counter]().AddNode("a", noop).
				AddEdge(graph.START, "a").AddEdge("a", graph.END).AddRoute("a", "maybe", graph.END)
		}, graph.ErrUndeclaredRoute, "a"},
		{"reserved id", func() *graph.Graph[*counter] {
			return graph.New[*counter]().AddNode(graph.END, noop).AddNode("a", noop).AddEdge(graph.START, "a").AddEdge("a", graph.END)
		}, graph.ErrReservedID, graph.END},
		{"no start edge", func() *graph.Graph[*counter] {
			return graph.New[*counter]().AddNode("a", noop).AddEdge("a", graph.END)
		}, graph.ErrNoStart, graph.START},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.build().Compile()
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			var ge *graph.Error
			require.ErrorAs(t, err, &ge)
			var errs graph.Errors
			require.ErrorAs(t, err, &errs)
			var nodes []string
			for _, e := range errs {
				if errors.Is(e, tc.want) {
					nodes = append(nodes, e.Node)
					assert.Contains(t, e.Error(), e.Node)
				}
			}
			assert.Contains(t, nodes, tc.node)
		})
	}
}

func TestRunFollowsRoutesDeterministically(t *testing.T) {
	n := 0
	judge := graph.NodeFunc[*counter](func(_ context.Context, c *counter) (string, error) {
		c.visits = append(c.visits, "judge")
		n++
		if n < 3 {
			return "again", nil
		}
		return "done", nil
	})
	g, err := graph.New[*counter]().
		AddNode("work", step("work", "")).
		AddNode("judge", judge, "again", "done").
		AddEdge(graph.START, "work").AddEdge("work", "judge").
		AddRoute("judge", "again", "work").AddRoute("judge", "done", graph.END).Compile()
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"work", "judge"}}, g.Cycles())

	var events []string
	obs := graph.ObserverFunc(func(_ context.Context, e graph.Event) {
		if e.Kind == graph.EventRoute {
			events = append(events, e.Node+"-"+e.Route+"->"+e.To)
		}
	})
	st := &counter{}
	res, err := g.Run(context.Background(), st, graph.WithObserver(obs))
	require.NoError(t, err)
	assert.Equal(t, []string{"work", "judge", "work", "judge", "work", "judge"}, res.Steps)
	assert.Equal(t, res.Steps, st.visits)
	assert.Equal(t, "judge-again->work", events[1])
	assert.Equal(t, "judge-done->END", events[len(events)-1])
}

func TestLoopWithoutExitHitsMaxSteps(t *testing.T) {
	g, err := graph.New[*counter]().
		AddNode("spin", step("spin", "again"), "again", "stop").
		AddEdge(graph.START, "spin").
		AddRoute("spin", "again", "spin").AddRoute("spin", "stop", graph.END).Compile()
	require.NoError(t, err)
	res, err := g.Run(context.Background(), &counter{}, graph.WithMaxSteps(7))
	require.ErrorIs(t, err, graph.ErrMaxSteps)
	var ms *graph.MaxStepsError
	require.ErrorAs(t, err, &ms)
	assert.Equal(t, 7, ms.Limit)
	assert.Len(t, ms.Steps, 7)
	assert.Len(t, res.Steps, 7)
	assert.Contains(t, err.Error(), "spin")
}

func TestCancelStopsBlockedNodeQuickly(t *testing.T) {
	blocked := make(chan struct{})
	block := graph.NodeFunc[*counter](func(ctx context.Context, _ *counter) (string, error) {
		close(blocked)
		<-ctx.Done()
		return "", ctx.Err()
	})
	g, err := graph.New[*counter]().AddNode("block", block).
		AddEdge(graph.START, "block").AddEdge("block", graph.END).Compile()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := g.Run(ctx, &counter{})
		done <- err
	}()
	<-blocked
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		var ne *graph.NodeError
		require.ErrorAs(t, err, &ne)
		assert.Equal(t, "block", ne.Node)
	case <-time.After(100 * time.Millisecond):
		t.Fatal("run did not stop within 100ms of cancellation")
	}
}

func TestCancelledContextStopsBetweenNodes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	first := graph.NodeFunc[*counter](func(_ context.Context, c *counter) (string, error) {
		c.visits = append(c.visits, "first")
		cancel()
		return "", nil
	})
	g, err := graph.New[*counter]().AddNode("first", first).AddNode("second", step("second", "")).
		AddEdge(graph.START, "first").AddEdge("first", "second").AddEdge("second", graph.END).Compile()
	require.NoError(t, err)
	st := &counter{}
	_, err = g.Run(ctx, st)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []string{"first"}, st.visits)
}

func TestPanickingNodeBecomesErrorNamingIt(t *testing.T) {
	boom := graph.NodeFunc[*counter](func(context.Context, *counter) (string, error) { panic("kaboom") })
	g, err := graph.New[*counter]().AddNode("fragile", boom).
		AddEdge(graph.START, "fragile").AddEdge("fragile", graph.END).Compile()
	require.NoError(t, err)
	_, err = g.Run(context.Background(), &counter{})
	require.ErrorIs(t, err, graph.ErrNodePanic)
	var ne *graph.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "fragile", ne.Node)
	assert.Contains(t, err.Error(), "kaboom")
	assert.Contains(t, ne.Stack, "graph_test")
}

func TestUndeclaredRouteAtRunTimeIsAnError(t *testing.T) {
	g, err := graph.New[*counter]().AddNode("a", step("a", "surprise")).
		AddEdge(graph.START, "a").AddEdge("a", graph.END).Compile()
	require.NoError(t, err)
	_, err = g.Run(context.Background(), &counter{})
	require.ErrorIs(t, err, graph.ErrBadRoute)
}

func TestRenderIsStableAndEscaped(t *testing.T) {
	g, err := graph.New[*counter]().
		AddNode("plan", step("plan", "")).
		AddNode(`say "hi"`, step("x", ""), "continue", "finish").
		AddEdge(graph.START, "plan").AddEdge("plan", `say "hi"`).
		AddRoute(`say "hi"`, "finish", graph.END).AddRoute(`say "hi"`, "continue", "plan").Compile()
	require.NoError(t, err)
	dot := g.DOT("demo", map[string]string{"plan": "planner"})
	assert.Equal(t, dot, g.DOT("demo", map[string]string{"plan": "planner"}))
	assert.Contains(t, dot, `"say \"hi\"" -> "plan" [label=" continue "];`)
	assert.Contains(t, dot, `"plan" [shape=box, label="plan\n(planner)"];`)
	assert.Less(t, strings.Index(dot, `label=" continue "`), strings.Index(dot, `label=" finish "`))
	mm := g.Mermaid(nil)
	assert.Contains(t, mm, `n1 -->|"continue"| n0`)
	assert.Contains(t, mm, `n1["say #quot;hi#quot;"]`)
	assert.Contains(t, mm, "n1 -->|\"finish\"| finish")
}

type loopState struct{ n int }

// BenchmarkLoop1000 runs a 1,000-step loop of no-op nodes; report ns/op and
// allocs per step by dividing by 1,000.
func BenchmarkLoop1000(b *testing.B) {
	tick := graph.NodeFunc[*loopState](func(_ context.Context, s *loopState) (string, error) {
		s.n++
		if s.n >= 1000 {
			return "done", nil
		}
		return "again", nil
	})
	g, err := graph.New[*loopState]().AddNode("tick", tick, "again", "done").
		AddEdge(graph.START, "tick").AddRoute("tick", "again", "tick").AddRoute("tick", "done", graph.END).Compile()
	require.NoError(b, err)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.Run(ctx, &loopState{}, graph.WithMaxSteps(2000)); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCompiledGraphIgnoresLaterChangesToItsBuilder(t *testing.T) {
	b := graph.New[*counter]().AddNode("a", step("a", "")).AddEdge(graph.START, "a").AddEdge("a", graph.END)
	g, err := b.Compile()
	require.NoError(t, err)
	b.AddNode("b", step("b", "")).AddRoute("a", "extra", "b").AddEdge("b", graph.END)
	assert.Equal(t, []string{"a"}, g.Nodes())
	assert.Equal(t, []graph.Edge{{From: graph.START, To: "a"}, {From: "a", To: graph.END}}, g.Edges())
}

type ctxKey struct{}

// recordingHook gives each node execution a context value and records
// what each execution returned; it fails the run at failAt.
type recordingHook struct {
	seen   []string
	failAt int
}

func (h *recordingHook) wrap(ctx context.Context, step int, node string, run func(context.Context) (string, error)) (string, error) {
	ctx = context.WithValue(ctx, ctxKey{}, fmt.Sprintf("%d:%s", step, node))
	route, err := run(ctx)
	h.seen = append(h.seen, fmt.Sprintf("%v route=%s err=%v", ctx.Value(ctxKey{}), route, err != nil))
	if step == h.failAt {
		return route, errors.New("journal full")
	}
	return route, err
}

func TestNodeHookWrapsEveryExecution(t *testing.T) {
	var inNode []string
	tick := graph.NodeFunc[*loopState](func(ctx context.Context, s *loopState) (string, error) {
		inNode = append(inNode, ctx.Value(ctxKey{}).(string))
		s.n++
		if s.n >= 3 {
			return "done", nil
		}
		return "again", nil
	})
	g, err := graph.New[*loopState]().AddNode("tick", tick, "again", "done").
		AddEdge(graph.START, "tick").AddRoute("tick", "again", "tick").AddRoute("tick", "done", graph.END).Compile()
	require.NoError(t, err)

	h := &recordingHook{}
	_, err = g.Run(context.Background(), &loopState{}, graph.WithNodeWrap(h.wrap))
	require.NoError(t, err)
	assert.Equal(t, []string{"1:tick", "2:tick", "3:tick"}, inNode)
	assert.Equal(t, []string{"1:tick route=again err=false", "2:tick route=again err=false", "3:tick route=done err=false"}, h.seen)

	// An error of the wrapper fails the run as a node error at that step.
	inNode = nil
	h = &recordingHook{failAt: 2}
	res, err := g.Run(context.Background(), &loopState{}, graph.WithNodeWrap(h.wrap))
	var ne *graph.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, 2, ne.Step)
	assert.Contains(t, err.Error(), "journal full")
	assert.Equal(t, []string{"tick", "tick"}, res.Steps)
}
