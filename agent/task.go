// Package agent holds the run state shared by every agent node: the task, the
// plan, the ReAct scratchpad, reflections, candidates, the answer and usage.
// It is plain data with JSON tags so a run can be checkpointed and traced.
package agent

import "github.com/planner-engine/planner/verify"

// Task is one unit of work: a question, optionally with a reference answer
// and a gold solution program (used by scorers, the Reflexion evaluator and
// the offline oracle simulator).
type Task struct {
	// ID identifies the task inside its suite. Optional for ad-hoc runs.
	ID string `json:"id,omitempty"`
	// Question is the task text given to the agent.
	Question string `json:"question"`
	// Answer is the reference answer, when known.
	Answer string `json:"answer,omitempty"`
	// Gold is the solution program a perfect agent would follow, when known.
	Gold *Gold `json:"gold,omitempty"`
	// Tags classify the task (for example "multi-hop", "parallel").
	Tags []string `json:"tags,omitempty"`
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

// Reference is what the task's answers are judged against.
func (t Task) Reference() verify.Reference {
	return verify.Reference{Question: t.Question, Answer: t.Answer}
}
