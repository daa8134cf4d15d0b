package executor_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statefulTool records the order of its calls and whether two ever ran at
// once.
type statefulTool struct {
	name    string
	mu      sync.Mutex
	order   []string
	running atomic.Int32
	overlap atomic.Bool
}

func (s *statefulTool) Name() string        { return s.name }
func (s *statefulTool) Description() string { return "stateful test tool " + s.name }
func (s *statefulTool) Meta() tools.Meta    { return tools.Meta{Stateful: true, Timeout: time.Second} }
func (s *statefulTool) Call(_ context.Context, in string) (string, error) {
	if s.running.Add(1) > 1 {
		s.overlap.Store(true)
	}
	defer s.running.Add(-1)
	time.Sleep(5 * time.Millisecond) // room for another call to overlap
	s.mu.Lock()
	s.order = append(s.order, in)
	s.mu.Unlock()
	return "ok " + in, nil
}

// Native tool calls of one turn run concurrently, except calls of stateful
// tools: those run one at a time in the model's order, so that a resumed
// thread, which runs them again to rebuild their state, sees the same
// order.
func TestStatefulCallsOfOneTurnRunInTheModelsOrder(t *testing.T) {
	st := &statefulTool{name: "page"}
	calls := []scripted.ToolCall{}
	for _, in := range []string{"a", "b", "c", "d"} {
		calls = append(calls, scripted.ToolCall{Name: "page", Arguments: map[string]any{"input": in}})
	}
	calls = append(calls, scripted.ToolCall{Name: "echo", Arguments: map[string]any{"input": "x"}})
	s := scripted.Script{Replies: []scripted.Reply{{ToolCalls: calls}, {Text: "done"}}}
	h := runScript(t, executor.ReActConfig{Mode: executor.ModeTools}, s, "page through", st, echoTool())
	require.NoError(t, h.err)
	require.True(t, h.out.Complete)
	assert.False(t, st.overlap.Load(), "two stateful calls ran at once")
	assert.Equal(t, []string{"a", "b", "c", "d"}, st.order)
	require.Len(t, h.out.Entries, 6)
	assert.Equal(t, "ok c", h.out.Entries[2].Observation, "results stay with their calls")
	assert.Equal(t, "echo: x", h.out.Entries[4].Observation)
}
