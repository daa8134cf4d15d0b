// Package planner implements the Planner node of the Plan-and-Execute
// family (Plan-and-Execute, ReWOO, LLMCompiler) and owns the plan model every
// member shares: parsing a plan out of model output (JSON mode, a forced
// "plan" tool call, JSON in text, ReWOO's "#E1 = Tool[input]" lines or a
// numbered list), validating it as a DAG before anything runs, and ordering
// its steps.
//
// The node (`type: planner`) asks the model for a plan, validates it, and
// feeds a rejected plan back with the reasons, at most max_retries times.
// When no valid plan comes back it fails with an *InvalidPlanError (which
// matches ErrInvalidPlan and the reason's sentinel), or, with
// `on_failure: route`, records the failure in the state and takes the
// `failed` route, which pipelines map to a finalizer so the run still ends
// with a (best-effort, incomplete) answer.
package planner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// Defaults of the planner's settings.
const (
	// DefaultMaxRetries is how many rejected plans are fed back.
	DefaultMaxRetries = 2
)

// ErrInvalidPlan means the planner could not produce a valid plan within
// its retry budget. It is returned inside an *InvalidPlanError together
// with the last reason.
var ErrInvalidPlan = errors.New("invalid plan")

// Output modes: how the planner asks the model for its plan.
const (
	// OutputJSON asks for a JSON object with llms.WithJSONMode.
	OutputJSON = "json"
	// OutputTool forces a call of a "plan" function whose parameters are
	// the plan (for providers with native tool calling).
	OutputTool = "tool"
	// OutputText asks for JSON in plain text, for providers with neither.
	OutputText = "text"
)

// RouteFailed is the route a planner with `on_failure: route` takes when it
// gives up; map it to a finalizer.
const RouteFailed = "failed"

// PlanToolName is the name of the function a planner with `output: tool`
// forces the model to call.
const PlanToolName = "plan"

// Settings configure a `planner` nodekind. Every field is optional.
//
// The system message defaults to a short planner role. The prompt
// template sees the run state and the .Extra values that Templates
// declares (the tool list, the plan schema, max_plan_steps, require_tools,
// output); it defaults to the built-in planning prompt. A custom prompt
// without {{.Extra.Tools}}, or without {{.Extra.Schema}} unless output is
// "tool", gets them appended (see nodekind.Requirement).
type Settings struct {
	// PromptSources are the system, system_file, prompt and prompt_file
	// keys.
	nodekind.PromptSources `mapstructure:",squash"`
	// Output is how the plan is requested: "json" (JSON mode), "tool" (a
	// forced "plan" function call) or "text" (JSON or a numbered list in
	// plain text). Every mode also accepts the text forms. Default "json".
	Output string `mapstructure:"output"`
	// MaxPlanSteps bounds the number of steps. Default 8.
	MaxPlanSteps int `mapstructure:"max_plan_steps"`
	// MaxRetries is how many times a rejected plan is sent back with the
	// reason before the node gives up. Default 2; 0 disables retries.
	MaxRetries *int `mapstructure:"max_retries"`
	// RequireTools rejects steps without a tool; set it when the executor
	// runs steps as direct tool calls (strategy rewoo or parallel). Default
	// false.
	RequireTools bool `mapstructure:"require_tools"`
	// LLMTool names the executor's built-in model worker, offered to the
	// planner as an extra tool; it must match the execute node's llm_tool.
	// Default "" (none).
	LLMTool string `mapstructure:"llm_tool"`
	// OnFailure is what happens when no valid plan arrives within the
	// retries: "error" ends the run with an *InvalidPlanError; "route"
	// records the failure (state failure "plan" and reason) and takes the
	// `failed` route. Default "error".
	OnFailure string `mapstructure:"on_failure"`
	// Temperature overrides the model's sampling temperature.
	Temperature *float64 `mapstructure:"temperature"`
	// MaxTokens caps the completion; 0 uses the model default.
	MaxTokens int `mapstructure:"max_tokens"`
	// Dispatch runs the plan's steps while the model is still writing it
	// (LLMCompiler's streamed task fetching): the reply streams, each step
	// whose text is complete and that passes the checks a step can pass
	// alone starts as soon as its dependencies are done, and the node
	// returns once the plan is whole and every step has run, so the
	// execute node after it finds nothing pending (it still runs a
	// re-plan's steps). A plan rejected once whole is handled as without
	// dispatch (fed back and retried); the steps it had started are
	// stopped and their results discarded. true (or an empty mapping)
	// uses the defaults; a mapping takes the execute node's settings:
	// strategy (parallel, the default, or rewoo), max_concurrency,
	// llm_tool (default: this planner's llm_tool), result_limit and
	// worker_system. Needs require_tools. Default off.
	Dispatch any `mapstructure:"dispatch"`
}

// InvalidPlanError is returned when no valid plan arrived within the retry
// budget. It matches ErrInvalidPlan and the sentinels of the last reason
// (plan.ErrPlanCycle, plan.ErrDanglingDependency, plan.ErrUnknownTool, ...).
type InvalidPlanError struct {
	// Attempts is how many plans were requested.
	Attempts int
	// Reply is the last rejected reply (text or tool-call arguments).
	Reply string
	// Err is the last reason for rejection.
	Err error
}

func (e *InvalidPlanError) Error() string {
	return fmt.Sprintf("%v after %d attempt(s): %s", ErrInvalidPlan, e.Attempts, strings.ReplaceAll(e.Err.Error(), "\n", "; "))
}

// Unwrap returns ErrInvalidPlan and the reason.
func (e *InvalidPlanError) Unwrap() []error { return []error{ErrInvalidPlan, e.Err} }

// Planner is the planner nodekind.
type Planner struct {
	id, kind   string
	model      llm.Model
	system     string
	prompt     *nodekind.Template
	maxRetries int
	rules      plan.Rules
	routeOnErr bool
	opts       []llms.CallOption
	// extra is the prompt's .Extra, the same for every run.
	extra map[string]any
	// dispatch runs steps as the plan streams (Settings.Dispatch); nil:
	// off.
	dispatch *steps.Execute
}

// New builds a `planner` node from its spec. It declares the `failed`
// route when on_failure is "route".
func New(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s Settings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	output := s.Output
	switch output {
	case "":
		output = OutputJSON
	case OutputJSON, OutputTool, OutputText:
	default:
		return nodekind.Built{}, config.SettingErrorf("output", "want json, tool or text, got %q", s.Output)
	}
	ps := promptSpec()
	if output == OutputTool {
		ps = ps.Without("Schema") // the plan tool's parameters are the schema
	}
	system, tmpl, err := env.Prompts(s.PromptSources, ps, defaultSystem, defaultPrompt)
	if err != nil {
		return nodekind.Built{}, err
	}
	p := &Planner{id: spec.ID, kind: spec.Type, model: env.Model, system: system, prompt: tmpl, maxRetries: DefaultMaxRetries}
	maxSteps, err := steps.MaxPlanSteps(s.MaxPlanSteps)
	if err != nil {
		return nodekind.Built{}, err
	}
	if s.MaxRetries != nil {
		if *s.MaxRetries < 0 {
			return nodekind.Built{}, config.SettingErrorf("max_retries", "must be 0 or more, got %d", *s.MaxRetries)
		}
		p.maxRetries = *s.MaxRetries
	}
	ts, err := steps.NewPlanningTools(env.Tools, s.LLMTool)
	if err != nil {
		return nodekind.Built{}, err
	}
	p.rules = plan.Rules{Tools: ts.Set, MaxSteps: maxSteps, RequireTools: s.RequireTools}
	if s.RequireTools && ts.Len == 0 {
		return nodekind.Built{}, config.SettingErrorf("require_tools", "the pipeline has no tools, so no step could name one; list tools under tools:")
	}
	switch s.OnFailure {
	case "", "error":
	case "route":
		p.routeOnErr = true
	default:
		return nodekind.Built{}, config.SettingErrorf("on_failure", "want error or route, got %q", s.OnFailure)
	}
	if s.Temperature != nil {
		p.opts = append(p.opts, llms.WithTemperature(*s.Temperature))
	}
	if s.MaxTokens > 0 {
		p.opts = append(p.opts, llms.WithMaxTokens(s.MaxTokens))
	}
	switch output {
	case OutputJSON:
		p.opts = append(p.opts, llms.WithJSONMode())
	case OutputTool:
		p.opts = append(p.opts,
			llms.WithTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{
				Name: PlanToolName, Description: "Submit the plan: the steps that solve the task.", Parameters: plan.Schema()}}}),
			llms.WithToolChoice(llms.ToolChoice{Type: "function", Function: &llms.FunctionReference{Name: PlanToolName}}))
	}
	p.extra = map[string]any{
		"Tools":        ts.List,
		"Schema":       schemaText(),
		"MaxSteps":     maxSteps,
		"RequireTools": s.RequireTools,
		"Output":       output,
	}
	if p.dispatch, err = newDispatch(env, spec, s.Dispatch, s.LLMTool, s.RequireTools); err != nil {
		return nodekind.Built{}, err
	}
	b := nodekind.Built{Node: p}
	if p.routeOnErr {
		b.Routes = []string{RouteFailed}
	}
	return b, nil
}

// Run asks for a plan until one passes validation or the retries run out,
// and stores it in st.Plan with every step pending.
func (p *Planner) Run(ctx context.Context, st *state.State) (string, error) {
	tr := trace.From(ctx)
	user, err := p.prompt.Render(st, p.extra)
	if err != nil {
		return "", err
	}
	msgs := llm.Prompt(p.system, user)
	caller := llm.CallMeta{Node: p.id, Kind: p.kind}
	var last *InvalidPlanError
	for attempt := 1; attempt <= p.maxRetries+1; attempt++ {
		opts := p.opts
		var sp *streamedPlan
		if p.dispatch != nil {
			sp = p.startStream(ctx, st)
			opts = append(slices.Clone(p.opts), llms.WithStreamingFunc(sp.write))
		}
		text, resp, err := p.model.Call(ctx, st, caller, msgs, opts...)
		if err != nil {
			if sp != nil {
				sp.discard()
			}
			return "", fmt.Errorf("planner: %w", err)
		}
		steps, reply, err := p.read(text, resp)
		if err == nil {
			err = p.rules.Check(steps)
		}
		if err == nil {
			data := map[string]any{"steps": steps, "attempts": attempt}
			if sp == nil {
				st.Plan = pendingSteps(steps)
			} else {
				data["streamed"] = true
			}
			tr.Emit(trace.Event{Node: p.id, Kind: trace.KindPlan, Text: plan.Format(steps, false), Data: data})
			if sp != nil {
				if err := sp.finish(steps); err != nil {
					return "", fmt.Errorf("planner: %w", err)
				}
			}
			return "", nil
		}
		last = &InvalidPlanError{Attempts: attempt, Reply: reply, Err: err}
		kind := trace.KindGuard
		if errors.Is(err, plan.ErrMalformedPlan) {
			kind = trace.KindParseError
		}
		text = "plan rejected: " + err.Error()
		if sp != nil {
			if n := sp.discard(); n > 0 {
				text += fmt.Sprintf(" (%d step(s) started while it streamed were stopped and their results discarded)", n)
			}
		}
		tr.Emit(trace.Event{Node: p.id, Kind: kind, Text: text,
			Data: map[string]any{"attempt": attempt, "retries_left": p.maxRetries + 1 - attempt}})
		msgs = append(msgs, llm.Text(llms.ChatMessageTypeAI, reply),
			llm.Text(llms.ChatMessageTypeHuman, fmt.Sprintf(feedbackPrompt, err)))
	}
	if p.routeOnErr {
		st.Failure = state.FailurePlan
		st.Reason = "no valid plan: " + last.Error()
		tr.Emit(trace.Event{Node: p.id, Kind: trace.KindError, Text: last.Error(), Data: map[string]any{"route": RouteFailed}})
		return RouteFailed, nil
	}
	return "", last
}

// read extracts the plan from a reply: the arguments of a "plan" tool call
// in any choice, else the text. reply is what is shown back to the model.
func (p *Planner) read(text string, resp *llms.ContentResponse) (steps []plan.Step, reply string, err error) {
	if resp != nil {
		for _, ch := range resp.Choices {
			for _, tc := range ch.ToolCalls {
				if tc.FunctionCall == nil || tools.NormalizeName(tc.FunctionCall.Name) != PlanToolName {
					continue
				}
				steps, err := plan.Decode([]byte(tc.FunctionCall.Arguments))
				return steps, tc.FunctionCall.Arguments, err
			}
		}
	}
	steps, err = plan.Parse(text)
	return steps, text, err
}
