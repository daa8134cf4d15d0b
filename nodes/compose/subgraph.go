package compose

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
)

// SubgraphSettings configure a `subgraph` node.
//
//   - id: research
//     type: subgraph
//     pipeline: react.yaml              # or graph: {nodes: [...], edges: [...]}
//     question: "Find: {{.Vars.topic}}"  # default {{.Question}}
//     vars: {topic: "{{.Vars.topic}}"}
//     output: var:facts                 # default answer
//     export: [sources]
type SubgraphSettings struct {
	// Source is the pipeline to run: pipeline (a file) or graph (inline).
	Source `mapstructure:",squash"`
	// Question is the nested run's question, a template over the run
	// state. Default {{.Question}}.
	Question string `mapstructure:"question"`
	// Vars are the nested run's vars when it starts, each a template over
	// the run state. Default none: a nested run sees only what it is given.
	Vars map[string]string `mapstructure:"vars"`
	// Output is where the nested run's answer goes: "answer" (default)
	// makes it the run's answer, with its completeness and failure;
	// "var:NAME" stores it in a var (an incomplete nested run then sets
	// the var all the same and notes an incident).
	Output string `mapstructure:"output"`
	// Export names vars of the nested run to copy into the run's vars,
	// under the same names, when it ends. Default none.
	Export []string `mapstructure:"export"`
}

// Source names the pipeline a subgraph or map node runs.
type Source struct {
	// Pipeline is a pipeline file, relative to this pipeline's folder. It
	// keeps its own llm block and tools (its llm block defaults to this
	// pipeline's).
	Pipeline string `mapstructure:"pipeline"`
	// Graph is an inline pipeline: nodes, edges and optionally limits and
	// llm (default this pipeline's); it uses this pipeline's tools.
	Graph map[string]any `mapstructure:"graph"`
}

// build builds the pipeline s names.
func (s Source) build(env nodekind.Env, inputs []string) (nodekind.Subgraph, error) {
	if env.Subgraphs == nil {
		return nil, config.SettingErrorf("pipeline", "subgraphs can only be built inside a pipeline")
	}
	return env.Subgraphs.Subgraph("graph", s.Pipeline, s.Graph, inputs)
}

// inputs are compiled var templates of a nested run.
type inputs map[string]*nodekind.Template

func compileInputs(env nodekind.Env, vars map[string]string, spec nodekind.TemplateSpec) (inputs, error) {
	out := inputs{}
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if err := state.CheckVarName(name); err != nil {
			return nil, &config.SettingError{Key: "vars." + name, Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
		}
		spec.Key = "vars." + name
		t, err := env.Template(spec, vars[name], "", "")
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

func (in inputs) render(st *state.State, extra map[string]any) (map[string]string, error) {
	out := make(map[string]string, len(in))
	for name, t := range in {
		v, err := t.Render(st, extra)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// Subgraph is the `subgraph` node.
type Subgraph struct {
	id       string
	sub      nodekind.Subgraph
	question *nodekind.Template
	vars     inputs
	outVar   string // "" for the answer
	export   []string
}

// NewSubgraph builds a `subgraph` node (SubgraphSettings).
func NewSubgraph(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s SubgraphSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	n := &Subgraph{id: spec.ID}
	var err error
	if n.question, err = env.Template(nodekind.TemplateSpec{Key: "question"}, s.Question, "", "{{.Question}}"); err != nil {
		return nodekind.Built{}, err
	}
	if n.vars, err = compileInputs(env, s.Vars, nodekind.TemplateSpec{}); err != nil {
		return nodekind.Built{}, err
	}
	if n.outVar, err = nodekind.VarSetting("output", s.Output, true); err != nil {
		return nodekind.Built{}, err
	}
	if err := nodekind.VarNamesSetting("export", s.Export); err != nil {
		return nodekind.Built{}, err
	}
	n.export = s.Export
	if n.sub, err = s.build(env, slices.Sorted(maps.Keys(n.vars))); err != nil {
		return nodekind.Built{}, err
	}
	return nodekind.Built{Node: n}, nil
}

// WritesVars returns the vars the node writes (pipeline.VarWriter).
func (n *Subgraph) WritesVars() []string {
	out := slices.Clone(n.export)
	if n.outVar != "" {
		out = append(out, n.outVar)
	}
	return out
}

// Inner returns the pipeline the node runs, for drawing.
func (n *Subgraph) Inner() nodekind.Subgraph { return n.sub }

// Run runs the nested pipeline and maps its outcome into st.
func (n *Subgraph) Run(ctx context.Context, st *state.State) (string, error) {
	task, vars, err := nestedInput(st, n.question, n.vars, nil)
	if err != nil {
		return "", err
	}
	child, err := n.sub.RunNested(ctx, st, task, vars, "sub")
	if err != nil {
		return "", err
	}
	for _, name := range n.export {
		if v, ok := child.Vars.Get(name); ok {
			if err := st.Vars.Set(name, v); err != nil {
				return "", fmt.Errorf("subgraph %q: export %q: %w", n.id, name, err)
			}
		}
	}
	if n.outVar == "" {
		st.Answer, st.Done, st.Complete = child.Answer, child.Done, child.Complete
		st.Reason, st.Failure = child.Reason, child.Failure
		return "", nil
	}
	if !child.Complete {
		st.NoteIncident(cmp.Or(child.Failure, state.FailureBudget))
	}
	if err := st.Vars.Set(n.outVar, child.Answer); err != nil {
		return "", fmt.Errorf("subgraph %q: output var:%s: %w", n.id, n.outVar, err)
	}
	return "", nil
}

// nestedInput renders a nested run's task (st's task with the rendered
// question) and vars.
func nestedInput(st *state.State, question *nodekind.Template, vars inputs, extra map[string]any) (state.Task, map[string]string, error) {
	q, err := question.Render(st, extra)
	if err != nil {
		return state.Task{}, nil, err
	}
	vs, err := vars.render(st, extra)
	if err != nil {
		return state.Task{}, nil, err
	}
	task := st.Task
	task.Question = strings.TrimSpace(q)
	task.Tags = slices.Clone(task.Tags)
	return task, vs, nil
}
