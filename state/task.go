// Package state holds the run state shared by every agent node: the task, the
// plan, the ReAct scratchpad, reflections, candidates, the answer and usage.
// It is plain data with JSON tags so a run can be checkpointed and traced.
package state

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/planner-engine/planner/verify"
)

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
	// History are the earlier turns of a conversation this task follows
	// up (planner.FollowUp), oldest first; empty for a first question.
	History History `json:"history,omitempty"`
	// Vars are the run's vars (its working memory, {{.Vars.NAME}}) when
	// it starts: a caller's inputs. CheckVars says whether they can be.
	Vars map[string]string `json:"vars,omitempty"`
}

// CheckVars returns nil when every var of t can be set (state.Vars.Set:
// valid names, values at most MaxVarValue characters, at most MaxVars of
// them), else the first error, naming the var.
func (t Task) CheckVars() error {
	var v Vars
	for _, name := range slices.Sorted(maps.Keys(t.Vars)) {
		if err := v.Set(name, t.Vars[name]); err != nil {
			return fmt.Errorf("var %s: %w", name, err)
		}
	}
	return nil
}

// Turn is one earlier question of a conversation and its answer.
type Turn struct {
	// Question is what was asked.
	Question string `json:"question"`
	// Answer is what the pipeline answered.
	Answer string `json:"answer"`
}

// History is the earlier turns of a conversation, oldest first.
type History []Turn

// maxTurnAnswer bounds each earlier answer in History.String.
const maxTurnAnswer = 600

// String is the history as prompts show it, briefly: a line per question
// and answer (answers past 600 characters clipped), under a heading; ""
// for no turns.
func (h History) String() string {
	if len(h) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Earlier in this conversation:\n")
	for _, t := range h {
		a := strings.Join(strings.Fields(t.Answer), " ")
		if r := []rune(a); len(r) > maxTurnAnswer {
			a = string(r[:maxTurnAnswer]) + "..."
		}
		fmt.Fprintf(&b, "User: %s\nAssistant: %s\n", strings.Join(strings.Fields(t.Question), " "), a)
	}
	return b.String()
}

// Reference is what the task's answers are judged against.
func (t Task) Reference() verify.Reference {
	return verify.Reference{Question: t.Question, Answer: t.Answer}
}
