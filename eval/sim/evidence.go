package sim

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/verify"
	"github.com/tmc/langchaingo/llms"
)

// The roles that write a final answer from gathered evidence (finalizer,
// solver, re-planner, joiner) and the plan's model worker do not simply
// recite the gold answer: they answer only from what the prompt contains
// besides the task itself, as a model reading the evidence would. So a run
// whose tools failed ends wrong, and the comparison shows it.

// unknownAnswer is what an evidence-bound role says when the evidence does
// not hold the answer.
const unknownAnswer = "unknown"

// evidence is the prompt without the task text.
func evidence(c call) string {
	return strings.ReplaceAll(c.prompt, c.task.Question, " ")
}

// normalized is text normalised once for phrase lookups (contains).
type normalized string

func normalize(text string) normalized { return normalized(" " + verify.Normalize(text) + " ") }

// contains reports whether value appears in n as a whole phrase after
// normalisation.
func (n normalized) contains(value string) bool {
	v := verify.Normalize(value)
	return v != "" && strings.Contains(string(n), " "+v+" ")
}

// finalFromEvidence returns the gold answer when the evidence supports it:
// the answer itself appears, or every gold step's output does (the program
// ran to the end and only reasoning remains, as in GSM8K solutions whose
// last line carries no calculator annotation).
func finalFromEvidence(c call) string {
	ev := normalize(evidence(c))
	if ev.contains(c.task.Gold.Answer) {
		return c.task.Gold.Answer
	}
	complete := len(c.task.Gold.Steps) > 0
	for _, s := range c.task.Gold.Steps {
		complete = complete && s.Output != "" && ev.contains(s.Output)
	}
	if complete {
		return c.task.Gold.Answer
	}
	return unknownAnswer
}

func (m *Model) decide(c call, fault string) *llms.ContentChoice {
	a := finalFromEvidence(c)
	if fault == FaultEarlyWrongAnswer {
		a = wrongAnswer(c.task.Gold.Answer)
	}
	b, _ := json.Marshal(map[string]string{"action": "finish", "answer": a})
	return &llms.ContentChoice{Content: string(b), StopReason: "stop"}
}

func (m *Model) final(c call, fault string) *llms.ContentChoice {
	switch fault {
	case FaultEmptyReply:
		return &llms.ContentChoice{Content: "", StopReason: "stop"}
	case FaultEarlyWrongAnswer:
		return &llms.ContentChoice{Content: wrongAnswer(c.task.Gold.Answer), StopReason: "stop"}
	}
	return &llms.ContentChoice{Content: finalFromEvidence(c), StopReason: "stop"}
}

// workerSuffix marks plan steps the sim planner adds to read a value out of
// a lookup's result: step "<gold id>_v" reads the output of gold step <id>.
const workerSuffix = "_v"

// worker plays the plan executor's model worker: it reads the gold output
// of the step it was asked about out of its instruction, if it is there;
// the one step a plan of a task without tool steps has, it answers as far
// as the model knows (recall).
func (m *Model) worker(c call, fault string) *llms.ContentChoice {
	if fault == FaultEmptyReply {
		return &llms.ContentChoice{Content: ""}
	}
	id := strings.TrimSuffix(c.stepID, workerSuffix)
	gold := false
	for _, s := range c.task.Gold.Steps {
		gold = gold || s.ID == id
		if s.ID == id && s.Output != "" && normalize(evidence(c)).contains(s.Output) {
			return &llms.ContentChoice{Content: s.Output, StopReason: "stop"}
		}
	}
	if !gold && len(c.task.Gold.Steps) == 0 {
		// The planner's one step of a task without tool steps: the
		// answer, as far as the model knows it.
		return &llms.ContentChoice{Content: m.recall(c).answer, StopReason: "stop"}
	}
	return &llms.ContentChoice{Content: unknownAnswer, StopReason: "stop"}
}

// toolLine is one entry of a planning prompt's tool list as
// tools.PromptList writes it: "- NAME: DESCRIPTION Input schema: {...}".
var toolLine = regexp.MustCompile(`(?m)^- ([^\s:]+): (.*)$`)

// workerTool finds the plan executor's model worker in a planner prompt's
// tool list, or "" when the planner was not offered one: it is the listed
// tool whose description says it asks a language model, as the executor's
// worker description does and no real tool's does. Reading the prompt, as
// a model would, keeps the simulator free of the executor's package; the
// tests pin the match against the executor's real description.
func workerTool(prompt string) string {
	for _, mm := range toolLine.FindAllStringSubmatch(prompt, -1) {
		if strings.Contains(strings.ToLower(mm[2]), "language model") {
			return mm[1]
		}
	}
	return ""
}

type planStep struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	Tool        string   `json:"tool"`
	Input       string   `json:"input"`
	DependsOn   []string `json:"depends_on"`
}

// plan writes the gold program as a plan. When the planner offers a model
// worker, a lookup whose result feeds another step's input gets a worker
// step that reads the value (a name or a number) out of the passage first,
// as a ReWOO planner would; without a worker, the whole passage is
// substituted, as the plan says.
func (m *Model) plan(c call) *llms.ContentChoice {
	g := c.task.Gold
	worker := workerTool(c.prompt)
	tools := map[string]string{}
	for _, s := range g.Steps {
		tools[s.ID] = s.Tool
	}
	needsValue := map[string]bool{}
	if worker != "" {
		for _, s := range g.Steps {
			for _, ref := range plan.References(s.Input) {
				if tools[ref] != "calculator" {
					needsValue[ref] = true
				}
			}
		}
	}
	steps := []planStep{}
	if len(g.Steps) == 0 {
		// A solution with no tool calls (GSM8K records without calculator
		// annotations): one step that states the result.
		// A number goes to the calculator as far as the planner knows it;
		// otherwise the model worker, when offered, answers from memory.
		step := planStep{ID: "1", Description: "Work out the answer", DependsOn: []string{}}
		if _, ok := verify.Number(g.Answer); ok {
			step.Tool, step.Input = "calculator", m.recall(c).answer
		} else if worker != "" {
			step.Tool, step.Input = worker, "Answer from what you know: "+strings.TrimSpace(c.task.Question)
		}
		steps = append(steps, step)
	}
	for _, s := range g.Steps {
		desc := s.Thought
		if desc == "" {
			desc = fmt.Sprintf("Use %s on %q", s.Tool, s.Input)
		}
		input := plan.ReplaceReferences(s.Input, func(id string) string {
			if needsValue[id] {
				return "#E" + id + workerSuffix
			}
			return "#E" + id
		})
		deps := append([]string{}, s.DependsOn...)
		for i, d := range deps {
			if needsValue[d] {
				deps[i] = d + workerSuffix
			}
		}
		steps = append(steps, planStep{ID: s.ID, Description: desc, Tool: s.Tool, Input: input, DependsOn: deps})
		if needsValue[s.ID] {
			what := s.Input
			steps = append(steps, planStep{ID: s.ID + workerSuffix, Description: "Read the number needed from the result of step " + s.ID,
				Tool: worker, Input: fmt.Sprintf("From this text, write only the value (a name or a number) that answers %q: #E%s", what, s.ID), DependsOn: []string{s.ID}})
		}
	}
	b, _ := json.Marshal(struct {
		Steps []planStep `json:"steps"`
	}{steps})
	return &llms.ContentChoice{Content: string(b), StopReason: "stop"}
}
