package hooks

import (
	"context"
	"strconv"
)

// Set is the hooks of a run, in order: the first hook is the outermost of
// each chain (it acts first before the call and last after it). A nil
// *Set holds no hooks. A Set is immutable once built and safe for
// concurrent use.
type Set struct {
	node     []NodeHook
	model    []ModelHook
	provider []ProviderHook
	tool     []ToolHook
	// nested is the Set of node executions nested inside a node's
	// (WithNested); nil for s itself.
	nested *Set
}

// NewSet returns the Set of hs, in order. Each value joins every chain
// whose interface it implements (NodeHook, ModelHook, ProviderHook,
// ToolHook); nil values and values that implement none are left out.
func NewSet(hs ...any) *Set {
	s := &Set{}
	for _, h := range hs {
		s.add(h)
	}
	return s
}

func (s *Set) add(h any) {
	if h == nil {
		return
	}
	if n, ok := h.(NodeHook); ok {
		s.node = append(s.node, n)
	}
	if m, ok := h.(ModelHook); ok {
		s.model = append(s.model, m)
	}
	if p, ok := h.(ProviderHook); ok {
		s.provider = append(s.provider, p)
	}
	if t, ok := h.(ToolHook); ok {
		s.tool = append(s.tool, t)
	}
}

// With returns a new Set: s's hooks, then hs (inside them).
func (s *Set) With(hs ...any) *Set {
	out := &Set{}
	if s != nil {
		out.node = append(out.node, s.node...)
		out.model = append(out.model, s.model...)
		out.provider = append(out.provider, s.provider...)
		out.tool = append(out.tool, s.tool...)
	}
	for _, h := range hs {
		out.add(h)
	}
	return out
}

// WithNested returns a copy of s whose Nested is nested: the hooks of the
// node executions that run inside one of s's (a subgraph's nodes, a map
// item's, a parallel branch's), which may differ from the run's own (the
// journal does not journal their transitions, for one).
func (s *Set) WithNested(nested *Set) *Set {
	out := &Set{}
	if s != nil {
		*out = *s
	}
	out.nested = nested
	return out
}

// Nested returns the hooks of node executions nested inside s's (see
// WithNested): the Set given to WithNested, or s itself when none was.
func (s *Set) Nested() *Set {
	if s == nil || s.nested == nil {
		return s
	}
	return s.nested
}

// Len returns how many hooks of each chain s holds.
func (s *Set) Len() (node, model, provider, tool int) {
	if s == nil {
		return 0, 0, 0, 0
	}
	return len(s.node), len(s.model), len(s.provider), len(s.tool)
}

// WrapNode returns fn wrapped in s's NodeHooks.
func (s *Set) WrapNode(fn NodeFunc) NodeFunc {
	if s == nil {
		return fn
	}
	for i := len(s.node) - 1; i >= 0; i-- {
		fn = s.node[i].WrapNode(fn)
	}
	return fn
}

// WrapModel returns fn wrapped in s's ModelHooks.
func (s *Set) WrapModel(fn ModelFunc) ModelFunc {
	if s == nil {
		return fn
	}
	for i := len(s.model) - 1; i >= 0; i-- {
		fn = s.model[i].WrapModel(fn)
	}
	return fn
}

// WrapProvider returns fn wrapped in s's ProviderHooks.
func (s *Set) WrapProvider(fn ModelFunc) ModelFunc {
	if s == nil {
		return fn
	}
	for i := len(s.provider) - 1; i >= 0; i-- {
		fn = s.provider[i].WrapProvider(fn)
	}
	return fn
}

// WrapTool returns fn wrapped in s's ToolHooks.
func (s *Set) WrapTool(fn ToolFunc) ToolFunc {
	if s == nil {
		return fn
	}
	for i := len(s.tool) - 1; i >= 0; i-- {
		fn = s.tool[i].WrapTool(fn)
	}
	return fn
}

// Funcs is a hook made of plain functions, for hooks that act only before
// or after a call. Nil fields do nothing. A Before function's error ends
// the call with that error, without calling the rest of the chain.
type Funcs struct {
	// BeforeNode and AfterNode run around every node execution.
	BeforeNode func(ctx context.Context, n Node) error
	AfterNode  func(ctx context.Context, n Node, route string, err error)
	// BeforeModel may change the call (its messages, say) before it is
	// made; AfterModel sees its result (nil when err is not).
	BeforeModel func(ctx context.Context, call *ModelCall) error
	AfterModel  func(ctx context.Context, call *ModelCall, res *ModelResult, err error)
	// BeforeTool may change the call's input; AfterTool sees the result.
	BeforeTool func(ctx context.Context, call *ToolCall) error
	AfterTool  func(ctx context.Context, call *ToolCall, res *ToolResult, err error)
}

// WrapNode implements NodeHook.
func (f Funcs) WrapNode(next NodeFunc) NodeFunc {
	if f.BeforeNode == nil && f.AfterNode == nil {
		return next
	}
	return func(ctx context.Context, n Node) (string, error) {
		if f.BeforeNode != nil {
			if err := f.BeforeNode(ctx, n); err != nil {
				return "", err
			}
		}
		route, err := next(ctx, n)
		if f.AfterNode != nil {
			f.AfterNode(ctx, n, route, err)
		}
		return route, err
	}
}

// WrapModel implements ModelHook.
func (f Funcs) WrapModel(next ModelFunc) ModelFunc {
	if f.BeforeModel == nil && f.AfterModel == nil {
		return next
	}
	return func(ctx context.Context, call *ModelCall) (*ModelResult, error) {
		if f.BeforeModel != nil {
			if err := f.BeforeModel(ctx, call); err != nil {
				return nil, err
			}
		}
		res, err := next(ctx, call)
		if f.AfterModel != nil {
			f.AfterModel(ctx, call, res, err)
		}
		return res, err
	}
}

// WrapTool implements ToolHook.
func (f Funcs) WrapTool(next ToolFunc) ToolFunc {
	if f.BeforeTool == nil && f.AfterTool == nil {
		return next
	}
	return func(ctx context.Context, call *ToolCall) (*ToolResult, error) {
		if f.BeforeTool != nil {
			if err := f.BeforeTool(ctx, call); err != nil {
				return nil, err
			}
		}
		res, err := next(ctx, call)
		if f.AfterTool != nil {
			f.AfterTool(ctx, call, res, err)
		}
		return res, err
	}
}

// scopeKey is the context key of the call scope.
type scopeKey struct{}

// Scope returns the call scope of ctx: "" outside any node; the node
// execution's scope (NodeScope) inside one, refined by Branch for each
// branch of a fan-out. The journal keys its entries by scope, so that
// concurrent branches that make identical requests get back their own
// answers whatever order they run in.
func Scope(ctx context.Context) string {
	s, _ := ctx.Value(scopeKey{}).(string)
	return s
}

// WithScope returns ctx whose calls are in scope, replacing any scope of
// ctx. The pipeline gives each node execution its scope (NodeScope).
//
// The scope is one of the few values the engine passes in a context: it
// is per goroutine (a branch's), not per run, and every call below a
// branch must see it without each function passing it on.
func WithScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, scopeKey{}, scope)
}

// Branch returns ctx for one branch of a parallel fan-out, labelled (for
// example "sample.2" or "step.E3"): its scope is ctx's, then "/" and
// label.
func Branch(ctx context.Context, label string) context.Context {
	return WithScope(ctx, Scope(ctx)+"/"+label)
}

// NodeScope is the scope of the step-th node execution (from 1) of node.
func NodeScope(step int, node string) string { return strconv.Itoa(step) + ":" + node }
