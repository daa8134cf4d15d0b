// Package steps is the plan-step scheduler of the Plan-and-Execute family:
// the `execute` node, which runs the pending steps of the state's plan with
// one of three strategies.
//
//   - react (Plan-and-Execute): each step is a small ReAct sub-run (package
//     executor's loop, configured by the node's `react:` block) that sees
//     the overall task, its own step and the results of the steps it depends
//     on. Its model calls carry the execute node's id and the kind "react".
//     Steps run one at a time in dependency order (plan order, except that
//     a step waits for its dependencies), each announced by an info event.
//   - rewoo (ReWOO): each step is one direct tool call; "#E<id>" in its input
//     is replaced by the result of step <id> first. No model call per step.
//   - parallel (LLMCompiler): like rewoo, but every step whose dependencies
//     are done starts at once, at most max_concurrency at a time.
//
// One visit runs every step that can run, until the plan has no runnable
// pending step, and then takes the default edge (to the re-planner, joiner
// or solver). A step whose dependency failed or was skipped, or whose input
// references such a step, is skipped with the reason rather than run on
// missing input; the re-planner sees that and can revise the plan. A tool
// error fails only its step; cancellation and model-provider errors end the
// node with an error.
//
// Whatever the strategy, results are written to the plan in place (and a
// done step's result to the run's vars, as E1 for step 1 or #E1: see
// state.StepVar), and step trace events are emitted in the plan's
// dependency order (the order of plan.Order), so a run's state and step
// events do not depend on which concurrent step finished first.
package steps

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/internal/par"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// Strategies of the execute nodekind.
const (
	// StrategyReAct runs each step as a ReAct sub-run, in dependency order.
	StrategyReAct = "react"
	// StrategyReWOO runs each step as a direct tool call, in dependency order.
	StrategyReWOO = "rewoo"
	// StrategyParallel runs ready steps' tool calls concurrently.
	StrategyParallel = "parallel"
)

// Defaults of the execute node's settings.
const (
	// DefaultMaxConcurrency bounds concurrent steps in the parallel strategy.
	DefaultMaxConcurrency = 8
	// DefaultResultLimit caps a stored step result, in characters (runes).
	DefaultResultLimit = 2000
)

// ErrStep marks a step the executor could not run (no tool, unknown
// reference); the message is stored as the step's error.
var ErrStep = errors.New("step cannot run")

// Settings configure an `execute` nodekind. Every field is optional.
type Settings struct {
	// Strategy is "react", "rewoo" or "parallel". Default "react".
	Strategy string `mapstructure:"strategy"`
	// MaxConcurrency bounds how many steps run at once in the parallel
	// strategy. Default 8. Ignored by the sequential strategies.
	MaxConcurrency int `mapstructure:"max_concurrency"`
	// LLMTool names a built-in model worker for the rewoo and parallel
	// strategies: a step whose tool has this name is one model call (role
	// "worker") on the step's input, after #E substitution, as in the
	// ReWOO paper's LLM worker. Give the planner the same llm_tool. Default
	// "" (none).
	LLMTool string `mapstructure:"llm_tool"`
	// WorkerSystem is the system message of the model worker. Default: an
	// instruction to answer from the given text only, tersely.
	WorkerSystem string `mapstructure:"worker_system"`
	// ResultLimit caps each stored step result, in characters (runes);
	// longer results end with a truncation marker. Default 2000; -1 keeps
	// results whole.
	ResultLimit int `mapstructure:"result_limit"`
	// ReAct holds the settings of the per-step ReAct loop (strategy react):
	// the keys of a `react` node (max_iterations, tools, mode, ...).
	ReAct map[string]any `mapstructure:"react"`
}

const defaultWorkerSystem = "You are a worker in a multi-step plan. Carry out the instruction using only the text it contains. Reply with the result only: no explanation, no restating of the instruction."

// Execute is the execute nodekind.
type Execute struct {
	id, kind    string
	strategy    string
	concurrency int
	resultLimit int
	tools       *tools.Registry
	model       llm.Model
	llmTool     string
	workerSys   string
	agent       StepAgent
}

// NewExecute builds an `execute` node from its spec, using the ReAct loop
// of package executor for the react strategy.
func NewExecute(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	return NewExecuteWith(NewReActAgent)(env, spec)
}

// AgentFactory builds the agent that runs one step of the react strategy
// from the node's environment and its `react:` settings.
type AgentFactory func(env nodekind.Env, settings map[string]any) (StepAgent, error)

// NewExecuteWith returns an `execute` constructor whose react strategy uses
// agents built by factory; it exists so other step agents can be plugged in.
func NewExecuteWith(factory AgentFactory) nodekind.Constructor {
	return func(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
		var s Settings
		if err := config.Decode(spec.Settings, &s); err != nil {
			return nodekind.Built{}, err
		}
		reg := env.Tools
		if reg == nil {
			reg, _ = tools.NewRegistry(nil)
		}
		e := &Execute{id: spec.ID, kind: spec.Type, strategy: s.Strategy, concurrency: 1,
			resultLimit: s.ResultLimit, tools: reg, model: env.Model, llmTool: strings.TrimSpace(s.LLMTool), workerSys: s.WorkerSystem}
		if e.strategy == "" {
			e.strategy = StrategyReAct
		}
		switch e.strategy {
		case StrategyReAct, StrategyReWOO:
		case StrategyParallel:
			switch {
			case s.MaxConcurrency == 0:
				e.concurrency = DefaultMaxConcurrency
			case s.MaxConcurrency < 0:
				return nodekind.Built{}, config.SettingErrorf("max_concurrency", "must be positive, got %d", s.MaxConcurrency)
			default:
				e.concurrency = s.MaxConcurrency
			}
		default:
			return nodekind.Built{}, config.SettingErrorf("strategy", "want react, rewoo or parallel, got %q", s.Strategy)
		}
		switch {
		case e.resultLimit == 0:
			e.resultLimit = DefaultResultLimit
		case e.resultLimit < -1:
			return nodekind.Built{}, config.SettingErrorf("result_limit", "must be positive, or -1 for no limit, got %d", s.ResultLimit)
		}
		if e.workerSys == "" {
			e.workerSys = defaultWorkerSystem
		}
		if e.llmTool != "" {
			if e.strategy == StrategyReAct {
				return nodekind.Built{}, config.SettingErrorf("llm_tool", "applies to the rewoo and parallel strategies only; react steps already run a model")
			}
			if err := checkLLMToolName(reg, e.llmTool); err != nil {
				return nodekind.Built{}, err
			}
		}
		if e.strategy == StrategyReAct {
			if factory == nil {
				return nodekind.Built{}, config.SettingErrorf("strategy", "no step agent is available for the react strategy")
			}
			a, err := factory(env.Nested("react"), s.ReAct)
			if err != nil {
				return nodekind.Built{}, config.NestSetting("react", err)
			}
			e.agent = a
		} else if len(s.ReAct) > 0 {
			return nodekind.Built{}, config.SettingErrorf("react", "applies to the react strategy only (strategy is %q)", e.strategy)
		}
		return nodekind.Built{Node: e}, nil
	}
}

// job is one step handed to a worker: everything it needs is copied out of
// the state before it starts, so workers never read the plan.
type job struct {
	index   int
	step    plan.Step
	context string
}

// result is what a worker reports back for one step.
type result struct {
	index   int
	status  string
	output  string
	errText string
	// failure is the state.Failure* kind of a failed step, recorded in the
	// state as an incident.
	failure string
	err     error // aborts the node (cancellation, provider failure)
	elapsed time.Duration
}

// Run executes every runnable pending step of st.Plan and returns the
// default route.
func (e *Execute) Run(ctx context.Context, st *state.State) (string, error) {
	order, err := plan.Order(st.Plan)
	if err != nil {
		return "", fmt.Errorf("execute: the plan cannot be ordered (validate it with the planner): %w", err)
	}
	sched := e.newScheduler(ctx, st)
	for _, id := range order {
		i := sched.index[id]
		switch st.Plan[i].Status {
		case "", plan.StatusPending, plan.StatusRunning:
			st.Plan[i].Status = plan.StatusPending
			sched.order = append(sched.order, i)
			sched.todo[i] = true
		}
	}
	return "", sched.run(ctx)
}

// newScheduler returns a scheduler for st.Plan with nothing to do yet.
func (e *Execute) newScheduler(ctx context.Context, st *state.State) *scheduler {
	index := make(map[string]int, len(st.Plan))
	for i, s := range st.Plan {
		index[s.ID] = i
	}
	return &scheduler{e: e, st: st, tr: trace.From(ctx), index: index, todo: map[int]bool{},
		inputs: map[int]string{}, durations: map[int]time.Duration{}}
}

// scheduler runs one visit's steps. Only its run goroutine touches st.Plan.
type scheduler struct {
	e       *Execute
	st      *state.State
	tr      *trace.Tracer
	index   map[string]int
	order   []int        // plan indexes of this visit's steps, dependency order
	todo    map[int]bool // steps not yet started
	emitted int          // how many of order have had their step event
	// inputs are the inputs steps ran with (after #E substitution) and
	// durations how long they ran, for the step events.
	inputs    map[int]string
	durations map[int]time.Duration
	// feed brings the steps of a plan still being written (Dispatch); nil
	// when the plan is whole. fed is set once the feed is closed and
	// drained.
	feed *feed
	fed  bool
}

// take moves the steps the feed brought into the plan, as pending steps
// of this visit.
func (s *scheduler) take() {
	steps, closed := s.feed.drain()
	for _, step := range steps {
		i := len(s.st.Plan)
		step.Status, step.Result, step.Error = plan.StatusPending, "", ""
		s.st.Plan = append(s.st.Plan, step)
		s.index[step.ID] = i
		s.order = append(s.order, i)
		s.todo[i] = true
	}
	s.fed = closed
}

// run starts every step that is ready, in dependency order, as long as
// fewer than the concurrency bound are running, and starts more as running
// steps finish (par.Pool); a step becomes ready when its dependencies are
// done, so a slow step delays only the steps that depend on it.
func (s *scheduler) run(ctx context.Context) error {
	pool := par.NewPool[result](s.e.concurrency)
	var abort error
	abortAt := len(s.st.Plan)
	for {
		if s.feed != nil {
			s.take()
		}
		if abort == nil && ctx.Err() != nil {
			abort, abortAt = ctx.Err(), -1
		}
		if abort == nil {
			for _, i := range s.order {
				if pool.Full() {
					break
				}
				if !s.todo[i] {
					continue
				}
				j, ready, skip := s.prepare(i)
				switch {
				case skip != "":
					delete(s.todo, i)
					s.finish(result{index: i, status: plan.StatusSkipped, errText: skip})
				case ready:
					delete(s.todo, i)
					s.st.Plan[i].Status = plan.StatusRunning
					s.inputs[i] = j.step.Input
					if s.e.concurrency == 1 {
						// Sequential starts are deterministic; announcing them
						// groups a react step's sub-run events in the trace.
						s.tr.Emit(trace.Event{Node: s.e.id, Kind: trace.KindInfo, Text: fmt.Sprintf("step %s started: %s", j.step.ID, j.step.Description),
							Data: map[string]any{"id": j.step.ID, "status": plan.StatusRunning}})
					}
					pool.Go(ctx, i, func(ctx context.Context, _ int) (result, error) { return s.e.work(ctx, s.st, j), nil })
				}
			}
			s.emit()
		}
		var wake <-chan struct{}
		if s.feed != nil && !s.fed {
			wake = s.feed.wake
		}
		done, ok, woken := pool.WaitOrWake(wake)
		if woken {
			continue
		}
		if !ok {
			break
		}
		r := done.Value
		if done.Err != nil {
			// The step's worker panicked: a bug, which ends the node
			// like a provider failure rather than the process.
			r = result{index: done.Key, err: fmt.Errorf("step %s: %w", s.st.Plan[done.Key].ID, done.Err)}
		}
		if r.err != nil {
			if abort == nil || r.index < abortAt {
				abort, abortAt = r.err, r.index
			}
			s.st.Plan[r.index].Status = plan.StatusFailed
			s.st.Plan[r.index].Error = r.err.Error()
			continue
		}
		s.finish(r)
	}
	s.emit()
	if abort != nil {
		return fmt.Errorf("execute: %w", abort)
	}
	return nil
}

// prepare decides whether step i can start: ready with its job, to be
// skipped with a reason, or neither (it waits for a dependency).
func (s *scheduler) prepare(i int) (j job, ready bool, skip string) {
	step := s.st.Plan[i]
	var ctxLines []string
	for _, d := range plan.Dependencies(step) {
		k, ok := s.index[d]
		if !ok {
			return job{}, false, fmt.Sprintf("depends on step %q, which is not in the plan", d)
		}
		dep := s.st.Plan[k]
		switch dep.Status {
		case plan.StatusDone:
			ctxLines = append(ctxLines, fmt.Sprintf("- Step %s (%s): %s", dep.ID, dep.Description, dep.Result))
		case plan.StatusFailed, plan.StatusSkipped:
			how := "depends on"
			if slices.Contains(plan.References(step.Input), d) {
				how = "references #E" + d + " of"
			}
			return job{}, false, fmt.Sprintf("%s step %s, which %s: %s", how, d, dep.Status, textutil.OneLine(dep.Error))
		default:
			return job{}, false, ""
		}
	}
	in, err := substitute(step.Input, s.st.Plan, s.index)
	if err != nil {
		return job{}, false, err.Error()
	}
	step.Input = in
	return job{index: i, step: step, context: strings.Join(ctxLines, "\n")}, true, ""
}

// finish records a step's outcome in the plan.
func (s *scheduler) finish(r result) {
	p := &s.st.Plan[r.index]
	p.Status = r.status
	p.Result = truncate(r.output, s.e.resultLimit)
	p.Error = r.errText
	if r.status == plan.StatusFailed {
		s.st.NoteIncident(r.failure)
	}
	if r.status == plan.StatusDone {
		s.keepResult(p)
	}
	s.durations[r.index] = r.elapsed
}

// GuardStepVar names the guard event of a step result the run's vars
// could not keep (Data: id, var).
const GuardStepVar = "step_var"

// keepResult sets the var named after a done step's id (state.StepVar:
// step 1 or #E1 gives E1) to its result, before any step that waits for
// it starts, so prompts and tools read it as {{.Vars.E1}}. A var the
// run cannot hold (no usable name, or every var slot taken) is reported
// by a guard event; the step still counts as done.
func (s *scheduler) keepResult(p *plan.Step) {
	name := state.StepVar(p.ID)
	err := fmt.Errorf("step id %q gives no var name", p.ID)
	if name != "" {
		err = s.st.Vars.SetClipped(name, p.Result)
	}
	if err != nil {
		s.tr.Emit(trace.Event{Node: s.e.id, Kind: trace.KindGuard, Text: "the result of step " + p.ID + " is not kept in the vars: " + err.Error(),
			Data: map[string]any{"guard": GuardStepVar, "id": p.ID, "var": name}})
	}
}

// emit sends the step events of finished steps in dependency order: an
// event waits until every step before it in the order has finished.
func (s *scheduler) emit() {
	for s.emitted < len(s.order) {
		i := s.order[s.emitted]
		p := s.st.Plan[i]
		if p.Status != plan.StatusDone && p.Status != plan.StatusFailed && p.Status != plan.StatusSkipped {
			return
		}
		s.emitted++
		input, ran := s.inputs[i]
		if !ran {
			input = p.Input
		}
		text := fmt.Sprintf("step %s %s", p.ID, p.Status)
		if p.Status == plan.StatusDone {
			text += ": " + textutil.Clip(textutil.OneLine(p.Result), 200)
		} else {
			text += ": " + textutil.Clip(textutil.OneLine(p.Error), 200)
		}
		s.tr.Emit(trace.Event{Node: s.e.id, Kind: trace.KindStep, Text: text, ElapsedMS: float64(s.durations[i].Microseconds()) / 1000,
			Data: map[string]any{"id": p.ID, "description": p.Description, "tool": p.Tool, "input": input,
				"depends_on": p.DependsOn, "status": p.Status, "result": p.Result, "error": p.Error, "strategy": s.e.strategy}})
	}
}

// work runs one step. It runs on its own goroutine and reads only j.
func (e *Execute) work(ctx context.Context, st *state.State, j job) result {
	began := time.Now()
	r := e.runStep(ctx, st, j)
	r.index, r.elapsed = j.index, time.Since(began)
	return r
}

func (e *Execute) runStep(ctx context.Context, st *state.State, j job) result {
	if e.strategy == StrategyReAct {
		return e.runAgent(ctx, st, j)
	}
	step := j.step
	if step.Tool == "" {
		return result{status: plan.StatusFailed, errText: fmt.Sprintf("%v: step %s has no tool; the %s strategy runs each step as one tool call (set require_tools on the planner)", ErrStep, step.ID, e.strategy)}
	}
	if e.llmTool != "" && tools.NormalizeName(step.Tool) == tools.NormalizeName(e.llmTool) {
		return e.runWorker(ctx, st, step)
	}
	// Run, not Call: the step event reports the call, in plan order,
	// whichever concurrent step finishes first.
	res, err := nodekind.PrepareTool(e.tools, llm.CallMeta{Node: e.id, Kind: e.kind}, step.Tool, step.Input, nodekind.ToolOptions{}).Run(llm.WithStep(ctx, step.ID), st)
	if err != nil {
		return result{err: err}
	}
	if res.Err != nil {
		return result{status: plan.StatusFailed, output: res.Output, errText: "tool error: " + res.Err.Error(), failure: state.FailureTool}
	}
	return result{status: plan.StatusDone, output: res.Output}
}

// runWorker is the model worker: one model call on the step's input.
func (e *Execute) runWorker(ctx context.Context, st *state.State, step plan.Step) result {
	text, _, err := e.model.Call(llm.WithStep(ctx, step.ID), st, llm.CallMeta{Node: e.id, Kind: e.kind, Role: "worker"},
		llm.Prompt(e.workerSys, step.Input), llms.WithTemperature(0))
	if err != nil {
		return result{err: err}
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return result{status: plan.StatusFailed, errText: "the model worker returned an empty reply", failure: state.FailureParse}
	}
	return result{status: plan.StatusDone, output: text}
}

// substitute replaces every #E<id> in input by the result of step <id>.
func substitute(input string, steps []plan.Step, index map[string]int) (string, error) {
	refs := plan.References(input)
	if len(refs) == 0 {
		return input, nil
	}
	vals := make(map[string]string, len(refs))
	for _, id := range refs {
		k, ok := index[id]
		if !ok {
			return "", fmt.Errorf("%w: the input references #E%s, but there is no step %q", ErrStep, id, id)
		}
		if steps[k].Status != plan.StatusDone {
			return "", fmt.Errorf("%w: the input references #E%s, which has not succeeded (%s)", ErrStep, id, steps[k].Status)
		}
		vals[id] = steps[k].Result
	}
	return plan.ReplaceReferences(input, func(id string) string { return vals[id] }), nil
}

func truncate(s string, limit int) string {
	if limit < 0 || utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit]) + fmt.Sprintf("…[truncated %d chars]", len(r)-limit)
}
