package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
)

// Forker is the capability a state type needs to run fan-outs: Fork
// returns a deep copy of the state for one branch, which the branch alone
// reads and writes. Compile fails with ErrNoFork when a graph has a
// fan-out and its state type does not implement it.
type Forker[S any] interface {
	Fork() S
}

// Joiner is a node that closes the branches of a fan-out. A node added
// with AddNode that implements it is a join node: the branches of a
// fan-out run until they reach it, and its execution, once enough of them
// succeeded, merges them into the state instead of calling Run (Run is
// never called on a join).
type Joiner[S any] interface {
	Node[S]
	// Needs returns how many of n branches must succeed to satisfy the
	// join (n for all of them, 1 for the first); the result is clamped to
	// 1..n. Once that many succeeded, the others are cancelled; once so
	// many failed that it cannot be reached, the run fails.
	Needs(n int) int
	// Merge merges the branches into state, the state the fan-out forked
	// from, and returns the route the join takes. branches are in
	// declaration order; those that did not succeed in time carry an
	// error (a cancelled one matches ErrBranchCancelled).
	Merge(ctx context.Context, state S, branches []Branch[S]) (route string, err error)
}

// Branch is the outcome of one branch of a fan-out, as its join sees it.
type Branch[S any] struct {
	// ID identifies the branch in the run: the fan-out's step, a dot and
	// the branch's number from 1 ("3.2": the second branch of the fan-out
	// after the third node execution; "0.1" for a fan-out from START).
	ID string
	// Index is the branch's position in the fan-out, from 0; Start its
	// first node.
	Index int
	Start string
	// State is the branch's own copy of the state, as the branch left it.
	State S
	// Steps lists the node ids the branch executed, in order.
	Steps []string
	// Rank is the branch's place in completion order among the branches
	// that succeeded (1 for the first to finish); 0 when Err is set.
	Rank int
	// Err is the branch's failure, nil when it succeeded in time.
	Err error
}

// ErrBranchCancelled marks a branch that was stopped, or finished too
// late, because its join was already satisfied.
var ErrBranchCancelled = errors.New("branch cancelled: its join was already satisfied")

// ErrBranchFailed marks a run whose fan-out had too many failed branches
// for its join; the error is a *BranchError.
var ErrBranchFailed = errors.New("branch failed")

// BranchError is the failure of a fan-out: a branch failed and its join
// can no longer be satisfied. Err is the branch's error (usually a
// *NodeError naming the branch's node).
type BranchError struct {
	// Branch is the failed branch's id; Join the fan-out's join node.
	Branch, Join string
	// Failed counts the branches that failed, of Total; Need is how many
	// had to succeed.
	Failed, Total, Need int
	Err                 error
}

func (e *BranchError) Error() string {
	return fmt.Sprintf("%v: branch %s: %v (%d of %d branches failed; join %q needs %d)", ErrBranchFailed, e.Branch, e.Err, e.Failed, e.Total, e.Join, e.Need)
}

// Unwrap returns ErrBranchFailed and the branch's error.
func (e *BranchError) Unwrap() []error { return []error{ErrBranchFailed, e.Err} }

// successors returns the nodes id's edges lead to: the plain edge, the
// fan-out's branches and the routes, sorted by route.
func (g *Graph[S]) successors(id string) []string {
	e := g.edges[id]
	if e == nil {
		return nil
	}
	var out []string
	if e.plain != "" {
		out = append(out, e.plain)
	}
	out = append(out, e.fan...)
	for _, r := range sortedKeys(e.routes) {
		out = append(out, e.routes[r])
	}
	return out
}

// branchScan is what a branch reaches from its first node without
// passing a join.
type branchScan struct {
	nodes   []string // in visiting order
	joins   []string // sorted
	end     bool     // END is reached
	nested  string   // a node of the branch with a fan-out of its own
	unknown bool     // an edge to an undeclared node (reported elsewhere)
}

func (g *Graph[S]) scanBranch(first string) branchScan {
	var sc branchScan
	seen := map[string]bool{first: true}
	queue := []string{first}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		sc.nodes = append(sc.nodes, id)
		if e := g.edges[id]; e != nil && e.fan != nil && sc.nested == "" {
			sc.nested = id
		}
		for _, to := range g.successors(id) {
			entry := g.nodes[to]
			switch {
			case to == END:
				sc.end = true
			case entry == nil:
				sc.unknown = true
			case entry.join != nil:
				if !slices.Contains(sc.joins, to) {
					sc.joins = append(sc.joins, to)
				}
			case !seen[to]:
				seen[to] = true
				queue = append(queue, to)
			}
		}
	}
	slices.Sort(sc.joins)
	return sc
}

// checkFanOuts validates every fan-out and join: each branch reaches one
// join and never END, the branches of a fan-out reach the same join, no
// node belongs to two branches or is entered from outside its branch, and
// every join closes exactly one fan-out and is reached from its branches
// only. It returns the fan-outs by source.
func (g *Graph[S]) checkFanOuts() (map[string]fanOut, Errors) {
	var errs Errors
	fail := func(err error, node, target string) {
		errs = append(errs, &Error{Err: err, Node: node, Target: target})
	}
	fans := map[string]fanOut{}
	type place struct {
		source string
		branch int
	}
	owner := map[string]place{}   // branch node -> its fan-out and branch
	closes := map[string]string{} // join -> the fan-out source it closes
	for _, from := range append([]string{START}, g.order...) {
		e := g.edges[from]
		if e == nil || e.fan == nil {
			continue
		}
		join, ok := "", true
		nodes := make([][]string, len(e.fan))
		for i, t := range e.fan {
			entry := g.nodes[t]
			switch {
			case slices.Index(e.fan, t) < i:
				fail(fmt.Errorf("%w: the fan-out names %q twice", ErrBranchEntered, t), from, t)
				ok = false
				continue
			case t == END:
				fail(fmt.Errorf("%w: a branch goes straight to END", ErrBranchNoJoin), from, t)
				ok = false
				continue
			case entry == nil:
				ok = false // reported as ErrUnknownNode
				continue
			case entry.join != nil:
				fail(fmt.Errorf("%w: a branch goes straight to the join %q; a branch needs a node before its join", ErrBranchNoJoin, t), from, t)
				ok = false
				continue
			}
			sc := g.scanBranch(t)
			switch {
			case sc.unknown:
				ok = false
			case sc.nested != "":
				fail(fmt.Errorf("%w: node %q on the branch from %q fans out again; nested fan-outs are not supported", ErrNestedFanOut, sc.nested, t), from, t)
				ok = false
			case sc.end:
				fail(fmt.Errorf("%w: the branch from %q reaches END before a join node", ErrBranchNoJoin, t), from, t)
				ok = false
			case len(sc.joins) == 0:
				fail(fmt.Errorf("%w: the branch from %q reaches no join node", ErrBranchNoJoin, t), from, t)
				ok = false
			case len(sc.joins) > 1:
				fail(fmt.Errorf("%w: the branch from %q reaches the joins %q", ErrBranchesDiverge, t, sc.joins), from, t)
				ok = false
			case join != "" && sc.joins[0] != join:
				fail(fmt.Errorf("%w: the branch from %q reaches the join %q, the ones before it %q", ErrBranchesDiverge, t, sc.joins[0], join), from, t)
				ok = false
			default:
				join = sc.joins[0]
			}
			nodes[i] = sc.nodes
			for _, n := range sc.nodes {
				if prev, dup := owner[n]; dup {
					if prev.source == from {
						fail(fmt.Errorf("%w: node %q is on the branches from %q and %q; a node belongs to one branch (merge paths with a join)", ErrBranchEntered, n, g.edges[from].fan[prev.branch], t), from, n)
					} else {
						fail(fmt.Errorf("%w: node %q is on branches of the fan-outs from %q and %q", ErrBranchEntered, n, prev.source, from), from, n)
					}
					ok = false
					continue
				}
				owner[n] = place{from, i}
			}
		}
		if !ok || join == "" {
			continue
		}
		if prev, dup := closes[join]; dup {
			fail(fmt.Errorf("%w: the join %q already closes the fan-out from %q", ErrBranchesDiverge, join, prev), from, join)
			continue
		}
		closes[join] = from
		fans[from] = fanOut{targets: slices.Clone(e.fan), join: join, nodes: nodes}
	}
	// Nothing enters a branch but its fan-out, and a join is reached from
	// its branches only.
	for _, from := range append([]string{START}, g.order...) {
		e := g.edges[from]
		if e == nil {
			continue
		}
		// The fan-out's own edges start its branches; every other edge
		// into a branch must come from inside that branch.
		seq := slices.Collect(maps.Values(e.routes))
		if e.plain != "" {
			seq = append(seq, e.plain)
		}
		slices.Sort(seq)
		src, fromBranch := owner[from]
		for _, to := range slices.Compact(seq) {
			dst, inBranch := owner[to]
			switch {
			case inBranch && fromBranch && src == dst:
			case inBranch:
				fail(fmt.Errorf("%w: node %q enters the branch from %q of the fan-out from %q; only the fan-out may start a branch", ErrBranchEntered, from, g.edges[dst.source].fan[dst.branch], dst.source), from, to)
			case g.nodes[to] != nil && g.nodes[to].join != nil:
				if cl, ok := closes[to]; ok && (!fromBranch || src.source != cl) {
					fail(fmt.Errorf("%w: node %q leads to the join %q, which only the branches of the fan-out from %q may reach", ErrJoinNoBranches, from, to, cl), to, from)
				}
			}
		}
	}
	for _, id := range g.order {
		if g.nodes[id].join != nil {
			if _, ok := closes[id]; !ok && !slices.ContainsFunc(errs, func(e *Error) bool { return e.Target == id }) {
				fail(fmt.Errorf("%w: no fan-out's branches reach the join %q; fan out to several nodes with an edge whose to: is a list", ErrJoinNoBranches, id), id, "")
			}
		}
	}
	if slices.ContainsFunc(slices.Collect(maps.Values(g.edges)), func(e *edges) bool { return e.fan != nil }) {
		var zero S
		if _, ok := any(zero).(Forker[S]); !ok {
			fail(fmt.Errorf("%w: %T has no Fork method", ErrNoFork, zero), START, "")
		}
	}
	return fans, errs
}

// fork runs the branches of the fan-out f from the node from (executed as
// step of branch, or START) to its join and returns them, in declaration
// order, once the join is satisfied or can no longer be; the steps of
// the branches that succeeded are added to steps, in branch order.
func (r *runner[S]) fork(ctx context.Context, state S, from string, step int, branch string, limit int, steps *[]string, f fanOut) (out []Branch[S], err error) {
	r.emit(ctx, Event{Kind: EventFork, Step: step, Node: from, Branch: branch, Branches: f.targets, To: f.join})
	if r.cfg.forkWrap != nil {
		var done func(error)
		ctx, done = r.cfg.forkWrap(ctx, Fork{From: from, Step: step, Branch: branch, Branches: slices.Clone(f.targets), Join: f.join})
		defer func() { done(err) }()
	}
	forker, _ := any(state).(Forker[S]) // Compile checked S
	n := len(f.targets)
	need := min(max(r.c.nodes[f.join].join.Needs(n), 1), n)
	left := limit - len(*steps)
	bctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	prefix := ""
	if branch != "" {
		prefix = branch + "/"
	}
	out = make([]Branch[S], n)
	done := make(chan int, n)
	for i, t := range f.targets {
		out[i] = Branch[S]{ID: prefix + strconv.Itoa(step) + "." + strconv.Itoa(i+1), Index: i, Start: t, State: forker.Fork()}
		go func(b *Branch[S]) {
			defer func() { done <- b.Index }()
			// Nodes' panics are errors already (runNode); this one is the
			// wrap's or an observer's, which would otherwise end the
			// process from this goroutine.
			defer func() {
				if p := recover(); p != nil {
					b.Err = &NodeError{Node: b.Start, Err: fmt.Errorf("%w: branch %s: %v", ErrNodePanic, b.ID, p), Stack: string(debug.Stack())}
				}
			}()
			var bsteps []string
			_, err := r.walk(bctx, b.State, b.Start, nil, b.ID, left, &bsteps)
			b.Steps, b.Err = bsteps, err
		}(&out[i])
	}
	succeeded, failed := 0, 0
	decided := false
	var failure *Branch[S]
	for range n {
		b := &out[<-done]
		switch {
		case decided:
			// Too late: the join was satisfied, or the fan-out failed.
			b.Err = fmt.Errorf("branch %s: %w", b.ID, ErrBranchCancelled)
		case b.Err == nil:
			succeeded++
			b.Rank = succeeded
			if succeeded == need {
				decided = true
				cancel(ErrBranchCancelled)
			}
		default:
			failed++
			if failed > n-need {
				decided, failure = true, b
				cancel(fmt.Errorf("%w: branch %s", ErrBranchFailed, b.ID))
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("run stopped in the fan-out from %q: %w", from, context.Cause(ctx))
	}
	for _, b := range out {
		if b.Err == nil || failure != nil && b.Index == failure.Index {
			*steps = append(*steps, b.Steps...)
		}
	}
	if failure != nil {
		return out, &BranchError{Branch: failure.ID, Join: f.join, Failed: failed, Total: n, Need: need, Err: failure.Err}
	}
	return out, nil
}

// FanOut is one fan-out of a compiled graph.
type FanOut struct {
	// From is the node (or START) whose default route fans out.
	From string
	// Branches are each branch's nodes, in the fan-out's order; each
	// starts with the branch's first node.
	Branches [][]string
	// Join is the join node the branches reach.
	Join string
}

// FanOuts returns the graph's fan-outs: START's first, then by their
// source's declaration order.
func (c *Compiled[S]) FanOuts() []FanOut {
	var out []FanOut
	for _, from := range append([]string{START}, c.order...) {
		f, ok := c.fans[from]
		if !ok {
			continue
		}
		bs := make([][]string, len(f.nodes))
		for i, n := range f.nodes {
			bs[i] = slices.Clone(n)
		}
		out = append(out, FanOut{From: from, Branches: bs, Join: f.join})
	}
	return out
}
