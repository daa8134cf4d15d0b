package trajectory

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/tools"
)

// Metrics compare one run's trajectory with its task's gold steps. The
// package documentation says how each is computed. Every ratio but
// StepsRatio lies in [0, 1]; none is NaN.
type Metrics struct {
	// Scored is false when the task has no gold steps: then every other
	// field but Calls is zero and aggregates skip the run.
	Scored bool `json:"scored"`
	// GoldSteps is the number of gold steps; Calls the run's tool calls.
	GoldSteps int `json:"gold_steps"`
	Calls     int `json:"calls"`
	// ToolRecall and ToolPrecision match tool names as multisets.
	ToolRecall    float64 `json:"tool_recall"`
	ToolPrecision float64 `json:"tool_precision"`
	// InputRecall and InputPrecision match (tool, input) pairs.
	InputRecall    float64 `json:"input_recall"`
	InputPrecision float64 `json:"input_precision"`
	// OrderLCS is the longest common subsequence of the tool-name
	// sequences over GoldSteps.
	OrderLCS float64 `json:"order_lcs"`
	// StepsRatio is Calls over GoldSteps: 1 is the gold length, above 1
	// more calls than needed. It is not bounded by 1.
	StepsRatio float64 `json:"steps_ratio"`
	// HasPlan says the run made a plan with structured steps; the plan
	// fields score its final plan and are zero without one.
	HasPlan bool `json:"has_plan"`
	// PlanSteps counts the final plan's steps, model-worker steps left out.
	PlanSteps int `json:"plan_steps"`
	// PlanRecall and PlanPrecision match the final plan's steps with the
	// gold steps by tool name.
	PlanRecall    float64 `json:"plan_recall"`
	PlanPrecision float64 `json:"plan_precision"`
	// GoldEdges counts the gold dependency edges; DepRecall is the share
	// of them the final plan has (0 when GoldEdges is 0: see Summary).
	GoldEdges int     `json:"gold_edges"`
	DepRecall float64 `json:"dep_recall"`
}

// ScoreGold is Score on g's steps; a nil g scores as no gold steps.
func ScoreGold(t Trajectory, g *suite.Gold) Metrics {
	if g == nil {
		return Score(t, nil)
	}
	return Score(t, g.Steps)
}

// Score compares a trajectory with gold steps (see the package
// documentation for each metric and its matching rules).
func Score(t Trajectory, gold []suite.GoldStep) Metrics {
	m := Metrics{GoldSteps: len(gold), Calls: len(t.Tools)}
	if len(gold) == 0 {
		return m
	}
	m.Scored = true
	g := len(gold)

	goldTools := make([]string, g)
	for i, s := range gold {
		goldTools[i] = toolKey(s.Tool)
	}
	callTools := make([]string, len(t.Tools))
	for i, c := range t.Tools {
		callTools[i] = toolKey(c.Tool)
	}

	byTool := multisetMatches(goldTools, callTools)
	m.ToolRecall = ratio(byTool, g)
	m.ToolPrecision = ratio(byTool, len(t.Tools))

	goldIn := make([]inputPattern, g)
	for i, s := range gold {
		goldIn[i] = newInputPattern(s.Input)
	}
	callIn := make([]string, len(t.Tools))
	for i, c := range t.Tools {
		callIn[i] = placeholders(c.Input)
	}
	match, _ := maxMatching(g, len(t.Tools), func(i, j int) bool {
		return goldTools[i] != "" && goldTools[i] == callTools[j] && goldIn[i].matches(callIn[j])
	})
	m.InputRecall = ratio(match, g)
	m.InputPrecision = ratio(match, len(t.Tools))

	m.OrderLCS = ratio(lcs(goldTools, callTools), g)
	m.StepsRatio = float64(len(t.Tools)) / float64(g)

	if len(t.Plans) > 0 {
		scorePlan(&m, t.Plans[len(t.Plans)-1], gold, goldTools, goldIn)
	}
	return m
}

// scorePlan sets m's plan fields from p, the final plan.
func scorePlan(m *Metrics, p Plan, gold []suite.GoldStep, goldTools []string, goldIn []inputPattern) {
	m.HasPlan = true
	var steps []PlanStep
	for _, s := range p.Steps {
		if !s.Worker {
			steps = append(steps, s)
		}
	}
	m.PlanSteps = len(steps)
	planTools := make([]string, len(steps))
	planIn := make([]string, len(steps))
	for i, s := range steps {
		planTools[i], planIn[i] = toolKey(s.Tool), placeholders(s.Input)
	}
	n := multisetMatches(goldTools, planTools)
	m.PlanRecall = ratio(n, len(gold))
	m.PlanPrecision = ratio(n, len(steps))

	// Map gold steps to plan steps: a maximum matching of equal tools and
	// matching inputs first, then the rest of each tool in order.
	_, planOf := maxMatching(len(gold), len(steps), func(i, j int) bool {
		return goldTools[i] != "" && goldTools[i] == planTools[j] && goldIn[i].matches(planIn[j])
	})
	used := make([]bool, len(steps))
	for _, j := range planOf {
		if j >= 0 {
			used[j] = true
		}
	}
	for i := range gold {
		if planOf[i] >= 0 || goldTools[i] == "" {
			continue
		}
		for j := range steps {
			if !used[j] && planTools[j] == goldTools[i] {
				planOf[i], used[j] = j, true
				break
			}
		}
	}

	deps := effectiveDeps(p.Steps)
	index := map[string]int{}
	for i, s := range gold {
		if _, dup := index[s.ID]; !dup {
			index[s.ID] = i
		}
	}
	found := 0
	for i, s := range gold {
		for _, d := range goldDeps(s) {
			k, ok := index[d]
			if !ok || k == i {
				continue
			}
			m.GoldEdges++
			if planOf[i] >= 0 && planOf[k] >= 0 && deps[steps[planOf[i]].ID][steps[planOf[k]].ID] {
				found++
			}
		}
	}
	m.DepRecall = ratio(found, m.GoldEdges)
}

// goldDeps returns the ids a gold step needs: its DependsOn and the ids
// its input references as #E<id>, without duplicates.
func goldDeps(s suite.GoldStep) []string {
	return plan.Dependencies(plan.Step{ID: s.ID, Input: s.Input, DependsOn: s.DependsOn})
}

// effectiveDeps maps each non-worker step id of a plan to the set of
// non-worker step ids it depends on, looking through worker steps: a step
// that waits for a worker step waits for what that worker waits for. An
// id given to several steps resolves to the last of them.
func effectiveDeps(steps []PlanStep) map[string]map[string]bool {
	byID := make(map[string]PlanStep, len(steps))
	for _, s := range steps {
		byID[s.ID] = s
	}
	out := make(map[string]map[string]bool, len(steps))
	for _, s := range steps {
		if s.Worker {
			continue
		}
		set := map[string]bool{}
		seen := map[string]bool{s.ID: true}
		var walk func(ids []string)
		walk = func(ids []string) {
			for _, d := range ids {
				if seen[d] {
					continue
				}
				seen[d] = true
				if ds, ok := byID[d]; ok && ds.Worker {
					walk(ds.DependsOn)
					continue
				}
				set[d] = true
			}
		}
		walk(s.DependsOn)
		out[s.ID] = set
	}
	return out
}

// toolKey is the name tools are compared by (tools.NormalizeName); ""
// for a missing name, which matches nothing.
func toolKey(name string) string { return tools.NormalizeName(name) }

// ratio is n/d, 0 when d is 0.
func ratio(n, d int) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// multisetMatches counts the items a and b have in common as multisets
// (the sum over keys of the smaller count); "" matches nothing.
func multisetMatches(a, b []string) int {
	count := map[string]int{}
	for _, k := range a {
		if k != "" {
			count[k]++
		}
	}
	n := 0
	for _, k := range b {
		if count[k] > 0 {
			count[k]--
			n++
		}
	}
	return n
}

// lcs is the length of the longest common subsequence of a and b; ""
// matches nothing.
func lcs(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] != "" && a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			default:
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// maxMatching finds a maximum matching of a bipartite graph with left
// vertices 0..nl-1, right vertices 0..nr-1 and an edge where edge(i, j)
// (Kuhn's augmenting paths, trying right vertices in index order). It
// returns the matching's size and, for each left vertex, its right
// partner or -1.
func maxMatching(nl, nr int, edge func(i, j int) bool) (int, []int) {
	adj := make([][]int, nl)
	for i := range nl {
		for j := range nr {
			if edge(i, j) {
				adj[i] = append(adj[i], j)
			}
		}
	}
	left := slices.Repeat([]int{-1}, nl)
	right := slices.Repeat([]int{-1}, nr)
	var seen []bool
	var augment func(i int) bool
	augment = func(i int) bool {
		for _, j := range adj[i] {
			if seen[j] {
				continue
			}
			seen[j] = true
			if right[j] < 0 || augment(right[j]) {
				left[i], right[j] = j, i
				return true
			}
		}
		return false
	}
	size := 0
	for i := range nl {
		seen = make([]bool, nr)
		if augment(i) {
			size++
		}
	}
	return size, left
}

// refMark stands for a #E reference in a normalised input; normalise
// never leaves this byte in text.
const refMark = "\x00"

// placeholders normalises an input (after dropping any NUL byte it holds)
// and turns each #E<id> reference (a plan step's unresolved input) into
// refMark.
func placeholders(input string) string {
	s := strings.ReplaceAll(unwrapJSON(input), refMark, "")
	return normaliseInput(plan.ReplaceReferences(s, func(string) string { return refMark }))
}

// inputPattern is a gold input as a matcher: the normalised text, where
// each #E reference stands for any non-empty text.
type inputPattern struct {
	literal string         // the whole normalised input, when it has no references
	re      *regexp.Regexp // the input with references, anchored
}

func newInputPattern(input string) inputPattern {
	p := placeholders(input)
	if !strings.Contains(p, refMark) {
		return inputPattern{literal: p}
	}
	parts := strings.Split(p, refMark)
	for i, s := range parts {
		parts[i] = regexp.QuoteMeta(s)
	}
	return inputPattern{re: regexp.MustCompile(`(?s)^` + strings.Join(parts, `.+`) + `$`)}
}

// matches reports whether a normalised input (placeholders) matches p.
func (p inputPattern) matches(in string) bool {
	if p.re != nil {
		return p.re.MatchString(in)
	}
	return p.literal == in
}

// unwrapJSON returns the text a JSON-encoded input carries: a JSON string's
// value, or the one value of an object with a single string field (a
// native tool call's {"query": "..."}); anything else unchanged.
func unwrapJSON(input string) string {
	s := strings.TrimSpace(input)
	if s == "" || (s[0] != '{' && s[0] != '"') {
		return input
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return input
	}
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if len(x) == 1 {
			for _, f := range x {
				if fs, ok := f.(string); ok {
					return fs
				}
			}
		}
	}
	return input
}

// normaliseInput lower-cases s, folds every run of white space into one
// space, and trims surrounding spaces and quotes.
func normaliseInput(s string) string {
	return strings.Trim(strings.Join(strings.Fields(strings.ToLower(s)), " "), "\"'` ")
}
