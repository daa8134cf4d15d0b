package flow

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
)

// The names a `human` node's request goes by in approvals
// (journal.Approval.Tool), so that approvers can tell them from tool calls.
const (
	// HumanApproval asks a person to approve (or reject, with a reason)
	// what the prompt shows.
	HumanApproval = "human_approval"
	// HumanInput asks a person for free text: an approval whose
	// journal.Decision.Reason is the text.
	HumanInput = "human_input"
)

// RouteRejected is the route a `human` node takes when the person
// rejects (approve) or declines to answer (text).
const RouteRejected = "rejected"

// ErrNoDecision means a `human` node got no decision back: the run's
// hooks have no approval hook (the node ran outside a pipeline).
var ErrNoDecision = errors.New("human node: no decision")

// Kinds of question (HumanSettings.Ask).
const (
	AskApprove = "approve"
	AskText    = "text"
)

// HumanSettings configure a `human` node: it waits for a person, as tool
// calls that need approval do. On a terminal it asks there; otherwise a
// run with a thread saves it and exits 3 (waiting), and `planner resume
// NAME --approve`, `--deny REASON` or `--input TEXT` answers (the HTTP
// server's approval endpoint too: approve with the text as the reason).
type HumanSettings struct {
	// Ask is "approve" (default): approve or reject what the prompt
	// shows; or "text": a person's free-text answer.
	Ask string `mapstructure:"ask"`
	// Prompt is what the person is shown, a template over the run state
	// with {{.Extra.Answer}} (the answer so far) and {{.Extra.Steps}} (the
	// plan, one numbered step a line). Default: the question, and the
	// plan or the answer so far when there is one.
	Prompt string `mapstructure:"prompt"`
	// Into is the var that receives the text (ask: text; required) or the
	// reason of a rejection (ask: approve; optional).
	Into string `mapstructure:"into"`
}

const humanPrompt = `{{.Question}}{{if .Extra.Steps}}

Plan:
{{.Extra.Steps}}{{end}}{{if .Extra.Answer}}

Answer so far: {{.Extra.Answer}}{{end}}`

// HumanTemplates declares the prompt of `human`.
func HumanTemplates() []nodekind.TemplateSpec { return []nodekind.TemplateSpec{humanSpec()} }

func humanSpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{Key: "prompt", Extra: []nodekind.Field{
		{Name: "Answer", Doc: "the answer so far (\"\" before one)", Sample: "42"},
		{Name: "Steps", Doc: "the plan, one numbered step a line (\"\" before a planner ran)", Sample: "1. search[x]"},
	}}
}

// Human is the `human` node.
type Human struct {
	id     string
	text   bool
	prompt *nodekind.Template
	into   string
}

// NewHuman builds a `human` node (HumanSettings).
func NewHuman(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s HumanSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	n := &Human{id: spec.ID}
	switch s.Ask {
	case "", AskApprove:
	case AskText:
		n.text = true
	default:
		return nodekind.Built{}, config.SettingErrorf("ask", "want approve or text, got %q", s.Ask)
	}
	if s.Into != "" {
		name, err := nodekind.VarSetting("into", s.Into, false)
		if err != nil {
			return nodekind.Built{}, err
		}
		n.into = name
	} else if n.text {
		return nodekind.Built{}, config.SettingErrorf("into", "ask: text stores the person's answer in a var: set into: var:NAME")
	}
	var err error
	if n.prompt, err = env.Template(humanSpec(), s.Prompt, "", humanPrompt); err != nil {
		return nodekind.Built{}, err
	}
	return nodekind.Built{Node: n, Routes: []string{RouteRejected}}, nil
}

// WritesVars returns the var the node writes (pipeline.VarWriter).
func (n *Human) WritesVars() []string {
	if n.into == "" {
		return nil
	}
	return []string{n.into}
}

// Run asks the person through the run's approval hooks (so the journal
// keeps the answer, and a resumed run does not ask again) and routes on
// the answer.
func (n *Human) Run(ctx context.Context, st *state.State) (string, error) {
	steps := make([]string, len(st.Plan))
	for i, s := range st.Plan {
		steps[i] = fmt.Sprintf("%d. %s", i+1, s.Description)
	}
	text, err := n.prompt.Render(st, map[string]any{"Answer": st.Answer, "Steps": strings.Join(steps, "\n")})
	if err != nil {
		return "", err
	}
	name := HumanApproval
	if n.text {
		name = HumanInput
	}
	call := &hooks.ToolCall{Node: n.id, Tool: name, Input: strings.TrimSpace(text), NeedsApproval: true}
	res, err := st.Hooks().WrapTool(func(context.Context, *hooks.ToolCall) (*hooks.ToolResult, error) {
		return &hooks.ToolResult{Live: true}, nil
	})(ctx, call)
	if err != nil {
		return "", err
	}
	d := res.Decision
	if d == nil {
		return "", fmt.Errorf("%w: node %q: the run has no approval hook (run it in a pipeline)", ErrNoDecision, n.id)
	}
	answer := strings.TrimSpace(d.Reason)
	tr := trace.From(ctx)
	if !d.Approved || n.text && answer == "" {
		tr.Emit(trace.Event{Node: n.id, Kind: trace.KindDecision, Text: fmt.Sprintf("%s rejected: %s", by(d.By), answer), Data: map[string]any{"route": RouteRejected}})
		if n.into != "" {
			if err := st.Vars.SetClipped(n.into, answer); err != nil {
				return "", err
			}
		}
		return RouteRejected, nil
	}
	tr.Emit(trace.Event{Node: n.id, Kind: trace.KindDecision, Text: fmt.Sprintf("%s answered: %s", by(d.By), answer)})
	if n.text {
		if err := st.Vars.SetClipped(n.into, answer); err != nil {
			return "", err
		}
	}
	return "", nil
}

func by(who string) string {
	if who == "" {
		return "a person"
	}
	return who
}
