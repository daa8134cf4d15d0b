package replanner

import "github.com/planner-engine/planner/nodekind"

const replanSystem = `You are the re-planner of an agent that solves tasks by following a plan. Workers have carried out steps of the plan with tools. You read their results and decide: finish with the answer, or revise the steps that are still to do. Reply with one JSON object only.`

const joinSystem = `You are the joiner of an agent that runs plans of tool calls in parallel. You read the results of the calls made so far and decide: finish with the answer, or plan further tool calls. Reply with one JSON object only.`

// Templates declares the prompt template of `replanner` and `joiner`: the
// .Extra values it sees and what a custom prompt must carry
// (nodekind.Kind.Templates).
func Templates() []nodekind.TemplateSpec { return []nodekind.TemplateSpec{promptSpec()} }

func promptSpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{
		Key: "prompt",
		Extra: []nodekind.Field{
			{Name: "Plan", Doc: "the plan so far: each step with its status and result", Sample: "1. Compute 17 * 23 [calculator: 17*23] done: 391\n"},
			{Name: "Tools", Doc: "the tools a new step may name, one line each with its description and input schema",
				Sample: "- calculator: Evaluates an arithmetic expression exactly. Input schema: {\"type\":\"string\"}\n"},
			{Name: "ReplansLeft", Doc: "how many more times it may re-plan (`max_replans` minus those done)", Sample: 2},
			{Name: "NextID", Doc: "the id the first new step must take", Sample: "2"},
			{Name: "MaxSteps", Doc: "`max_plan_steps`", Sample: 8},
			{Name: "RequireTools", Doc: "`require_tools`", Sample: true},
		},
		Required: []nodekind.Requirement{{Fields: []string{"Tools"}, Append: "Tools:\n{{.Extra.Tools}}"}},
	}
}

// replanPrompt is the replanner's user message; promptSpec declares its
// .Extra values.
const replanPrompt = `{{with .History}}{{.}}
{{end}}Task: {{.Question}}

The plan and what happened so far:
{{.Extra.Plan}}
Tools the workers can use:
{{.Extra.Tools}}
{{- if gt .Extra.ReplansLeft 0}}
If the results answer the task, finish:
{"action": "finish", "answer": "<the final answer, as short as the task allows>"}
Otherwise replace the steps that have not run yet with the steps still needed (at most {{.Extra.MaxSteps}}; do not repeat steps that are done; their results stay available):
{"action": "replan", "steps": [{"id": "{{.Extra.NextID}}", "description": "...", "tool": "...", "input": "...", "depends_on": []}]}
New step ids start at "{{.Extra.NextID}}". A new step may depend on finished steps and use their results as #E<id>.
{{- if .Extra.RequireTools}} Every new step must name one of the tools.{{end}}
You may re-plan {{.Extra.ReplansLeft}} more time(s).
{{- else}}
No more re-planning is possible. Finish now with the best answer the results support:
{"action": "finish", "answer": "<the final answer>"}
{{- end}}`

const joinPrompt = `Question: {{.Question}}

Tool calls made so far and their results:
{{.Extra.Plan}}
Tools available:
{{.Extra.Tools}}
Decide whether these results are enough to answer the question.
If they are, reply {"action": "finish", "answer": "<the final answer, as short as the question allows>"}.
{{- if gt .Extra.ReplansLeft 0}}
If not, plan the further tool calls needed (at most {{.Extra.MaxSteps}}), each one call of one of the tools, using results of earlier calls as #E<id>:
{"action": "replan", "steps": [{"id": "{{.Extra.NextID}}", "description": "...", "tool": "...", "input": "...", "depends_on": []}]}
New ids start at "{{.Extra.NextID}}". Calls that do not depend on each other run in parallel. You may re-plan {{.Extra.ReplansLeft}} more time(s).
{{- else}}
No more tool calls are possible: finish with the best answer the results support.
{{- end}}`

// feedbackPrompt asks for a corrected decision.
const feedbackPrompt = `That reply could not be used:
%s

Reply with one JSON object: {"action": "finish", "answer": "..."} or {"action": "replan", "steps": [...]}.`
