package hooks_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/planner-engine/planner/hooks"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// trail records the order in which hooks act; safe for concurrent use.
type trail struct {
	mu  sync.Mutex
	got []string
}

func (j *trail) add(s string) {
	j.mu.Lock()
	j.got = append(j.got, s)
	j.mu.Unlock()
}

func (j *trail) lines() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.got...)
}

// everyHook implements all four hook interfaces, writing "name>" to its
// trail as it enters a call and "<name" as it leaves it.
type everyHook struct {
	name string
	j    *trail
}

func (h everyHook) WrapNode(next hooks.NodeFunc) hooks.NodeFunc {
	return func(ctx context.Context, n hooks.Node) (string, error) {
		h.j.add(h.name + ">")
		defer h.j.add("<" + h.name)
		return next(ctx, n)
	}
}

func (h everyHook) WrapModel(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, c *hooks.ModelCall) (*hooks.ModelResult, error) {
		h.j.add(h.name + ">")
		defer h.j.add("<" + h.name)
		return next(ctx, c)
	}
}

func (h everyHook) WrapProvider(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, c *hooks.ModelCall) (*hooks.ModelResult, error) {
		h.j.add(h.name + ">")
		defer h.j.add("<" + h.name)
		return next(ctx, c)
	}
}

func (h everyHook) WrapTool(next hooks.ToolFunc) hooks.ToolFunc {
	return func(ctx context.Context, c *hooks.ToolCall) (*hooks.ToolResult, error) {
		h.j.add(h.name + ">")
		defer h.j.add("<" + h.name)
		return next(ctx, c)
	}
}

// chains runs one call through each chain of s, each ending in a function
// that writes "call" to j, and returns what j saw per chain.
func chains(t *testing.T, s *hooks.Set, j *trail) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := map[string][]string{}
	run := func(name string, call func()) {
		j.mu.Lock()
		j.got = nil
		j.mu.Unlock()
		call()
		out[name] = j.lines()
	}
	run("node", func() {
		route, err := s.WrapNode(func(context.Context, hooks.Node) (string, error) { j.add("call"); return "next", nil })(ctx, hooks.Node{ID: "n"})
		require.NoError(t, err)
		assert.Equal(t, "next", route)
	})
	model := func(context.Context, *hooks.ModelCall) (*hooks.ModelResult, error) {
		j.add("call")
		return &hooks.ModelResult{Attempts: 1}, nil
	}
	run("model", func() {
		res, err := s.WrapModel(model)(ctx, &hooks.ModelCall{})
		require.NoError(t, err)
		assert.Equal(t, 1, res.Attempts)
	})
	run("provider", func() {
		res, err := s.WrapProvider(model)(ctx, &hooks.ModelCall{})
		require.NoError(t, err)
		assert.Equal(t, 1, res.Attempts)
	})
	run("tool", func() {
		res, err := s.WrapTool(func(context.Context, *hooks.ToolCall) (*hooks.ToolResult, error) {
			j.add("call")
			return &hooks.ToolResult{Output: "out"}, nil
		})(ctx, &hooks.ToolCall{Tool: "calc"})
		require.NoError(t, err)
		assert.Equal(t, "out", res.Output)
	})
	return out
}

func TestEveryChainRunsItsHooksOutermostFirst(t *testing.T) {
	j := &trail{}
	s := hooks.NewSet(everyHook{"a", j}, everyHook{"b", j}, everyHook{"c", j})
	want := []string{"a>", "b>", "c>", "call", "<c", "<b", "<a"}
	for chain, got := range chains(t, s, j) {
		assert.Equal(t, want, got, chain)
	}
}

func TestWithAddsHooksInsideAndLeavesTheSetAlone(t *testing.T) {
	j := &trail{}
	outer := hooks.NewSet(everyHook{"a", j})
	inner := outer.With(everyHook{"b", j}, nil, everyHook{"c", j})
	for chain, got := range chains(t, inner, j) {
		assert.Equal(t, []string{"a>", "b>", "c>", "call", "<c", "<b", "<a"}, got, chain)
	}
	for chain, got := range chains(t, outer, j) {
		assert.Equal(t, []string{"a>", "call", "<a"}, got, "%s: With made a new Set", chain)
	}

	var none *hooks.Set
	for chain, got := range chains(t, none.With(everyHook{"x", j}), j) {
		assert.Equal(t, []string{"x>", "call", "<x"}, got, "%s: a nil Set's With starts a Set", chain)
	}
}

func TestANilSetPassesEveryCallThrough(t *testing.T) {
	j := &trail{}
	var s *hooks.Set
	for chain, got := range chains(t, s, j) {
		assert.Equal(t, []string{"call"}, got, chain)
	}
	n, m, p, tl := s.Len()
	assert.Equal(t, [4]int{0, 0, 0, 0}, [4]int{n, m, p, tl})

	// Wrapping returns the very function it was given.
	model := hooks.ModelFunc(func(context.Context, *hooks.ModelCall) (*hooks.ModelResult, error) { return nil, nil })
	assert.Equal(t, reflect.ValueOf(model).Pointer(), reflect.ValueOf(s.WrapModel(model)).Pointer())
	assert.Equal(t, reflect.ValueOf(model).Pointer(), reflect.ValueOf(s.WrapProvider(model)).Pointer())
}

// modelOnly is a hook of the model chain alone.
type modelOnly struct{}

func (modelOnly) WrapModel(next hooks.ModelFunc) hooks.ModelFunc { return next }

// providerOnly is a hook of the provider chain alone.
type providerOnly struct{}

func (providerOnly) WrapProvider(next hooks.ModelFunc) hooks.ModelFunc { return next }

func TestNewSetPutsEachHookInTheChainsItImplements(t *testing.T) {
	j := &trail{}
	tests := []struct {
		name string
		hs   []any
		want [4]int // node, model, provider, tool
	}{
		{"nothing", nil, [4]int{}},
		{"nil and values that are no hook are left out", []any{nil, "a string", 42}, [4]int{}},
		{"a hook of every chain", []any{everyHook{"a", j}}, [4]int{1, 1, 1, 1}},
		{"a model hook", []any{modelOnly{}}, [4]int{0, 1, 0, 0}},
		{"a provider hook", []any{providerOnly{}}, [4]int{0, 0, 1, 0}},
		{"Funcs wrap nodes, models and tools but not providers", []any{hooks.Funcs{}}, [4]int{1, 1, 0, 1}},
		{"several", []any{modelOnly{}, everyHook{"a", j}, providerOnly{}}, [4]int{1, 2, 2, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, m, p, tl := hooks.NewSet(tt.hs...).Len()
			assert.Equal(t, tt.want, [4]int{n, m, p, tl})
		})
	}
}

func TestFuncsActBeforeAndAfterTheCall(t *testing.T) {
	ctx := context.Background()
	j := &trail{}
	boom := errors.New("boom")
	f := hooks.Funcs{
		BeforeNode: func(_ context.Context, n hooks.Node) error { j.add("before node " + n.ID); return nil },
		AfterNode: func(_ context.Context, n hooks.Node, route string, err error) {
			j.add("after node " + n.ID + " " + route + " " + err.Error())
		},
		BeforeModel: func(_ context.Context, c *hooks.ModelCall) error {
			j.add("before model")
			c.Messages = []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "rewritten")}
			return nil
		},
		AfterModel: func(_ context.Context, _ *hooks.ModelCall, res *hooks.ModelResult, err error) {
			assert.NoError(t, err)
			j.add("after model " + res.Response.Choices[0].Content)
		},
		BeforeTool: func(_ context.Context, c *hooks.ToolCall) error { j.add("before tool"); c.Input = "2+2"; return nil },
		AfterTool: func(_ context.Context, c *hooks.ToolCall, res *hooks.ToolResult, err error) {
			assert.NoError(t, err)
			j.add("after tool " + c.Input + "=" + res.Output)
		},
	}

	route, err := f.WrapNode(func(context.Context, hooks.Node) (string, error) { j.add("node"); return "r", boom })(ctx, hooks.Node{ID: "n"})
	assert.Equal(t, "r", route)
	require.ErrorIs(t, err, boom, "the node's error is returned")

	res, err := f.WrapModel(func(_ context.Context, c *hooks.ModelCall) (*hooks.ModelResult, error) {
		j.add("model " + c.Messages[0].Parts[0].(llms.TextContent).Text)
		return &hooks.ModelResult{Response: &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok"}}}}, nil
	})(ctx, &hooks.ModelCall{})
	require.NoError(t, err)
	assert.Equal(t, "ok", res.Response.Choices[0].Content)

	tres, err := f.WrapTool(func(_ context.Context, c *hooks.ToolCall) (*hooks.ToolResult, error) {
		j.add("tool " + c.Input)
		return &hooks.ToolResult{Output: "4"}, nil
	})(ctx, &hooks.ToolCall{Input: "1+1"})
	require.NoError(t, err)
	assert.Equal(t, "4", tres.Output)

	assert.Equal(t, []string{
		"before node n", "node", "after node n r boom",
		"before model", "model rewritten", "after model ok",
		"before tool", "tool 2+2", "after tool 2+2=4",
	}, j.lines())
}

func TestAFuncsBeforeErrorEndsTheCallWithoutTheRestOfTheChain(t *testing.T) {
	ctx := context.Background()
	refused := errors.New("refused")
	called, after := 0, 0
	f := hooks.Funcs{
		BeforeNode:  func(context.Context, hooks.Node) error { return refused },
		AfterNode:   func(context.Context, hooks.Node, string, error) { after++ },
		BeforeModel: func(context.Context, *hooks.ModelCall) error { return refused },
		AfterModel:  func(context.Context, *hooks.ModelCall, *hooks.ModelResult, error) { after++ },
		BeforeTool:  func(context.Context, *hooks.ToolCall) error { return refused },
		AfterTool:   func(context.Context, *hooks.ToolCall, *hooks.ToolResult, error) { after++ },
	}
	route, err := f.WrapNode(func(context.Context, hooks.Node) (string, error) { called++; return "r", nil })(ctx, hooks.Node{})
	assert.Same(t, refused, err)
	assert.Empty(t, route)
	res, err := f.WrapModel(func(context.Context, *hooks.ModelCall) (*hooks.ModelResult, error) {
		called++
		return &hooks.ModelResult{}, nil
	})(ctx, &hooks.ModelCall{})
	assert.Same(t, refused, err)
	assert.Nil(t, res)
	tres, err := f.WrapTool(func(context.Context, *hooks.ToolCall) (*hooks.ToolResult, error) {
		called++
		return &hooks.ToolResult{}, nil
	})(ctx, &hooks.ToolCall{})
	assert.Same(t, refused, err)
	assert.Nil(t, tres)
	assert.Zero(t, called, "the rest of the chain is not called")
	assert.Zero(t, after, "nor are the After functions")
}

func TestAFuncsAfterSeesTheFailureOfTheCall(t *testing.T) {
	boom := errors.New("boom")
	var seen error
	var seenRes *hooks.ModelResult
	f := hooks.Funcs{AfterModel: func(_ context.Context, _ *hooks.ModelCall, res *hooks.ModelResult, err error) {
		seenRes, seen = res, err
	}}
	partial := &hooks.ModelResult{Attempts: 3}
	res, err := f.WrapModel(func(context.Context, *hooks.ModelCall) (*hooks.ModelResult, error) { return partial, boom })(context.Background(), &hooks.ModelCall{})
	assert.Same(t, boom, err)
	assert.Same(t, partial, res)
	assert.Same(t, boom, seen)
	assert.Same(t, partial, seenRes)
}

func TestZeroFuncsLeaveTheChainAsItIs(t *testing.T) {
	var f hooks.Funcs
	node := hooks.NodeFunc(func(context.Context, hooks.Node) (string, error) { return "", nil })
	model := hooks.ModelFunc(func(context.Context, *hooks.ModelCall) (*hooks.ModelResult, error) { return nil, nil })
	tool := hooks.ToolFunc(func(context.Context, *hooks.ToolCall) (*hooks.ToolResult, error) { return nil, nil })
	assert.Equal(t, reflect.ValueOf(node).Pointer(), reflect.ValueOf(f.WrapNode(node)).Pointer())
	assert.Equal(t, reflect.ValueOf(model).Pointer(), reflect.ValueOf(f.WrapModel(model)).Pointer())
	assert.Equal(t, reflect.ValueOf(tool).Pointer(), reflect.ValueOf(f.WrapTool(tool)).Pointer())
}

func TestASetIsSafeForConcurrentCalls(t *testing.T) {
	j := &trail{}
	s := hooks.NewSet(everyHook{"a", j}, hooks.Funcs{BeforeModel: func(context.Context, *hooks.ModelCall) error { return nil }})
	fn := s.WrapModel(func(context.Context, *hooks.ModelCall) (*hooks.ModelResult, error) { return &hooks.ModelResult{}, nil })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := fn(context.Background(), &hooks.ModelCall{})
			assert.NoError(t, err)
			_ = s.With(modelOnly{})
		})
	}
	wg.Wait()
	assert.Len(t, j.lines(), 16)
}

func TestScopes(t *testing.T) {
	bg := context.Background()
	node := hooks.WithScope(bg, hooks.NodeScope(3, "act"))
	step := hooks.Branch(node, "step.E2")
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"outside any node", bg, ""},
		{"a node execution", node, "3:act"},
		{"a branch of it", step, "3:act/step.E2"},
		{"a branch of a branch", hooks.Branch(step, "sample.1"), "3:act/step.E2/sample.1"},
		{"a branch outside any node", hooks.Branch(bg, "sample.2"), "/sample.2"},
		{"WithScope replaces the scope", hooks.WithScope(step, hooks.NodeScope(4, "plan")), "4:plan"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, hooks.Scope(tt.ctx), tt.name)
	}
	assert.Equal(t, "3:act", hooks.Scope(node), "a branch leaves its parent's scope alone")
	assert.Equal(t, "1:solve", hooks.NodeScope(1, "solve"))
}
