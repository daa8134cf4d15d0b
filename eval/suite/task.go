package suite

import (
	"strings"

	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/state"
)

// Task is one task of a suite: the state.Task an agent is given and, when
// the suite has one, the gold solution a perfect agent would follow. Only
// evaluation code reads the gold solution (the offline simulator follows
// it, tests check it); agents see Task.Task.
//
// In JSON the state.Task fields, "gold" and "replies" sit side by side:
// {"id","question","answer","tags","gold","replies"}.
type Task struct {
	state.Task
	// Gold is the solution program a perfect agent would follow, when known.
	Gold *Gold `json:"gold,omitempty"`
	// Replies are the task's own scripted model replies, in order, when the
	// suite has them: a recorded run's raw model outputs, which the
	// scripted model's per-task mode (scripted.TaskModel, --llm scripted
	// without a file) plays back to every run of the task. Like Gold, only
	// evaluation code reads them.
	Replies []scripted.Reply `json:"replies,omitempty"`
}

// Gold is a task's gold solution: the tool calls a perfect agent would make,
// in a valid dependency order, and the final answer.
type Gold struct {
	// Steps are the tool calls. Inputs may reference earlier results as #E<id>.
	Steps []GoldStep `json:"steps,omitempty"`
	// Reasoning is free-text worked reasoning (for CoT-style roles), optional.
	Reasoning []string `json:"reasoning,omitempty"`
	// Answer is the final answer the program yields.
	Answer string `json:"answer"`
}

// GoldStep is one tool call of a gold program.
type GoldStep struct {
	// ID is unique within the program ("1", "2", ...).
	ID string `json:"id"`
	// Thought is what a perfect agent would think before this call. Optional.
	Thought string `json:"thought,omitempty"`
	// Tool is the tool name, for example "search" or "calculator".
	Tool string `json:"tool"`
	// Input is the tool input; "#E1" stands for the output of step 1.
	Input string `json:"input"`
	// DependsOn lists the ids of steps whose outputs this step needs.
	DependsOn []string `json:"depends_on,omitempty"`
	// Output is the expected tool output (key fact), when known.
	Output string `json:"output,omitempty"`
}

// AgentTasks returns the state.Task of each task, in order, without the
// gold solutions: what a comparison runs the agents on.
func AgentTasks(tasks []Task) []state.Task {
	out := make([]state.Task, len(tasks))
	for i, t := range tasks {
		out[i] = t.Task
	}
	return out
}

// answerFromGold sets the reference answer of a task that has none to its
// gold solution's answer, so that scorers, which read only the state.Task's
// Answer, judge it against the gold solution.
func answerFromGold(t *Task) {
	if t.Gold != nil && strings.TrimSpace(t.Answer) == "" {
		t.Answer = t.Gold.Answer
	}
}
