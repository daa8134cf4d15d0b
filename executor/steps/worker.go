package steps

import (
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/tools"
)

// LLMToolDescription describes the built-in model worker of the rewoo and
// parallel strategies (Settings.LLMTool) to planners and re-planners.
const LLMToolDescription = "Asks a language model to reason over text. The input is a complete instruction that may include earlier results as #E<id>, for example: Read the year in #E1 and the year in #E2 and write only the expression <second year> - <first year>. Use it to extract, combine or rephrase results; it knows nothing else."

// LLMToolInfo describes the executor's built-in model worker, named name,
// for the tool list of a planning prompt (see Settings.LLMTool).
func LLMToolInfo(name string) tools.Info {
	return tools.Info{Name: name, Description: LLMToolDescription,
		Schema: map[string]any{"type": "object", "properties": map[string]any{"input": map[string]any{"type": "string"}}, "required": []string{"input"}}}
}

// PlanningTools are the tools the steps of a plan may name, as a planning
// node (planner, replanner, joiner) offers them to its model.
type PlanningTools struct {
	// Set is what plan.Rules.Tools checks the steps' tools against.
	Set plan.ToolSet
	// List is the tool list of the planning prompt (tools.PromptList).
	List string
	// Len counts the tools, the model worker included.
	Len int
}

// NewPlanningTools returns the tools of reg (none when reg is nil) and,
// when llmTool is set, the executor's model worker under that name, which
// must match the execute node's llm_tool. A name that a registered tool
// already has is a *config.SettingError for llm_tool.
func NewPlanningTools(reg *tools.Registry, llmTool string) (PlanningTools, error) {
	if reg == nil {
		reg, _ = tools.NewRegistry(nil)
	}
	name := strings.TrimSpace(llmTool)
	if name == "" {
		return PlanningTools{Set: reg, List: tools.PromptList(reg), Len: reg.Len()}, nil
	}
	if err := checkLLMToolName(reg, name); err != nil {
		return PlanningTools{}, err
	}
	return PlanningTools{Set: reg.WithNames(name), List: tools.PromptList(reg, LLMToolInfo(name)), Len: reg.Len() + 1}, nil
}

// checkLLMToolName rejects a model worker name that a tool of reg has.
func checkLLMToolName(reg *tools.Registry, name string) error {
	if _, clash := reg.Resolve(name); clash {
		return config.SettingErrorf("llm_tool", "%q is already the name of a registered tool; pick another name", name)
	}
	return nil
}

// MaxPlanSteps resolves a planning node's max_plan_steps setting: 0 means
// plan.DefaultMaxSteps, a negative value is a *config.SettingError.
func MaxPlanSteps(n int) (int, error) {
	switch {
	case n == 0:
		return plan.DefaultMaxSteps, nil
	case n < 0:
		return 0, config.SettingErrorf("max_plan_steps", "must be positive, got %d", n)
	}
	return n, nil
}
