package nodes

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/tmc/langchaingo/llms"
)

// planSolvePrompt follows the PS+ method: understand the problem, extract
// the relevant variables and numbers, devise a plan, carry it out step by
// step with attention to calculation, then state the answer.
const planSolvePrompt = `{{with .History}}{{.}}
{{end}}Question: {{.Question}}

First understand the problem, pick out the relevant variables and their values, and devise a plan to solve it.
Then carry out the plan step by step: work out each intermediate variable, paying attention to correct calculation and common sense.
Finish with the final answer on its own last line in the form:
Answer: <answer>`

// NewPlanSolve builds a `plan_solve` node: Plan-and-Solve (PS+) prompting in
// one call, with answer extraction and no tools.
func NewPlanSolve(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
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
	// MaxSubquestions bounds the sub-questions solved, the task itself
	// included; when the model lists more, the first ones and the task are
	// kept. Default 6.
	MaxSubquestions int `mapstructure:"max_subquestions"`
	// Temperature overrides the model's sampling temperature for both
	// stages.
	Temperature *float64 `mapstructure:"temperature"`
	// DecomposePrompt overrides the decomposition template. It sees
	// {{.Question}}; the reply must be a numbered list.
	DecomposePrompt string `mapstructure:"decompose_prompt"`
	// DecomposePromptFile reads DecomposePrompt from a file instead.
	DecomposePromptFile string `mapstructure:"decompose_prompt_file"`
	// SolvePrompt overrides the sub-question template. It sees
	// {{.Question}}, {{.Extra.Solved}} (the earlier sub-questions, each
	// with fields Q and A), {{.Extra.Current}} (the sub-question to answer)
	// and {{.Extra.Index}} (its 1-based position).
	SolvePrompt string `mapstructure:"solve_prompt"`
	// SolvePromptFile reads SolvePrompt from a file instead.
	SolvePromptFile string `mapstructure:"solve_prompt_file"`
}

// LeastToMost decomposes a task into sub-questions, then solves them in
// order, each seeing the earlier answers; the last answer answers the task.
type LeastToMost struct {
	id, kind  string
	model     llm.Model
	decompose *nodekind.Template
	solve     *nodekind.Template
	max       int
	opts      []llms.CallOption
}

// NewLeastToMost builds a `least_to_most` nodekind.
func NewLeastToMost(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s LeastToMostSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	if err := applyCounts(count{"max_subquestions", &s.MaxSubquestions, 6}); err != nil {
		return nodekind.Built{}, err
	}
	decSpec, solSpec := leastToMostSpecs()
	dec, err := env.Template(decSpec, s.DecomposePrompt, s.DecomposePromptFile, decomposePrompt)
	if err != nil {
		return nodekind.Built{}, err
	}
	sol, err := env.Template(solSpec, s.SolvePrompt, s.SolvePromptFile, subSolvePrompt)
	if err != nil {
		return nodekind.Built{}, err
	}
	n := &LeastToMost{id: spec.ID, kind: spec.Type, model: env.Model, max: s.MaxSubquestions, decompose: dec, solve: sol}
	if s.Temperature != nil {
		n.opts = append(n.opts, llms.WithTemperature(*s.Temperature))
	}
	return nodekind.Built{Node: n}, nil
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

// SubAnswer is one solved sub-question, as least_to_most's solve prompt
// sees it in {{.Extra.Solved}}.
type SubAnswer struct{ Q, A string }

// Run decomposes, then solves each sub-question in order.
func (n *LeastToMost) Run(ctx context.Context, st *state.State) (string, error) {
	prompt, err := n.decompose.Render(st, nil)
	if err != nil {
		return "", err
	}
	text, _, err := n.model.Call(ctx, st, llm.CallMeta{Node: n.id, Kind: n.kind, Role: "decompose"}, llm.Prompt(defaultSystem, prompt), n.opts...)
	if err != nil {
		return "", err
	}
	subs := ParseNumbered(text)
	if len(subs) == 0 || !strings.EqualFold(strings.TrimSpace(subs[len(subs)-1]), strings.TrimSpace(st.Task.Question)) {
		subs = append(subs, st.Task.Question)
	}
	if len(subs) > n.max {
		// Keep the first, simplest sub-questions and the task itself.
		subs = append(subs[:n.max-1:n.max-1], subs[len(subs)-1])
	}
	st.SubQuestions = make([]state.SubQuestion, len(subs))
	for i, q := range subs {
		st.SubQuestions[i].Question = q
	}
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindPlan, Text: numberedList(subs)})
	var solved []SubAnswer
	last := ""
	for i, q := range subs {
		prompt, err := n.solve.Render(st, map[string]any{"Solved": solved, "Current": q, "Index": i + 1})
		if err != nil {
			return "", err
		}
		text, _, err := n.model.Call(ctx, st, llm.CallMeta{Node: n.id, Kind: n.kind, Role: "solve"}, llm.Prompt(defaultSystem, prompt), n.opts...)
		if err != nil {
			return "", err
		}
		a, ok := verify.Extract(text)
		if !ok {
			a = strings.TrimSpace(text)
		}
		solved = append(solved, SubAnswer{Q: q, A: a})
		st.SubQuestions[i].Answer = a
		trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindStep, Text: fmt.Sprintf("%d. %s → %s", i+1, q, a)})
		last = a
	}
	if last == "" {
		st.SetPartial("", "the last sub-question got no answer", state.FailureParse)
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
