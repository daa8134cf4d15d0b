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

// gatedStream is a model that streams each reply in parts: before part
// i+1 it waits until the test lets it go (wait[i] closed), so a test can
// prove that something happened while the reply was still being written.
type gatedStream struct {
	replies [][]string
	wait    []chan struct{}
	mu      sync.Mutex
	calls   int
}

func (m *gatedStream) GenerateContent(ctx context.Context, _ []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, f := range options {
		f(&o)
	}
	m.mu.Lock()
	parts := m.replies[min(m.calls, len(m.replies)-1)]
	first := m.calls == 0
	m.calls++
	m.mu.Unlock()
	for i, part := range parts {
		if i > 0 && first && i-1 < len(m.wait) {
			select {
			case <-m.wait[i-1]:
			case <-time.After(5 * time.Second):
				return nil, errors.New("the test never let the stream go on: nothing ran while the plan streamed")
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if o.StreamingFunc != nil {
			if err := o.StreamingFunc(ctx, []byte(part)); err != nil {
				return nil, err
			}
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: strings.Join(parts, "")}}}, nil
}

func (m *gatedStream) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
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
	m := &gatedStream{replies: [][]string{append([]string{step1}, rest...)}, wait: []chan struct{}{go1}}
	n := dispatchPlanner(t, m, signalTool{name: "search", calls: calls}, nil)
	go func() {
		// The model writes step 2 only once step 1's tool call has begun.
		if in := <-calls; in == "Tombaugh born" {
			close(go1)
		}
	}()
	st := state.NewState(state.Task{Question: "How old was Clyde Tombaugh when he found Pluto?"})
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
	m := &gatedStream{replies: [][]string{bad, good}, wait: []chan struct{}{go1}}
	n := dispatchPlanner(t, m, signalTool{name: "search", calls: calls}, nil)
	var first string
	go func() {
		// The model writes the bad step only once step 1's call has begun.
		first = <-calls
		close(go1)
	}()
	st := state.NewState(state.Task{Question: "q"})
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
	n := dispatchPlanner(t, noStream{text: `#E1 = search[x]` + "\n" + `#E2 = calculator[2 * 21]`}, signalTool{name: "search", calls: calls}, map[string]any{"output": "text"})
	st := state.NewState(state.Task{Question: "q"})
	_, err := n.Run(context.Background(), st)
	require.NoError(t, err)
	require.Len(t, st.Plan, 2)
	assert.Equal(t, "42", st.Plan[1].Result)
	assert.Equal(t, plan.StatusDone, st.Plan[0].Status)
}

type noStream struct{ text string }

func (m noStream) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: m.text}}}, nil
}

func (m noStream) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
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

// pacedStream streams a reply one chunk per interval, recording when the
// chunk that completes the first step was written and when the stream
// ended.
type pacedStream struct {
	chunks    []string
	firstStep int // index of the chunk that completes step 1
	interval  time.Duration
	stepDone  time.Time
	ended     time.Time
}

func (m *pacedStream) GenerateContent(ctx context.Context, _ []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, f := range options {
		f(&o)
	}
	for i, c := range m.chunks {
		time.Sleep(m.interval)
		if i == m.firstStep {
			m.stepDone = time.Now()
		}
		if o.StreamingFunc != nil {
			if err := o.StreamingFunc(ctx, []byte(c)); err != nil {
				return nil, err
			}
		}
	}
	m.ended = time.Now()
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: strings.Join(m.chunks, "")}}}, nil
}

func (m *pacedStream) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
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
		m := &pacedStream{chunks: chunks, firstStep: firstStep, interval: 2 * time.Millisecond}
		tool := &timedTool{}
		reg, err := tools.NewRegistry([]tools.Tool{tool})
		require.NoError(b, err)
		built, err := planner.New(nodekind.Env{Model: llm.Model{LLM: m}, Tools: reg}, nodekind.Spec{ID: "plan", Type: "planner",
			Settings: map[string]any{"require_tools": true, "dispatch": true}})
		require.NoError(b, err)
		st := state.NewState(state.Task{Question: "q"})
		_, err = built.Node.Run(context.Background(), st)
		require.NoError(b, err)
		lag += tool.first.Sub(m.stepDone)
		ahead += m.ended.Sub(tool.first)
	}
	b.ReportMetric(float64(lag.Microseconds())/1000/float64(b.N), "first-call-lag-ms")
	b.ReportMetric(float64(ahead.Microseconds())/1000/float64(b.N), "ahead-ms")
}
