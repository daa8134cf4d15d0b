package planner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/planner"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// gatedStream returns a model that streams its replies in parts (call i
// gets replies[i], and later calls the last one): before part i+1 of its
// first reply it waits until the test lets it go (wait[i] closed), so a
// test can prove that something happened while the reply was still being
// written.
func gatedStream(wait []chan struct{}, replies ...[]string) llms.Model {
	first := &llmtest.Stream{Chunks: replies[0], Before: func(ctx context.Context, i int) error {
		if i == 0 || i-1 >= len(wait) {
			return nil
		}
		select {
		case <-wait[i-1]:
			return nil
		case <-time.After(5 * time.Second):
			return errors.New("the test never let the stream go on: nothing ran while the plan streamed")
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	models := []llms.Model{first}
	if len(replies) == 1 {
		models = append(models, &llmtest.Stream{Chunks: replies[0]}) // ungated after the first call
	}
	for _, r := range replies[1:] {
		models = append(models, &llmtest.Stream{Chunks: r})
	}
	return llmtest.Seq(models...)
}

// signalTool answers "result of <input>" and signals each call on calls.
type signalTool struct {
	name  string
	calls chan string
}

func (s signalTool) Name() string        { return s.name }
func (s signalTool) Description() string { return "looks " + s.name + " up" }
func (s signalTool) Call(_ context.Context, in string) (string, error) {
	s.calls <- in
	return "result of " + in, nil
}

func dispatchPlanner(t *testing.T, m llms.Model, search signalTool, settings map[string]any) nodekind.Node {
	t.Helper()
	reg, err := tools.NewRegistry([]tools.Tool{calc.New(), search})
	require.NoError(t, err)
	s := map[string]any{"require_tools": true, "dispatch": true}
	for k, v := range settings {
		s[k] = v
	}
	built, err := planner.New(nodekind.Env{Model: llm.Model{LLM: m}, Tools: reg}, nodekind.Spec{ID: "plan", Type: "planner", Settings: s})
	require.NoError(t, err)
	return built.Node
}

func TestDispatchStartsAStepWhileThePlanIsStillStreaming(t *testing.T) {
	step1 := `{"steps": [{"id": "1", "tool": "search", "input": "Tombaugh born"},`
	rest := []string{` {"id": "2", "tool": "search", "input": "Pluto found"},`, ` {"id": "3", "tool": "calculator", "input": "1930 - 1906", "depends_on": ["1", "2"]}]}`}
	calls := make(chan string, 8)
	go1 := make(chan struct{})
	m := gatedStream([]chan struct{}{go1}, append([]string{step1}, rest...))
	n := dispatchPlanner(t, m, signalTool{name: "search", calls: calls}, nil)
	go func() {
		// The model writes step 2 only once step 1's tool call has begun.
		if in := <-calls; in == "Tombaugh born" {
			close(go1)
		}
	}()
	st := hookedState(state.Task{Question: "How old was Clyde Tombaugh when he found Pluto?"})
	rec := &trace.Recorder{}
	route, err := n.Run(trace.WithTracer(context.Background(), trace.New("r", rec)), st)
	require.NoError(t, err)
	assert.Equal(t, "", route)
	require.Len(t, st.Plan, 3)
	for _, s := range st.Plan {
		assert.Equal(t, plan.StatusDone, s.Status, "step %s", s.ID)
	}
	assert.Equal(t, "result of Tombaugh born", st.Plan[0].Result)
	assert.Equal(t, "24", st.Plan[2].Result)
	assert.Equal(t, 3, st.Usage.Snapshot().ToolCalls, "two searches and the calculator")
	infos := rec.OfKind(trace.KindInfo)
	require.NotEmpty(t, infos)
	assert.Contains(t, infos[0].Text, "step 1 dispatched while the plan streams")

	// The execute node after the planner finds nothing left to run.
	ex, err := steps.NewExecute(nodekind.Env{Tools: mustRegistry(t, signalTool{name: "search", calls: calls})}, nodekind.Spec{ID: "execute", Type: "execute", Settings: map[string]any{"strategy": "parallel"}})
	require.NoError(t, err)
	_, err = ex.Node.Run(context.Background(), st)
	require.NoError(t, err)
	assert.Len(t, calls, 1, "only the planner's second search call is in the channel: execute ran nothing again")
}

func mustRegistry(t *testing.T, ts ...tools.Tool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(append([]tools.Tool{calc.New()}, ts...))
	require.NoError(t, err)
	return reg
}

func TestDispatchedStepsOfARejectedPlanAreDiscardedAndThePlanRetried(t *testing.T) {
	bad := []string{`{"steps": [{"id": "1", "tool": "search", "input": "a"},`, ` {"id": "2", "tool": "teleport", "input": "b"}]}`}
	good := []string{`{"steps": [{"id": "1", "tool": "search", "input": "c"}]}`}
	calls := make(chan string, 8)
	go1 := make(chan struct{})
	m := gatedStream([]chan struct{}{go1}, bad, good)
	n := dispatchPlanner(t, m, signalTool{name: "search", calls: calls}, nil)
	var first string
	go func() {
		// The model writes the bad step only once step 1's call has begun.
		first = <-calls
		close(go1)
	}()
	st := hookedState(state.Task{Question: "q"})
	rec := &trace.Recorder{}
	_, err := n.Run(trace.WithTracer(context.Background(), trace.New("r", rec)), st)
	require.NoError(t, err)
	require.Len(t, st.Plan, 1)
	assert.Equal(t, "result of c", st.Plan[0].Result)
	guards := rec.OfKind(trace.KindGuard)
	require.Len(t, guards, 1)
	assert.Contains(t, guards[0].Text, "unknown tool")
	assert.Contains(t, guards[0].Text, "1 step(s) started while it streamed were stopped and their results discarded")
	close(calls)
	ran := []string{first}
	for c := range calls {
		ran = append(ran, c)
	}
	assert.Equal(t, []string{"a", "c"}, ran, "step 1 of the rejected plan ran while it streamed; step 2 never did")
}

func TestDispatchWithoutStreamingRunsTheWholePlanAtTheEnd(t *testing.T) {
	// A model that ignores the streaming function (or a journal replay)
	// still gets its plan run.
	calls := make(chan string, 8)
	n := dispatchPlanner(t, llmtest.Reply(`#E1 = search[x]`+"\n"+`#E2 = calculator[2 * 21]`), signalTool{name: "search", calls: calls}, map[string]any{"output": "text"})
	st := hookedState(state.Task{Question: "q"})
	_, err := n.Run(context.Background(), st)
	require.NoError(t, err)
	require.Len(t, st.Plan, 2)
	assert.Equal(t, "42", st.Plan[1].Result)
	assert.Equal(t, plan.StatusDone, st.Plan[0].Status)
}

func TestDispatchRejectsBadSettings(t *testing.T) {
	for _, tc := range []struct {
		settings map[string]any
		key      string
	}{
		{map[string]any{"dispatch": true, "require_tools": false}, "dispatch"},
		{map[string]any{"dispatch": map[string]any{"strategy": "react"}, "require_tools": true}, "dispatch.strategy"},
		{map[string]any{"dispatch": map[string]any{"max_concurrency": -1}, "require_tools": true}, "dispatch.max_concurrency"},
		{map[string]any{"dispatch": "yes", "require_tools": true}, "dispatch"},
	} {
		reg := mustRegistry(t)
		_, err := planner.New(nodekind.Env{Tools: reg}, nodekind.Spec{ID: "plan", Type: "planner", Settings: tc.settings})
		var se *config.SettingError
		require.ErrorAs(t, err, &se, fmt.Sprint(tc.settings))
		assert.Equal(t, tc.key, se.Key)
	}
}

// timedTool records when it was first called.
type timedTool struct {
	mu    sync.Mutex
	first time.Time
}

func (*timedTool) Name() string        { return "search" }
func (*timedTool) Description() string { return "looks it up" }
func (t *timedTool) Call(context.Context, string) (string, error) {
	t.mu.Lock()
	if t.first.IsZero() {
		t.first = time.Now()
	}
	t.mu.Unlock()
	return "found", nil
}

// BenchmarkDispatchFirstToolCall streams a six-step plan at one token
// (about 4 bytes) per 2 ms, as a model writing ~500 tokens/s does, and
// reports how long after the first step's text was complete its tool call
// began (first-call-lag-ms; the goal is under 10 ms) and how much earlier
// than the end of the plan it began (ahead-ms).
func BenchmarkDispatchFirstToolCall(b *testing.B) {
	var text strings.Builder
	text.WriteString(`{"steps": [`)
	for i := 1; i <= 6; i++ {
		if i > 1 {
			text.WriteString(", ")
		}
		fmt.Fprintf(&text, `{"id": "%d", "description": "look up fact %d", "tool": "search", "input": "fact number %d"}`, i, i, i)
	}
	text.WriteString("]}")
	var chunks []string
	firstStep := -1
	s := text.String()
	end := strings.Index(s, "}") // the first step's closing brace
	for i := 0; i < len(s); i += 4 {
		if firstStep < 0 && i+4 > end {
			firstStep = len(chunks)
		}
		chunks = append(chunks, s[i:min(i+4, len(s))])
	}
	var lag, ahead time.Duration
	for b.Loop() {
		// The model streams one chunk each 2 ms, recording when the chunk
		// that completes the first step was written and when it ended.
		var stepDone, ended time.Time
		stream := &llmtest.Stream{Chunks: chunks, Interval: 2 * time.Millisecond, Before: func(_ context.Context, i int) error {
			if i == firstStep {
				stepDone = time.Now()
			}
			return nil
		}}
		m := llmtest.Func(func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
			resp, err := stream.GenerateContent(ctx, msgs, opts...)
			ended = time.Now()
			return resp, err
		})
		tool := &timedTool{}
		reg, err := tools.NewRegistry([]tools.Tool{tool})
		require.NoError(b, err)
		built, err := planner.New(nodekind.Env{Model: llm.Model{LLM: m}, Tools: reg}, nodekind.Spec{ID: "plan", Type: "planner",
			Settings: map[string]any{"require_tools": true, "dispatch": true}})
		require.NoError(b, err)
		st := hookedState(state.Task{Question: "q"})
		_, err = built.Node.Run(context.Background(), st)
		require.NoError(b, err)
		lag += tool.first.Sub(stepDone)
		ahead += ended.Sub(tool.first)
	}
	b.ReportMetric(float64(lag.Microseconds())/1000/float64(b.N), "first-call-lag-ms")
	b.ReportMetric(float64(ahead.Microseconds())/1000/float64(b.N), "ahead-ms")
}
