package nodes

import (
	"fmt"
	"strings"

	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
)

const solveSystem = "You are the solver of a plan-and-work state. Workers have followed a plan and collected evidence with tools. Answer the task from the plan and its evidence; evidence can be long or partly irrelevant, so read it with care, and do not invent facts it does not support."

// Extra values: .Extra.Plan (the ReWOO plan with evidence), .Extra.Why.
const solvePrompt = `{{with .History}}{{.}}
{{end}}Task: {{.Question}}

Plan and evidence:
{{.Extra.Plan}}{{with .Extra.Why}}
Some evidence is missing: {{.}}.
{{end}}
Solve the task using the evidence. End with one line of the form:
Answer: <the final answer, as short as the task allows>`

// NewSolver builds a `solver` node, ReWOO's final step: one model call
// (role "solve") that writes the answer from the plan and the evidence of
// its steps (the #E results). A complete answer already in the state is
// passed through. Since ReWOO does not re-plan, a plan with failed or
// skipped steps yields an answer marked incomplete (failure "tool", the
// reason naming the steps); so does a state whose Reason says the work
// stopped early.
func NewSolver(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	return newCompose(env, spec, "solve", solveSystem, solvePrompt, true)
}

// solverEvidence renders a plan in ReWOO's form: each step's description, its
// call with the #E references as written, and its result.
func solverEvidence(steps []plan.Step) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "Plan: %s\n", s.Description)
		if s.Tool != "" {
			fmt.Fprintf(&b, "#E%s = %s[%s]\n", s.ID, s.Tool, s.Input)
		} else {
			fmt.Fprintf(&b, "#E%s\n", s.ID)
		}
		switch s.Status {
		case plan.StatusDone:
			fmt.Fprintf(&b, "Evidence: %s\n", strings.TrimSpace(s.Result))
		case plan.StatusFailed, plan.StatusSkipped:
			fmt.Fprintf(&b, "Evidence: none (%s: %s)\n", s.Status, textutil.OneLine(s.Error))
		default:
			b.WriteString("Evidence: none (not run)\n")
		}
	}
	return b.String()
}

// solverGaps explains which steps failed or were skipped, with the failure
// kind to record; it returns "" when every step is done.
func solverGaps(steps []plan.Step) (why, failure string) {
	var parts []string
	for _, s := range steps {
		switch s.Status {
		case plan.StatusFailed, plan.StatusSkipped:
			parts = append(parts, fmt.Sprintf("step %s %s (%s)", s.ID, s.Status, textutil.OneLine(s.Error)))
		case plan.StatusDone:
		default:
			parts = append(parts, fmt.Sprintf("step %s did not run", s.ID))
		}
	}
	if len(parts) == 0 {
		return "", ""
	}
	return strings.Join(parts, "; "), state.FailureTool
}
