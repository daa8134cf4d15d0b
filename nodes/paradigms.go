package nodes

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/answer"
	"github.com/planner-engine/planner/trace"
)

// planSolvePrompt follows the PS+ method: understand the problem, extract
// the relevant variables and numbers, devise a plan, carry it out step by
// step with attention to calculation, then state the answer.
const planSolvePrompt = `Question: {{.Question}}

First understand the problem, pick out the relevant variables and their values, and devise a plan to solve it.
Then carry out the plan step by step: work out each intermediate variable, paying attention to correct calculation and common sense.
Finish with the final answer on its own last line in the form:
Answer: <answer>`

// NewPlanSolve builds a `plan_solve` node: Plan-and-Solve (PS+) prompting in
// one call, with answer extraction and no tools.
func NewPlanSolve(env agent.Env, spec agent.NodeSpec) (agent.Built, error) {
	return newGenerate(env, spec, planSolvePrompt, true)
}

const decomposePrompt = `To answer the question below, break it into simpler sub-questions that can be answered one after another, each building on the answers before it. The last sub-question must be the original question itself.

Question: {{.Question}}

Write only the sub-questions as a numbered list (1., 2., ...).`

const subSolvePrompt = `Answer a sub-question of a larger problem.

Problem: {{.Question}}
{{range .Extra.Solved}}
Sub-question: {{.Q}}
Answer: {{.A}}
{{end}}
Sub-question: {{.Extra.Current}}
Think briefly, then give the answer on a last line "Answer: <answer>".`

// LeastToMostSettings configure `least_to_most`.
type LeastToMostSettings struct {
	// MaxSubquestions bounds the decomposition. Default 6.
	MaxSubquestions int `mapstructure:"max_subquestions"`
	// Temperature overrides the model's sampling temperature.
	Temperature *float64 `mapstructure:"temperature"`
}

// LeastToMost decomposes a task into sub-questions, then solves them in
// order, each seeing the earlier answers; the last answer answers the task.
type LeastToMost struct {
	id, kind  string
	model     agent.Model
	decompose *agent.Template
	solve     *agent.Template
	max       int
}

// NewLeastToMost builds a `least_to_most` node.
func NewLeastToMost(env agent.Env, spec agent.NodeSpec) (agent.Built, error) {
	var s LeastToMostSettings
	if err := agent.Decode(spec.Settings, &s); err != nil {
		return agent.Built{}, err
	}
	if s.MaxSubquestions <= 0 {
		s.MaxSubquestions = 6
	}
	return agent.Built{Node: &LeastToMost{id: spec.ID, kind: spec.Type, model: env.Model, max: s.MaxSubquestions,
		decompose: agent.MustTemplate("decompose", decomposePrompt), solve: agent.MustTemplate("subsolve", subSolvePrompt)}}, nil
}

var numberedLine = regexp.MustCompile(`^\s*(?:\d+[.)、:]|[-*•])\s*(.+?)\s*$`)

// ParseNumbered returns the items of a numbered or bulleted list.
func ParseNumbered(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if m := numberedLine.FindStringSubmatch(line); m != nil && strings.TrimSpace(m[1]) != "" {
			out = append(out, strings.TrimSpace(m[1]))
		}
	}
	return out
}

type qa struct{ Q, A string }

// Run decomposes, then solves each sub-question in order.
func (n *LeastToMost) Run(ctx context.Context, st *agent.State) (string, error) {
	prompt, err := n.decompose.Render(st, nil)
	if err != nil {
		return "", err
	}
	text, _, err := n.model.Call(ctx, st, agent.Caller{Node: n.id, Kind: n.kind, Role: "decompose"}, agent.Prompt(defaultSystem, prompt))
	if err != nil {
		return "", err
	}
	subs := ParseNumbered(text)
	if len(subs) > n.max {
		subs = subs[len(subs)-n.max:]
	}
	if len(subs) == 0 || !strings.EqualFold(strings.TrimSpace(subs[len(subs)-1]), strings.TrimSpace(st.Task.Question)) {
		subs = append(subs, st.Task.Question)
	}
	st.Note("subquestions", strings.Join(subs, "\n"))
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindPlan, Text: numberedList(subs)})
	var solved []qa
	last := ""
	for i, q := range subs {
		prompt, err := n.solve.Render(st, map[string]any{"Solved": solved, "Current": q})
		if err != nil {
			return "", err
		}
		text, _, err := n.model.Call(ctx, st, agent.Caller{Node: n.id, Kind: n.kind, Role: "solve"}, agent.Prompt(defaultSystem, prompt))
		if err != nil {
			return "", err
		}
		a, ok := answer.Extract(text)
		if !ok {
			a = strings.TrimSpace(text)
		}
		solved = append(solved, qa{Q: q, A: a})
		trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindStep, Text: fmt.Sprintf("%d. %s → %s", i+1, q, a)})
		last = a
	}
	if last == "" {
		st.SetPartial("", "the last sub-question got no answer", agent.FailureParse)
	} else {
		st.SetAnswer(last)
	}
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindAnswer, Text: last})
	return "", nil
}

func numberedList(items []string) string {
	var b strings.Builder
	for i, s := range items {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	return strings.TrimSpace(b.String())
}
