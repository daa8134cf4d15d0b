package planner

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/tools"
)

const defaultSystem = `You are the planner of an agent. You do not answer questions yourself: you write a short plan of steps that other workers carry out with the tools listed below. Reply with the plan only, in the requested format.`

// defaultPrompt is the planner's user message. Extra values:
// .Extra.Tools (rendered tool list), .Extra.Schema (plan JSON schema),
// .Extra.MaxSteps, .Extra.RequireTools, .Extra.Output.
const defaultPrompt = `Task: {{.Question}}

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

// PlanSchema returns the JSON schema of a plan, as used in the prompt and
// as the parameters of the forced "plan" tool call.
func PlanSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"steps": map[string]any{
				"type":        "array",
				"description": "The steps, in a valid order.",
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"id":          map[string]any{"type": "string", "description": "Unique step id, such as \"1\"."},
						"description": map[string]any{"type": "string", "description": "What the step achieves."},
						"tool":        map[string]any{"type": "string", "description": "The tool the step calls."},
						"input":       map[string]any{"type": "string", "description": "The tool input; #E<id> stands for the result of step <id>."},
						"depends_on":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Ids of the steps whose results this step needs."},
					},
					"required": []string{"id", "description"},
				},
			},
		},
		"required": []string{"steps"},
	}
}

func schemaText() string {
	b, err := json.Marshal(PlanSchema())
	if err != nil { // unreachable: the schema is plain maps and strings
		return "{}"
	}
	return string(b)
}

// ToolList renders tools for a prompt: one line per tool with its name,
// description and input schema, followed by the pseudo-tools in extra.
func ToolList(reg *tools.Registry, extra ...tools.Info) string {
	var b strings.Builder
	infos := append(reg.Infos(), extra...)
	if len(infos) == 0 {
		b.WriteString("(no tools: describe steps a worker can do by reasoning)\n")
	}
	for _, in := range infos {
		schema, err := json.Marshal(in.Schema)
		if err != nil {
			schema = []byte("{}")
		}
		fmt.Fprintf(&b, "- %s: %s Input schema: %s\n", in.Name, oneLine(in.Description), schema)
	}
	return b.String()
}

// FormatPlan renders steps as numbered lines with their tool, input,
// dependencies, status and result, for prompts and traces.
func FormatPlan(steps []agent.Step, withResults bool) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "%s. %s", s.ID, s.Description)
		if s.Tool != "" {
			fmt.Fprintf(&b, " [%s: %s]", s.Tool, s.Input)
		}
		if len(s.DependsOn) > 0 {
			fmt.Fprintf(&b, " (after %s)", strings.Join(s.DependsOn, ", "))
		}
		if withResults {
			switch s.Status {
			case agent.StatusDone:
				fmt.Fprintf(&b, "\n   result: %s", indent(s.Result))
			case agent.StatusFailed, agent.StatusSkipped:
				fmt.Fprintf(&b, "\n   %s: %s", s.Status, indent(s.Error))
				if s.Result != "" {
					fmt.Fprintf(&b, "\n   partial result: %s", indent(s.Result))
				}
			default:
				b.WriteString("\n   not run yet")
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n   ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
