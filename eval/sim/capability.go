package sim

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/verify"
	"gopkg.in/yaml.v3"
)

// This file models what the simulated model can do on its own, so that
// paradigms that gather evidence, run programs or search differ from those
// that answer in one reply. The rules read only the task's gold solution,
// the per-type profile (capabilities.yaml) and the call's prompt; never the
// name of the paradigm or the node. Everything is SIMULATED.
//
//   - A lookup step (any tool but the calculator) is satisfied when its gold
//     output appears in the prompt (outside the task text, normalised as
//     the finalizers' evidence is). A reply that needs a lookup it cannot
//     see, or a task without steps (knowledge), is answered from memory:
//     right only when the model knows the task, drawn once per seed and
//     task with the task's memory prior (gold "memory", else the type's).
//   - A calculator step whose output the prompt does not show is done in
//     the head, and slips with the type's slip rate per step, drawn per
//     call; reasoned_slip applies instead when the prompt asks to reason
//     step by step.
//   - A puzzle without its derivation in the prompt is solved in one reply
//     with the memory prior, drawn per call.
//
// A wrong reply is plausible and varies between calls of the same request
// (the attempt count is part of the draw): another task's answer of the
// same kind, a nearby number, or a wrong Game of 24 expression, so that a
// self-consistency vote or an agreement check can notice it.

//go:embed capabilities.yaml
var capabilitiesYAML []byte

// Capability is what the simulated model can do on one type of task
// without tools or evidence (capabilities.yaml).
type Capability struct {
	// Type is the task type (suite.GoldTypes).
	Type string `yaml:"-"`
	// Description says what the type is.
	Description string `yaml:"description"`
	// Memory is the chance that the model knows the facts the task's
	// lookups would find (a knowledge task's answer), drawn once per seed
	// and task; for a puzzle, the chance that one reply solves it, drawn
	// per call. A task's gold memory prior replaces it.
	Memory float64 `yaml:"memory"`
	// Slip is the chance per calculator step done in the head (its result
	// not in the prompt) of getting it wrong, drawn per call.
	Slip float64 `yaml:"slip"`
	// ReasonedSlip replaces Slip when the prompt asks the model to reason
	// step by step.
	ReasonedSlip float64 `yaml:"reasoned_slip"`
}

// Capabilities returns the built-in capability profile of every task type
// (suite.GoldTypes), by type.
func Capabilities() (map[string]Capability, error) {
	var cs map[string]Capability
	if err := yaml.Unmarshal(capabilitiesYAML, &cs); err != nil {
		return nil, fmt.Errorf("sim: built-in capabilities: %w", err)
	}
	for name, c := range cs {
		if !slices.Contains(suite.GoldTypes(), name) {
			return nil, fmt.Errorf("sim: capabilities: unknown task type %q (known: %s)", name, strings.Join(suite.GoldTypes(), ", "))
		}
		for what, v := range map[string]float64{"memory": c.Memory, "slip": c.Slip, "reasoned_slip": c.ReasonedSlip} {
			if !(v >= 0 && v <= 1) {
				return nil, fmt.Errorf("sim: capabilities: %s %s %v outside [0,1]", name, what, v)
			}
		}
		c.Type = name
		cs[name] = c
	}
	for _, t := range suite.GoldTypes() {
		if _, ok := cs[t]; !ok {
			return nil, fmt.Errorf("sim: capabilities: no profile for task type %q", t)
		}
	}
	return cs, nil
}

// OracleCapabilities is a profile for every task type under which the
// model knows every fact, solves every puzzle in one reply and never
// slips: the simulator as it was before capabilities were modelled, for
// tests of a role's format rather than of what a paradigm can do.
func OracleCapabilities() map[string]Capability {
	out := make(map[string]Capability, len(suite.GoldTypes()))
	for _, t := range suite.GoldTypes() {
		out[t] = Capability{Type: t, Description: "oracle: knows everything, never slips", Memory: 1}
	}
	return out
}

// WithCapabilities replaces the built-in capability profiles of the types
// caps names (Capabilities); the others stay. Rates outside [0,1] are
// clamped.
func WithCapabilities(caps map[string]Capability) Option {
	return func(m *Model) {
		for t, c := range caps {
			c.Type = t
			c.Memory = min(max(c.Memory, 0), 1)
			c.Slip = min(max(c.Slip, 0), 1)
			c.ReasonedSlip = min(max(c.ReasonedSlip, 0), 1)
			m.caps[t] = c
		}
	}
}

// TaskType is the type the simulator plays a task as: the gold solution's
// declared type, a puzzle for a Game of 24 derivation, else the type its
// steps imply (suite.Gold.InferredType).
func TaskType(g *suite.Gold) string {
	if g.Type == "" && isGame24(g) {
		return suite.GoldPuzzle
	}
	return g.InferredType()
}

// capability is the profile of the task's type with the task's own memory
// prior, when it declares one.
func (m *Model) capability(t *suite.Task) Capability {
	c := m.caps[TaskType(t.Gold)]
	if t.Gold.Memory != nil {
		c.Memory = *t.Gold.Memory
	}
	return c
}

// Knows reports whether the simulated model knows, without looking it up,
// what the task needs: drawn once per seed and task with the task's memory
// prior, so every paradigm and every sample agrees on it.
func (m *Model) Knows(t suite.Task) bool {
	if t.Gold == nil {
		return false
	}
	return m.knows(&t)
}

func (m *Model) knows(t *suite.Task) bool {
	return unit(hash64("known", strconv.FormatUint(m.seed, 10), t.ID)) < m.capability(t).Memory
}

// unit maps 64 random bits to [0,1).
func unit(bits uint64) float64 { return float64(bits>>11) / float64(1<<53) }

// dice are one call's capability draws: fixed by the seed, the request and
// how often the same request was made before.
type dice struct {
	seed    uint64
	key     uint64
	attempt int
}

// roll counts the call and returns its dice.
func (m *Model) roll(c call) dice {
	key := hash64("capability", c.task.ID, c.caller.Node, c.caller.Role, c.stepID, c.prompt)
	m.mu.Lock()
	attempt := m.attempts[key]
	m.attempts[key] = attempt + 1
	m.mu.Unlock()
	return dice{seed: m.seed, key: key, attempt: attempt}
}

func (d dice) bits(name string) uint64 {
	return hash64(strconv.FormatUint(d.seed, 10), strconv.FormatUint(d.key, 16), strconv.Itoa(d.attempt), name)
}

func (d dice) u(name string) float64 { return unit(d.bits(name)) }

// reasonedRe is the prompt's request to write the reasoning out.
var reasonedRe = regexp.MustCompile(`(?i)\bstep[ -]by[ -]step\b`)

// answerOnlyRe is the prompt's request for a bare answer.
var answerOnlyRe = regexp.MustCompile(`(?i)\banswer only\b`)

// slipRate is the chance per calculator step done in the head.
func (m *Model) slipRate(c call) float64 {
	cp := m.capability(c.task)
	if reasonedRe.MatchString(c.prompt) {
		return cp.ReasonedSlip
	}
	return cp.Slip
}

// Why a reply is wrong.
const (
	missMemory = "memory"
	missSlip   = "slip"
	missPuzzle = "puzzle"
)

// outcome is what a reply that answers the whole task can say.
type outcome struct {
	answer string
	// miss is why the answer is wrong ("" when it is right); step is the
	// calculator step that slipped.
	miss string
	step suite.GoldStep
}

// recall answers the task as far as the prompt's evidence and the model's
// own capability allow (see the top of this file).
func (m *Model) recall(c call) outcome {
	g := c.task.Gold
	ev := normalize(evidence(c))
	if TaskType(g) == suite.GoldPuzzle && len(g.Steps) == 0 {
		shown := len(g.Reasoning) > 0
		for _, r := range g.Reasoning {
			shown = shown && ev.contains(r)
		}
		if shown || c.dice.u("solve") < m.capability(c.task).Memory {
			return outcome{answer: g.Answer}
		}
		return outcome{answer: m.wrongFinal(c), miss: missPuzzle}
	}
	needMemory := len(g.Steps) == 0
	for _, s := range g.Steps {
		if s.Tool != "calculator" && s.Output != "" && !ev.contains(s.Output) {
			needMemory = true
		}
	}
	if needMemory && !m.knows(c.task) {
		return outcome{answer: m.wrongValue(c, g.Answer, "answer"), miss: missMemory}
	}
	slip := m.slipRate(c)
	for _, s := range g.Steps {
		if s.Tool == "calculator" && s.Output != "" && !ev.contains(s.Output) && c.dice.u("slip "+s.ID) < slip {
			return outcome{answer: m.wrongValue(c, g.Answer, "answer"), miss: missSlip, step: s}
		}
	}
	return outcome{answer: g.Answer}
}

// note is the reasoning a wrong reply gives.
func (o outcome) note(outs map[string]string, wrongOut string) string {
	switch o.miss {
	case missSlip:
		return fmt.Sprintf("Working it out in my head: %s = %s", substitute(o.step.Input, outs), wrongOut)
	case missPuzzle:
		return "Trying a combination of the numbers."
	}
	return "From memory, I believe the answer is " + o.answer + "."
}

// wrongValue is a plausible wrong value instead of gold, varying with the
// call's dice: a nearby number for a number, else another task's answer
// that is not a number either.
func (m *Model) wrongValue(c call, gold, name string) string {
	bits := c.dice.bits("wrong " + name)
	if r, err := strconv.ParseFloat(strings.TrimSpace(gold), 64); err == nil {
		return nearbyNumber(strings.TrimSpace(gold), r, bits)
	}
	var pool []string
	for _, a := range m.answers {
		if _, err := strconv.ParseFloat(a, 64); err == nil || verify.NormalizedEqual(a, gold) {
			continue
		}
		pool = append(pool, a)
	}
	if len(pool) == 0 {
		pool = []string{"I am not sure", "it is not known", "none of them"}
	}
	return pool[bits%uint64(len(pool))]
}

// nearbyNumber is r moved by 1 to 9 units of a scale that grows with its
// size (years move by tens, large numbers by thousands), written with as
// many decimals as gold; never negative when r is not.
func nearbyNumber(gold string, r float64, bits uint64) string {
	decimals := 0
	if i := strings.IndexByte(gold, '.'); i >= 0 {
		decimals = len(gold) - i - 1
	}
	scale := math.Pow(10, -float64(decimals))
	if decimals == 0 && math.Abs(r) >= 1000 {
		scale = math.Pow(10, math.Floor(math.Log10(math.Abs(r)))-2)
	}
	k := float64(1 + bits%9)
	v := r + k*scale
	if (bits>>8)&1 == 1 && (r-k*scale >= 0 || r < 0) {
		v = r - k*scale
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// wrongFinal is a plausible wrong final answer for the task, varying with
// the call's dice: for a Game of 24, an expression over the numbers that
// does not make 24.
func (m *Model) wrongFinal(c call) string {
	nums, err := verify.PuzzleNumbers(c.task.Question)
	if !isGame24(c.task.Gold) || err != nil || len(nums) == 0 {
		return m.wrongValue(c, c.task.Gold.Answer, "final")
	}
	var pool []string
	ops := []string{" + ", " - ", " * "}
	var build func(expr string, i int)
	build = func(expr string, i int) {
		if i == len(nums) {
			if verify.Verify24(nums, expr) != nil {
				pool = append(pool, expr)
			}
			return
		}
		for _, op := range ops {
			build(expr+op+strconv.Itoa(nums[i]), i+1)
		}
	}
	build(strconv.Itoa(nums[0]), 1)
	if len(pool) == 0 {
		return wrongFinal(c.task)
	}
	sort.Strings(pool)
	return pool[c.dice.bits("wrong final")%uint64(len(pool))]
}
