package graph

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// DefaultMaxSteps bounds a run when no limit is given.
const DefaultMaxSteps = 100

// EventKind says what happened in a run.
type EventKind string

// The events a run reports to observers.
const (
	EventNodeStart EventKind = "node_start"
	EventNodeEnd   EventKind = "node_end"
	EventRoute     EventKind = "route"
	EventError     EventKind = "node_error"
	// EventFork reports a fan-out: Node (or START) ended and the
	// Branches start; To is their join.
	EventFork EventKind = "fork"
)

// Event is one observation of a run.
type Event struct {
	Kind EventKind
	// Step is the 1-based index of the node execution.
	Step int
	// Node is the node the event is about.
	Node string
	// Branch is the id of the fan-out branch the node ran in (Branch.ID);
	// "" on the main line. Step counts within the branch.
	Branch string
	// Branches are the branches' first nodes, for the EventFork of a
	// fan-out.
	Branches []string
	// Route is the route returned, for EventRoute and EventNodeEnd.
	Route string
	// To is the next node, for EventRoute.
	To string
	// Elapsed is the node's run time, for EventNodeEnd and EventError.
	Elapsed time.Duration
	// Err is the node's error, for EventError.
	Err error
}

// Observer receives run events synchronously, one at a time, in order
// within each branch. It must not block for long: the run (and every
// branch) waits for it.
type Observer interface {
	Observe(ctx context.Context, e Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(ctx context.Context, e Event)

// Observe calls f.
func (f ObserverFunc) Observe(ctx context.Context, e Event) { f(ctx, e) }

// RunOption configures one run.
type RunOption func(*runConfig)

type runConfig struct {
	maxSteps    int
	maxParallel int
	observers   []Observer
	wrap        ExecWrap
	forkWrap    ForkWrap
}

// Fork is one fan-out of a run, as a ForkWrap sees it.
type Fork struct {
	// From is the node (or START) whose route fans out; Step its
	// execution's number and Branch the branch it ran in ("" on the main
	// line).
	From   string
	Step   int
	Branch string
	// Branches are the branches' first nodes; Join the join node.
	Branches []string
	Join     string
}

// ForkWrap wraps every fan-out of a run: it returns the context its
// branches run in and a function called with the fan-out's outcome once
// the join is satisfied or failed. The pipeline opens a span there, so
// that the branches' spans nest under it.
type ForkWrap func(ctx context.Context, f Fork) (context.Context, func(err error))

// WithForkWrap wraps every fan-out of the run in w. Optional. Default:
// none.
func WithForkWrap(w ForkWrap) RunOption {
	return func(c *runConfig) { c.forkWrap = w }
}

// NodeWrap wraps every node execution of a run: it is given the
// execution's number in the run (from 1), the node's id and run, which
// executes the node with the context it is given; it returns the route
// the execution takes. It may act before and after run, and its error
// fails the run (wrapped in a *NodeError naming the node when it is not
// one already). The pipeline runs its hooks (the journal, spans) this
// way.
type NodeWrap func(ctx context.Context, step int, node string, run func(context.Context) (string, error)) (string, error)

// WithNodeWrap wraps every node execution of the run in w. Optional.
// Default: none. A later WithNodeWrap replaces an earlier one.
func WithNodeWrap(w NodeWrap) RunOption {
	return func(c *runConfig) {
		c.wrap = func(ctx context.Context, x Exec, run func(context.Context) (string, error)) (string, error) {
			return w(ctx, x.Step, x.Node, run)
		}
	}
}

// Exec is one node execution, as an ExecWrap sees it.
type Exec struct {
	// Step is the execution's number: in the run (from 1) on the main
	// line, in its branch (from 1) inside a branch.
	Step int
	// Node is the node's id.
	Node string
	// Branch is the id of the branch the execution belongs to (see
	// Branch.ID); "" on the main line. Step and Branch together name the
	// execution in the run whatever order branches run in.
	Branch string
}

// ExecWrap is NodeWrap with the branch of the execution: it wraps every
// node execution of a run, merges of joins included.
type ExecWrap func(ctx context.Context, x Exec, run func(context.Context) (string, error)) (string, error)

// WithExecWrap wraps every node execution of the run in w, which is told
// the execution's branch. Optional. Default: none. It replaces an earlier
// WithNodeWrap or WithExecWrap.
func WithExecWrap(w ExecWrap) RunOption {
	return func(c *runConfig) { c.wrap = w }
}

// DefaultMaxParallel is how many node executions of fan-out branches may
// run at once in one run when WithMaxParallel does not say.
const DefaultMaxParallel = 8

// WithMaxParallel bounds how many node executions of fan-out branches
// run at once in the run (the main line's one is not counted). Optional.
// Defaults to DefaultMaxParallel (8). Values below 1 mean the default.
func WithMaxParallel(n int) RunOption {
	return func(c *runConfig) {
		if n > 0 {
			c.maxParallel = n
		}
	}
}

// WithMaxSteps bounds the number of node executions. Optional. Defaults to
// DefaultMaxSteps (100). Values below 1 mean the default.
func WithMaxSteps(n int) RunOption {
	return func(c *runConfig) {
		if n > 0 {
			c.maxSteps = n
		}
	}
}

// WithObserver adds an observer of run events.
func WithObserver(o Observer) RunOption {
	return func(c *runConfig) { c.observers = append(c.observers, o) }
}

// Result describes a finished run.
type Result struct {
	// Steps lists the node ids executed, in order; the steps of a
	// fan-out's branches come in branch order (each branch's in its own
	// order), those of branches cancelled or failed in a fan-out that
	// succeeded left out.
	Steps []string
}

// MaxStepsError is returned when a run hits its step limit. It carries the
// steps taken so far.
type MaxStepsError struct {
	Limit int
	Steps []string
}

func (e *MaxStepsError) Error() string {
	last := ""
	if n := len(e.Steps); n > 0 {
		last = fmt.Sprintf(" (last node %q)", e.Steps[n-1])
	}
	return fmt.Sprintf("%v: %d node executions%s; raise limits.max_steps or give the loop an exit", ErrMaxSteps, e.Limit, last)
}

// Unwrap returns ErrMaxSteps.
func (e *MaxStepsError) Unwrap() error { return ErrMaxSteps }

// NodeError is a failure inside a node. Err is the node's error, or
// ErrNodePanic wrapped with the panic value.
type NodeError struct {
	Node  string
	Step  int
	Err   error
	Stack string
}

func (e *NodeError) Error() string { return fmt.Sprintf("node %q: %v", e.Node, e.Err) }

// Unwrap returns the node's error.
func (e *NodeError) Unwrap() error { return e.Err }

// Run executes the graph on state from START until END. It returns the steps
// taken, also on error. Cancelling ctx stops the run before the next node and
// is passed to the running node, which must honour it.
//
// A fan-out (AddFanOut) runs its branches concurrently, each on its own
// fork of state (Forker) and in its own goroutine, at most
// WithMaxParallel node executions of branches at a time; the run goes on
// at the fan-out's join, whose execution merges them (Joiner). Each
// branch counts its own steps against what the step limit leaves at the
// fan-out, and the steps of the branches that succeeded are then added
// to the run's in branch order, so the count does not depend on which
// branch finished first. Observers are called one at a time, also from
// branches (Event.Branch says which).
func (c *Compiled[S]) Run(ctx context.Context, state S, opts ...RunOption) (Result, error) {
	cfg := runConfig{maxSteps: DefaultMaxSteps, maxParallel: DefaultMaxParallel}
	for _, o := range opts {
		o(&cfg)
	}
	r := &runner[S]{c: c, cfg: cfg}
	if len(c.fans) > 0 {
		r.sem = make(chan struct{}, cfg.maxParallel)
	}
	res := Result{Steps: make([]string, 0, 16)}
	cur, pending := c.first, []Branch[S](nil)
	if f, ok := c.fans[START]; ok {
		var err error
		if pending, err = r.fork(ctx, state, START, 0, "", cfg.maxSteps, &res.Steps, f); err != nil {
			return res, err
		}
		cur = f.join
	}
	_, err := r.walk(ctx, state, cur, pending, "", cfg.maxSteps, &res.Steps)
	return res, err
}

// runner is one run's walk through the graph.
type runner[S any] struct {
	c   *Compiled[S]
	cfg runConfig
	// sem bounds the node executions of branches in flight.
	sem chan struct{}
	// emitMu makes observers see one event at a time.
	emitMu sync.Mutex
}

func (r *runner[S]) emit(ctx context.Context, e Event) {
	if r.cfg.observers == nil {
		return
	}
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	for _, o := range r.cfg.observers {
		o.Observe(ctx, e)
	}
}

// walk runs from the node cur until END, or, in a branch, until the
// branch's join; it returns where it stopped. pending are the branches
// the join at cur merges, when cur is a join. steps collects the node ids
// executed; limit bounds how many.
func (r *runner[S]) walk(ctx context.Context, state S, cur string, pending []Branch[S], branch string, limit int, steps *[]string) (string, error) {
	for cur != END {
		entry := r.c.nodes[cur]
		if branch != "" && entry.join != nil {
			return cur, nil
		}
		if err := ctx.Err(); err != nil {
			return cur, fmt.Errorf("run stopped before node %q: %w", cur, context.Cause(ctx))
		}
		if len(*steps) >= limit {
			return cur, &MaxStepsError{Limit: r.cfg.maxSteps, Steps: *steps}
		}
		*steps = append(*steps, cur)
		step := len(*steps)
		exec := func(ctx context.Context) (string, error) { return runNode(ctx, entry, state, step) }
		if entry.join != nil {
			bs := pending
			exec = func(ctx context.Context) (string, error) { return mergeNode(ctx, entry, state, step, bs) }
			pending = nil
		}
		route, err := r.exec(ctx, entry, step, branch, exec)
		if err != nil {
			return cur, err
		}
		if f, ok := r.c.fans[cur]; ok && route == DefaultRoute {
			bs, err := r.fork(ctx, state, cur, step, branch, limit, steps, f)
			if err != nil {
				return cur, err
			}
			cur, pending = f.join, bs
			continue
		}
		next, _ := r.c.next(cur, route)
		r.emit(ctx, Event{Kind: EventRoute, Step: step, Node: cur, Branch: branch, Route: route, To: next})
		cur = next
	}
	return END, nil
}

// exec runs one node execution through the run's wrap and reports it to
// the observers; the error is a *NodeError.
func (r *runner[S]) exec(ctx context.Context, entry *nodeEntry[S], step int, branch string, run func(context.Context) (string, error)) (string, error) {
	cur := entry.id
	if branch != "" {
		// Branches share the run's bound on node executions in flight.
		select {
		case r.sem <- struct{}{}:
			defer func() { <-r.sem }()
		case <-ctx.Done():
			return "", &NodeError{Node: cur, Step: step, Err: fmt.Errorf("run stopped before node %q: %w", cur, context.Cause(ctx))}
		}
	}
	r.emit(ctx, Event{Kind: EventNodeStart, Step: step, Node: cur, Branch: branch})
	began := time.Now()
	var (
		route string
		err   error
	)
	if r.cfg.wrap == nil {
		route, err = run(ctx)
	} else {
		route, err = r.cfg.wrap(ctx, Exec{Step: step, Node: cur, Branch: branch}, run)
		var ne *NodeError
		if err != nil && !errors.As(err, &ne) {
			err = &NodeError{Node: cur, Step: step, Err: err}
		}
	}
	elapsed := time.Since(began)
	if err == nil {
		if _, ok := r.c.next(cur, route); !ok && !(route == DefaultRoute && r.c.fans[cur].join != "") {
			err = &NodeError{Node: cur, Step: step, Err: fmt.Errorf("%w: %q (declared: %v)", ErrBadRoute, route, entry.routes)}
		}
	}
	if err != nil {
		r.emit(ctx, Event{Kind: EventError, Step: step, Node: cur, Branch: branch, Elapsed: elapsed, Err: err})
		return route, err
	}
	r.emit(ctx, Event{Kind: EventNodeEnd, Step: step, Node: cur, Branch: branch, Route: route, Elapsed: elapsed})
	return route, nil
}

func (c *Compiled[S]) next(from, route string) (string, bool) {
	e := c.edges[from]
	if e == nil {
		return "", false
	}
	if route == DefaultRoute {
		return e.plain, e.plain != ""
	}
	to, ok := e.routes[route]
	return to, ok
}

func runNode[S any](ctx context.Context, entry *nodeEntry[S], state S, step int) (string, error) {
	return guarded(entry.id, step, func() (string, error) { return entry.node.Run(ctx, state) })
}

// mergeNode is a join's execution: it merges the branches, turning a
// panic into an error as runNode does.
func mergeNode[S any](ctx context.Context, entry *nodeEntry[S], state S, step int, branches []Branch[S]) (string, error) {
	return guarded(entry.id, step, func() (string, error) { return entry.join.Merge(ctx, state, branches) })
}

// guarded runs execution step of node id: a panic becomes an error
// matching ErrNodePanic, and an error a *NodeError naming the node.
func guarded(id string, step int, run func() (string, error)) (route string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &NodeError{Node: id, Step: step, Err: fmt.Errorf("%w: %v", ErrNodePanic, p), Stack: string(debug.Stack())}
		}
	}()
	route, err = run()
	if err != nil {
		var ne *NodeError
		if errors.As(err, &ne) && ne.Node == id {
			return route, err
		}
		return route, &NodeError{Node: id, Step: step, Err: err}
	}
	return route, nil
}
