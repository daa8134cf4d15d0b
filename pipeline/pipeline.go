// Package pipeline turns a loaded YAML pipeline into a runnable graph: it
// builds the tools and models, constructs every node through the node-type
// registry, compiles the graph, and runs tasks on it with tracing.
package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/keyword"
	"github.com/planner-engine/planner/trace"
)

// ModelFactory builds the model for an llm block. baseDir resolves relative
// paths (scripts, cassettes).
type ModelFactory interface {
	Model(ctx context.Context, cfg config.LLM, baseDir string) (llm.Model, error)
}

// ToolFactory builds the tools for one tools entry (an entry may yield
// several tools).
type ToolFactory interface {
	Tools(ctx context.Context, spec config.Tool, baseDir string) ([]tools.Tool, error)
}

// toolNamer is a ToolFactory that lists the tool names it builds
// (toolset.Factory does), so that a misspelt name gets a suggestion.
type toolNamer interface {
	Names() []string
}

// toolError locates the error err of building tools entry i (named name)
// with f: at the line of the setting at fault when err names one; an
// unknown tool name that f can list near names for (toolNamer) suggests
// the nearest first.
func toolError(p *config.Pipeline, i int, name string, f ToolFactory, err error) error {
	key := fmt.Sprintf("tools[%d]", i)
	var se *config.SettingError
	if errors.As(err, &se) && se.Key != "" {
		key += "." + se.Key
	}
	if namer, ok := f.(toolNamer); ok && errors.Is(err, tools.ErrUnknownTool) {
		names := namer.Names()
		if hint := config.DidYouMean(name, names); hint != "" {
			return p.Errorf(key, err, "%s %q (%sknown tools: %s)", tools.ErrUnknownTool, name, hint, strings.Join(names, ", "))
		}
	}
	return p.Errorf(key, err, "tool %q: %v", name, err)
}

// Constructors finds the constructor of a node type. The compiler needs
// nothing else from a node registry, so it does not depend on the
// paradigms; the wiring layer passes planner.NodeKinds() or its own.
type Constructors interface {
	// Constructor returns the constructor registered for kind, or an error
	// that names the known types.
	Constructor(kind string) (nodekind.Constructor, error)
}

// Options configure Build.
type Options struct {
	// Registry finds the constructor of each node type. Required;
	// *nodekind.Registry (planner.NodeKinds()) implements it.
	Registry Constructors
	// Models builds models. Nil builds no model: nodes get an empty Model
	// (fine for validation; runs then fail on the first model call).
	Models ModelFactory
	// Tools builds tools. Required when the pipeline lists tools.
	Tools ToolFactory
	// LLM, when its Provider is set, replaces the pipeline's llm block
	// (the --llm flag). Node-level llm blocks still apply on top.
	LLM config.LLM
	// MaxSteps overrides limits.max_steps when positive.
	MaxSteps int
	// ToolOptions are passed to the tool registry (timeouts).
	ToolOptions []tools.Option
	// Keywords builds the BM25 keyword indexes nodes rank with
	// (nodekind.Env.Keywords): the ReAct engine's tool retrieval and its
	// recall tool's word search. Nil gives nodes none; a node that needs
	// one then fails to build with a setting error.
	Keywords keyword.Indexer
	// nest is what a parent Build passes to the pipelines of its subgraph
	// and map nodes.
	nest nesting
}

// Pipeline is a built, runnable pipeline. It is safe to run concurrently.
type Pipeline struct {
	Config *config.Pipeline
	graph  *graph.Compiled[*state.State]
	kinds  map[string]string
	tools  *tools.Registry
	steps  int
	// fans is true when the graph has a fan-out; nests when a node runs
	// a pipeline inside itself (subgraph, map).
	fans, nests bool
	// inner are the pipelines nodes run inside themselves, by node id.
	inner map[string]nodekind.Subgraph
	// notices are what Build completed in the pipeline's templates.
	notices []Notice
	// closers stop what the tools started (Close).
	closers   []io.Closer
	closeOnce sync.Once
	closeErr  error
}

// ErrRun marks a failed run.
var ErrRun = errors.New("run failed")

// Build constructs and validates the pipeline. Every error is a
// *config.Error naming the file and line.
func Build(ctx context.Context, p *config.Pipeline, opts Options) (*Pipeline, error) {
	if opts.Registry == nil {
		return nil, errors.New("pipeline: Options.Registry is required")
	}
	// Whatever the tools started (MCP server processes) is stopped again
	// when Build fails; otherwise the Pipeline's Close stops it.
	var closers []io.Closer
	built := false
	defer func() {
		if !built {
			closeAll(closers)
		}
	}()
	var ts []tools.Tool
	if opts.nest.files == nil && p.File != "" {
		if abs, err := filepath.Abs(p.File); err == nil {
			opts.nest.files = []string{abs}
		}
	}
	for i, spec := range p.Tools {
		if opts.Tools == nil {
			return nil, p.Errorf(fmt.Sprintf("tools[%d]", i), nil, "tools are listed but no tool factory is configured")
		}
		approve, err := popApprove(&spec)
		if err != nil {
			return nil, p.Errorf(fmt.Sprintf("tools[%d].approve", i), err, "tool %q: %v", spec.Name, err)
		}
		made, err := opts.Tools.Tools(ctx, spec, p.Dir())
		for _, t := range made {
			if c, ok := t.(io.Closer); ok {
				closers = append(closers, c)
			}
		}
		if err != nil {
			return nil, toolError(p, i, spec.Name, opts.Tools, err)
		}
		for _, t := range made {
			if approve != nil {
				t = tools.WithApproval(t, *approve)
			}
			ts = append(ts, t)
		}
	}
	reg := opts.nest.tools
	if reg == nil {
		var err error
		if reg, err = tools.NewRegistry(ts, opts.ToolOptions...); err != nil {
			return nil, p.Errorf("tools", err, "%v", err)
		}
	}

	base := OverrideLLM(p.LLM, opts.LLM)
	var defModel llm.Model
	if opts.Models != nil && base.Provider != "" {
		m, err := opts.Models.Model(ctx, base, p.Dir())
		if err != nil {
			return nil, p.Errorf("llm", err, "llm: %v", err)
		}
		defModel = m
	}

	subs := &subgraphs{ctx: ctx, parent: p, opts: opts, tools: reg, closers: &closers}
	g := graph.New[*state.State]()
	kinds := map[string]string{}
	builtNodes := map[string]nodekind.Node{}
	inner := map[string]nodekind.Subgraph{}
	prompts := make([]nodePrompts, len(p.Nodes))
	for i, n := range p.Nodes {
		newNode, err := opts.Registry.Constructor(n.Type)
		if err != nil {
			return nil, p.Errorf(fmt.Sprintf("nodes[%d].type", i), err, "node %q: %v", n.ID, err)
		}
		settings := map[string]any{}
		for k, v := range n.Settings {
			settings[k] = v
		}
		model := defModel
		if raw, ok := settings["llm"]; ok {
			delete(settings, "llm")
			m, ok := raw.(map[string]any)
			if !ok {
				return nil, p.Errorf(fmt.Sprintf("nodes[%d].llm", i), nil, "node %q: llm must be a mapping", n.ID)
			}
			var override config.LLM
			if err := config.Decode(m, &override); err != nil {
				err = config.NestSetting("llm", err)
				key := fmt.Sprintf("nodes[%d]", i)
				var se *config.SettingError
				if errors.As(err, &se) {
					key += "." + se.Key
				}
				return nil, p.Errorf(key, err, "node %q: %v", n.ID, err)
			}
			merged := nodeLLM(base, override)
			if opts.Models != nil && merged.Provider != "" {
				model, err = opts.Models.Model(ctx, merged, p.Dir())
				if err != nil {
					return nil, p.Errorf(fmt.Sprintf("nodes[%d].llm", i), err, "node %q: llm: %v", n.ID, err)
				}
			}
		}
		compiled := &nodekind.TemplateSet{}
		built, err := newNode(nodekind.Env{Model: model, Tools: reg, BaseDir: p.Dir(), Compiled: compiled, Keywords: opts.Keywords, Subgraphs: subs.forNode(i)}, nodekind.Spec{ID: n.ID, Type: n.Type, Settings: settings})
		if err != nil {
			var se *config.SettingError
			var inner *config.Error
			if errors.As(err, &inner) && inner.File == p.File && inner.Line > 0 {
				// An inline subgraph's own error, at its line in this file.
				return nil, err
			}
			line := p.NodeLine(i, "")
			if errors.As(err, &se) {
				line = settingLine(p, i, se.Key)
			}
			return nil, &config.Error{File: p.File, Line: line, Key: fmt.Sprintf("nodes[%d]", i), Msg: fmt.Sprintf("node %q (%s): %v", n.ID, n.Type, err), Err: fmt.Errorf("%w: %w", config.ErrInvalid, err)}
		}
		// Every node can route on its own outcome (failed, incomplete)
		// when an edge maps it.
		var extra []string
		if _, join := built.Node.(graph.Joiner[*state.State]); !join {
			extra = outcomeRoutes(p, n.ID, built.Routes)
		}
		g.AddNode(n.ID, withOutcomes(built.Node, n.ID, extra), append(slices.Clone(built.Routes), extra...)...)
		kinds[n.ID] = n.Type
		builtNodes[n.ID] = built.Node
		if c, ok := built.Node.(io.Closer); ok { // what the node holds, such as the autopilot's policy index
			closers = append(closers, c)
		}
		if r, ok := built.Node.(innerRunner); ok {
			inner[n.ID] = r.Inner()
		}
		prompts[i] = nodePrompts{templates: compiled.Templates(), notes: built.Notes}
	}
	notices, err := checkPrompts(p, prompts)
	if err != nil {
		return nil, err
	}
	if err := checkVars(p, builtNodes, prompts, append(slices.Clone(p.Inputs), opts.nest.inputs...), reg); err != nil {
		return nil, err
	}
	for _, e := range p.Edges {
		if fan, ok, _ := e.FanOut(); ok {
			g.AddFanOut(e.From, fan...)
			continue
		}
		targets, _ := e.Targets()
		for _, route := range slices.Sorted(maps.Keys(targets)) { // the plain edge ("") sorts first
			g.AddRoute(e.From, route, targets[route])
		}
	}
	compiled, err := g.Compile()
	if err != nil {
		return nil, locateGraphError(p, err)
	}
	if err := checkBranches(p, compiled, builtNodes); err != nil {
		return nil, err
	}
	steps := p.Limits.MaxSteps
	if opts.MaxSteps > 0 {
		steps = opts.MaxSteps
	}
	built = true
	return &Pipeline{Config: p, graph: compiled, kinds: kinds, tools: reg, steps: steps, fans: len(compiled.FanOuts()) > 0, nests: subs.built > 0, inner: inner, notices: notices, closers: closers}, nil
}

// Close stops what the pipeline's tools started, such as the MCP server
// processes (tools that implement io.Closer), releases what its nodes
// hold (nodes that implement io.Closer), and returns their errors
// joined. It is safe to call more than once and from several goroutines;
// runs must have ended first, since their tools stop working.
func (p *Pipeline) Close() error {
	p.closeOnce.Do(func() { p.closeErr = closeAll(p.closers) })
	return p.closeErr
}

func closeAll(cs []io.Closer) error {
	var errs []error
	for _, c := range cs {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// popApprove removes the engine's own key, approve, from a tools entry's
// settings (every other key belongs to the tool) and returns its value,
// nil when the entry does not set it. approve: true asks a human before
// each call; approve: false lifts the approval a tool asks for by default
// (files or sql with write: true, http_fetch with POST).
func popApprove(spec *config.Tool) (*bool, error) {
	raw, ok := spec.Settings["approve"]
	if !ok {
		return nil, nil
	}
	settings := maps.Clone(spec.Settings)
	delete(settings, "approve")
	spec.Settings = settings
	b, ok := raw.(bool)
	if !ok {
		return nil, fmt.Errorf("%w: approve must be true or false, not %v", config.ErrInvalid, raw)
	}
	return &b, nil
}

// OverrideLLM applies a command-line model choice (--llm) to a pipeline's
// llm block. The override's provider, model, script, profile and seed
// replace the block's; the block's provider-independent settings (retry,
// rate limit, timeout, temperature, max tokens, empty-reply retries) are
// kept unless the override sets them; endpoint settings (base_url,
// api_key_env, embedding_model) are kept only when the provider stays the
// same. An override without a provider changes nothing.
func OverrideLLM(block, o config.LLM) config.LLM {
	if o.Provider == "" {
		return block
	}
	return inheritLLM(o, block, o.Provider == block.Provider, false)
}

// nodeLLM applies a node's own llm block o on top of the pipeline's model
// choice base. A block that names a provider is applied like OverrideLLM;
// one without keeps base's provider and replaces only the settings it sets.
func nodeLLM(base, o config.LLM) config.LLM {
	if o.Provider != "" {
		return OverrideLLM(base, o)
	}
	o.Provider = base.Provider
	return inheritLLM(o, base, true, true)
}

// inheritLLM fills the settings o leaves unset from base: the
// provider-independent ones always, the endpoint (base_url, api_key_env,
// embedding_model) when endpoint is set, and the model choice (model, script, profile, seed)
// when model is set.
func inheritLLM(o, base config.LLM, endpoint, model bool) config.LLM {
	o.Temperature = cmp.Or(o.Temperature, base.Temperature)
	o.MaxTokens = cmp.Or(o.MaxTokens, base.MaxTokens)
	o.Timeout = cmp.Or(o.Timeout, base.Timeout)
	o.MaxReplyBytes = cmp.Or(o.MaxReplyBytes, base.MaxReplyBytes)
	o.PromptCache = cmp.Or(o.PromptCache, base.PromptCache)
	o.EmptyRetries = cmp.Or(o.EmptyRetries, base.EmptyRetries)
	o.EmptyNudge = cmp.Or(o.EmptyNudge, base.EmptyNudge)
	// Each retry and rate-limit setting is inherited on its own, so a node
	// that sets only max_attempts keeps the pipeline's delays.
	o.Retry.MaxAttempts = cmp.Or(o.Retry.MaxAttempts, base.Retry.MaxAttempts)
	o.Retry.BaseDelay = cmp.Or(o.Retry.BaseDelay, base.Retry.BaseDelay)
	o.Retry.MaxDelay = cmp.Or(o.Retry.MaxDelay, base.Retry.MaxDelay)
	o.Retry.MaxRetryAfter = cmp.Or(o.Retry.MaxRetryAfter, base.Retry.MaxRetryAfter)
	o.RateLimit.RequestsPerSecond = cmp.Or(o.RateLimit.RequestsPerSecond, base.RateLimit.RequestsPerSecond)
	o.RateLimit.MaxConcurrent = cmp.Or(o.RateLimit.MaxConcurrent, base.RateLimit.MaxConcurrent)
	if endpoint {
		o.BaseURL = cmp.Or(o.BaseURL, base.BaseURL)
		o.APIKeyEnv = cmp.Or(o.APIKeyEnv, base.APIKeyEnv)
		o.EmbeddingModel = cmp.Or(o.EmbeddingModel, base.EmbeddingModel)
	}
	if model {
		o.Model = cmp.Or(o.Model, base.Model)
		o.Script = cmp.Or(o.Script, base.Script)
		o.Profile = cmp.Or(o.Profile, base.Profile)
		o.Seed = cmp.Or(o.Seed, base.Seed)
	}
	return o
}

// locateGraphError maps every structural graph error to the YAML line that
// should change. Several problems come back joined (errors.Join), one
// "file:line: message" line each, in the graph's order (routes and edges
// before reachability, which they often explain); errors.As finds the first
// *config.Error.
func locateGraphError(p *config.Pipeline, err error) error {
	var errs graph.Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		return p.Errorf("edges", err, "%v", err)
	}
	located := make([]*config.Error, len(errs))
	for i, ge := range errs {
		located[i] = locateOneGraphError(p, ge)
	}
	if len(located) == 1 {
		return located[0]
	}
	joined := make([]error, len(located))
	for i, e := range located {
		joined[i] = e
	}
	return errors.Join(joined...)
}

// locateOneGraphError maps one structural graph error to the YAML line that
// should change.
func locateOneGraphError(p *config.Pipeline, ge *graph.Error) *config.Error {
	edgeKey := func(from, route, to string) string {
		for i, e := range p.Edges {
			if e.From != from {
				continue
			}
			targets, _ := e.Targets()
			if route == "" && to == "" {
				return fmt.Sprintf("edges[%d]", i)
			}
			if t, ok := targets[route]; ok && (to == "" || t == to) {
				if route == "" {
					return fmt.Sprintf("edges[%d].to", i)
				}
				return fmt.Sprintf("edges[%d].to.%s", i, route)
			}
		}
		return ""
	}
	key := ""
	msg := ge.Error()
	switch {
	case errors.Is(ge, graph.ErrUnknownNode):
		if ge.Target == ge.Node {
			key = edgeKey(ge.Node, "", "")
			msg = fmt.Sprintf("edge from unknown node %q (declared nodes: %s)", ge.Node, strings.Join(nodeIDs(p), ", "))
		} else {
			key = edgeKey(ge.Node, ge.Route, ge.Target)
			msg = fmt.Sprintf("edge from %q goes to unknown node %q (declared nodes: %s, END)", ge.Node, ge.Target, strings.Join(nodeIDs(p), ", "))
		}
	case errors.Is(ge, graph.ErrUnmappedRoute):
		key = edgeKey(ge.Node, "", "")
		if key == "" {
			key = fmt.Sprintf("nodes[%d]", nodeIndex(p, ge.Node))
		}
		msg = fmt.Sprintf("node %q: route %q is not mapped (add it under the edge's to:, e.g. to: {%s: <node>})", ge.Node, ge.Route, ge.Route)
	case errors.Is(ge, graph.ErrUndeclaredRoute), errors.Is(ge, graph.ErrDuplicateEdge):
		key = edgeKey(ge.Node, ge.Route, "")
		if errors.Is(ge, graph.ErrUndeclaredRoute) {
			msg = fmt.Sprintf("node %q (%s) never returns route %q", ge.Node, kindOf(p, ge.Node), ge.Route)
		}
	case errors.Is(ge, graph.ErrNoStart):
		key = "edges"
		msg = "no edge from START: add {from: START, to: <first node>}"
	case errors.Is(ge, graph.ErrNoFork):
		key = "edges"
		msg = ge.Err.Error()
	case errors.Is(ge, graph.ErrBranchNoJoin), errors.Is(ge, graph.ErrBranchesDiverge), errors.Is(ge, graph.ErrNestedFanOut):
		key = fanOutKey(p, ge.Node)
		msg = fmt.Sprintf("fan-out from %s: %v", ge.Node, ge.Err)
	case errors.Is(ge, graph.ErrBranchEntered):
		if key = edgeInto(p, ge.Node, ge.Target); key == "" {
			key = fanOutKey(p, ge.Node)
		}
		msg = ge.Err.Error()
	case errors.Is(ge, graph.ErrJoinNoBranches):
		key = fmt.Sprintf("nodes[%d]", nodeIndex(p, ge.Node))
		if ge.Target != "" {
			key = edgeInto(p, ge.Target, ge.Node)
		}
		msg = ge.Err.Error()
	default:
		if i := nodeIndex(p, ge.Node); i >= 0 {
			key = fmt.Sprintf("nodes[%d]", i)
		}
	}
	return p.Errorf(key, ge, "%s", msg)
}

// fanOutKey is the key of the fan-out edge from node from ("edges[i].to"),
// or "".
func fanOutKey(p *config.Pipeline, from string) string {
	for i, e := range p.Edges {
		if _, ok, _ := e.FanOut(); ok && e.From == from {
			return fmt.Sprintf("edges[%d].to", i)
		}
	}
	return ""
}

// edgeInto is the key of an edge from node from that leads to node to
// (by its plain edge, a route or a fan-out), or "".
func edgeInto(p *config.Pipeline, from, to string) string {
	for i, e := range p.Edges {
		if e.From != from {
			continue
		}
		if fan, ok, _ := e.FanOut(); ok {
			if slices.Contains(fan, to) {
				return fmt.Sprintf("edges[%d].to", i)
			}
			continue
		}
		targets, _ := e.Targets()
		for _, route := range slices.Sorted(maps.Keys(targets)) {
			if targets[route] != to {
				continue
			}
			if route == "" {
				return fmt.Sprintf("edges[%d].to", i)
			}
			return fmt.Sprintf("edges[%d].to.%s", i, route)
		}
	}
	return ""
}

// nodeIndex returns the position of node id in p, or -1.
func nodeIndex(p *config.Pipeline, id string) int {
	return slices.IndexFunc(p.Nodes, func(n config.Node) bool { return n.ID == id })
}

func kindOf(p *config.Pipeline, id string) string {
	if i := nodeIndex(p, id); i >= 0 {
		return p.Nodes[i].Type
	}
	return "?"
}

func nodeIDs(p *config.Pipeline) []string {
	out := make([]string, len(p.Nodes))
	for i, n := range p.Nodes {
		out[i] = n.ID
	}
	return out
}

// Graph returns the compiled graph.
func (p *Pipeline) Graph() *graph.Compiled[*state.State] { return p.graph }

// Kinds returns node id to node type.
func (p *Pipeline) Kinds() map[string]string { return p.kinds }

// Tools returns the pipeline's tool registry.
func (p *Pipeline) Tools() *tools.Registry { return p.tools }

// Result is the outcome of one run.
type Result struct {
	State    *state.State
	Steps    []string
	Duration time.Duration
}

// Run executes the pipeline on task. Events go to tracer (which may be
// nil). On a run error the state so far is still returned, with Failure
// classified. Each run gets its own tools.RunState for stateful tools,
// unless ctx already carries one.
func (p *Pipeline) Run(ctx context.Context, task state.Task, tracer *trace.Tracer, opts ...RunOption) (*Result, error) {
	cfg := newRunConfig(opts)
	st := state.NewState(task)
	if p.Config.Limits.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Config.Limits.Timeout)
		defer cancel()
	}
	ctx = trace.WithTracer(ctx, tracer)
	// The model calls name the pipeline whose run they serve (llm.CallMeta.Pipeline).
	ctx = llm.WithPipeline(ctx, p.Config.Name)
	ctx, span := p.startRunSpan(ctx, cfg.telemetry, task, tracer.RunID()) // OpenTelemetry (telemetry.go)
	defer span.EndRun(st)
	st.SetHooks(p.runHooks(st, tracer, cfg))
	if tools.RunStateFrom(ctx) == nil {
		// Stateful tools (a docstore's open page) keep their state per run.
		ctx = tools.WithRunState(ctx, tools.NewRunState())
	}
	began := time.Now()
	tracer.Emit(trace.Event{Kind: trace.KindRunStart, Text: fmt.Sprintf("pipeline %s: %s", p.Config.Name, textutil.Clip(textutil.OneLine(task.Question), 120)),
		Data: map[string]any{"pipeline": p.Config.Name, "task_id": task.ID, "question": task.Question}})
	p.emitNotices(tracer)
	obs := p.observer(tracer, "")
	var branchHooks *hooks.Set
	if p.fans || p.nests {
		branchHooks = p.branchNodeHooks(st, tracer, cfg)
		st.SetHooks(st.Hooks().WithNested(branchHooks))
	}
	gopts := []graph.RunOption{graph.WithMaxSteps(p.steps), graph.WithMaxParallel(p.Config.Limits.MaxParallel), graph.WithObserver(obs), graph.WithExecWrap(p.execWrap(st.Hooks(), branchHooks, ""))}
	if tp := cfg.telemetry; tp != nil && p.fans {
		// Each fan-out's branches nest under a span of their own.
		gopts = append(gopts, graph.WithForkWrap(func(ctx context.Context, f graph.Fork) (context.Context, func(error)) {
			ctx, span := tp.StartParallel(ctx, f.From, f.Branches, f.Join)
			return ctx, func(err error) {
				class := ""
				if err != nil {
					class = failureClass(err)
				}
				span.EndNode("", class, err)
			}
		}))
	}
	gres, err := p.graph.Run(ctx, st, gopts...)
	res := &Result{State: st, Steps: gres.Steps, Duration: time.Since(began)}
	if err != nil {
		classify(st, err)
		if st.Failure != state.FailureWaiting {
			span.Fail(st.Failure, err)
		}
		// The error itself was reported as an error event (and is returned);
		// the closing line names its kind only, so it is not printed twice.
		text := fmt.Sprintf("run failed (%s) after %s", st.Failure, time.Since(began).Round(time.Millisecond))
		if st.Failure == state.FailureWaiting {
			text = fmt.Sprintf("run waits for approval after %s", time.Since(began).Round(time.Millisecond))
		}
		tracer.Emit(trace.Event{Kind: trace.KindRunEnd, Text: text,
			Data: map[string]any{"failure": st.Failure, "error": err.Error()}})
		return res, fmt.Errorf("%w: %w", ErrRun, err)
	}
	unanswered(st, "the graph")
	tracer.Emit(trace.Event{Kind: trace.KindRunEnd, Text: fmt.Sprintf("done in %s", res.Duration.Round(time.Millisecond)),
		Data: map[string]any{"answer": st.Answer, "complete": st.Complete, "steps": len(gres.Steps)}})
	return res, nil
}

// execWrap runs each node execution in its call scope through the run's
// node hooks (set; branch for the executions on parallel branches). The
// scope is the execution's (hooks.NodeScope); on a parallel branch, it is
// "branch ", the branch's id, then "/" and the execution's scope within
// the branch ("branch 3.2/1:b"), so that a resumed run replays each
// branch's calls to that branch, whatever order branches finish in.
//
// prefix goes before every scope: "" for the run's own graph, the node
// execution's scope and the nested run's label for a nested run
// ("3:each/item 2/").
func (p *Pipeline) execWrap(set, branch *hooks.Set, prefix string) graph.ExecWrap {
	return func(ctx context.Context, x graph.Exec, run func(context.Context) (string, error)) (string, error) {
		hs, scope := set, prefix+hooks.NodeScope(x.Step, x.Node)
		if x.Branch != "" {
			hs, scope = branch, prefix+"branch "+x.Branch+"/"+hooks.NodeScope(x.Step, x.Node)
		}
		fn := hs.WrapNode(func(ctx context.Context, _ hooks.Node) (string, error) { return run(ctx) })
		return fn(hooks.WithScope(ctx, scope), hooks.Node{ID: x.Node, Kind: p.kinds[x.Node], Step: x.Step})
	}
}

// branchData adds e's branch, when it ran on one, to an event's data.
func branchData(e graph.Event, data map[string]any) map[string]any {
	if e.Branch == "" {
		return data
	}
	if data == nil {
		data = map[string]any{}
	}
	data["branch"] = e.Branch
	return data
}

// classify sets st's failure kind from err unless a node set one.
func classify(st *state.State, err error) {
	if st.Failure == "" {
		st.Failure = failureClass(err)
	}
}

// failureClass is the failure kind (state.Failure*) of a run or node that
// ended with err.
func failureClass(err error) string {
	switch {
	case errors.Is(err, journal.ErrWaiting):
		return state.FailureWaiting
	case errors.Is(err, context.DeadlineExceeded):
		return state.FailureTimeout
	case errors.Is(err, graph.ErrMaxSteps):
		return state.FailureLoop
	case errors.Is(err, llm.ErrBudgetExceeded):
		return state.FailureBudget
	case errors.Is(err, llm.ErrModel):
		return state.FailureProvider
	case errors.Is(err, tools.ErrToolPanic), errors.Is(err, tools.ErrToolTimeout):
		return state.FailureTool
	}
	return state.FailureError
}

func routeName(r string) string {
	if r == "" {
		return "default"
	}
	return r
}

// unanswered marks a run (or nested run) whose graph, what, ended without
// a node setting the final answer: its answer so far, incomplete.
func unanswered(st *state.State, what string) {
	if !st.Done {
		st.SetPartial(st.Answer, what+" ended without a node setting the answer", state.FailureBudget)
	}
}
