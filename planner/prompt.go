package planner

import (
	"encoding/json"

	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
)

const defaultSystem = `You are the planner of an agent. You do not answer questions yourself: you write a short plan of steps that other workers carry out with the tools listed below. Reply with the plan only, in the requested format.`

// Templates declares the planner's prompt template: the .Extra values it
// sees and what a custom prompt must carry (nodekind.Kind.Templates).
func Templates() []nodekind.TemplateSpec { return []nodekind.TemplateSpec{promptSpec()} }

func promptSpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{
		Key: "prompt",
		Extra: []nodekind.Field{
			{Name: "Tools", Doc: "the tools a step may name, one line each with its description and input schema (and `llm_tool`)",
				Sample: "- calculator: Evaluates an arithmetic expression exactly. Input schema: {\"type\":\"string\"}\n"},
			{Name: "Schema", Doc: "the plan's JSON schema", Sample: schemaText()},
			{Name: "MaxSteps", Doc: "`max_plan_steps`", Sample: 8},
			{Name: "RequireTools", Doc: "`require_tools`", Sample: true},
			{Name: "Output", Doc: "`output`: json, tool or text", Sample: OutputJSON},
		},
		Required: []nodekind.Requirement{
			{Fields: []string{"Tools"}, Append: "Tools:\n{{.Extra.Tools}}"},
			{Fields: []string{"Schema"}, When: "unless `output: tool`",
				Append: "Reply with one JSON object and nothing else, matching this schema:\n{{.Extra.Schema}}"},
		},
	}
}

// defaultPrompt is the planner's user message; promptSpec declares its
// .Extra values.
const defaultPrompt = `{{with .History}}{{.}}
{{end}}Task: {{.Question}}

Tools:
{{.Extra.Tools}}
Write a plan of at most {{.Extra.MaxSteps}} steps that solves the task.
{{- if .Extra.RequireTools}}
Every step is exactly one call of one of the tools above: set "tool" to the tool's name and "input" to the complete tool input. A step's input may use the result of an earlier step by writing #E<id> (for example #E1 for the result of step "1"); it is replaced by that result before the call. List every step whose result a step needs in its "depends_on".
{{- else}}
Each step is a sub-goal a worker can achieve with the tools; describe it so that it can be done on its own, given the results of the steps it depends on. "tool" and "input" are optional hints for the worker. List in "depends_on" the steps whose results a step needs.
{{- end}}
Steps that do not depend on each other can run at the same time, so only list real dependencies. Give each step a unique id ("1", "2", ...). Do not include a final step that only states the answer: the answer is written from the step results.
{{- if eq .Extra.Output "tool"}}

Call the "plan" function with the plan.
{{- else}}

Reply with one JSON object and nothing else, matching this schema:
{{.Extra.Schema}}
Example: {"steps": [{"id": "1", "description": "Find the year Uranus was discovered", "tool": "search", "input": "Uranus discovered", "depends_on": []}, {"id": "2", "description": "Find the year Neptune was discovered", "tool": "search", "input": "Neptune discovered", "depends_on": []}, {"id": "3", "description": "Subtract the years", "tool": "calculator", "input": "#E2 - #E1", "depends_on": ["1", "2"]}]}
{{- end}}`

// feedbackPrompt asks for a corrected plan after a rejection.
const feedbackPrompt = `That plan was rejected:
%s

Reply with the whole corrected plan in the same format.`

func schemaText() string {
	b, err := json.Marshal(plan.Schema())
	if err != nil { // unreachable: the schema is plain maps and strings
		return "{}"
	}
	return string(b)
}
