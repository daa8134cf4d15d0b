package plan

import (
	"container/heap"
	"fmt"
	"iter"
	"slices"
	"strings"
)

// The dependency analysis below is linear in the size of the plan: a plan
// comes from a model reply, and a reply alone must not be able to make
// validation slow. It does not use dominikbraun/graph (the graph package's
// library): its PreventCycles trait searches the graph on every AddEdge, its
// TopologicalSort rescans every vertex's predecessors for each vertex it
// places, and even without either, building a 3,000-step plan whose steps
// depend on all earlier ones takes minutes and gigabytes in its store.

// workCounter counts the work of the dependency analysis: the vertices and
// dependency entries (edges) it visits. Tests use it to bound that work; a
// nil counter counts nothing.
type workCounter struct {
	vertices, edges int
}

func (w *workCounter) vertex() {
	if w != nil {
		w.vertices++
	}
}

func (w *workCounter) edge(n int) {
	if w != nil {
		w.edges += n
	}
}

// depGraph is a plan's dependency graph. Its vertices are numbered from 0;
// deps[v] lists the vertices v waits for, once per dependency entry.
type depGraph struct {
	deps [][]int
	work *workCounter
}

// readyQueue holds the vertices whose dependencies have all been placed.
type readyQueue interface {
	add(v int)
	next() (v int, ok bool)
}

// anyReady is a readyQueue that returns the ready vertices in any order.
type anyReady []int

func (q *anyReady) add(v int) { *q = append(*q, v) }

func (q *anyReady) next() (int, bool) {
	n := len(*q)
	if n == 0 {
		return 0, false
	}
	v := (*q)[n-1]
	*q = (*q)[:n-1]
	return v, true
}

// earliestReady is a readyQueue that returns the lowest ready vertex first,
// a min-heap of vertex numbers.
type earliestReady struct {
	h positionHeap
}

func (q *earliestReady) add(v int) { heap.Push(&q.h, v) }

func (q *earliestReady) next() (int, bool) {
	if q.h.Len() == 0 {
		return 0, false
	}
	return heap.Pop(&q.h).(int), true
}

// positionHeap implements heap.Interface over vertex numbers, lowest on top.
type positionHeap []int

func (h positionHeap) Len() int           { return len(h) }
func (h positionHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h positionHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *positionHeap) Push(x any)        { *h = append(*h, x.(int)) }

func (h *positionHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// sort orders the vertices so that each comes after its dependencies
// (Kahn's algorithm): it places a vertex taken from ready, then adds to
// ready the vertices that no longer wait for anything. Vertices on a cycle,
// or waiting for one, are left out of the result, which is then shorter
// than the graph. It visits each vertex and dependency entry a constant
// number of times, plus ready's cost.
func (g *depGraph) sort(ready readyQueue) []int {
	n := len(g.deps)
	waiting := make([]int, n)
	// The vertices waiting for v are dependents[first[v]:first[v+1]].
	first := make([]int, n+1)
	for v, ds := range g.deps {
		g.work.edge(len(ds))
		waiting[v] = len(ds)
		for _, d := range ds {
			first[d+1]++
		}
	}
	for v := range n {
		first[v+1] += first[v]
	}
	dependents := make([]int, first[n])
	fill := slices.Clone(first[:n])
	for v, ds := range g.deps {
		g.work.edge(len(ds))
		for _, d := range ds {
			dependents[fill[d]] = v
			fill[d]++
		}
	}
	for v := range n {
		if waiting[v] == 0 {
			ready.add(v)
		}
	}
	order := make([]int, 0, n)
	for {
		v, ok := ready.next()
		if !ok {
			return order
		}
		g.work.vertex()
		order = append(order, v)
		next := dependents[first[v]:first[v+1]]
		g.work.edge(len(next))
		for _, w := range next {
			if waiting[w]--; waiting[w] == 0 {
				ready.add(w)
			}
		}
	}
}

// cycles returns dependency cycles among the vertices that sort left out of
// placed (its result). Each cycle lists vertices that each depend on the
// next, the last on the first. Every vertex left out waits for another one
// left out, so a walk from it along such dependencies must meet itself (a
// new cycle) or an earlier walk (a cycle already found). Walks start from
// the left-out vertices in order and never revisit a vertex, so the cost is
// linear; the cycles found are disjoint, though not every cycle is found.
func (g *depGraph) cycles(placed []int) [][]int {
	const done = -1
	walk := make([]int, len(g.deps)) // 0: not visited; else the walk that did
	for _, v := range placed {
		walk[v] = done
	}
	at := make([]int, len(g.deps)) // position of a vertex in its walk's path
	var found [][]int
	var path []int
	for start := range g.deps {
		if walk[start] != 0 {
			continue
		}
		id := start + 1
		path = path[:0]
		v, ok := start, true
		for ok && walk[v] == 0 {
			g.work.vertex()
			walk[v], at[v] = id, len(path)
			path = append(path, v)
			v, ok = g.waitingFor(v, walk)
		}
		if ok && walk[v] == id {
			found = append(found, slices.Clone(path[at[v]:]))
		}
	}
	return found
}

// waitingFor returns a dependency of v that sort did not place (walk is not
// done); ok is false if there is none, which sort rules out.
func (g *depGraph) waitingFor(v int, walk []int) (d int, ok bool) {
	for i, d := range g.deps[v] {
		if walk[d] != -1 {
			g.work.edge(i + 1)
			return d, true
		}
	}
	g.work.edge(len(g.deps[v]))
	return 0, false
}

// cycleShown is how many steps of a cycle an error names after the first.
const cycleShown = 8

// describeCycle names the steps of a cycle, each depending on the next and
// the last on the first: `step "1" depends on "3", which depends on "1"`.
// A long cycle is cut after cycleShown steps.
func describeCycle(ids []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %q depends on ", ids[0])
	rest := ids[1:]
	more := 0
	if len(rest) > cycleShown {
		rest, more = rest[:cycleShown], len(rest)-cycleShown
	}
	for _, id := range rest {
		fmt.Fprintf(&b, "%q, which depends on ", id)
	}
	if more > 0 {
		fmt.Fprintf(&b, "%d more steps in turn, the last of which depends on ", more)
	}
	fmt.Fprintf(&b, "%q", ids[0])
	return b.String()
}

// dependencies yields the ids of Dependencies(s), in the same order, without
// building the list: DependsOn, then the #E references not in DependsOn.
func dependencies(s Step) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, d := range s.DependsOn {
			if !yield(d) {
				return
			}
		}
		refs := References(s.Input)
		if len(refs) == 0 {
			return
		}
		listed := make(map[string]bool, len(refs))
		for _, r := range refs {
			listed[r] = false
		}
		for _, d := range s.DependsOn {
			if _, ok := listed[d]; ok {
				listed[d] = true
			}
		}
		for _, r := range refs {
			if !listed[r] && !yield(r) {
				return
			}
		}
	}
}

// checkDependencies reports dependencies on missing steps and dependency
// cycles into p. vertex numbers the plan's distinct ids (steps sharing an
// id share a vertex) and labels names the vertices; known are finished
// steps outside the plan, which are always satisfied. The cost is linear in
// the number of steps and dependency entries.
func checkDependencies(steps []Step, vertex map[string]int, labels []string, known map[string]bool, p *problemList, work *workCounter) {
	g := depGraph{deps: make([][]int, len(labels)), work: work}
	for _, s := range steps {
		v, ok := vertex[s.ID]
		if !ok {
			// A step without an id, reported by the caller.
			continue
		}
		work.vertex()
		if g.deps[v] == nil {
			g.deps[v] = make([]int, 0, len(s.DependsOn))
		}
		for d := range dependencies(s) {
			work.edge(1)
			k, inPlan := vertex[d]
			switch {
			case d == s.ID:
				p.add(ErrPlanCycle, "%w: step %q depends on itself", ErrPlanCycle, s.ID)
			case inPlan:
				g.deps[v] = append(g.deps[v], k)
			case known[d]:
				// A finished step outside the plan: always satisfied.
			default:
				p.add(ErrDanglingDependency, "%w: step %q depends on step %q, which is not in the plan", ErrDanglingDependency, s.ID, d)
			}
		}
	}
	placed := g.sort(&anyReady{})
	if len(placed) == len(labels) {
		return
	}
	for _, c := range g.cycles(placed) {
		p.add(ErrPlanCycle, "%w: %s; break the cycle", ErrPlanCycle, describeCycle(vertexLabels(c, labels)))
	}
}

func vertexLabels(vs []int, labels []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = labels[v]
	}
	return out
}

// Order returns the ids of steps in the order a sequential executor runs
// them: plan order, except that a step waits for its dependencies (at each
// point the earliest step in the plan whose dependencies have all been
// placed comes next). Dependencies outside steps are ignored. It fails
// with ErrPlanCycle or ErrDuplicateStep, which Rules.Check would have
// reported. It takes O((V+E) log V) time for V steps and E dependencies.
func Order(steps []Step) ([]string, error) {
	return order(steps, nil)
}

// order is Order, counting its dependency work in work.
func order(steps []Step, work *workCounter) ([]string, error) {
	pos := make(map[string]int, len(steps))
	for i, s := range steps {
		if _, dup := pos[s.ID]; dup {
			return nil, fmt.Errorf("%w: %q", ErrDuplicateStep, s.ID)
		}
		pos[s.ID] = i
	}
	g := depGraph{deps: make([][]int, len(steps)), work: work}
	for i, s := range steps {
		work.vertex()
		g.deps[i] = make([]int, 0, len(s.DependsOn))
		for d := range dependencies(s) {
			work.edge(1)
			k, ok := pos[d]
			switch {
			case !ok:
			case k == i:
				return nil, fmt.Errorf("%w: step %q depends on itself", ErrPlanCycle, s.ID)
			default:
				g.deps[i] = append(g.deps[i], k)
			}
		}
	}
	placed := g.sort(&earliestReady{})
	if len(placed) < len(steps) {
		ids := make([]string, len(steps))
		for i, s := range steps {
			ids[i] = s.ID
		}
		if cycles := g.cycles(placed); len(cycles) > 0 {
			return nil, fmt.Errorf("%w: %s", ErrPlanCycle, describeCycle(vertexLabels(cycles[0], ids)))
		}
		return nil, fmt.Errorf("%w: %d steps wait for each other", ErrPlanCycle, len(steps)-len(placed))
	}
	out := make([]string, len(placed))
	for i, v := range placed {
		out[i] = steps[v].ID
	}
	return out, nil
}
