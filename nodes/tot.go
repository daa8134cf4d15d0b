package nodes

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/internal/par"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/tmc/langchaingo/llms"
)

// ErrNotGame24 means a `tot` node with `verify: game24` ran on a task whose
// question states no Game of 24 numbers.
var ErrNotGame24 = errors.New("tot: verify: game24 needs a Game of 24 question that states its numbers (for example \"Use 4 5 6 10 and + - * / to obtain 24\")")

// Search strategies of `tot`.
const (
	// SearchBFS keeps the Beam best states of each level.
	SearchBFS = "bfs"
	// SearchDFS explores the most promising child first, descends while
	// values stay at or above Threshold and backtracks otherwise.
	SearchDFS = "dfs"
)

// Verifiers of `tot` leaf answers.
const (
	// VerifyGame24 checks a leaf answer with verify.Verify24 against the
	// numbers in the task's question; failing answers are pruned and the
	// search goes on.
	VerifyGame24 = "game24"
)

// Values the evaluator's words map to (the ToT paper's weights), and the
// value of an answer an exact verifier accepted.
const (
	ValueSure       = 20.0
	ValueLikely     = 1.0
	ValueUnlikely   = 0.1
	ValueImpossible = 0.001
	ValueVerified   = ValueSure
)

// ToTSettings configure `tot`, Tree of Thoughts search.
type ToTSettings struct {
	// Search is "bfs" (default) or "dfs".
	Search string `mapstructure:"search"`
	// Proposals is k, the candidate next thoughts asked for per state.
	// Default 3.
	Proposals int `mapstructure:"proposals"`
	// Beam is b, the states BFS keeps per level. Default 2.
	Beam int `mapstructure:"beam"`
	// Depth is d, the most thoughts on a path. Default 3.
	Depth int `mapstructure:"depth"`
	// Prune drops candidates valued below it in either search; they are
	// traced as pruned and never expanded. Default 0.01, so "impossible"
	// (0.001) is pruned.
	Prune *float64 `mapstructure:"prune"`
	// Threshold is DFS's value threshold: children valued below it are not
	// explored. Default 1 ("likely").
	Threshold *float64 `mapstructure:"threshold"`
	// MaxStates bounds the states DFS expands (one propose call each).
	// Default 50.
	MaxStates int `mapstructure:"max_states"`
	// Verify checks leaf answers exactly instead of asking the evaluator:
	// "" (default, no verifier) or "game24".
	Verify string `mapstructure:"verify"`
	// ProposePrompt and EvaluatePrompt override the templates; they see
	// {{.Question}}, {{.Extra.Path}} (thoughts so far, one per line),
	// {{.Extra.Depth}} (the depth of the state) and, for evaluation,
	// {{.Extra.Candidate}}; ProposePrompt also sees {{.Extra.K}}.
	ProposePrompt  string `mapstructure:"propose_prompt"`
	EvaluatePrompt string `mapstructure:"evaluate_prompt"`
	// ProposePromptFile and EvaluatePromptFile read the templates from
	// files (relative to the pipeline's folder) instead.
	ProposePromptFile  string `mapstructure:"propose_prompt_file"`
	EvaluatePromptFile string `mapstructure:"evaluate_prompt_file"`
	// Temperature overrides the model's sampling temperature for both
	// proposing and evaluating.
	Temperature *float64 `mapstructure:"temperature"`
	// Concurrency bounds model calls in flight. Default Beam × Proposals,
	// the largest batch a BFS level makes, so a level costs two call
	// latencies.
	Concurrency int `mapstructure:"concurrency"`
}

const totPropose = `Problem: {{.Question}}
{{if .Extra.Path}}Steps so far:
{{.Extra.Path}}
{{end}}
Propose up to {{.Extra.K}} different possible next steps, one per numbered line. If a step completes the solution, write it as "Answer: <answer>".`

const totEvaluate = `Problem: {{.Question}}
Steps so far:
{{.Extra.Path}}
Candidate next step: {{.Extra.Candidate}}

Can this still lead to a correct solution? Reply with one word — sure, likely or impossible — or a score from 1 to 10.`

// ToT runs a Tree of Thoughts search. BFS expands every frontier state into
// proposals and values every proposal concurrently, keeping the best Beam
// per level, and stops at the first level whose beam holds a leaf,
// answering with the best-valued one. DFS expands the most promising child
// first, descends while values reach Threshold, and backtracks from
// subtrees without an answer. Pruned branches are never expanded. A thought
// with an explicit answer marker ("Answer: ...", \boxed{}, ...) is a leaf
// and ends its branch; with Verify set, leaves are checked exactly instead
// of valued by the model, and failing ones are pruned.
type ToT struct {
	id, kind          string
	model             llm.Model
	s                 ToTSettings
	prune, threshold  float64
	propose, evaluate *nodekind.Template
	opts              []llms.CallOption
}

// NewToT builds a `tot` nodekind.
func NewToT(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s ToTSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	switch s.Search {
	case "":
		s.Search = SearchBFS
	case SearchBFS, SearchDFS:
	default:
		return nodekind.Built{}, &config.SettingError{Key: "search", Err: fmt.Errorf("%w: want bfs or dfs, got %q", config.ErrSettings, s.Search)}
	}
	switch s.Verify {
	case "", VerifyGame24:
	default:
		return nodekind.Built{}, &config.SettingError{Key: "verify", Err: fmt.Errorf("%w: want game24 or nothing, got %q", config.ErrSettings, s.Verify)}
	}
	if err := applyCounts(count{"proposals", &s.Proposals, 3}, count{"beam", &s.Beam, 2}, count{"depth", &s.Depth, 3},
		count{"max_states", &s.MaxStates, 50}, count{"concurrency", &s.Concurrency, 0}); err != nil {
		return nodekind.Built{}, err
	}
	if s.Concurrency == 0 {
		s.Concurrency = s.Beam * s.Proposals
	}
	n := &ToT{id: spec.ID, kind: spec.Type, model: env.Model, s: s, prune: 0.01, threshold: ValueLikely}
	if s.Prune != nil {
		n.prune = *s.Prune
	}
	if s.Threshold != nil {
		n.threshold = *s.Threshold
	}
	var err error
	proposeSpec, evaluateSpec := totSpecs()
	if n.propose, err = env.Template(proposeSpec, s.ProposePrompt, s.ProposePromptFile, totPropose); err != nil {
		return nodekind.Built{}, err
	}
	if n.evaluate, err = env.Template(evaluateSpec, s.EvaluatePrompt, s.EvaluatePromptFile, totEvaluate); err != nil {
		return nodekind.Built{}, err
	}
	if s.Temperature != nil {
		n.opts = append(n.opts, llms.WithTemperature(*s.Temperature))
	}
	return nodekind.Built{Node: n}, nil
}

var (
	verdictWord = regexp.MustCompile(`\b(impossible|unlikely|not sure|unsure|sure|likely)\b`)
	scoreNumber = regexp.MustCompile(`\b(10|[1-9])(?:\s*/\s*10)?\b`)
)

// ParseValue reads an evaluator reply tolerantly. The last verdict word
// counts: sure = 20, likely (or "not sure", "unsure") = 1, unlikely = 0.1,
// impossible = 0.001 (the ToT paper's weights, plus "unlikely"). Without a
// word, a 1–10 score is valued score/5 (so 5 is neutral). Unreadable
// replies are valued 1 (neutral).
func ParseValue(text string) float64 {
	t := strings.ToLower(text)
	if ms := verdictWord.FindAllString(t, -1); len(ms) > 0 {
		switch ms[len(ms)-1] {
		case "impossible":
			return ValueImpossible
		case "unlikely":
			return ValueUnlikely
		case "sure":
			return ValueSure
		default:
			return ValueLikely
		}
	}
	if m := scoreNumber.FindStringSubmatch(t); m != nil {
		n, _ := strconv.Atoi(m[1])
		return float64(n) / 5
	}
	return ValueLikely
}

// LeafAnswer returns the answer a thought commits to, when it carries an
// explicit answer marker; such a thought ends its branch.
func LeafAnswer(thought string) (string, bool) {
	m, ok := verify.Find(thought)
	if !ok || !m.Explicit() {
		return "", false
	}
	return m.Answer, true
}

// thought is a search state: the path of thoughts from the root.
type thought struct {
	path   []string
	value  float64
	idx    int // index in State.Candidates; -1 for the root
	parent int // the parent's idx
	leaf   bool
	answer string
	pruned bool
}

func (t thought) last() string {
	if len(t.path) == 0 {
		return ""
	}
	return t.path[len(t.path)-1]
}

// search is one run of the nodekind.
type search struct {
	n  *ToT
	st *state.State
	tr *trace.Tracer
	// bound is shared by every batch of the run: at most Concurrency model
	// calls are in flight, however batches are nested or repeated.
	bound  *par.Bound
	nums   []int // Game of 24 numbers when verifying
	states int   // states expanded
	// exhausted is set when DFS stopped at its MaxStates budget.
	exhausted bool
	best      *thought
	// deepest is the best state that was not a leaf, for a partial answer.
	deepest *thought
}

// Run searches and sets the answer from the best leaf.
func (n *ToT) Run(ctx context.Context, st *state.State) (string, error) {
	s := &search{n: n, st: st, tr: trace.From(ctx), bound: par.NewBound(n.s.Concurrency)}
	if n.s.Verify == VerifyGame24 {
		nums, err := verify.PuzzleNumbers(st.Task.Question)
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrNotGame24, err)
		}
		s.nums = nums
	}
	root := thought{idx: -1}
	var err error
	if n.s.Search == SearchDFS {
		_, err = s.dfs(ctx, root)
	} else {
		err = s.bfs(ctx, root)
	}
	if err != nil {
		return "", err
	}
	switch {
	case s.best != nil:
		st.ThoughtPath = slices.Clone(s.best.path)
		st.SetAnswer(s.best.answer)
	case s.deepest != nil:
		st.ThoughtPath = slices.Clone(s.deepest.path)
		reason := fmt.Sprintf("no %s state reached an answer within depth %d", n.s.Search, n.s.Depth)
		if s.exhausted {
			reason = fmt.Sprintf("dfs expanded its max_states budget of %d states without reaching an answer", n.s.MaxStates)
		}
		st.SetPartial(s.deepest.last(), reason, state.FailureBudget)
	default:
		reason := "every branch was pruned"
		if n.s.Search == SearchDFS {
			reason += " or valued below the threshold"
		}
		st.SetPartial("", reason, state.FailureBudget)
	}
	data := map[string]any{"search": n.s.Search, "states": s.states, "complete": st.Complete}
	s.tr.Emit(trace.Event{Node: n.id, Kind: trace.KindAnswer, Text: st.Answer, Data: data})
	return "", nil
}

// bfs runs breadth-first search level by level.
func (s *search) bfs(ctx context.Context, root thought) error {
	frontier := []thought{root}
	for depth := 1; depth <= s.n.s.Depth && len(frontier) > 0; depth++ {
		children, err := s.expand(ctx, frontier, depth)
		if err != nil {
			return err
		}
		var kept []thought
		for _, c := range children {
			if !c.pruned {
				kept = append(kept, c)
			}
		}
		sort.SliceStable(kept, func(a, b int) bool { return kept[a].value > kept[b].value })
		if len(kept) > s.n.s.Beam {
			kept = kept[:s.n.s.Beam]
		}
		for i := range kept {
			if kept[i].leaf {
				s.best = &kept[i] // kept is sorted: the first leaf is the best
				return nil
			}
		}
		if len(kept) > 0 {
			s.deepest = &kept[0]
		}
		frontier = kept
	}
	return nil
}

// dfs expands t, then explores its children best first, backtracking from
// children whose subtrees yield no answer. It reports whether an answer was
// found.
func (s *search) dfs(ctx context.Context, t thought) (bool, error) {
	depth := len(t.path) + 1
	if depth > s.n.s.Depth {
		return false, nil
	}
	if s.states >= s.n.s.MaxStates {
		s.exhausted = true
		return false, nil
	}
	children, err := s.expand(ctx, []thought{t}, depth)
	if err != nil {
		return false, err
	}
	sort.SliceStable(children, func(a, b int) bool { return children[a].value > children[b].value })
	for i := range children {
		c := children[i]
		if c.pruned || c.value < s.n.threshold {
			continue
		}
		if c.leaf {
			s.best = &c
			return true, nil
		}
		if s.deepest == nil || len(c.path) > len(s.deepest.path) || (len(c.path) == len(s.deepest.path) && c.value > s.deepest.value) {
			s.deepest = &c
		}
		found, err := s.dfs(ctx, c)
		if err != nil || found {
			return found, err
		}
		s.tr.Emit(trace.Event{Node: s.n.id, Kind: trace.KindInfo, Text: "backtrack: " + textutil.Clip(c.last(), 120),
			Data: map[string]any{"backtrack": true, "depth": depth, "candidate": c.idx}})
	}
	return false, nil
}

// expand proposes children for each parent concurrently, values them
// concurrently, and records them as candidates in a fixed order. A failed
// call drops its branch; the search fails only when every call of a batch
// failed.
func (s *search) expand(ctx context.Context, parents []thought, depth int) ([]thought, error) {
	s.states += len(parents)
	proposals, _, err := batch(ctx, s, len(parents), func(ctx context.Context, i int) ([]string, error) {
		return s.proposeOne(ctx, parents[i], depth)
	})
	if err != nil {
		return nil, err
	}
	var children []thought
	for i, items := range proposals {
		for _, p := range items {
			path := append(append([]string{}, parents[i].path...), p)
			c := thought{path: path, parent: parents[i].idx}
			c.answer, c.leaf = LeafAnswer(p)
			children = append(children, c)
		}
	}
	// Leaves are checked by the verifier when there is one; the rest are
	// valued by the model.
	var ask []int
	verdicts := make([]string, len(children))
	for i := range children {
		c := &children[i]
		if c.leaf && s.nums != nil {
			if err := verify.Verify24(s.nums, c.answer); err != nil {
				c.value, verdicts[i] = 0, err.Error()
			} else {
				c.value, verdicts[i] = ValueVerified, "verified"
			}
			continue
		}
		ask = append(ask, i)
	}
	values, errs, err := batch(ctx, s, len(ask), func(ctx context.Context, j int) (float64, error) {
		return s.valueOne(ctx, children[ask[j]], depth)
	})
	if err != nil {
		return nil, err
	}
	for j, i := range ask {
		children[i].value = values[j]
		if errs[j] != nil {
			verdicts[i] = "evaluation failed"
		}
	}
	for i := range children {
		c := &children[i]
		parent := c.parent
		c.pruned = c.value < s.n.prune || verdicts[i] == "evaluation failed"
		c.idx = len(s.st.Candidates)
		s.st.Candidates = append(s.st.Candidates, state.Candidate{Text: c.last(), Answer: c.answer, Score: c.value, Depth: depth, Parent: parent})
		data := map[string]any{"depth": depth, "value": c.value, "pruned": c.pruned, "parent": parent, "index": c.idx, "leaf": c.leaf}
		if verdicts[i] != "" {
			data["verdict"] = verdicts[i]
		}
		s.tr.Emit(trace.Event{Node: s.n.id, Kind: trace.KindCandidate, Text: c.last(), Data: data})
	}
	return children, nil
}

// batch runs f(0..n-1) concurrently under the search's shared bound and
// returns each call's result and error by index. It fails when the context
// ends or when every call failed; single failures only drop their branch.
func batch[T any](ctx context.Context, s *search, n int, f par.Func[T]) ([]T, []error, error) {
	out, errs := par.MapBound(ctx, s.bound, n, func(ctx context.Context, i int) (T, error) {
		return f(journal.Branch(ctx, fmt.Sprintf("branch.%d", i)), i)
	})
	if ctx.Err() != nil {
		return nil, nil, context.Cause(ctx)
	}
	failed := 0
	for _, e := range errs {
		if e != nil {
			failed++
		}
	}
	if n > 0 && failed == n {
		return nil, nil, fmt.Errorf("tot: all %d calls at one step failed: %w", n, par.First(errs))
	}
	return out, errs, nil
}

func (s *search) proposeOne(ctx context.Context, t thought, depth int) ([]string, error) {
	prompt, err := s.n.propose.Render(s.st, map[string]any{"Path": strings.Join(t.path, "\n"), "K": s.n.s.Proposals, "Depth": depth})
	if err != nil {
		return nil, err
	}
	text, _, err := s.n.model.Call(ctx, s.st, llm.CallMeta{Node: s.n.id, Kind: s.n.kind, Role: "propose"}, llm.Prompt(defaultSystem, prompt), s.n.opts...)
	if err != nil {
		return nil, err
	}
	items := ParseNumbered(text)
	if len(items) == 0 && strings.TrimSpace(text) != "" {
		items = []string{strings.TrimSpace(text)}
	}
	if len(items) > s.n.s.Proposals {
		items = items[:s.n.s.Proposals]
	}
	return items, nil
}

func (s *search) valueOne(ctx context.Context, c thought, depth int) (float64, error) {
	prompt, err := s.n.evaluate.Render(s.st, map[string]any{"Path": strings.Join(c.path[:len(c.path)-1], "\n"), "Candidate": c.last(), "Depth": depth})
	if err != nil {
		return 0, err
	}
	text, _, err := s.n.model.Call(ctx, s.st, llm.CallMeta{Node: s.n.id, Kind: s.n.kind, Role: "evaluate"}, llm.Prompt(defaultSystem, prompt), s.n.opts...)
	if err != nil {
		return 0, err
	}
	return ParseValue(text), nil
}
