package suite

import (
	"encoding/json"
	"maps"
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
// {"id","question","answer","tags","gold","replies"}. "replies" is a list
// (Replies) or, when some configs have replies of their own, an object of
// lists by config name whose key "*" holds Replies (see MarshalJSON and
// FormatJSONL).
type Task struct {
	state.Task
	// Gold is the solution program a perfect agent would follow, when known.
	Gold *Gold `json:"gold,omitempty"`
	// Replies are the task's own scripted model replies, in order, when the
	// suite has them: a recorded run's raw model outputs, which the
	// scripted model's per-task mode (scripted.TaskModel, --llm scripted
	// without a file) plays back to every run of the task whose config
	// ConfigReplies does not name. Like Gold, only evaluation code reads
	// them.
	Replies []scripted.Reply `json:"replies,omitempty"`
	// ConfigReplies are the replies recorded for single configs, by the
	// config's pipeline name (its name:), in order: recorded runs of
	// several paradigms on the same task, each played back to the runs of
	// its own config. Nil when every config plays Replies. In JSON they
	// are the "replies" object's keys other than "*".
	ConfigReplies map[string][]scripted.Reply `json:"-"`
}

// TaskReplies returns t's replies as the scripted model's per-task mode
// takes them (scripted.NewConfigTaskModel): Replies for every config,
// ConfigReplies for single ones.
func (t Task) TaskReplies() scripted.TaskReplies {
	return scripted.TaskReplies{All: t.Replies, Configs: t.ConfigReplies}
}

// HasReplies reports whether t carries replies for any config.
func (t Task) HasReplies() bool { return !t.TaskReplies().Empty() }

// MarshalJSON writes t as FormatJSONL reads it: "replies" is a list when
// only Replies are set, and an object of lists by config name, with
// Replies under "*", when ConfigReplies are.
func (t Task) MarshalJSON() ([]byte, error) {
	type plain Task // without this method
	rec := struct {
		plain
		Replies any `json:"replies,omitempty"`
	}{plain: plain(t)}
	switch {
	case len(t.ConfigReplies) > 0:
		byConfig := maps.Clone(t.ConfigReplies)
		if len(t.Replies) > 0 {
			byConfig[scripted.AnyConfig] = t.Replies
		}
		rec.Replies = byConfig
	case len(t.Replies) > 0:
		rec.Replies = t.Replies
	}
	return json.Marshal(rec)
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
	// Type is the kind of task the solution is, one of GoldTypes: what the
	// sim model's capability profile is chosen by. Optional: when empty
	// it is inferred from the steps (InferredType).
	Type string `json:"type,omitempty"`
	// Memory is the chance, in [0,1], that a model knows what the task's
	// lookups would find (or, for a puzzle, solves it in one go) without
	// seeing it: the sim model's prior for answering from memory.
	// Optional: nil means the type's default.
	Memory *float64 `json:"memory,omitempty"`
}

// The task types a Gold may declare (Gold.Type), for the sim model's
// capability profiles.
const (
	// GoldKnowledge is a question answered from general knowledge: no
	// tool steps.
	GoldKnowledge = "knowledge"
	// GoldLookup is a question whose answer one lookup finds.
	GoldLookup = "lookup"
	// GoldArithmetic is a word problem solved by calculator steps only.
	GoldArithmetic = "arithmetic"
	// GoldMultihop chains lookups, or lookups and calculations.
	GoldMultihop = "multihop"
	// GoldPuzzle is a search puzzle such as the Game of 24: no tool steps,
	// a derivation in the reasoning.
	GoldPuzzle = "puzzle"
)

// GoldTypes lists the task types a Gold may declare.
func GoldTypes() []string {
	return []string{GoldKnowledge, GoldLookup, GoldArithmetic, GoldMultihop, GoldPuzzle}
}

// InferredType is the declared Type, or else the type the steps imply: no
// steps is knowledge (puzzles must be declared, or are recognised by the
// sim model from their derivation), calculator steps only are arithmetic,
// a single lookup is lookup, and anything else is multihop. Every tool
// other than "calculator" counts as a lookup.
func (g *Gold) InferredType() string {
	if g.Type != "" {
		return g.Type
	}
	lookups, calcs := 0, 0
	for _, s := range g.Steps {
		if s.Tool == "calculator" {
			calcs++
		} else {
			lookups++
		}
	}
	switch {
	case lookups+calcs == 0:
		return GoldKnowledge
	case lookups == 0:
		return GoldArithmetic
	case lookups == 1 && calcs == 0:
		return GoldLookup
	}
	return GoldMultihop
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

// GoldOf maps the id of each task that has a gold solution to it, for
// scoring runs' trajectories (compare.Options.Gold).
func GoldOf(tasks []Task) map[string]*Gold {
	out := make(map[string]*Gold, len(tasks))
	for _, t := range tasks {
		if t.Gold != nil {
			out[t.ID] = t.Gold
		}
	}
	return out
}
