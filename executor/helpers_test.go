package executor_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// testTimeout is the tool timeout of every test registry.
const testTimeout = 50 * time.Millisecond

// fakeTool is a tool without a schema (the loop describes it with one string
// argument "input").
type fakeTool struct {
	name  string
	fn    func(ctx context.Context, input string) (string, error)
	calls atomic.Int32
}

func (f *fakeTool) Name() string        { return f.name }
func (f *fakeTool) Description() string { return "test tool " + f.name }
func (f *fakeTool) Call(ctx context.Context, input string) (string, error) {
	f.calls.Add(1)
	return f.fn(ctx, input)
}

// schemaTool is a fakeTool that declares a JSON schema.
type schemaTool struct{ *fakeTool }

func (schemaTool) Schema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}}
}

func echoTool() *fakeTool {
	return &fakeTool{name: "echo", fn: func(_ context.Context, in string) (string, error) { return "echo: " + in, nil }}
}

func panicTool() *fakeTool {
	return &fakeTool{name: "panic", fn: func(context.Context, string) (string, error) { panic("boom") }}
}

// sleepTool ignores its context and outlives the 50 ms test timeout.
func sleepTool() *fakeTool {
	return &fakeTool{name: "sleep", fn: func(context.Context, string) (string, error) {
		time.Sleep(300 * time.Millisecond)
		return "woke up", nil
	}}
}

func failTool() *fakeTool {
	return &fakeTool{name: "fail", fn: func(context.Context, string) (string, error) {
		return "", errors.New("quota exceeded, try again tomorrow")
	}}
}

// bigTool returns n characters that start with the input.
func bigTool(n int) *fakeTool {
	return &fakeTool{name: "big", fn: func(_ context.Context, in string) (string, error) {
		s := "result for " + in + ": "
		return s + strings.Repeat("x", n-len(s)), nil
	}}
}

// meetTool returns "met <input>" only when `want` calls are in flight at
// once, so it proves calls run concurrently. A call whose input starts with
// "slow" returns only after the others have returned, so it finishes last.
// Its own timeout (1s) replaces the registry's 50 ms, so a slow machine
// cannot fail it; run sequentially, it fails by timing out.
func meetTool(want int32) tools.Tool {
	var arrived, left atomic.Int32
	all, others := make(chan struct{}), make(chan struct{})
	return timedTool{&fakeTool{name: "meet", fn: func(ctx context.Context, in string) (string, error) {
		if arrived.Add(1) == want {
			close(all)
		}
		select {
		case <-all:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if strings.HasPrefix(in, "slow") {
			select {
			case <-others:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		} else if left.Add(1) == want-1 {
			close(others)
		}
		return "met " + in, nil
	}}}
}

// timedTool is a fakeTool with a 1s timeout of its own.
type timedTool struct{ *fakeTool }

func (timedTool) Meta() tools.Meta { return tools.Meta{ReadOnly: true, Timeout: time.Second} }

// request is one model call as a recorder from newRecModel saw it.
type request struct {
	caller llm.CallMeta
	msgs   []llms.MessageContent
	opts   llms.CallOptions
}

// newRecModel wraps inner in a recorder that keeps each call's caller.
func newRecModel(inner llms.Model) *llmtest.Recorder {
	return &llmtest.Recorder{Model: inner, Meta: func(ctx context.Context) any { return llm.CallMetaFrom(ctx) }}
}

// requests returns the calls m (from newRecModel) saw so far.
func requests(m *llmtest.Recorder) []request {
	var out []request
	for _, r := range m.Requests() {
		out = append(out, request{caller: r.Meta.(llm.CallMeta), msgs: r.Messages, opts: r.Options})
	}
	return out
}

// text joins the text of every message of a request, as a model sees it.
func (r request) text() string { return llmtest.Text(r.msgs) }

// harness is one loop run's observable results.
type harness struct {
	model  *llmtest.Recorder
	events *trace.Recorder
	state  *state.State
	out    executor.Outcome
	err    error
}

func (h *harness) ofKind(k trace.Kind) []trace.Event { return h.events.OfKind(k) }

// guards returns the names of the guard events, in order.
func (h *harness) guards() []string {
	var out []string
	for _, e := range h.events.OfKind(trace.KindGuard) {
		out = append(out, e.Data["guard"].(string))
	}
	return out
}

// prompt returns the prompt text of request i; a negative i counts from
// the end (-1 is the last request).
func (h *harness) prompt(i int) string {
	reqs := requests(h.model)
	if i < 0 {
		i += len(reqs)
	}
	return reqs[i].text()
}

func registry(t testing.TB, ts ...tools.Tool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(ts, tools.WithTimeout(testTimeout))
	require.NoError(t, err)
	return reg
}

// runScript runs one loop on task with a scripted model.
func runScript(t testing.TB, cfg executor.ReActConfig, s scripted.Script, task string, ts ...tools.Tool) *harness {
	t.Helper()
	sm, err := scripted.New(s)
	require.NoError(t, err)
	h := &harness{model: newRecModel(sm), events: &trace.Recorder{}, state: hookedState(state.Task{Question: task})}
	// The factory's default empty-reply retries, as a pipeline's model has.
	l, err := executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Model: llm.Model{LLM: h.model, EmptyRetries: config.DefaultEmptyRetries}, Tools: registry(t, ts...)}, cfg)
	require.NoError(t, err)
	ctx := trace.WithTracer(context.Background(), trace.New("test", h.events))
	h.out, h.err = l.Run(ctx, h.state, executor.Input{NodeID: "act", Task: task})
	return h
}

func text(replies ...string) scripted.Script {
	s := scripted.Script{}
	for _, r := range replies {
		s.Replies = append(s.Replies, scripted.Reply{Text: r})
	}
	return s
}

func intp(n int) *int { return &n }

func boolp(b bool) *bool { return &b }

// scriptedModel returns a strict scripted model playing s, then one
// finalizer reply.
func scriptedModel(t *testing.T, s scripted.Script, finalize string) *scripted.Model {
	t.Helper()
	s.Replies = append(s.Replies, scripted.Reply{Role: "finalize", Text: finalize})
	m, err := scripted.New(s)
	require.NoError(t, err)
	return m
}
