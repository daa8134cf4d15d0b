// Package state holds the run state shared by every agent node: the task, the
// plan, the ReAct scratchpad, reflections, candidates, the answer and usage.
// It is plain data with JSON tags so a run can be checkpointed and traced.
package state

import "github.com/planner-engine/planner/verify"

// Task is one unit of work: a question, optionally with a reference answer
// (used by scorers and the Reflexion evaluator).
type Task struct {
	// ID identifies the task inside its suite. Optional for ad-hoc runs.
	ID string `json:"id,omitempty"`
	// Question is the task text given to the state.
	Question string `json:"question"`
	// Answer is the reference answer, when known.
	Answer string `json:"answer,omitempty"`
	// Tags classify the task (for example "multi-hop", "parallel").
	Tags []string `json:"tags,omitempty"`
}

// Reference is what the task's answers are judged against.
func (t Task) Reference() verify.Reference {
	return verify.Reference{Question: t.Question, Answer: t.Answer}
}
