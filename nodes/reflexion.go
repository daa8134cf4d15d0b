package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
)

// Evaluation methods of the Reflexion `evaluate` nodekind.
const (
	// MethodAuto scores the answer when the task can be scored (it has a
	// reference answer, or Game of 24 numbers for the game24 scorer) and
	// falls back to MethodHeuristic otherwise.
	MethodAuto = "auto"
	// MethodExact scores the answer against the task with the configured
	// scorer (normalised exact match by default).
	MethodExact = "exact"
	// MethodJudge asks the model whether the answer is correct.
	MethodJudge = "judge"
	// MethodHeuristic passes a trial whose actor finished with a complete,
	// non-empty answer within its budget.
	MethodHeuristic = "heuristic"
)

// EvaluateSettings configure Reflexion's `evaluate` nodekind.
type EvaluateSettings struct {
	// Method is how a trial is judged: "auto" (default), "exact", "judge"
	// or "heuristic"; see the Method* constants.
	Method string `mapstructure:"method"`
	// Scorer is the scorer of the "exact" method, by verify.ByName name:
	// "em" (default), "numeric", "numeric:TOL", "contains", "game24".
	Scorer string `mapstructure:"scorer"`
	// MaxTrials bounds the trials, the first included. Default 3.
	MaxTrials int `mapstructure:"max_trials"`
	// JudgePrompt overrides the judge prompt template of the "judge"
	// method. It sees {{.Question}} and {{.Extra.Answer}}; the reply's
	// first line must say PASS or FAIL.
	JudgePrompt string `mapstructure:"judge_prompt"`
	// JudgePromptFile reads JudgePrompt from a file (relative to the
	// pipeline's folder) instead.
	JudgePromptFile string `mapstructure:"judge_prompt_file"`
}

// Evaluate judges the actor's trial and routes "pass" or "retry". When the
// trials run out it routes "pass" with the answer marked incomplete.
type Evaluate struct {
	id, kind string
	model    llm.Model
	method   string
	max      int
	scorer   verify.Scorer
	judge    *nodekind.Template
}

// NewEvaluate builds an `evaluate` node (routes pass, retry).
func NewEvaluate(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s EvaluateSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	switch s.Method {
	case "":
		s.Method = MethodAuto
	case MethodAuto, MethodExact, MethodJudge, MethodHeuristic:
	default:
		return nodekind.Built{}, &config.SettingError{Key: "method", Err: fmt.Errorf("%w: want auto, exact, judge or heuristic, got %q", config.ErrSettings, s.Method)}
	}
	if err := applyCounts(count{"max_trials", &s.MaxTrials, 3}); err != nil {
		return nodekind.Built{}, err
	}
	if s.Scorer == "" {
		s.Scorer = "em"
	}
	scorer, err := verify.ByName(s.Scorer)
	if err != nil {
		return nodekind.Built{}, &config.SettingError{Key: "scorer", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
	}
	judge, err := env.Template(judgeSpec(), s.JudgePrompt, s.JudgePromptFile, judgePrompt)
	if err != nil {
		return nodekind.Built{}, err
	}
	return nodekind.Built{Node: &Evaluate{id: spec.ID, kind: spec.Type, model: env.Model, method: s.Method, max: s.MaxTrials, scorer: scorer, judge: judge},
		Routes: []string{"pass", "retry"}}, nil
}

const judgePrompt = `You are grading an answer.

Question: {{.Question}}
Proposed answer: {{.Extra.Answer}}

Is the proposed answer correct and complete? Reply with PASS or FAIL on the first line, then one sentence of feedback.`

// Run judges the current answer.
func (n *Evaluate) Run(ctx context.Context, st *state.State) (string, error) {
	method := n.method
	var verdict verify.Result
	if method == MethodAuto || method == MethodExact {
		verdict = n.scorer.Score(st.Answer, st.Task.Reference())
	}
	if method == MethodAuto {
		method = MethodExact
		if verdict.Unscorable {
			method = MethodHeuristic
		}
	}
	ok, feedback := false, ""
	switch method {
	case MethodExact:
		ok, feedback = verdict.Correct, verdict.Detail
	case MethodHeuristic:
		ok = st.Done && st.Complete && strings.TrimSpace(st.Answer) != ""
		feedback = "the actor finished within its budget"
		if !ok {
			feedback = "the actor did not finish with an answer"
			if st.Reason != "" {
				feedback += ": " + st.Reason
			}
		}
	case MethodJudge:
		prompt, err := n.judge.Render(st, map[string]any{"Answer": st.Answer})
		if err != nil {
			return "", err
		}
		text, _, err := n.model.Call(ctx, st, llm.CallMeta{Node: n.id, Kind: n.kind, Role: "judge"}, llm.Prompt(defaultSystem, prompt))
		if err != nil {
			return "", err
		}
		ok = judgePassed(text)
		feedback = strings.TrimSpace(text)
		if feedback == "" {
			feedback = "the judge gave no verdict"
		}
	}
	st.Trials = append(st.Trials, state.Trial{Answer: st.Answer, Success: ok, Feedback: feedback})
	trial := len(st.Trials)
	word := "fail"
	if ok {
		word = "pass"
	}
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindDecision, Text: fmt.Sprintf("trial %d: %s (%s) — %s", trial, word, method, feedback),
		Data: map[string]any{"trial": trial, "pass": ok, "method": method, "answer": st.Answer}})
	if ok {
		return "pass", nil
	}
	if trial >= n.max {
		st.SetPartial(st.Answer, fmt.Sprintf("the answer failed evaluation in all %d trials", trial), state.FailureWrong)
		return "pass", nil
	}
	return "retry", nil
}

// judgePassed reads a judge reply: its first non-blank line must say PASS
// and not FAIL.
func judgePassed(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if line = strings.ToUpper(strings.TrimSpace(line)); line != "" {
			return strings.Contains(line, "PASS") && !strings.Contains(line, "FAIL")
		}
	}
	return false
}

const reflectPrompt = `You attempted a task and failed. Write one short lesson (two sentences at most) that will help the next attempt succeed: what went wrong and what to do differently.

Task: {{.Question}}
Your answer: {{.Extra.Answer}}
Evaluation: {{.Extra.Feedback}}
Your steps:
{{.Extra.Steps}}
Lesson:`

// ReflectSettings configure Reflexion's `reflect` nodekind.
type ReflectSettings struct {
	// ReflectPrompt overrides the reflection prompt template. It sees
	// {{.Question}}, {{.Reflections}} (earlier lessons), {{.Extra.Answer}},
	// {{.Extra.Feedback}} (the evaluator's verdict text) and
	// {{.Extra.Steps}} (the failed trial's actions, one per line).
	ReflectPrompt string `mapstructure:"reflect_prompt"`
	// ReflectPromptFile reads ReflectPrompt from a file (relative to the
	// pipeline's folder) instead.
	ReflectPromptFile string `mapstructure:"reflect_prompt_file"`
	// Memory is how many of the most recent lessons episodic memory keeps
	// (the Reflexion paper uses 1 to 3). Default 3.
	Memory int `mapstructure:"memory"`
}

// Reflect writes a lesson from a failed trial into episodic memory and
// clears the trial's scratchpad and answer for the next attempt.
type Reflect struct {
	id, kind string
	model    llm.Model
	prompt   *nodekind.Template
	memory   int
}

// NewReflect builds a `reflect` nodekind.
func NewReflect(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s ReflectSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	if err := applyCounts(count{"memory", &s.Memory, 3}); err != nil {
		return nodekind.Built{}, err
	}
	tmpl, err := env.Template(reflectSpec(), s.ReflectPrompt, s.ReflectPromptFile, reflectPrompt)
	if err != nil {
		return nodekind.Built{}, err
	}
	return nodekind.Built{Node: &Reflect{id: spec.ID, kind: spec.Type, model: env.Model, prompt: tmpl, memory: s.Memory}}, nil
}

// Run writes the lesson.
func (n *Reflect) Run(ctx context.Context, st *state.State) (string, error) {
	var steps strings.Builder
	for _, e := range st.Scratchpad {
		switch {
		case e.Tool != "":
			fmt.Fprintf(&steps, "- %s[%s] -> %s\n", e.Tool, e.Input, textutil.Clip(e.Observation, 200))
		case e.Error != "":
			fmt.Fprintf(&steps, "- format error: %s\n", textutil.Clip(e.Error, 120))
		case e.Final != "":
			fmt.Fprintf(&steps, "- final answer: %s\n", textutil.Clip(e.Final, 200))
		}
	}
	feedback := ""
	if k := len(st.Trials); k > 0 {
		feedback = st.Trials[k-1].Feedback
	}
	prompt, err := n.prompt.Render(st, map[string]any{"Answer": st.Answer, "Feedback": feedback, "Steps": steps.String()})
	if err != nil {
		return "", err
	}
	text, _, err := n.model.Call(ctx, st, llm.CallMeta{Node: n.id, Kind: n.kind, Role: "reflect"}, llm.Prompt(defaultSystem, prompt))
	if err != nil {
		return "", err
	}
	lesson := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "Lesson:"))
	if lesson == "" {
		// An empty reflection still tells the next trial that this answer
		// failed, which is the least the memory must carry.
		lesson = fmt.Sprintf("The answer %q was judged wrong; try a different approach.", st.Answer)
	}
	st.Reflections = append(st.Reflections, lesson)
	if len(st.Reflections) > n.memory {
		st.Reflections = st.Reflections[len(st.Reflections)-n.memory:]
	}
	if k := len(st.Trials); k > 0 {
		st.Trials[k-1].Lesson = lesson
	}
	st.Scratchpad = nil
	st.Answer, st.Done, st.Complete, st.Reason, st.Failure = "", false, false, "", ""
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindReflection, Text: lesson, Data: map[string]any{"trial": len(st.Trials)}})
	return "", nil
}
