package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Sentinel errors. A rejected plan's error wraps one or more of the reason
// sentinels; a planner node that gives up wraps ErrInvalidPlan as well.
var (
	// ErrMalformedPlan means the reply holds no readable plan, or a step
	// lacks an id or both a description and a tool.
	ErrMalformedPlan = errors.New("malformed plan")
	// ErrDuplicateStep means two steps share an id.
	ErrDuplicateStep = errors.New("duplicate step id")
	// ErrDanglingDependency means a step depends on (or references as #E)
	// a step that is not in the plan.
	ErrDanglingDependency = errors.New("dependency on a missing step")
	// ErrPlanCycle means the steps' dependencies form a cycle.
	ErrPlanCycle = errors.New("dependency cycle")
	// ErrTooManySteps means the plan is longer than the step limit.
	ErrTooManySteps = errors.New("too many steps")
	// ErrUnknownTool means a step names a tool that is not in the rules'
	// tool set.
	ErrUnknownTool = errors.New("plan names an unknown tool")
	// ErrMissingTool means a step has no tool although the executor runs
	// steps as direct tool calls (rewoo, parallel).
	ErrMissingTool = errors.New("step has no tool")
)

// DefaultMaxSteps is the default bound on the number of steps in a plan
// (the planner's and re-planner's max_plan_steps).
const DefaultMaxSteps = 8

// refPattern matches a reference to an earlier step's result, "#E1".
var refPattern = regexp.MustCompile(`#E([A-Za-z0-9_]+)`)

// References returns the step ids that input references as #E<id>, in
// order of first appearance, without duplicates.
func References(input string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range refPattern.FindAllStringSubmatch(input, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// ReplaceReferences replaces every #E<id> in input by value(id).
func ReplaceReferences(input string, value func(id string) string) string {
	return refPattern.ReplaceAllStringFunc(input, func(m string) string { return value(m[len("#E"):]) })
}

// Parse reads a plan out of model text. It accepts, in this order of
// preference:
//
//   - a JSON object {"steps":[...]} (or {"plan":[...]}) or a bare JSON array
//     of steps, as the whole reply, inside a ``` fence, or embedded in prose;
//   - ReWOO's format: "Plan: <description>" lines each followed by
//     "#E1 = Tool[input]";
//   - a numbered list ("1. Search for X"). A list says nothing about
//     dependencies, so each step runs after every earlier one: it depends
//     on the (up to) 16 steps before it, which orders it after all of them
//     and keeps a long list's dependencies linear in its length.
//
// Step fields are read tolerantly: ids and dependencies may be numbers or
// strings, missing ids are numbered from 1, a non-string input is kept as
// compact JSON, and "#E<id>" references in an input are added to the step's
// dependencies. Parse does not validate the plan; see Rules.Check.
// Errors wrap ErrMalformedPlan.
func Parse(text string) ([]Step, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%w: the reply is empty; reply with a JSON object {\"steps\": [...]}", ErrMalformedPlan)
	}
	var planErr error
	for _, raw := range FindJSON(text) {
		steps, looksLikePlan, err := decode(raw)
		if err == nil {
			return steps, nil
		}
		if looksLikePlan && planErr == nil {
			planErr = err
		}
	}
	if planErr != nil {
		return nil, planErr
	}
	if steps := parseReWOO(text); len(steps) > 0 {
		return steps, nil
	}
	if steps := parseNumbered(text); len(steps) > 0 {
		return steps, nil
	}
	return nil, fmt.Errorf("%w: no plan found in the reply; reply with a JSON object {\"steps\": [{\"id\": \"1\", \"description\": \"...\", \"tool\": \"...\", \"input\": \"...\", \"depends_on\": []}]}", ErrMalformedPlan)
}

// Decode decodes a plan from JSON: an object with a "steps" (or "plan")
// array, or a bare array of steps. It reads fields as tolerantly as
// Parse. Errors wrap ErrMalformedPlan.
func Decode(raw []byte) ([]Step, error) {
	steps, _, err := decode(raw)
	return steps, err
}

// decode decodes raw as a plan. looksLikePlan reports whether raw was
// plainly meant as a plan (an object with a steps key, or an array of
// objects), so that its error is worth reporting.
func decode(raw []byte) (steps []Step, looksLikePlan bool, err error) {
	raw = []byte(strings.TrimSpace(string(raw)))
	var list []json.RawMessage
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, false, fmt.Errorf("%w: %w", ErrMalformedPlan, err)
		}
		body, ok := pick(obj, "steps", "plan", "tasks")
		if !ok {
			return nil, false, fmt.Errorf("%w: the JSON object has no \"steps\" array", ErrMalformedPlan)
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, true, fmt.Errorf("%w: \"steps\" must be an array of step objects: %w", ErrMalformedPlan, err)
		}
	case len(raw) > 0 && raw[0] == '[':
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, false, fmt.Errorf("%w: %w", ErrMalformedPlan, err)
		}
		if len(list) == 0 || !strings.HasPrefix(strings.TrimSpace(string(list[0])), "{") {
			return nil, false, fmt.Errorf("%w: a plan array must hold step objects", ErrMalformedPlan)
		}
	default:
		return nil, false, fmt.Errorf("%w: not a JSON object or array", ErrMalformedPlan)
	}
	if len(list) == 0 {
		return nil, true, fmt.Errorf("%w: the plan has no steps", ErrMalformedPlan)
	}
	steps = make([]Step, 0, len(list))
	for i, item := range list {
		s, err := decodeStep(item, i)
		if err != nil {
			return nil, true, err
		}
		steps = append(steps, s)
	}
	return finishSteps(steps), true, nil
}

func pick(obj map[string]json.RawMessage, keys ...string) (json.RawMessage, bool) {
	for _, k := range keys {
		if v, ok := obj[k]; ok && string(v) != "null" {
			return v, true
		}
	}
	return nil, false
}

func decodeStep(item json.RawMessage, index int) (Step, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(item, &obj); err != nil {
		return Step{}, fmt.Errorf("%w: step %d is not a JSON object: %w", ErrMalformedPlan, index+1, err)
	}
	var s Step
	var err error
	if v, ok := pick(obj, "id", "step", "idx"); ok {
		if s.ID, err = scalar(v); err != nil {
			return s, fmt.Errorf("%w: step %d: id: %w", ErrMalformedPlan, index+1, err)
		}
	}
	if s.ID = strings.TrimSpace(s.ID); s.ID == "" {
		s.ID = strconv.Itoa(index + 1)
	}
	if v, ok := pick(obj, "description", "desc", "task", "goal", "thought"); ok {
		if s.Description, err = scalar(v); err != nil {
			return s, fmt.Errorf("%w: step %q: description: %w", ErrMalformedPlan, s.ID, err)
		}
	}
	if v, ok := pick(obj, "tool", "action", "tool_name"); ok {
		if s.Tool, err = scalar(v); err != nil {
			return s, fmt.Errorf("%w: step %q: tool: %w", ErrMalformedPlan, s.ID, err)
		}
	}
	if v, ok := pick(obj, "input", "tool_input", "args", "arguments", "query"); ok {
		s.Input = inputText(v)
	}
	if v, ok := pick(obj, "depends_on", "dependencies", "deps", "dependsOn"); ok {
		if s.DependsOn, err = idList(v); err != nil {
			return s, fmt.Errorf("%w: step %q: depends_on must be a list of step ids: %w", ErrMalformedPlan, s.ID, err)
		}
	}
	s.Description = strings.TrimSpace(s.Description)
	s.Tool = strings.TrimSpace(s.Tool)
	return s, nil
}

// scalar reads a JSON string, number or boolean as text; null is "".
func scalar(v json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err == nil {
		return n.String(), nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err == nil {
		return strconv.FormatBool(b), nil
	}
	if string(v) == "null" {
		return "", nil
	}
	return "", fmt.Errorf("want a string or a number, got %s", v)
}

// inputText keeps a string input as is and any other JSON value compact.
func inputText(v json.RawMessage) string {
	if s, err := scalar(v); err == nil {
		return s
	}
	var out bytes.Buffer
	if err := json.Compact(&out, v); err != nil {
		return string(v)
	}
	return out.String()
}

// idList reads a list of ids given as an array of strings or numbers, one
// id, or a comma-separated string.
func idList(v json.RawMessage) ([]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		s, serr := scalar(v)
		if serr != nil {
			return nil, err
		}
		var out []string
		for _, part := range strings.Split(s, ",") {
			if p := strings.TrimSpace(part); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, err := scalar(it)
		if err != nil {
			return nil, err
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// finishSteps resolves loosely written dependencies ("#E1", "E1", "step 1")
// to step ids and adds the steps referenced as #E<id> in inputs.
func finishSteps(steps []Step) []Step {
	ids := map[string]bool{}
	for _, s := range steps {
		ids[s.ID] = true
	}
	for i := range steps {
		s := &steps[i]
		var deps []string
		seen := map[string]bool{}
		add := func(d string) {
			if !seen[d] {
				seen[d] = true
				deps = append(deps, d)
			}
		}
		for _, d := range s.DependsOn {
			add(resolveID(d, ids))
		}
		for _, r := range References(s.Input) {
			if r != s.ID {
				add(r)
			}
		}
		s.DependsOn = deps
	}
	return steps
}

var idPrefix = regexp.MustCompile(`(?i)^(?:#?e|#|\$|step\s*)`)

func resolveID(d string, ids map[string]bool) string {
	d = strings.TrimSpace(d)
	if ids[d] {
		return d
	}
	if stripped := idPrefix.ReplaceAllString(d, ""); ids[stripped] {
		return stripped
	}
	return d
}

// FindJSON returns the JSON objects and arrays found in model text, most
// likely first: the whole text, the body of each ``` fence, then each value
// embedded in prose (scanning from every '{' or '[' not inside an earlier
// value). At most 32 embedded candidates are tried. Each returned value is
// syntactically valid JSON.
func FindJSON(text string) []json.RawMessage {
	var out []json.RawMessage
	seen := map[string]bool{}
	add := func(s string) bool {
		s = strings.TrimSpace(s)
		if s == "" || (s[0] != '{' && s[0] != '[') || seen[s] {
			return false
		}
		var raw json.RawMessage
		dec := json.NewDecoder(strings.NewReader(s))
		if err := dec.Decode(&raw); err != nil || strings.TrimSpace(s[dec.InputOffset():]) != "" {
			return false
		}
		seen[s] = true
		out = append(out, raw)
		return true
	}
	add(text)
	for _, m := range fencePattern.FindAllStringSubmatch(text, -1) {
		add(m[1])
	}
	tries := 0
	for i := 0; i < len(text) && tries < 32; i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		tries++
		var raw json.RawMessage
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		if err := dec.Decode(&raw); err != nil {
			continue
		}
		if !seen[string(raw)] {
			seen[string(raw)] = true
			out = append(out, raw)
		}
		i += int(dec.InputOffset()) - 1
	}
	return out
}

var fencePattern = regexp.MustCompile("(?s)```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```")

// ReWOO's plan format: "Plan: ..." followed by "#E1 = Tool[input]".
var (
	rewooPlanLine = regexp.MustCompile(`(?i)^\s*(?:\*\*)?plan(?:\s*\d+)?(?:\*\*)?\s*[:：]\s*(.*)$`)
	rewooCallLine = regexp.MustCompile(`^\s*#E([A-Za-z0-9_]+)\s*[=:]\s*([A-Za-z_][\w.-]*)\s*\[(.*)\]\s*$`)
)

func parseReWOO(text string) []Step {
	var steps []Step
	desc := ""
	for _, line := range strings.Split(text, "\n") {
		if m := rewooPlanLine.FindStringSubmatch(line); m != nil {
			desc = strings.TrimSpace(m[1])
			continue
		}
		if m := rewooCallLine.FindStringSubmatch(line); m != nil {
			steps = append(steps, Step{ID: m[1], Description: desc, Tool: m[2], Input: strings.TrimSpace(m[3])})
			desc = ""
		}
	}
	return finishSteps(steps)
}

var (
	numberedLine = regexp.MustCompile(`(?i)^\s*(?:[-*]\s*)?(?:\*\*)?(?:step\s*)?(\d+)\s*[.):]\s*(?:\*\*)?\s*(\S.*)$`)
	callText     = regexp.MustCompile(`^([A-Za-z_][\w.-]*)\[(.*)\]$`)
)

// numberedWindow is how many preceding steps each step of a numbered list
// depends on. Depending on the step just before is enough to keep the list's
// order; the window keeps the dependency lists of short lists complete (each
// step sees every earlier result) while a long list gets at most
// numberedWindow entries per step rather than one per earlier step.
const numberedWindow = 16

// parseNumbered reads a numbered list, one step per numbered line, each
// depending on the numberedWindow steps before it (all of them in a short
// list).
func parseNumbered(text string) []Step {
	var steps []Step
	for _, line := range strings.Split(text, "\n") {
		m := numberedLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		body := strings.TrimSpace(strings.Trim(strings.TrimSpace(m[2]), "*"))
		s := Step{ID: m[1], Description: body}
		if c := callText.FindStringSubmatch(body); c != nil {
			s.Tool, s.Input = c[1], strings.TrimSpace(c[2])
		}
		for _, prev := range steps[max(len(steps)-numberedWindow, 0):] {
			s.DependsOn = append(s.DependsOn, prev.ID)
		}
		steps = append(steps, s)
	}
	return finishSteps(steps)
}

// ToolSet is what the tool check needs of a tool registry: whether a step's
// tool name is known (with whatever name matching the set does) and the
// known names, for the error message. *tools.Registry and tools.NameSet
// implement it.
type ToolSet interface {
	Has(name string) bool
	Names() []string
}

// Rules are the checks a plan must pass before it runs.
type Rules struct {
	// Tools are the tools steps may name. Nil skips the tool check.
	Tools ToolSet
	// MaxSteps bounds the number of steps; 0 or less means no bound. A
	// longer plan is rejected for its length before the tool and
	// dependency checks.
	MaxSteps int
	// RequireTools rejects steps without a tool (for executors that run
	// steps as direct tool calls).
	RequireTools bool
	// Known are steps outside the plan that it may depend on and whose ids
	// it must not reuse: the finished steps when re-planning.
	Known []Step
}

// Check checks a plan: at least one step, ids unique and not empty,
// every step with a description or a tool, at most r.MaxSteps steps (0 means
// no bound), dependencies (including #E references) that exist and form no
// cycle, and tools that r.Tools knows (nil skips that check). It reports
// the problems found, joined, listing at most ten of each kind and counting
// the rest; each wraps its sentinel (ErrMalformedPlan, ErrDuplicateStep,
// ErrTooManySteps, ErrUnknownTool, ErrDanglingDependency, ErrPlanCycle). A
// plan longer than maxSteps is rejected for its length (with its id
// problems) before the tool and dependency checks. The cost is linear in
// the number of steps and dependencies.
func (r Rules) Check(steps []Step) error {
	return r.check(steps, nil)
}

// check is Check, counting its dependency work in work (nil counts none).
func (r Rules) check(steps []Step, work *workCounter) error {
	if len(steps) == 0 {
		return fmt.Errorf("%w: the plan has no steps", ErrMalformedPlan)
	}
	var p problemList
	if r.MaxSteps > 0 && len(steps) > r.MaxSteps {
		// The length alone rejects the plan; skip the checks whose cost
		// grows with its dependencies.
		p.add(ErrTooManySteps, "%w: the plan has %d steps but at most %d are allowed; merge or drop steps", ErrTooManySteps, len(steps), r.MaxSteps)
		r.checkSteps(steps, &p)
		return p.err()
	}
	vertex, labels, known := r.checkSteps(steps, &p)
	// The tool list is joined once, not for every step that needs it.
	toolList := ""
	available := func() string {
		if toolList == "" {
			toolList = strings.Join(r.toolNames(), ", ")
		}
		return toolList
	}
	for _, s := range steps {
		switch {
		case s.Tool == "" && r.RequireTools:
			p.add(ErrMissingTool, "%w: step %q must name the tool it calls (one of: %s)", ErrMissingTool, s.ID, available())
		case s.Tool != "" && r.Tools != nil && !r.Tools.Has(s.Tool):
			p.add(ErrUnknownTool, "%w: step %q uses %q; available tools: %s", ErrUnknownTool, s.ID, s.Tool, available())
		}
	}
	checkDependencies(steps, vertex, labels, known, &p, work)
	return p.err()
}

// checkSteps checks each step's id and content into p. It numbers the
// distinct ids in order of appearance (vertex, with labels naming the
// numbers) and returns the ids of r.Known.
func (r Rules) checkSteps(steps []Step, p *problemList) (vertex map[string]int, labels []string, known map[string]bool) {
	known = make(map[string]bool, len(r.Known))
	for _, s := range r.Known {
		known[s.ID] = true
	}
	vertex = make(map[string]int, len(steps))
	var uses []int // uses[v]: how many steps have the id of vertex v
	for _, s := range steps {
		if s.ID == "" {
			p.add(ErrMalformedPlan, "%w: a step has no id (give every step a unique id such as \"1\")", ErrMalformedPlan)
			continue
		}
		v, seen := vertex[s.ID]
		switch {
		case seen:
			// Each shared id is reported once, however many steps share it.
			if uses[v]++; uses[v] == 2 {
				p.add(ErrDuplicateStep, "%w: %q is used by more than one step; give each step its own id", ErrDuplicateStep, s.ID)
			}
		default:
			vertex[s.ID] = len(labels)
			labels = append(labels, s.ID)
			uses = append(uses, 1)
			if known[s.ID] {
				p.add(ErrDuplicateStep, "%w: %q is already the id of a finished step; number new steps after %s", ErrDuplicateStep, s.ID, lastID(r.Known))
			}
		}
		if s.Description == "" && s.Tool == "" {
			p.add(ErrMalformedPlan, "%w: step %q has neither a description nor a tool", ErrMalformedPlan, s.ID)
		}
	}
	return vertex, labels, known
}

// maxListed bounds how many problems of one kind a rejection lists; the
// others are counted. The error goes back to the model, so its size must
// not grow with the plan.
const maxListed = 10

// problemList collects a plan's problems, at most maxListed of each kind.
type problemList struct {
	errs   []error
	kinds  []error // the sentinels seen, in order
	counts []int   // how many problems of each of kinds
}

// add records a problem of kind (a sentinel), formatted as fmt.Errorf does
// unless maxListed of that kind are listed already.
func (p *problemList) add(kind error, format string, args ...any) {
	i := slices.Index(p.kinds, kind)
	if i < 0 {
		i = len(p.kinds)
		p.kinds = append(p.kinds, kind)
		p.counts = append(p.counts, 0)
	}
	if p.counts[i]++; p.counts[i] <= maxListed {
		p.errs = append(p.errs, fmt.Errorf(format, args...))
	}
}

// err joins the listed problems, with a count of those left out.
func (p *problemList) err() error {
	errs := p.errs
	for i, kind := range p.kinds {
		if more := p.counts[i] - maxListed; more > 0 {
			errs = append(errs, fmt.Errorf("%w: and %d more of this kind", kind, more))
		}
	}
	return errors.Join(errs...)
}

func (r Rules) toolNames() []string {
	if r.Tools == nil {
		return nil
	}
	return r.Tools.Names()
}

func lastID(steps []Step) string {
	if len(steps) == 0 {
		return "the finished steps"
	}
	return strconv.Quote(steps[len(steps)-1].ID)
}

// Dependencies returns the ids a step waits for: its DependsOn plus the
// steps its input references as #E<id>, without duplicates.
func Dependencies(s Step) []string {
	return slices.Collect(dependencies(s))
}
