package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/eval/score"
	"github.com/planner-engine/planner/trace"
)

// EvaluateSettings configure Reflexion's `evaluate` node.
type EvaluateSettings struct {
	// Method is how a trial is judged: "auto" (default: exact match when the
	// task has a reference answer, else heuristic), "exact", "judge" (an LLM
	// judge) or "heuristic" (the actor finished within budget).
	Method string `mapstructure:"method"`
	// MaxTrials bounds the trials, the first included. Default 3.
	MaxTrials int `mapstructure:"max_trials"`
}

// Evaluate judges the actor's trial and routes "pass" or "retry". When the
// trials run out it routes "pass" with the answer marked incomplete.
type Evaluate struct {
	id, kind string
	model    agent.Model
	method   string
	max      int
	scorer   score.Scorer
}

// NewEvaluate builds an `evaluate` node (routes pass, retry).
func NewEvaluate(env agent.Env, spec agent.NodeSpec) (agent.Built, error) {
	var s EvaluateSettings
	if err := agent.Decode(spec.Settings, &s); err != nil {
		return agent.Built{}, err
	}
	switch s.Method {
	case "":
		s.Method = "auto"
	case "auto", "exact", "judge", "heuristic":
	default:
		return agent.Built{}, &agent.SettingError{Key: "method", Err: fmt.Errorf("%w: want auto, exact, judge or heuristic, got %q", agent.ErrSettings, s.Method)}
	}
	if s.MaxTrials <= 0 {
		s.MaxTrials = 3
	}
	return agent.Built{Node: &Evaluate{id: spec.ID, kind: spec.Type, model: env.Model, method: s.Method, max: s.MaxTrials, scorer: score.ExactMatch{}},
		Routes: []string{"pass", "retry"}}, nil
}

const judgePrompt = `You are grading an answer.

Question: {{.Question}}
Proposed answer: {{.Extra.Answer}}

Is the proposed answer correct and complete? Reply with PASS or FAIL on the first line, then one sentence of feedback.`

// Run judges the current answer.
func (n *Evaluate) Run(ctx context.Context, st *agent.State) (string, error) {
	method := n.method
	if method == "auto" {
		method = "heuristic"
		if strings.TrimSpace(st.Task.Answer) != "" {
			method = "exact"
		}
	}
	ok, feedback := false, ""
	switch method {
	case "exact":
		v := n.scorer.Score(st.Answer, st.Task)
		ok, feedback = v.Correct, v.Detail
	case "heuristic":
		ok = st.Done && st.Complete && strings.TrimSpace(st.Answer) != ""
		feedback = "the actor finished within its budget"
		if !ok {
			feedback = "the actor did not finish: " + st.Reason
		}
	case "judge":
		prompt, err := agent.MustTemplate("judge", judgePrompt).Render(st, map[string]any{"Answer": st.Answer})
		if err != nil {
			return "", err
		}
		text, _, err := n.model.Call(ctx, st, agent.Caller{Node: n.id, Kind: n.kind, Role: "judge"}, agent.Prompt(defaultSystem, prompt))
		if err != nil {
			return "", err
		}
		first := strings.ToUpper(strings.TrimSpace(strings.SplitN(strings.TrimSpace(text), "\n", 2)[0]))
		ok = strings.Contains(first, "PASS") && !strings.Contains(first, "FAIL")
		feedback = strings.TrimSpace(text)
	}
	st.Trials = append(st.Trials, agent.Trial{Answer: st.Answer, Success: ok, Feedback: feedback})
	trial := len(st.Trials)
	verdict := "fail"
	if ok {
		verdict = "pass"
	}
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindDecision, Text: fmt.Sprintf("trial %d: %s (%s) — %s", trial, verdict, method, feedback),
		Data: map[string]any{"trial": trial, "pass": ok, "method": method}})
	if ok {
		return "pass", nil
	}
	if trial >= n.max {
		st.SetPartial(st.Answer, fmt.Sprintf("the answer failed evaluation in all %d trials", trial), "wrong")
		return "pass", nil
	}
	return "retry", nil
}

const reflectPrompt = `You attempted a task and failed. Write one short lesson (two sentences at most) that will help the next attempt succeed: what went wrong and what to do differently.

Task: {{.Question}}
Your answer: {{.Extra.Answer}}
Evaluation: {{.Extra.Feedback}}
Your steps:
{{.Extra.Steps}}
Lesson:`

// Reflect writes a lesson from a failed trial into episodic memory and
// clears the trial's scratchpad for the next attempt.
type Reflect struct {
	id, kind string
	model    agent.Model
}

// NewReflect builds a `reflect` node.
func NewReflect(env agent.Env, spec agent.NodeSpec) (agent.Built, error) {
	if err := agent.Decode(spec.Settings, &struct{}{}); err != nil {
		return agent.Built{}, err
	}
	return agent.Built{Node: &Reflect{id: spec.ID, kind: spec.Type, model: env.Model}}, nil
}

// Run writes the lesson.
func (n *Reflect) Run(ctx context.Context, st *agent.State) (string, error) {
	var steps strings.Builder
	for _, e := range st.Scratchpad {
		if e.Tool != "" {
			fmt.Fprintf(&steps, "- %s[%s] -> %s\n", e.Tool, e.Input, clip(e.Observation, 200))
		} else if e.Error != "" {
			fmt.Fprintf(&steps, "- format error: %s\n", clip(e.Error, 120))
		}
	}
	feedback := ""
	if k := len(st.Trials); k > 0 {
		feedback = st.Trials[k-1].Feedback
	}
	prompt, err := agent.MustTemplate("reflect", reflectPrompt).Render(st, map[string]any{"Answer": st.Answer, "Feedback": feedback, "Steps": steps.String()})
	if err != nil {
		return "", err
	}
	text, _, err := n.model.Call(ctx, st, agent.Caller{Node: n.id, Kind: n.kind, Role: "reflect"}, agent.Prompt(defaultSystem, prompt))
	if err != nil {
		return "", err
	}
	lesson := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "Lesson:"))
	st.Reflections = append(st.Reflections, lesson)
	if k := len(st.Trials); k > 0 {
		st.Trials[k-1].Lesson = lesson
	}
	st.Scratchpad = nil
	st.Answer, st.Done, st.Complete, st.Reason = "", false, false, ""
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindReflection, Text: lesson, Data: map[string]any{"trial": len(st.Trials)}})
	return "", nil
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
