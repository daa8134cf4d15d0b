package general

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
)

// ErrTool means a `tool` node's tool call failed: the tool returned an
// error, panicked, timed out, or a human denied it. It is returned inside
// a *ToolError.
var ErrTool = errors.New("tool call failed")

// ToolError is the error of a `tool` node whose call failed. It matches
// ErrTool and the call's own error (tools.ErrToolTimeout, ...).
type ToolError struct {
	// Node is the node's id.
	Node string
	// Tool is the tool's name.
	Tool string
	// Err is why the call failed (nodekind.ToolResult.Err).
	Err error
}

// Error names the tool and why the call failed.
func (e *ToolError) Error() string {
	return fmt.Sprintf("%v: %s: %v", ErrTool, e.Tool, e.Err)
}

// Unwrap returns ErrTool and the call's error.
func (e *ToolError) Unwrap() []error { return []error{ErrTool, e.Err} }

// ToolSettings configure a `tool` node: one call of a named tool with a
// templated input, its output stored where `output` says.
type ToolSettings struct {
	// Tool names the tool to call; it must be one of the pipeline's tools
	// (matched as the tool registry matches names: case and separators
	// aside). Default: the pipeline's only tool, when it has exactly one.
	Tool string `mapstructure:"tool"`
	// Input is the tool's input, a prompt template over the run state
	// ({{.Question}}, {{.Vars.NAME}}, {{.Notes.KEY}}, ...). Default
	// {{.Question}}.
	Input string `mapstructure:"input"`
	// InputFile reads the input template from a file instead (relative to
	// the pipeline file).
	InputFile string `mapstructure:"input_file"`
	// Output is where the tool's output goes: "var:<name>" (default: a var
	// named after the node, which then must be a valid var name), cut to
	// state.MaxVarValue characters; "note:<key>" a note; "answer" the
	// run's final answer.
	Output string `mapstructure:"output"`
	// Verbatim passes the rendered input to the tool as it is, only
	// trimmed, instead of undoing a code fence or quotes around all of it
	// (see nodekind.ToolOptions.Verbatim). Default false.
	Verbatim bool `mapstructure:"verbatim"`
	// Timeout bounds the call on top of the tool registry's timeout; the
	// shorter one ends it. Default 0: the registry's alone.
	Timeout time.Duration `mapstructure:"timeout"`
	// OnFailure is what happens when the call fails (an error, a panic, a
	// timeout, a denied approval): "error" ends the run with a *ToolError
	// (ErrTool); "route" notes the incident (failure kind "tool"), stores
	// nothing, and takes the `failed` route, which the pipeline must then
	// map. Default "error".
	OnFailure string `mapstructure:"on_failure"`
}

// Tool is the `tool` node: it renders its input over the run state, calls
// its tool through nodekind.ToolCall (so the run's journal, approvals,
// audit log, usage and trace apply as for any tool call) and stores the
// output.
type Tool struct {
	id, kind   string
	tools      *tools.Registry
	tool       string
	input      *nodekind.Template
	out        output
	opts       nodekind.ToolOptions
	routeOnErr bool
}

// NewTool builds a `tool` node (see ToolSettings). A tool the pipeline
// does not have is an error naming the tools it has.
func NewTool(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s ToolSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	known := "(none: list tools under the pipeline's tools:)"
	if env.Tools.Len() > 0 {
		known = strings.Join(env.Tools.Names(), ", ")
	}
	name := s.Tool
	if name == "" {
		if env.Tools.Len() != 1 {
			return nodekind.Built{}, config.SettingErrorf("tool", "name the tool to call (the pipeline's tools: %s)", known)
		}
		name = env.Tools.Names()[0]
	}
	t, ok := env.Tools.Resolve(name)
	if !ok {
		return nodekind.Built{}, config.SettingErrorf("tool", "the pipeline has no tool %q (its tools: %s)", name, known)
	}
	tmpl, err := env.Template(toolSpec(), s.Input, s.InputFile, "{{.Question}}")
	if err != nil {
		return nodekind.Built{}, err
	}
	def := "var:" + spec.ID
	if s.Output == "" && !state.ValidVarName(spec.ID) {
		return nodekind.Built{}, config.SettingErrorf("output", "the default output var:%s is not a valid var name; set output: var:<name>", spec.ID)
	}
	out, err := parseOutput(s.Output, def, spec.ID, false)
	if err != nil {
		return nodekind.Built{}, err
	}
	if s.Timeout < 0 {
		return nodekind.Built{}, config.SettingErrorf("timeout", "must be 0 or more, got %s", s.Timeout)
	}
	n := &Tool{id: spec.ID, kind: spec.Type, tools: env.Tools, tool: t.Name(), input: tmpl, out: out,
		opts: nodekind.ToolOptions{Timeout: s.Timeout, Verbatim: s.Verbatim}}
	if n.routeOnErr, err = onFailure(s.OnFailure); err != nil {
		return nodekind.Built{}, err
	}
	b := nodekind.Built{Node: n, Notes: out.notes()}
	if n.routeOnErr {
		b.Routes = []string{RouteFailed}
	}
	return b, nil
}

// WritesVars returns the var the output goes into, when it goes into
// one (pipeline.VarWriter).
func (n *Tool) WritesVars() []string {
	if n.out.kind != outVar {
		return nil
	}
	return []string{n.out.name}
}

// Run renders the input, calls the tool and stores its output.
func (n *Tool) Run(ctx context.Context, st *state.State) (string, error) {
	input, err := n.input.Render(st, nil)
	if err != nil {
		return "", err
	}
	call := nodekind.PrepareTool(n.tools, llm.CallMeta{Node: n.id, Kind: n.kind}, n.tool, input, n.opts)
	res, err := call.Call(ctx, st)
	if err != nil {
		return "", fmt.Errorf("tool %s: %w", n.tool, err)
	}
	if res.Err != nil {
		terr := &ToolError{Node: n.id, Tool: n.tool, Err: res.Err}
		if !n.routeOnErr {
			return "", terr
		}
		st.NoteIncident(state.FailureTool)
		trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindError, Text: terr.Error(), Data: map[string]any{"route": RouteFailed}})
		return RouteFailed, nil
	}
	return "", n.out.storeText(ctx, st, n.id, res.Output, true)
}
