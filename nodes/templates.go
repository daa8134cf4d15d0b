package nodes

import (
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/nodekind"
)

// The declarations of this package's prompt templates (nodekind.Kind.Templates):
// each constructor compiles its templates against the same specs, so
// validation renders them with samples of the values the node passes.

// GenerateTemplates declares the prompt of `direct`, `cot`, `plan_solve`
// and `self_consistency`: the run state only.
func GenerateTemplates() []nodekind.TemplateSpec { return []nodekind.TemplateSpec{generateSpec()} }

func generateSpec() nodekind.TemplateSpec { return nodekind.TemplateSpec{Key: "prompt"} }

// LeastToMostTemplates declares the templates of `least_to_most`.
func LeastToMostTemplates() []nodekind.TemplateSpec {
	dec, sol := leastToMostSpecs()
	return []nodekind.TemplateSpec{dec, sol}
}

func leastToMostSpecs() (decompose, solve nodekind.TemplateSpec) {
	return nodekind.TemplateSpec{Key: "decompose_prompt"}, nodekind.TemplateSpec{
		Key: "solve_prompt",
		Extra: []nodekind.Field{
			{Name: "Solved", Doc: "the earlier sub-questions, a list; each has `.Q` and `.A`", Sample: []SubAnswer{{Q: "What is 17 * 23?", A: "391"}}},
			{Name: "Current", Doc: "the sub-question to answer", Sample: "What is 391 + 4?"},
			{Name: "Index", Doc: "its position, from 1", Sample: 2},
		},
	}
}

// ToTTemplates declares the templates of `tot`.
func ToTTemplates() []nodekind.TemplateSpec {
	p, e := totSpecs()
	return []nodekind.TemplateSpec{p, e}
}

func totSpecs() (propose, evaluate nodekind.TemplateSpec) {
	path := nodekind.Field{Name: "Path", Doc: "the thoughts so far, one per line", Sample: "17 * 23 = 391"}
	depth := nodekind.Field{Name: "Depth", Doc: "the depth of the state", Sample: 1}
	return nodekind.TemplateSpec{Key: "propose_prompt", Extra: []nodekind.Field{path,
			{Name: "K", Doc: "how many proposals to ask for (`proposals`)", Sample: 3}, depth}},
		nodekind.TemplateSpec{Key: "evaluate_prompt", Extra: []nodekind.Field{
			{Name: "Path", Doc: "the thoughts before the candidate, one per line", Sample: "17 * 23 = 391"},
			{Name: "Candidate", Doc: "the thought to value", Sample: "391 + 4 = 395"}, depth}}
}

// EvaluateTemplates declares the template of `evaluate`.
func EvaluateTemplates() []nodekind.TemplateSpec { return []nodekind.TemplateSpec{judgeSpec()} }

func judgeSpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{Key: "judge_prompt", Extra: []nodekind.Field{
		{Name: "Answer", Doc: "the answer to judge", Sample: "395"}}}
}

// ReflectTemplates declares the template of `reflect`.
func ReflectTemplates() []nodekind.TemplateSpec { return []nodekind.TemplateSpec{reflectSpec()} }

func reflectSpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{Key: "reflect_prompt", Extra: []nodekind.Field{
		{Name: "Answer", Doc: "the failed trial's answer", Sample: "394"},
		{Name: "Feedback", Doc: "the evaluator's verdict", Sample: "wrong answer"},
		{Name: "Steps", Doc: "the failed trial's actions, one per line", Sample: "- calculator[17*23] -> 391\n"},
	}}
}

// LATSTemplates declares the templates of `lats`: its own and those of the
// ReAct turns under `react:`.
func LATSTemplates() []nodekind.TemplateSpec {
	v, r := latsSpecs()
	return append([]nodekind.TemplateSpec{v, r}, nodekind.Nested("react", executor.Templates())...)
}

func latsSpecs() (value, reflect nodekind.TemplateSpec) {
	traj := "Thought: compute\nAction: calculator\nAction Input: 17*23+4\nObservation: [calculator] 395\nFinal Answer: 395"
	return nodekind.TemplateSpec{Key: "value_prompt", Extra: []nodekind.Field{
			{Name: "Trajectory", Doc: "the steps so far in the ReAct text format, ending with the final answer if there is one", Sample: traj}}},
		nodekind.TemplateSpec{Key: "reflect_prompt", Extra: []nodekind.Field{
			{Name: "Trajectory", Doc: "the steps before the answer", Sample: traj},
			{Name: "Answer", Doc: "the answer judged wrong", Sample: "394"},
			{Name: "Feedback", Doc: "the reward it got", Sample: "reward 0.00"}}}
}

// FinalizerTemplates declares the prompt of `finalizer`.
func FinalizerTemplates() []nodekind.TemplateSpec { return []nodekind.TemplateSpec{composeSpec(false)} }

// SolverTemplates declares the prompt of `solver`.
func SolverTemplates() []nodekind.TemplateSpec { return []nodekind.TemplateSpec{composeSpec(true)} }

func composeSpec(solver bool) nodekind.TemplateSpec {
	plan := nodekind.Field{Name: "Plan", Doc: "the plan's steps with their results, or empty", Sample: "1. Compute 17 * 23 [calculator: 17*23] done: 391\n"}
	if solver {
		plan = nodekind.Field{Name: "Plan", Doc: "the plan in ReWOO's form: each step, its `#E` call and its evidence", Sample: "Plan: Compute 17 * 23\n#E1 = calculator[17*23]\nEvidence: 391\n"}
	}
	return nodekind.TemplateSpec{Key: "prompt", Extra: []nodekind.Field{plan,
		{Name: "Scratchpad", Doc: "the ReAct steps, if a `react` node ran, or empty", Sample: "Thought: compute\nAction: calculator[17*23]\nObservation: 391\n"},
		{Name: "Why", Doc: "why the work stopped early, or empty", Sample: "the step budget ran out"},
	}}
}
