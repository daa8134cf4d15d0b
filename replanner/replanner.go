// Package replanner implements the Re-Planner node of Plan-and-Execute
// (`type: replanner`) and the joiner of LLMCompiler (`type: joiner`). After
// the executor has run the plan's steps, the node shows the model the task,
// the plan and the step results, and the model either finishes,
// {"action": "finish", "answer": "..."}, or revises what remains,
// {"action": "replan", "steps": [...only the steps still to do...]}.
//
// Routes: `continue` (a revised plan is in the state; go back to the
// executor) and `finish` (go to the finalizer, which passes a complete
// answer through or composes one).
//
// Budgets and failures never end the run silently:
//
//   - Re-planning is bounded by max_replans. Once it is spent the prompt
//     asks the model to finish; a further replan is refused, the state gets
//     failure "budget" and the reason, and the node routes `finish` without
//     an answer, so the finalizer composes one marked incomplete.
//   - A reply that cannot be read, or a revised plan that fails validation
//     (plan.Rules), is sent back with the reason, at most max_retries
//     times (default 1). If it is still wrong the node routes `finish`
//     without an answer, with failure "parse" and the reason: the finalizer
//     then answers from the step results, marked incomplete.
package replanner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// Routes of the replanner and joiner nodes.
const (
	// RouteContinue runs the revised plan.
	RouteContinue = "continue"
	// RouteFinish ends the plan.
	RouteFinish = "finish"
)

// Defaults of the settings.
const (
	// DefaultMaxReplans bounds re-planning rounds per run.
	DefaultMaxReplans = 3
	// DefaultMaxRetries is how many unreadable or invalid replies are sent
	// back with feedback.
	DefaultMaxRetries = 1
)

// Settings configure a `replanner` or `joiner` nodekind. Every field is
// optional.
//
// The system message defaults to the role of the node type. The prompt
// template sees the run state and the .Extra values that Templates
// declares: {{.Extra.Plan}} (the steps with their results),
// {{.Extra.Tools}}, {{.Extra.ReplansLeft}}, {{.Extra.NextID}},
// {{.Extra.MaxSteps}} and {{.Extra.RequireTools}}; it defaults to the
// built-in prompt of the node type. A custom prompt without
// {{.Extra.Tools}} gets the tool list appended (see nodekind.Requirement).
type Settings struct {
	// PromptSources are the system, system_file, prompt and prompt_file
	// keys.
	nodekind.PromptSources `mapstructure:",squash"`
	// MaxReplans bounds re-planning rounds per run (the state's Replans).
	// Default 3; 0 never re-plans.
	MaxReplans *int `mapstructure:"max_replans"`
	// MaxPlanSteps bounds the steps of a revised plan. Default 8.
	MaxPlanSteps int `mapstructure:"max_plan_steps"`
	// MaxRetries is how many unreadable replies or invalid revised plans
	// are sent back with the reason. Default 1; 0 disables retries.
	MaxRetries *int `mapstructure:"max_retries"`
	// RequireTools rejects new steps without a tool (executor strategies
	// rewoo and parallel). Default false for replanner, true for joiner.
	RequireTools *bool `mapstructure:"require_tools"`
	// LLMTool names the executor's built-in model worker, accepted as a
	// tool of new steps; match the execute node's llm_tool. Default "".
	LLMTool string `mapstructure:"llm_tool"`
	// JSONMode requests JSON output with llms.WithJSONMode. Default true.
	JSONMode *bool `mapstructure:"json_mode"`
	// Temperature overrides the model's sampling temperature.
	Temperature *float64 `mapstructure:"temperature"`
	// MaxTokens caps the completion; 0 uses the model default.
	MaxTokens int `mapstructure:"max_tokens"`
}

// Replanner is the replanner or joiner nodekind.
type Replanner struct {
	id, kind   string
	model      llm.Model
	system     string
	prompt     *nodekind.Template
	maxReplans int
	maxRetries int
	rules      plan.Rules
	// toolList is the prompt's tool list, the same for every run.
	toolList string
	opts     []llms.CallOption
}

// New builds a `replanner` node (Plan-and-Execute's Re-Planner).
func New(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	return build(env, spec, replanSystem, replanPrompt, false)
}

// NewJoiner builds a `joiner` node (LLMCompiler's joiner): the same
// decision after each parallel wave, with a joiner prompt and
// require_tools defaulting to true.
func NewJoiner(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	return build(env, spec, joinSystem, joinPrompt, true)
}

func build(env nodekind.Env, spec nodekind.Spec, defSystem, defPrompt string, defRequire bool) (nodekind.Built, error) {
	var s Settings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	system, tmpl, err := env.Prompts(s.PromptSources, promptSpec(), defSystem, defPrompt)
	if err != nil {
		return nodekind.Built{}, err
	}
	r := &Replanner{id: spec.ID, kind: spec.Type, model: env.Model, system: system, prompt: tmpl,
		maxReplans: DefaultMaxReplans, maxRetries: DefaultMaxRetries}
	if s.MaxReplans != nil {
		if *s.MaxReplans < 0 {
			return nodekind.Built{}, config.SettingErrorf("max_replans", "must be 0 or more, got %d", *s.MaxReplans)
		}
		r.maxReplans = *s.MaxReplans
	}
	if s.MaxRetries != nil {
		if *s.MaxRetries < 0 {
			return nodekind.Built{}, config.SettingErrorf("max_retries", "must be 0 or more, got %d", *s.MaxRetries)
		}
		r.maxRetries = *s.MaxRetries
	}
	maxSteps, err := steps.MaxPlanSteps(s.MaxPlanSteps)
	if err != nil {
		return nodekind.Built{}, err
	}
	require := defRequire
	if s.RequireTools != nil {
		require = *s.RequireTools
	}
	ts, err := steps.NewPlanningTools(env.Tools, s.LLMTool)
	if err != nil {
		return nodekind.Built{}, err
	}
	r.rules = plan.Rules{Tools: ts.Set, MaxSteps: maxSteps, RequireTools: require}
	r.toolList = ts.List
	if s.JSONMode == nil || *s.JSONMode {
		r.opts = append(r.opts, llms.WithJSONMode())
	}
	if s.Temperature != nil {
		r.opts = append(r.opts, llms.WithTemperature(*s.Temperature))
	}
	if s.MaxTokens > 0 {
		r.opts = append(r.opts, llms.WithMaxTokens(s.MaxTokens))
	}
	return nodekind.Built{Node: r, Routes: []string{RouteContinue, RouteFinish}}, nil
}

// Run asks for a decision and applies it.
func (r *Replanner) Run(ctx context.Context, st *state.State) (string, error) {
	tr := trace.From(ctx)
	if st.Done && st.Complete {
		tr.Emit(trace.Event{Node: r.id, Kind: trace.KindDecision, Text: "finish: the answer is already known",
			Data: map[string]any{"action": ActionFinish, "replans": st.Replans}})
		return RouteFinish, nil
	}
	finished := finishedSteps(st.Plan)
	rules := r.rules
	rules.Known = finished
	left := max(r.maxReplans-st.Replans, 0)
	user, err := r.prompt.Render(st, map[string]any{
		"Plan":         plan.Format(st.Plan, true),
		"Tools":        r.toolList,
		"ReplansLeft":  left,
		"NextID":       nextID(st.Plan),
		"MaxSteps":     rules.MaxSteps,
		"RequireTools": rules.RequireTools,
	})
	if err != nil {
		return "", err
	}
	msgs := llm.Prompt(r.system, user)
	caller := llm.CallMeta{Node: r.id, Kind: r.kind}
	var lastErr error
	for attempt := 1; attempt <= r.maxRetries+1; attempt++ {
		text, _, err := r.model.Call(ctx, st, caller, msgs, r.opts...)
		if err != nil {
			return "", fmt.Errorf("%s: %w", r.kind, err)
		}
		d, err := ParseDecision(text)
		if err == nil && d.Action == ActionReplan && left > 0 {
			err = rules.Check(d.Steps)
		}
		if err == nil {
			return r.apply(ctx, st, d, finished, left), nil
		}
		lastErr = err
		kind := trace.KindGuard
		if errors.Is(err, ErrMalformedDecision) || errors.Is(err, plan.ErrMalformedPlan) {
			kind = trace.KindParseError
		}
		tr.Emit(trace.Event{Node: r.id, Kind: kind, Text: "decision rejected: " + err.Error(),
			Data: map[string]any{"attempt": attempt, "retries_left": r.maxRetries + 1 - attempt}})
		msgs = append(msgs, llm.Text(llms.ChatMessageTypeAI, text),
			llm.Text(llms.ChatMessageTypeHuman, fmt.Sprintf(feedbackPrompt, err)))
	}
	reason := fmt.Sprintf("the %s's reply could not be used: %s", r.kind, strings.ReplaceAll(lastErr.Error(), "\n", "; "))
	r.giveUp(st, reason, state.FailureParse)
	tr.Emit(trace.Event{Node: r.id, Kind: trace.KindDecision, Text: "finish without an answer: " + reason,
		Data: map[string]any{"action": ActionFinish, "replans": st.Replans, "reason": reason}})
	return RouteFinish, nil
}

// apply carries out a valid decision and returns the route.
func (r *Replanner) apply(ctx context.Context, st *state.State, d Decision, finished []plan.Step, left int) string {
	tr := trace.From(ctx)
	data := map[string]any{"action": d.Action, "replans": st.Replans}
	if d.Thought != "" {
		data["thought"] = d.Thought
	}
	if d.Action == ActionFinish {
		text := "finish"
		if d.Answer != "" {
			st.SetAnswer(d.Answer)
			data["answer"] = d.Answer
			text += ": " + d.Answer
		} else {
			text += " (the finalizer composes the answer)"
		}
		tr.Emit(trace.Event{Node: r.id, Kind: trace.KindDecision, Text: text, Data: data})
		return RouteFinish
	}
	if left <= 0 {
		reason := fmt.Sprintf("the re-planning budget is spent (%d re-plan(s)) and the plan is not finished", r.maxReplans)
		r.giveUp(st, reason, state.FailureBudget)
		data["reason"] = reason
		data["refused_steps"] = d.Steps
		tr.Emit(trace.Event{Node: r.id, Kind: trace.KindDecision, Text: "finish without an answer: " + reason, Data: data})
		return RouteFinish
	}
	for i := range d.Steps {
		d.Steps[i].Status = plan.StatusPending
		d.Steps[i].Result, d.Steps[i].Error = "", ""
	}
	st.Plan = append(finished, d.Steps...)
	st.Replans++
	data["replans"] = st.Replans
	data["steps"] = d.Steps
	tr.Emit(trace.Event{Node: r.id, Kind: trace.KindDecision,
		Text: fmt.Sprintf("replan (%d of %d): %d new step(s)", st.Replans, r.maxReplans, len(d.Steps)), Data: data})
	tr.Emit(trace.Event{Node: r.id, Kind: trace.KindPlan, Text: plan.Format(st.Plan, false),
		Data: map[string]any{"steps": st.Plan, "replan": st.Replans}})
	return RouteContinue
}

// giveUp records why the plan ends without an answer; the finalizer reads
// the reason and marks its answer incomplete.
func (r *Replanner) giveUp(st *state.State, reason, failure string) {
	st.Reason = reason
	if st.Failure == "" {
		st.Failure = failure
	}
}

// finishedSteps returns the steps that have run (done, failed or
// skipped): they stay in the plan as history when it is revised.
func finishedSteps(steps []plan.Step) []plan.Step {
	var out []plan.Step
	for _, s := range steps {
		switch s.Status {
		case plan.StatusDone, plan.StatusFailed, plan.StatusSkipped:
			out = append(out, s)
		}
	}
	return out
}

// nextID suggests the id of the first new step: one more than the largest
// numeric id in the plan.
func nextID(steps []plan.Step) string {
	n := 0
	for _, s := range steps {
		if v, err := strconv.Atoi(s.ID); err == nil && v > n {
			n = v
		}
	}
	return strconv.Itoa(n + 1)
}
