package trajectory

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
)

// DefaultWorkerTool is the plan-step tool name taken for the execute
// node's model worker (its llm_tool) when Options.WorkerTools is nil:
// the name every shipped config gives it.
const DefaultWorkerTool = "llm"

// strategyReAct is the execute node's react strategy
// (executor/steps.StrategyReAct, a package on this one's floor): its
// steps run as ReAct sub-runs, whose own action events report the calls.
const strategyReAct = "react"

// Via says which trace event a Call was read from.
type Via string

// The events a Call is read from.
const (
	// ViaAction: an action event (nodekind.ToolCall.Announce), emitted
	// before every call of a known tool, text ReAct actions and native
	// tool calls alike. A tool that then fails is still this call.
	ViaAction Via = "action"
	// ViaUnknownTool: a guard event unknown_tool, emitted instead of an
	// action when the named tool does not exist.
	ViaUnknownTool Via = "unknown_tool"
	// ViaInvalidAction: a guard event invalid_action of a completion-style
	// ReAct loop whose action read as Tool[input] but named no known tool.
	ViaInvalidAction Via = "invalid_action"
	// ViaStep: a step event of an execute node that runs each plan step as
	// one direct tool call (strategies rewoo and parallel), whose calls
	// emit no action events.
	ViaStep Via = "step"
)

// Call is one tool call of a run, in the order the run reported it.
type Call struct {
	// Node is the emitting node's id; a path such as "each/item 2/act"
	// inside a subgraph or map.
	Node string `json:"node,omitempty"`
	// Tool is the tool name the run used (resolved by the registry when
	// the tool exists, as the model wrote it when it does not).
	Tool string `json:"tool"`
	// Input is the tool input as the event reports it: the raw arguments
	// (JSON for a native call), with #E references already substituted
	// for a plan step. Empty for an unknown tool, whose event has none.
	Input string `json:"input,omitempty"`
	// Via is the event the call was read from.
	Via Via `json:"via"`
}

// PlanStep is one step of a recorded plan.
type PlanStep struct {
	// ID is the step's id within its plan ("1", "1_v").
	ID string `json:"id"`
	// Tool is the step's tool, empty for a step the plan gave none.
	Tool string `json:"tool,omitempty"`
	// Input is the step's input, #E references unresolved.
	Input string `json:"input,omitempty"`
	// DependsOn are the ids the step waits for: its depends_on and the ids
	// its input references as #E<id> (plan.Dependencies).
	DependsOn []string `json:"depends_on,omitempty"`
	// Worker marks a step of the execute node's model worker (a tool in
	// Options.WorkerTools): a model call, not a tool call.
	Worker bool `json:"worker,omitempty"`
}

// Plan is one plan or re-plan a run made, as its plan event gave it.
type Plan struct {
	// Node is the planner or re-planner node that made it.
	Node string `json:"node,omitempty"`
	// Replan is the re-plan's number (1 for the first re-plan), 0 for a
	// planner's plan. A re-plan holds the finished steps and the new ones.
	Replan int `json:"replan,omitempty"`
	// Steps are the plan's steps in plan order.
	Steps []PlanStep `json:"steps"`
}

// Trajectory is what a run did with tools: its calls and its plans.
type Trajectory struct {
	// Tools are the tool calls, in the order their events arrived.
	Tools []Call `json:"tools"`
	// Plans are the plans made, in order; the last is the final plan.
	Plans []Plan `json:"plans,omitempty"`
}

// Options configure a Collector.
type Options struct {
	// WorkerTools name the plan-step tools that are an execute node's
	// model worker (its llm_tool setting, "llm" in the shipped ReWOO and
	// LLMCompiler configs): such a step is a model call, so its step event
	// is no Call, and its plan step is marked Worker. Names match after
	// tools.NormalizeName. Default (nil): []string{DefaultWorkerTool}; an
	// empty non-nil slice names none.
	WorkerTools []string
}

// Collector is a trace.Sink that records one run's tool calls and plans.
// It is safe for concurrent use. The zero value is ready to use, with the
// default Options. It keeps no reference to an event's Data.
type Collector struct {
	opts Options

	mu sync.Mutex
	t  Trajectory
}

// NewCollector returns a Collector configured by o.
func NewCollector(o Options) *Collector {
	o.WorkerTools = slices.Clone(o.WorkerTools)
	return &Collector{opts: o}
}

// Emit records e when it reports a tool call or a plan (see the package
// documentation for which events do) and ignores it otherwise.
func (c *Collector) Emit(e trace.Event) {
	switch e.Kind {
	case trace.KindAction, trace.KindGuard, trace.KindStep:
		if call, ok := c.call(e); ok {
			c.mu.Lock()
			c.t.Tools = append(c.t.Tools, call)
			c.mu.Unlock()
		}
	case trace.KindPlan:
		if p, ok := c.plan(e); ok {
			c.mu.Lock()
			c.t.Plans = append(c.t.Plans, p)
			c.mu.Unlock()
		}
	}
}

// Trajectory returns a copy of what has been recorded so far.
func (c *Collector) Trajectory() Trajectory {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Trajectory{Tools: slices.Clone(c.t.Tools)}
	if len(c.t.Plans) > 0 {
		out.Plans = make([]Plan, len(c.t.Plans))
		for i, p := range c.t.Plans {
			p.Steps = slices.Clone(p.Steps)
			out.Plans[i] = p
		}
	}
	return out
}

// Collect runs the events through a new Collector configured by o and
// returns the trajectory: for events read back from a JSONL trace, or a
// run's Result.Trace.
func Collect(events []trace.Event, o Options) Trajectory {
	c := NewCollector(o)
	for _, e := range events {
		c.Emit(e)
	}
	return c.Trajectory()
}

// call reads the tool call e reports, if it reports one.
func (c *Collector) call(e trace.Event) (Call, bool) {
	switch e.Kind {
	case trace.KindAction:
		tool, input := str(e.Data, "tool"), str(e.Data, "input")
		if tool == "" {
			// Every emitter sets Data tool; the text "tool: input" is a
			// fallback for an event built elsewhere.
			var ok bool
			if tool, input, ok = strings.Cut(e.Text, ": "); !ok {
				tool, input = e.Text, ""
			}
		}
		return Call{Node: e.Node, Tool: strings.TrimSpace(tool), Input: input, Via: ViaAction}, true
	case trace.KindGuard:
		switch str(e.Data, "guard") {
		case nodekind.GuardUnknownTool:
			return Call{Node: e.Node, Tool: str(e.Data, "tool"), Via: ViaUnknownTool}, true
		case executor.GuardInvalidAction:
			if tool, input, ok := bracketAction(str(e.Data, "action")); ok {
				return Call{Node: e.Node, Tool: tool, Input: input, Via: ViaInvalidAction}, true
			}
		}
	case trace.KindStep:
		strategy, status, tool := str(e.Data, "strategy"), str(e.Data, "status"), str(e.Data, "tool")
		if strategy == "" || strategy == strategyReAct || strings.TrimSpace(tool) == "" || c.worker(tool) {
			return Call{}, false
		}
		if status != plan.StatusDone && status != plan.StatusFailed {
			return Call{}, false // skipped: its tool never ran
		}
		return Call{Node: e.Node, Tool: tool, Input: str(e.Data, "input"), Via: ViaStep}, true
	}
	return Call{}, false
}

// plan reads the plan e reports; a plan event without structured steps
// (a decomposition's numbered sub-questions) is none.
func (c *Collector) plan(e trace.Event) (Plan, bool) {
	raw, ok := e.Data["steps"]
	if !ok {
		return Plan{}, false
	}
	steps, err := planSteps(raw)
	if err != nil {
		return Plan{}, false
	}
	p := Plan{Node: e.Node, Replan: integer(e.Data["replan"]), Steps: make([]PlanStep, 0, len(steps))}
	for _, s := range steps {
		p.Steps = append(p.Steps, PlanStep{ID: s.ID, Tool: s.Tool, Input: s.Input, DependsOn: plan.Dependencies(s),
			Worker: strings.TrimSpace(s.Tool) != "" && c.worker(s.Tool)})
	}
	return p, true
}

// worker reports whether tool names the execute node's model worker.
func (c *Collector) worker(tool string) bool {
	names := c.opts.WorkerTools
	if names == nil {
		names = []string{DefaultWorkerTool}
	}
	n := tools.NormalizeName(tool)
	return slices.ContainsFunc(names, func(w string) bool { return tools.NormalizeName(w) == n })
}

// planSteps reads a plan event's steps: []plan.Step as the planner and
// re-planner emit them, or the same decoded from JSON ([]any of maps).
func planSteps(v any) ([]plan.Step, error) {
	switch s := v.(type) {
	case []plan.Step:
		return s, nil
	case nil:
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("plan steps: %w", err)
	}
	var steps []plan.Step
	if err := json.Unmarshal(b, &steps); err != nil {
		return nil, fmt.Errorf("plan steps: %w", err)
	}
	return steps, nil
}

// str returns data[key] when it is a string.
func str(data map[string]any, key string) string {
	s, _ := data[key].(string)
	return s
}

// integer returns v as an int: an int from the emitter, a float64 from JSON.
func integer(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

// bracketAction splits a completion-style action "Tool[input]" as the
// ReAct loop reads it: a name without spaces, then the input in brackets.
func bracketAction(action string) (tool, input string, ok bool) {
	a := strings.TrimSpace(action)
	open := strings.IndexByte(a, '[')
	if open <= 0 || !strings.HasSuffix(a, "]") || open >= len(a)-1 || strings.ContainsAny(a[:open], " \t\r\n") {
		return "", "", false
	}
	return a[:open], strings.TrimSpace(a[open+1 : len(a)-1]), true
}
