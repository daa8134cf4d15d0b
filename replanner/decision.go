package replanner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/verify"
)

// Actions a decision can take.
const (
	// ActionFinish ends the plan, with the answer when one is given.
	ActionFinish = "finish"
	// ActionReplan replaces the steps that have not run yet.
	ActionReplan = "replan"
)

// ErrMalformedDecision means a reply holds no readable decision.
var ErrMalformedDecision = errors.New("malformed re-planner decision")

// Decision is what the re-planner (or joiner) decided.
type Decision struct {
	// Action is ActionFinish or ActionReplan.
	Action string `json:"action"`
	// Answer is the final answer, for ActionFinish; may be empty, in which
	// case a finalizer composes one.
	Answer string `json:"answer,omitempty"`
	// Steps are the new remaining steps, for ActionReplan.
	Steps []plan.Step `json:"steps,omitempty"`
	// Thought is the model's reasoning, when it gave one.
	Thought string `json:"thought,omitempty"`
}

// ParseDecision reads a decision from model text: a JSON object
// {"action": "finish", "answer": ...} or {"action": "replan", "steps": [...]}
// as the whole reply, in a ``` fence or embedded in prose. The action is
// read case-insensitively with synonyms ("final", "answer", "done" mean
// finish; "continue", "revise", "plan" mean replan); without an action, an
// answer means finish and steps mean replan. A non-string answer is kept as
// compact JSON. Text without JSON but with an explicit answer marker
// ("Final Answer: ...", "Answer: ...") is a finish. Errors wrap
// ErrMalformedDecision or, for unreadable steps, plan.ErrMalformedPlan.
func ParseDecision(text string) (Decision, error) {
	if strings.TrimSpace(text) == "" {
		return Decision{}, fmt.Errorf("%w: the reply is empty", ErrMalformedDecision)
	}
	var firstErr error
	for _, raw := range plan.FindJSON(text) {
		d, err := decodeDecision(raw)
		if err == nil {
			return d, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return Decision{}, firstErr
	}
	if m, ok := verify.Find(text); ok && m.Explicit() {
		return Decision{Action: ActionFinish, Answer: m.Answer}, nil
	}
	return Decision{}, fmt.Errorf("%w: no JSON object in the reply", ErrMalformedDecision)
}

func decodeDecision(raw json.RawMessage) (Decision, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return Decision{}, fmt.Errorf("%w: want a JSON object with an \"action\"", ErrMalformedDecision)
	}
	var d Decision
	if v, ok := obj["action"]; ok {
		var a string
		if err := json.Unmarshal(v, &a); err != nil {
			return d, fmt.Errorf("%w: \"action\" must be \"finish\" or \"replan\"", ErrMalformedDecision)
		}
		switch strings.ToLower(strings.TrimSpace(a)) {
		case "finish", "final", "final_answer", "answer", "done", "stop":
			d.Action = ActionFinish
		case "replan", "re-plan", "continue", "revise", "plan":
			d.Action = ActionReplan
		default:
			return d, fmt.Errorf("%w: unknown action %q; use \"finish\" or \"replan\"", ErrMalformedDecision, a)
		}
	}
	if v, ok := obj["answer"]; ok && string(v) != "null" {
		var s string
		var compact bytes.Buffer
		switch {
		case json.Unmarshal(v, &s) == nil:
			d.Answer = strings.TrimSpace(s)
		case json.Compact(&compact, v) == nil:
			d.Answer = compact.String()
		default:
			d.Answer = string(v)
		}
	}
	if v, ok := obj["thought"]; ok {
		_ = json.Unmarshal(v, &d.Thought) // a non-string thought is only lost from the trace
	}
	_, hasSteps := obj["steps"]
	if d.Action == "" {
		switch {
		case d.Answer != "":
			d.Action = ActionFinish
		case hasSteps:
			d.Action = ActionReplan
		default:
			return d, fmt.Errorf("%w: the object has no \"action\"; use {\"action\": \"finish\", \"answer\": ...} or {\"action\": \"replan\", \"steps\": [...]}", ErrMalformedDecision)
		}
	}
	if d.Action == ActionReplan {
		if !hasSteps {
			return d, fmt.Errorf("%w: a replan needs \"steps\": the steps still to do", ErrMalformedDecision)
		}
		steps, err := plan.Decode(raw)
		if err != nil {
			return d, err
		}
		d.Steps = steps
	}
	return d, nil
}
