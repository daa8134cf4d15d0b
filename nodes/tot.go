package nodes

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/answer"
	"github.com/planner-engine/planner/trace"
)

// ToTSettings configure `tot`, Tree of Thoughts breadth-first search.
type ToTSettings struct {
	// Proposals is k, the candidate next thoughts asked for per state. Default 3.
	Proposals int `mapstructure:"proposals"`
	// Beam is b, the states kept per level. Default 2.
	Beam int `mapstructure:"beam"`
	// Depth is d, the number of levels. Default 3.
	Depth int `mapstructure:"depth"`
	// Prune drops candidates whose value is below this. Default 0.01 (so
	// "impossible", valued 0.001, is pruned).
	Prune *float64 `mapstructure:"prune"`
	// ProposePrompt and EvaluatePrompt override the templates; they see
	// {{.Question}}, {{.Extra.Path}} (thoughts so far) and, for evaluation,
	// {{.Extra.Candidate}}; ProposePrompt also sees {{.Extra.K}}.
	ProposePrompt  string `mapstructure:"propose_prompt"`
	EvaluatePrompt string `mapstructure:"evaluate_prompt"`
	// Concurrency bounds model calls in flight. Default 16.
	Concurrency int `mapstructure:"concurrency"`
}

const totPropose = `Problem: {{.Question}}
{{if .Extra.Path}}Steps so far:
{{.Extra.Path}}{{end}}
Propose up to {{.Extra.K}} different possible next steps, one per numbered line. If a step completes the solution, write it as "Answer: <answer>".`

const totEvaluate = `Problem: {{.Question}}
Steps so far:
{{.Extra.Path}}
Candidate next step: {{.Extra.Candidate}}

Can this still lead to a correct solution? Reply with one word — sure, likely or impossible — or a score from 1 to 10.`

// ToT runs a breadth-first Tree of Thoughts search: every frontier state is
// expanded into proposals and every proposal valued concurrently; the best
// Beam survive each level, and pruned branches are never expanded.
type ToT struct {
	id, kind          string
	model             agent.Model
	s                 ToTSettings
	propose, evaluate *agent.Template
}

// NewToT builds a `tot` node.
func NewToT(env agent.Env, spec agent.NodeSpec) (agent.Built, error) {
	var s ToTSettings
	if err := agent.Decode(spec.Settings, &s); err != nil {
		return agent.Built{}, err
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&s.Proposals, 3)
	def(&s.Beam, 2)
	def(&s.Depth, 3)
	def(&s.Concurrency, 16)
	if s.Prune == nil {
		p := 0.01
		s.Prune = &p
	}
	if s.ProposePrompt == "" {
		s.ProposePrompt = totPropose
	}
	if s.EvaluatePrompt == "" {
		s.EvaluatePrompt = totEvaluate
	}
	pt, err := agent.ParseTemplate("propose_prompt", s.ProposePrompt)
	if err != nil {
		return agent.Built{}, err
	}
	et, err := agent.ParseTemplate("evaluate_prompt", s.EvaluatePrompt)
	if err != nil {
		return agent.Built{}, err
	}
	return agent.Built{Node: &ToT{id: spec.ID, kind: spec.Type, model: env.Model, s: s, propose: pt, evaluate: et}}, nil
}

var scoreNumber = regexp.MustCompile(`\b(10|[1-9])(?:\s*/\s*10)?\b`)

// ParseValue reads an evaluator reply: sure = 20, likely = 1, impossible =
// 0.001 (the ToT paper's weights), or a 1–10 score valued score/5 (so 5 is
// neutral). Unreadable replies are valued 1 (neutral).
func ParseValue(text string) float64 {
	t := strings.ToLower(text)
	switch {
	case strings.Contains(t, "impossible"):
		return 0.001
	case strings.Contains(t, "sure"):
		return 20
	case strings.Contains(t, "likely"):
		return 1
	}
	if m := scoreNumber.FindStringSubmatch(t); m != nil {
		n, _ := strconv.Atoi(m[1])
		return float64(n) / 5
	}
	return 1
}

type totState struct {
	path  []string
	value float64
	index int
}

// Run searches and sets the answer from the best final state.
func (n *ToT) Run(ctx context.Context, st *agent.State) (string, error) {
	frontier := []totState{{}}
	sem := make(chan struct{}, n.s.Concurrency)
	var best totState
	for depth := 1; depth <= n.s.Depth && len(frontier) > 0; depth++ {
		// Expand every frontier state concurrently.
		proposals := make([][]string, len(frontier))
		errs := make([]error, len(frontier))
		var wg sync.WaitGroup
		for i, fs := range frontier {
			wg.Add(1)
			go func(i int, fs totState) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				prompt, err := n.propose.Render(st, map[string]any{"Path": strings.Join(fs.path, "\n"), "K": n.s.Proposals})
				if err != nil {
					errs[i] = err
					return
				}
				text, _, err := n.model.Call(ctx, st, agent.Caller{Node: n.id, Kind: n.kind, Role: "propose"}, agent.Prompt(defaultSystem, prompt))
				if err != nil {
					errs[i] = err
					return
				}
				items := ParseNumbered(text)
				if len(items) == 0 && strings.TrimSpace(text) != "" {
					items = []string{strings.TrimSpace(text)}
				}
				if len(items) > n.s.Proposals {
					items = items[:n.s.Proposals]
				}
				proposals[i] = items
			}(i, fs)
		}
		wg.Wait()
		var cands []totState
		for i, items := range proposals {
			if errs[i] != nil {
				return "", errs[i]
			}
			for _, p := range items {
				path := append(append([]string{}, frontier[i].path...), p)
				cands = append(cands, totState{path: path, index: len(cands)})
			}
		}
		// Value every candidate concurrently.
		values := make([]float64, len(cands))
		errs = make([]error, len(cands))
		for i := range cands {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				c := cands[i]
				prompt, err := n.evaluate.Render(st, map[string]any{"Path": strings.Join(c.path[:len(c.path)-1], "\n"), "Candidate": c.path[len(c.path)-1]})
				if err != nil {
					errs[i] = err
					return
				}
				text, _, err := n.model.Call(ctx, st, agent.Caller{Node: n.id, Kind: n.kind, Role: "evaluate"}, agent.Prompt(defaultSystem, prompt))
				if err != nil {
					errs[i] = err
					return
				}
				values[i] = ParseValue(text)
			}(i)
		}
		wg.Wait()
		var kept []totState
		for i := range cands {
			if errs[i] != nil {
				return "", errs[i]
			}
			cands[i].value = values[i]
			pruned := values[i] < *n.s.Prune
			st.Candidates = append(st.Candidates, agent.Candidate{Text: cands[i].path[len(cands[i].path)-1], Score: values[i], Depth: depth, Parent: i})
			trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindCandidate, Text: cands[i].path[len(cands[i].path)-1],
				Data: map[string]any{"depth": depth, "value": values[i], "pruned": pruned}})
			if !pruned {
				kept = append(kept, cands[i])
			}
		}
		sort.SliceStable(kept, func(a, b int) bool { return kept[a].value > kept[b].value })
		if len(kept) > n.s.Beam {
			kept = kept[:n.s.Beam]
		}
		frontier = kept
		for _, k := range kept {
			if _, ok := answer.Extract(k.path[len(k.path)-1]); ok && strings.Contains(strings.ToLower(k.path[len(k.path)-1]), "answer") {
				if best.path == nil || k.value > best.value {
					best = k
				}
			}
		}
		if best.path != nil {
			break
		}
	}
	if best.path == nil && len(frontier) > 0 {
		best = frontier[0]
	}
	if best.path == nil {
		st.SetPartial("", "every branch was pruned", agent.FailureBudget)
		return "", nil
	}
	st.Note("tot_path", strings.Join(best.path, "\n"))
	a, ok := answer.Extract(best.path[len(best.path)-1])
	if !ok {
		st.SetPartial(best.path[len(best.path)-1], fmt.Sprintf("no state reached an answer within depth %d", n.s.Depth), agent.FailureBudget)
	} else {
		st.SetAnswer(a)
	}
	trace.From(ctx).Emit(trace.Event{Node: n.id, Kind: trace.KindAnswer, Text: st.Answer})
	return "", nil
}
