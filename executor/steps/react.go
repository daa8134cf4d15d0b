package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
)

// StepAgent runs one plan step as an agent sub-run. *executor.Loop (the
// ReAct loop) implements it.
type StepAgent interface {
	Run(ctx context.Context, st *state.State, in executor.Input) (executor.Outcome, error)
}

// SubRunKind is the caller kind of a react step's model calls (the node id
// is the execute node's), so offline models play the ReAct role for them.
const SubRunKind = "react"

// NewReActAgent builds the ReAct loop of package executor from a `react:`
// settings block (the keys of a `react` node; unknown keys are errors).
func NewReActAgent(env nodekind.Env, settings map[string]any) (StepAgent, error) {
	var cfg executor.ReActConfig
	if err := config.Decode(settings, &cfg); err != nil {
		return nil, err
	}
	if cfg.ShowVars == nil {
		// A step's prompt carries earlier results as its context, and
		// sibling steps running at once change the vars mid-run.
		cfg.ShowVars = new(false)
	}
	return executor.NewLoop(env, cfg)
}

// runAgent runs a react-strategy step. The sub-run's answer is the step's
// result; the run's answer is written later by the re-planner or the
// finalizer. An incomplete sub-run (budget, parse or loop guard) fails the
// step and keeps its best-effort answer as a partial result.
func (e *Execute) runAgent(ctx context.Context, st *state.State, j job) result {
	out, err := e.agent.Run(llm.WithStep(ctx, j.step.ID), st, executor.Input{NodeID: e.id, Kind: SubRunKind, Task: stepTask(j.step),
		Context: stepContext(st.Task.Question, j), Reflections: st.Reflections})
	if err != nil {
		return result{err: err}
	}
	if out.Complete && strings.TrimSpace(out.Answer) != "" {
		return result{status: plan.StatusDone, output: strings.TrimSpace(out.Answer)}
	}
	why := out.Reason
	if why == "" {
		why = "the sub-run ended without an answer"
	}
	if out.Failure != "" {
		why = fmt.Sprintf("%s (%s)", why, out.Failure)
	}
	failure := out.Failure
	if failure == "" {
		failure = state.FailureBudget
	}
	return result{status: plan.StatusFailed, output: strings.TrimSpace(out.Answer), errText: why, failure: failure}
}

// stepTask is the task of a step's sub-run: the step itself.
func stepTask(s plan.Step) string {
	t := s.Description
	if t == "" {
		t = "Use the tool " + s.Tool
	}
	if s.Tool != "" {
		t += fmt.Sprintf(" (suggested tool: %s", s.Tool)
		if s.Input != "" {
			t += fmt.Sprintf(", input: %s", s.Input)
		}
		t += ")"
	}
	return t + "\nReply with the result of this step only."
}

// stepContext tells the sub-run the overall task, its place in the plan and
// the results of the steps it depends on.
func stepContext(question string, j job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This is step %s of a plan for the overall task: %s", j.step.ID, question)
	if j.context != "" {
		b.WriteString("\nResults of the steps it depends on:\n")
		b.WriteString(j.context)
	}
	return b.String()
}
