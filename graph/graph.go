// Package graph is planner's generic graph runtime. A graph is a set of nodes
// joined by plain and labelled edges between the virtual START and END nodes.
// Compile validates the structure (with github.com/dominikbraun/graph) before
// anything runs; Run executes one node at a time in a deterministic order,
// bounded by a step limit, honouring context cancellation and turning node
// panics into errors that name the node. A fan-out (AddFanOut) is the one
// exception: its branches run concurrently, each on its own fork of the
// state, until a join node (Joiner) merges them in branch order.
//
// The package knows nothing about language models: the state type S is
// whatever the caller runs on, usually a pointer that nodes mutate.
package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	dgraph "github.com/dominikbraun/graph"
)

// START and END are the virtual entry and exit nodes.
const (
	START = "START"
	END   = "END"
)

// DefaultRoute is the route a node returns to follow its plain edge.
const DefaultRoute = ""

// Node is one step of a graph. Run returns the route to follow: "" selects
// the node's plain edge, any other value must be one of the routes the node
// declared when it was added.
type Node[S any] interface {
	Run(ctx context.Context, state S) (route string, err error)
}

// NodeFunc adapts a function to the Node interface.
type NodeFunc[S any] func(ctx context.Context, state S) (string, error)

// Run calls f.
func (f NodeFunc[S]) Run(ctx context.Context, state S) (string, error) { return f(ctx, state) }

// Sentinel errors. Compile and Run wrap them in *Error or *NodeError so
// callers can test with errors.Is and still read which node is at fault.
var (
	// ErrDuplicateNode means two nodes share an id.
	ErrDuplicateNode = errors.New("duplicate node id")
	// ErrReservedID means a node used the id START or END.
	ErrReservedID = errors.New("reserved node id")
	// ErrUnknownNode means an edge names a node that does not exist.
	ErrUnknownNode = errors.New("unknown node")
	// ErrUnreachable means a node cannot be reached from START.
	ErrUnreachable = errors.New("node unreachable from START")
	// ErrNoPathToEnd means END cannot be reached from a node.
	ErrNoPathToEnd = errors.New("no path from node to END")
	// ErrUnmappedRoute means a node declares a route that no edge maps.
	ErrUnmappedRoute = errors.New("route not mapped")
	// ErrUndeclaredRoute means an edge maps a route the node never emits.
	ErrUndeclaredRoute = errors.New("route not declared by node")
	// ErrDuplicateEdge means a node's plain edge or a route is mapped twice.
	ErrDuplicateEdge = errors.New("edge defined twice")
	// ErrNoStart means nothing leaves START.
	ErrNoStart = errors.New("no edge from START")
	// ErrMaxSteps means a run exceeded its step limit; the error is a *MaxStepsError.
	ErrMaxSteps = errors.New("step limit exceeded")
	// ErrNodePanic means a node panicked; the error is a *NodeError.
	ErrNodePanic = errors.New("node panicked")
	// ErrBadRoute means a node returned a route it did not declare at run time.
	ErrBadRoute = errors.New("node returned an unknown route")
	// ErrBranchNoJoin means a branch of a fan-out reaches END, or another
	// fan-out, without passing a join node first.
	ErrBranchNoJoin = errors.New("branch reaches no join")
	// ErrBranchesDiverge means the branches of one fan-out do not all
	// reach the same join node.
	ErrBranchesDiverge = errors.New("branches of a fan-out do not reach the same join")
	// ErrJoinNoBranches means a join node is not the join of any fan-out,
	// or is reached from outside its fan-out's branches.
	ErrJoinNoBranches = errors.New("join without branches")
	// ErrBranchEntered means a node of a branch is reached from outside
	// that branch (from another branch or from the main line), or a
	// fan-out names a node twice or names END or a join directly.
	ErrBranchEntered = errors.New("node of a branch entered from outside it")
	// ErrNestedFanOut means a node inside a branch has a fan-out of its
	// own; nested fan-outs are not supported.
	ErrNestedFanOut = errors.New("fan-out inside a branch")
	// ErrNoFork means the graph has a fan-out but its state type does not
	// implement Forker.
	ErrNoFork = errors.New("state type cannot fork")
)

// Error is a structural error found by Compile. Node names the node at fault
// and Route the route label, when one is involved.
type Error struct {
	Err   error
	Node  string
	Route string
	// Target is the missing node an edge points to, for ErrUnknownNode.
	Target string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "node %q", e.Node)
	if e.Route != "" {
		fmt.Fprintf(&b, ": route %q", e.Route)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Target != "" {
		fmt.Fprintf(&b, " %q", e.Target)
	}
	switch {
	case errors.Is(e.Err, ErrUnmappedRoute):
		b.WriteString(" (map it to a node under the edge's to:)")
	case errors.Is(e.Err, ErrUnreachable):
		b.WriteString(" (add an edge that leads to it, or remove it)")
	case errors.Is(e.Err, ErrNoPathToEnd):
		b.WriteString(" (add an edge from it, or from a node after it, to END)")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Errors is a list of structural errors; Compile reports all it finds.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap lets errors.Is and errors.As look at every error in the list.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

type nodeEntry[S any] struct {
	id     string
	node   Node[S]
	join   Joiner[S] // node as a Joiner, nil when it is not one
	routes []string  // declared non-default routes, in declaration order
	order  int
}

type edges struct {
	plain  string            // target of the default route, "" if none
	fan    []string          // the branches of a fan-out default route, nil if none
	routes map[string]string // route label -> target
}

// fanOut is a validated fan-out: its branches' first nodes, in
// declaration order, and the join they all reach.
type fanOut struct {
	targets []string
	join    string
	nodes   [][]string // each branch's nodes, its first node first
}

// Graph is a graph under construction. Add nodes and edges, then Compile.
// A Graph is not safe for concurrent mutation.
type Graph[S any] struct {
	nodes map[string]*nodeEntry[S]
	order []string
	edges map[string]*edges
	errs  Errors
}

// New returns an empty graph.
func New[S any]() *Graph[S] {
	return &Graph[S]{nodes: map[string]*nodeEntry[S]{}, edges: map[string]*edges{}}
}

// AddNode adds a node with the non-default routes it can return. Errors are
// collected and reported by Compile, so calls can be chained.
func (g *Graph[S]) AddNode(id string, n Node[S], routes ...string) *Graph[S] {
	switch {
	case id == START || id == END:
		g.errs = append(g.errs, &Error{Err: ErrReservedID, Node: id})
		return g
	case id == "":
		g.errs = append(g.errs, &Error{Err: fmt.Errorf("empty node id: %w", ErrUnknownNode), Node: id})
		return g
	}
	if _, dup := g.nodes[id]; dup {
		g.errs = append(g.errs, &Error{Err: ErrDuplicateNode, Node: id})
		return g
	}
	j, _ := n.(Joiner[S])
	g.nodes[id] = &nodeEntry[S]{id: id, node: n, join: j, routes: append([]string(nil), routes...), order: len(g.order)}
	g.order = append(g.order, id)
	return g
}

func (g *Graph[S]) edgesOf(from string) *edges {
	e := g.edges[from]
	if e == nil {
		e = &edges{routes: map[string]string{}}
		g.edges[from] = e
	}
	return e
}

// AddEdge adds the plain (default-route) edge from one node to another.
func (g *Graph[S]) AddEdge(from, to string) *Graph[S] {
	e := g.edgesOf(from)
	if e.plain != "" || e.fan != nil {
		g.errs = append(g.errs, &Error{Err: ErrDuplicateEdge, Node: from})
		return g
	}
	e.plain = to
	return g
}

// AddFanOut makes the plain (default-route) edge of from a fan-out: when
// from ends on its default route (or, for START, when the run begins), the
// branches starting at each of to run concurrently, each on its own copy
// of the state (Forker), until they reach their join node (a Joiner),
// which merges them. Every branch of one fan-out must reach the same
// join, and nothing else may enter a branch. One target is a plain edge.
func (g *Graph[S]) AddFanOut(from string, to ...string) *Graph[S] {
	if len(to) == 1 {
		return g.AddEdge(from, to[0])
	}
	e := g.edgesOf(from)
	if e.plain != "" || e.fan != nil || len(to) == 0 {
		g.errs = append(g.errs, &Error{Err: ErrDuplicateEdge, Node: from})
		return g
	}
	e.fan = slices.Clone(to)
	return g
}

// AddRoute maps one of a node's routes to a target node.
func (g *Graph[S]) AddRoute(from, route, to string) *Graph[S] {
	if route == DefaultRoute {
		return g.AddEdge(from, to)
	}
	e := g.edgesOf(from)
	if _, dup := e.routes[route]; dup {
		g.errs = append(g.errs, &Error{Err: ErrDuplicateEdge, Node: from, Route: route})
		return g
	}
	e.routes[route] = to
	return g
}

// Compiled is a validated, immutable graph ready to run. It is safe for
// concurrent use by several runs, each with its own state.
type Compiled[S any] struct {
	nodes  map[string]*nodeEntry[S]
	order  []string
	edges  map[string]*edges
	cycles [][]string
	first  string
	// fans are the validated fan-outs by source node (START included).
	fans map[string]fanOut
}

// Compile validates the graph and returns it ready to run. All structural
// problems found are returned together as Errors.
func (g *Graph[S]) Compile() (*Compiled[S], error) {
	errs := append(Errors(nil), g.errs...)
	exists := func(id string) bool { _, ok := g.nodes[id]; return ok || id == END }

	dg := dgraph.New(dgraph.StringHash, dgraph.Directed())
	rev := dgraph.New(dgraph.StringHash, dgraph.Directed())
	for _, id := range append([]string{START, END}, g.order...) {
		_ = dg.AddVertex(id)
		_ = rev.AddVertex(id)
	}
	link := func(from, to string) {
		// Multiple routes may lead to the same target; the structural graph
		// only needs one edge.
		if err := dg.AddEdge(from, to); err != nil && !errors.Is(err, dgraph.ErrEdgeAlreadyExists) {
			errs = append(errs, &Error{Err: fmt.Errorf("adding edge to %q: %w", to, err), Node: from})
		}
		_ = rev.AddEdge(to, from)
	}

	sources := append([]string{START}, g.order...)
	for _, from := range sources {
		e := g.edges[from]
		if e == nil {
			continue
		}
		if e.plain != "" {
			if !exists(e.plain) {
				errs = append(errs, &Error{Err: ErrUnknownNode, Node: from, Target: e.plain})
			} else {
				link(from, e.plain)
			}
		}
		for _, to := range e.fan {
			if !exists(to) {
				errs = append(errs, &Error{Err: ErrUnknownNode, Node: from, Target: to})
			} else {
				link(from, to)
			}
		}
		for _, route := range sortedKeys(e.routes) {
			to := e.routes[route]
			if from != START && !slices.Contains(g.nodes[from].routes, route) {
				errs = append(errs, &Error{Err: ErrUndeclaredRoute, Node: from, Route: route})
				continue
			}
			if !exists(to) {
				errs = append(errs, &Error{Err: ErrUnknownNode, Node: from, Route: route, Target: to})
				continue
			}
			link(from, to)
		}
	}
	// Edges from nodes that do not exist.
	for _, from := range sortedKeys(g.edges) {
		if from == START {
			continue
		}
		if _, ok := g.nodes[from]; !ok {
			errs = append(errs, &Error{Err: ErrUnknownNode, Node: from, Target: from})
		}
	}
	start := g.edges[START]
	if start == nil || (start.plain == "" && start.fan == nil) {
		errs = append(errs, &Error{Err: ErrNoStart, Node: START})
	}
	// Every declared route must be mapped; a node with no plain edge must
	// have routes.
	for _, id := range g.order {
		e := g.edges[id]
		for _, r := range g.nodes[id].routes {
			if e == nil || e.routes[r] == "" {
				errs = append(errs, &Error{Err: ErrUnmappedRoute, Node: id, Route: r})
			}
		}
	}

	fans, ferrs := g.checkFanOuts()
	errs = append(errs, ferrs...)

	reach := reachable(dg, START)
	back := reachable(rev, END)
	for _, id := range g.order {
		if !reach[id] {
			errs = append(errs, &Error{Err: ErrUnreachable, Node: id})
		} else if !back[id] {
			errs = append(errs, &Error{Err: ErrNoPathToEnd, Node: id})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}

	// Copy the tables so that later changes to g cannot reach c.
	es := make(map[string]*edges, len(g.edges))
	for from, e := range g.edges {
		es[from] = &edges{plain: e.plain, fan: slices.Clone(e.fan), routes: maps.Clone(e.routes)}
	}
	c := &Compiled[S]{nodes: maps.Clone(g.nodes), order: slices.Clone(g.order), edges: es, first: start.plain, fans: fans}
	c.cycles = cycles(dg, g.order)
	return c, nil
}

func reachable(g dgraph.Graph[string, string], from string) map[string]bool {
	seen := map[string]bool{}
	_ = dgraph.BFS(g, from, func(v string) bool {
		seen[v] = true
		return false
	})
	return seen
}

// cycles lists the strongly connected components with more than one node,
// or a node with a self-loop, each in node declaration order.
func cycles(g dgraph.Graph[string, string], order []string) [][]string {
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	sccs, err := dgraph.StronglyConnectedComponents(g)
	if err != nil {
		return nil
	}
	adj, _ := g.AdjacencyMap()
	var out [][]string
	for _, comp := range sccs {
		if len(comp) == 1 {
			if _, self := adj[comp[0]][comp[0]]; !self {
				continue
			}
		}
		sort.Slice(comp, func(i, j int) bool { return pos[comp[i]] < pos[comp[j]] })
		out = append(out, comp)
	}
	sort.Slice(out, func(i, j int) bool { return pos[out[i][0]] < pos[out[j][0]] })
	return out
}

// Cycles returns the graph's cycles (strongly connected components), each
// listed in node declaration order. Cycles are legal; the run-time step
// limit bounds them.
func (c *Compiled[S]) Cycles() [][]string {
	out := make([][]string, len(c.cycles))
	for i, cy := range c.cycles {
		out[i] = append([]string(nil), cy...)
	}
	return out
}

// Nodes returns the node ids in declaration order.
func (c *Compiled[S]) Nodes() []string { return append([]string(nil), c.order...) }

// Edge is one edge of a compiled graph, for rendering.
type Edge struct {
	From, To string
	// Route is the label; empty for a plain edge.
	Route string
	// FanOut is true for each edge of a fan-out: From's default route runs
	// all of them concurrently.
	FanOut bool
}

// Edges returns every edge in a stable order: START first, then nodes in
// declaration order; per node the plain edge first, then routes sorted.
func (c *Compiled[S]) Edges() []Edge {
	var out []Edge
	for _, from := range append([]string{START}, c.order...) {
		e := c.edges[from]
		if e == nil {
			continue
		}
		if e.plain != "" {
			out = append(out, Edge{From: from, To: e.plain})
		}
		for _, to := range e.fan {
			out = append(out, Edge{From: from, To: to, FanOut: true})
		}
		for _, r := range sortedKeys(e.routes) {
			out = append(out, Edge{From: from, To: e.routes[r], Route: r})
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
