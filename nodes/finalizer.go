package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/tmc/langchaingo/llms"
)

// ComposeSettings configure the answer-composing nodes `finalizer` and
// `solver`. Every field is optional.
//
// The system message defaults to the role of the node type. The prompt
// template sees {{.Question}}, {{.Extra.Plan}} (the steps with their
// results; for the solver, ReWOO's "#E<id> = tool[input]" form with the
// evidence), {{.Extra.Scratchpad}} (ReAct entries, if any) and
// {{.Extra.Why}} (why the work stopped early, or ""); it defaults to the
// built-in prompt.
type ComposeSettings struct {
	// PromptSources are the system, system_file, prompt and prompt_file
	// keys.
	nodekind.PromptSources `mapstructure:",squash"`
	// Extract pulls the answer out of the reply ("Answer: ..." and the
	// other markers of package answer). Default true.
	Extract *bool `mapstructure:"extract"`
	// Temperature overrides the model's sampling temperature.
	Temperature *float64 `mapstructure:"temperature"`
	// MaxTokens caps the completion; 0 uses the model default.
	MaxTokens int `mapstructure:"max_tokens"`
}

const finalizeSystem = "You write the final answer of an agent from the work it has done. Use only the results shown; do not invent facts."

// Extra values: .Extra.Plan, .Extra.Scratchpad, .Extra.Why.
const finalizePrompt = `{{with .History}}{{.}}
{{end}}Task: {{.Question}}
{{with .Extra.Plan}}
Plan steps and their results:
{{.}}{{end}}{{with .Extra.Scratchpad}}
Work so far:
{{.}}{{end}}{{with .Extra.Why}}
The work stopped before it was finished: {{.}}. Give your best answer from what is known.
{{end}}
Write the final answer to the task. End with one line of the form:
Answer: <the final answer, as short as the task allows>`

// Compose is a node that writes the final answer from the run state with
// one model call (role "finalize" or "solve"), unless a complete answer is
// already known.
type Compose struct {
	id, kind string
	role     string
	model    llm.Model
	system   string
	prompt   *nodekind.Template
	extract  bool
	solver   bool
	opts     []llms.CallOption
}

// NewFinalizer builds a `finalizer` nodekind. If the state already has a
// complete answer it passes it through without a model call; otherwise it
// composes the answer from the task, the plan's step results and the ReAct
// scratchpad with one model call (role "finalize"). When the state records
// why the work stopped early (a spent budget, an unusable re-planner reply,
// a failed planner: the state's Reason), the answer is marked incomplete
// with that reason. Pipelines route every budget exit to it, so a run
// always ends with an answer.
func NewFinalizer(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	return newCompose(env, spec, "finalize", finalizeSystem, finalizePrompt, false)
}

func newCompose(env nodekind.Env, spec nodekind.Spec, role, defSystem, defPrompt string, solver bool) (nodekind.Built, error) {
	var s ComposeSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	system, tmpl, err := env.Prompts(s.PromptSources, composeSpec(solver), defSystem, defPrompt)
	if err != nil {
		return nodekind.Built{}, err
	}
	c := &Compose{id: spec.ID, kind: spec.Type, role: role, model: env.Model, system: system, prompt: tmpl,
		extract: s.Extract == nil || *s.Extract, solver: solver}
	if s.Temperature != nil {
		c.opts = append(c.opts, llms.WithTemperature(*s.Temperature))
	}
	if s.MaxTokens > 0 {
		c.opts = append(c.opts, llms.WithMaxTokens(s.MaxTokens))
	}
	return nodekind.Built{Node: c}, nil
}

// Run passes a complete answer through or composes one.
func (c *Compose) Run(ctx context.Context, st *state.State) (string, error) {
	tr := trace.From(ctx)
	if st.Done && st.Complete && strings.TrimSpace(st.Answer) != "" {
		tr.Emit(trace.Event{Node: c.id, Kind: trace.KindAnswer, Text: st.Answer,
			Data: map[string]any{"complete": true, "passthrough": true}})
		return "", nil
	}
	why, failure := st.Reason, st.Failure
	if c.solver && why == "" {
		why, failure = solverGaps(st.Plan)
	}
	planText := ""
	if len(st.Plan) > 0 {
		if c.solver {
			planText = solverEvidence(st.Plan)
		} else {
			planText = plan.Format(st.Plan, true)
		}
	}
	user, err := c.prompt.Render(st, map[string]any{"Plan": planText, "Scratchpad": composeScratchpad(st.Scratchpad), "Why": why})
	if err != nil {
		return "", err
	}
	text, _, err := c.model.Call(ctx, st, llm.CallMeta{Node: c.id, Kind: c.kind, Role: c.role}, llm.Prompt(c.system, user), c.opts...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.kind, err)
	}
	text = strings.TrimSpace(text)
	out := text
	if c.extract {
		if a, ok := verify.Extract(text); ok {
			out = a
		}
		if out != text {
			tr.Emit(trace.Event{Node: c.id, Kind: trace.KindThought, Text: text})
		}
	}
	switch {
	case out == "":
		if why == "" {
			why, failure = "the model returned an empty answer", state.FailureParse
		}
		st.SetPartial("", why, failure)
	case why != "":
		if failure == "" {
			failure = state.FailureBudget
		}
		st.SetPartial(out, why, failure)
	default:
		st.SetAnswer(out)
	}
	data := map[string]any{"complete": st.Complete}
	if !st.Complete {
		data["reason"] = st.Reason
		data["failure"] = st.Failure
	}
	tr.Emit(trace.Event{Node: c.id, Kind: trace.KindAnswer, Text: out, Data: data})
	return "", nil
}

// composeScratchpad renders ReAct entries for the prompt.
func composeScratchpad(entries []state.Entry) string {
	var b strings.Builder
	for i, e := range entries {
		if e.Thought != "" {
			fmt.Fprintf(&b, "Thought %d: %s\n", i+1, e.Thought)
		}
		if e.Tool != "" {
			fmt.Fprintf(&b, "Action %d: %s[%s]\nObservation %d: %s\n", i+1, e.Tool, e.Input, i+1, e.Observation)
		}
		if e.Final != "" {
			fmt.Fprintf(&b, "Proposed answer: %s\n", e.Final)
		}
	}
	return b.String()
}
