package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
)

// ErrSubgraphCycle means a pipeline runs itself as a subgraph, directly or
// through others.
var ErrSubgraphCycle = errors.New("subgraph cycle")

// ErrNestingDepth means subgraphs nest deeper than MaxNesting levels.
var ErrNestingDepth = errors.New("subgraphs nest too deep")

// ErrSubgraph means a subgraph's pipeline could not be built.
var ErrSubgraph = errors.New("subgraph does not build")

// MaxNesting bounds how deep subgraphs nest (a subgraph's subgraph's ...).
const MaxNesting = 8

// nesting is what Build passes down to the pipelines it builds for
// subgraph and map nodes.
type nesting struct {
	// files are the absolute paths of the pipeline files being built,
	// outermost first, for cycle detection.
	files []string
	// tools, when set, is the registry an inline pipeline shares with its
	// parent instead of building its own.
	tools *tools.Registry
	// inputs are the vars a nested pipeline's runs start with.
	inputs []string
	// depth is how many subgraphs the pipeline is nested in.
	depth int
}

// subgraphs is the nodekind.SubgraphBuilder of one Build: it builds the
// pipelines of the pipeline p's subgraph and map nodes with Build's
// options, and keeps what they started to close with p.
type subgraphs struct {
	ctx     context.Context
	parent  *config.Pipeline
	opts    Options
	tools   *tools.Registry
	closers *[]io.Closer
	built   int
}

// forNode returns the SubgraphBuilder of the constructor of node i, whose
// setting keys are under nodes[i].
func (s *subgraphs) forNode(i int) nodekind.SubgraphBuilder {
	return nodeSubgraphs{s: s, prefix: fmt.Sprintf("nodes[%d].", i), node: s.parent.Nodes[i].ID}
}

// nodeSubgraphs is the SubgraphBuilder of one node's constructor.
type nodeSubgraphs struct {
	s      *subgraphs
	prefix string
	node   string
}

func (n nodeSubgraphs) Subgraph(key, path string, inline map[string]any, inputs []string) (nodekind.Subgraph, error) {
	return n.s.subgraph(n.node, n.prefix+key, key, path, inline, inputs)
}

// subgraph builds the pipeline of a subgraph or map node. An inline pipeline (the
// mapping under key) takes the parent's llm block when it has none and
// always the parent's tools; a pipeline file (path, relative to the
// parent's folder) keeps its own llm block and tools, and takes the
// parent's llm block only when it has none. A command-line model (--llm)
// applies to all of them.
func (s *subgraphs) subgraph(node, key, setting, path string, inline map[string]any, inputs []string) (nodekind.Subgraph, error) {
	if s.opts.nest.depth >= MaxNesting {
		return nil, &config.SettingError{Key: setting, Err: fmt.Errorf("%w: more than %d levels, inline graphs and files alike", ErrNestingDepth, MaxNesting)}
	}
	opts := s.opts
	opts.nest = nesting{files: slices.Clone(s.opts.nest.files), inputs: inputs, depth: s.opts.nest.depth + 1}
	var cfg *config.Pipeline
	switch {
	case inline != nil && path != "":
		return nil, config.SettingErrorf(setting, "set the subgraph inline (graph:) or as a file (pipeline:), not both")
	case inline != nil:
		sub, err := s.parent.Sub(key, inline)
		if err != nil {
			return nil, err
		}
		if len(sub.Tools) > 0 {
			return nil, s.parent.Errorf(key+".tools", ErrSubgraph, "an inline graph uses its pipeline's tools: list them under the pipeline's tools: and remove %s.tools", key)
		}
		if sub.LLM.Provider == "" {
			sub.LLM = s.parent.LLM
		}
		if _, named := inline["name"]; !named {
			sub.Name = s.parent.Name + "/" + node
		}
		opts.nest.tools = s.tools
		cfg = sub
	case path != "":
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.parent.Dir(), path)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, &config.SettingError{Key: "pipeline", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
		}
		if i := slices.Index(opts.nest.files, abs); i >= 0 {
			chain := append(slices.Clone(opts.nest.files[i:]), abs)
			for j, f := range chain {
				chain[j] = filepath.Base(f)
			}
			return nil, &config.SettingError{Key: "pipeline", Err: fmt.Errorf("%w: %s (a pipeline may not run itself; inline the repeated part, or loop with an edge back)", ErrSubgraphCycle, strings.Join(chain, " -> "))}
		}
		child, err := config.Load(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSubgraph, err)
		}
		if child.LLM.Provider == "" {
			child.LLM = s.parent.LLM
		}
		opts.nest.files = append(opts.nest.files, abs)
		cfg = child
	default:
		return nil, config.SettingErrorf(setting, "name the pipeline to run: pipeline: FILE.yaml, or an inline graph: {nodes: [...], edges: [...]}")
	}
	p, err := Build(s.ctx, cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSubgraph, err)
	}
	*s.closers = append(*s.closers, p)
	s.built++
	return p, nil
}

// Name returns the pipeline's name.
func (p *Pipeline) Name() string { return p.Config.Name }

// RunNested implements nodekind.Subgraph: it runs p on task inside the
// node execution of ctx, for the run whose state is parent. The nested
// run's node executions pass parent's nested node hooks
// (hooks.Set.Nested: the journal gives them its session but does not
// journal their transitions) in the scope of ctx, then label, then their
// own; their model and tool calls pass parent's hooks, so the parent's
// budgets, usage, journal, audit and spans see them. Its trace events go
// to the tracer of ctx with their node named label/node. p's limits on
// steps, parallel branches and time apply to its graph; its budgets
// (max_model_calls, max_tokens, max_cost_usd) do not: the run's, the
// parent's, count every nested call.
func (p *Pipeline) RunNested(ctx context.Context, parent *state.State, task state.Task, vars map[string]string, label string) (*state.State, error) {
	st := state.NewState(task)
	hs := parent.Hooks()
	st.SetHooks(hs)
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if err := st.Vars.Set(name, vars[name]); err != nil {
			return st, fmt.Errorf("subgraph %s: input var %q: %w", p.Config.Name, name, err)
		}
	}
	node := hs.Nested()
	if t := p.Config.Limits.Timeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	tracer := trace.From(ctx)
	wrap := p.execWrap(node, node, hooks.Scope(ctx)+"/"+label+"/")
	_, err := p.graph.Run(ctx, st, graph.WithMaxSteps(p.steps), graph.WithMaxParallel(p.Config.Limits.MaxParallel),
		graph.WithObserver(p.observer(tracer, displayPrefix(hooks.Scope(ctx))+label+"/")), graph.WithExecWrap(wrap))
	if err != nil {
		classify(st, err)
		return st, fmt.Errorf("subgraph %s (%s): %w", p.Config.Name, label, err)
	}
	unanswered(st, "the subgraph")
	return st, nil
}

// observer turns graph events into trace events on tracer; prefix goes
// before each node id (a nested run's label and "/").
func (p *Pipeline) observer(tracer *trace.Tracer, prefix string) graph.Observer {
	return graph.ObserverFunc(func(ctx context.Context, e graph.Event) {
		node := e.Node
		if prefix != "" && node != "" {
			node = prefix + node
		}
		switch e.Kind {
		case graph.EventNodeStart:
			tracer.Emit(trace.Event{Node: node, Kind: trace.KindNodeStart, Data: branchData(e, map[string]any{"type": p.kinds[e.Node], "step": e.Step})})
		case graph.EventNodeEnd:
			tracer.Emit(trace.Event{Node: node, Kind: trace.KindNodeEnd, ElapsedMS: float64(e.Elapsed.Microseconds()) / 1000, Data: branchData(e, map[string]any{"step": e.Step})})
		case graph.EventRoute:
			to := e.To
			if prefix != "" && to != graph.END {
				to = prefix + to
			}
			tracer.Emit(trace.Event{Node: node, Kind: trace.KindRoute, Data: branchData(e, map[string]any{"route": routeName(e.Route), "to": to})})
		case graph.EventFork:
			tracer.Emit(trace.Event{Node: node, Kind: trace.KindRoute, Text: fmt.Sprintf("fan-out to %s, joined at %s", strings.Join(e.Branches, ", "), e.To),
				Data: branchData(e, map[string]any{"route": "fan-out", "to": strings.Join(e.Branches, ", "), "branches": e.Branches, "join": e.To})})
		case graph.EventError:
			// A failed model call was reported where it failed, with its
			// timing; reporting it again here would print it twice.
			if !errors.Is(e.Err, llm.ErrModel) {
				tracer.Emit(trace.Event{Node: node, Kind: trace.KindError, Text: e.Err.Error(), Data: branchData(e, nil)})
			}
		}
	})
}

// innerRunner is a node that runs a pipeline inside itself (the subgraph
// and map kinds); Inner returns it.
type innerRunner interface {
	Inner() nodekind.Subgraph
}

// Nested returns the pipelines p's nodes run inside themselves (subgraph
// and map nodes), with theirs, for drawing: p.Graph().Mermaid(p.Kinds(),
// p.Nested()...).
func (p *Pipeline) Nested() []graph.Nested {
	var out []graph.Nested
	for _, id := range p.graph.Nodes() {
		sub, ok := p.inner[id].(*Pipeline)
		if !ok {
			continue
		}
		label := "subgraph " + sub.Name()
		if p.kinds[id] == "map" {
			label = "map, per item: " + sub.Name()
		}
		out = append(out, graph.Nested{Node: id, Label: label, Graph: sub.graph, Kinds: sub.kinds, Nested: sub.Nested()})
	}
	return out
}

// displayPrefix is what goes before the node ids of a nested run's trace
// events for the node execution whose scope is scope: nothing for a node
// of the run's own graph ("3:each"), and the path of nested runs and
// branches it is in, without step numbers, for a node that is itself in
// a nested run ("3:each/item 1/2:sub" gives "item 1/sub/").
func displayPrefix(scope string) string {
	parts := strings.Split(scope, "/")
	var b strings.Builder
	for _, part := range parts[1:] {
		if _, node, ok := strings.Cut(part, ":"); ok && !strings.HasPrefix(part, "branch ") {
			part = node
		}
		b.WriteString(part)
		b.WriteByte('/')
	}
	return b.String()
}
