package steps

import "github.com/planner-engine/planner/tools"

// LLMToolDescription describes the built-in model worker of the rewoo and
// parallel strategies (Settings.LLMTool) to planners and re-planners.
const LLMToolDescription = "Asks a language model to reason over text. The input is a complete instruction that may include earlier results as #E<id>, for example: Read the year in #E1 and the year in #E2 and write only the expression <second year> - <first year>. Use it to extract, combine or rephrase results; it knows nothing else."

// LLMToolInfo describes the executor's built-in model worker, named name,
// for the tool list of a planning prompt (see Settings.LLMTool).
func LLMToolInfo(name string) tools.Info {
	return tools.Info{Name: name, Description: LLMToolDescription,
		Schema: map[string]any{"type": "object", "properties": map[string]any{"input": map[string]any{"type": "string"}}, "required": []string{"input"}}}
}
