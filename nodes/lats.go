package nodes

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/internal/par"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/tmc/langchaingo/llms"
)

// LATSSettings configure `lats`, Language Agent Tree Search: Monte-Carlo
// tree search over ReAct trajectories. Each step of a trajectory is one
// turn of package executor's ReAct loop, configured by the `react:` block,
// with all of its guards.
type LATSSettings struct {
	// Iterations is the number of MCTS iterations (select, expand,
	// evaluate, simulate, backpropagate). Default 8.
	Iterations int `mapstructure:"iterations"`
	// Children is how many next steps are sampled when a state is expanded.
	// Default 3.
	Children int `mapstructure:"children"`
	// MaxDepth bounds the steps of a trajectory; a trajectory that reaches
	// it without an answer scores 0. Default 6.
	MaxDepth int `mapstructure:"max_depth"`
	// Exploration is the UCT exploration constant c. Default 1.
	Exploration *float64 `mapstructure:"exploration"`
	// Temperature is the sampling temperature of expansions. Default 0.7.
	Temperature *float64 `mapstructure:"temperature"`
	// Scorer judges a finished trajectory's answer against the task (by
	// verify.ByName name, default "em") when the task can be scored; other
	// answers are valued by the model.
	Scorer string `mapstructure:"scorer"`
	// Memory is how many reflections on failed trajectories are kept and
	// shown in later prompts (as the ReAct prompt's lessons). Default 3.
	Memory int `mapstructure:"memory"`
	// ReAct holds the settings of the ReAct turns that expand the tree:
	// the keys of a `react` node (tools, mode, language, format, system,
	// prompt, examples, max_parse_failures, max_repeats,
	// observation_limit, keep_steps, max_tokens, temperature...). The
	// expansions' own Temperature applies on top. max_iterations and the
	// finalizer keys have no effect: MaxDepth bounds a trajectory.
	ReAct map[string]any `mapstructure:"react"`
	// ValuePrompt overrides the value template. It sees {{.Question}} and
	// {{.Extra.Trajectory}} (the steps so far in the ReAct text format,
	// ending with the final answer if there is one); the reply is read
	// with ParseValue.
	ValuePrompt string `mapstructure:"value_prompt"`
	// ReflectPrompt overrides the reflection template. It sees
	// {{.Question}}, {{.Extra.Trajectory}} (the steps before the answer,
	// as for ValuePrompt), {{.Extra.Answer}} and {{.Extra.Feedback}}.
	ReflectPrompt string `mapstructure:"reflect_prompt"`
	// Concurrency bounds the expansion turns (each a model call and its
	// tool calls) and value calls in flight, across the whole search.
	// Default Children.
	Concurrency int `mapstructure:"concurrency"`
}

const latsValue = `Question: {{.Question}}
{{.Extra.Trajectory}}

How likely is this trajectory to lead to the correct answer? Reply with a score from 1 to 10.`

const latsReflect = `You attempted a question and your answer was judged wrong. Write one short lesson (two sentences at most) for the next attempt: what went wrong and what to do differently.

Question: {{.Question}}
{{.Extra.Trajectory}}
Your answer: {{.Extra.Answer}}
Evaluation: {{.Extra.Feedback}}
Lesson:`

// LATS searches the space of ReAct trajectories with Monte-Carlo tree
// search: UCT selection, expansion by sampling several next steps (each a
// turn of the ReAct loop: its prompt, its parser and its guards, tool
// calls executed), model-valued states, a greedy rollout to a final
// answer, and backpropagation of the rollout's reward. A failed final
// answer is reflected on, and the lesson is shown in later prompts. The
// search stops at the first answer whose reward is 1.
//
// A reply in the wrong format is answered with the loop's feedback in the
// next step of its branch (the state is kept, valued 0); a branch that the
// loop's guards stop (too many format errors in a row, a call repeated too
// often) ends with reward 0, like one that reaches MaxDepth.
type LATS struct {
	id, kind        string
	model           llm.Model
	loop            *executor.Loop
	s               LATSSettings
	c               float64
	scorer          verify.Scorer
	value, reflectT *nodekind.Template
	opts            []llms.CallOption
}

// NewLATS builds a `lats` nodekind.
func NewLATS(env nodekind.Env, spec nodekind.Spec) (nodekind.Built, error) {
	var s LATSSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return nodekind.Built{}, err
	}
	if err := applyCounts(count{"iterations", &s.Iterations, 8}, count{"children", &s.Children, 3}, count{"max_depth", &s.MaxDepth, 6},
		count{"memory", &s.Memory, 3}, count{"concurrency", &s.Concurrency, 0}); err != nil {
		return nodekind.Built{}, err
	}
	if s.Concurrency == 0 {
		s.Concurrency = s.Children
	}
	n := &LATS{id: spec.ID, kind: spec.Type, model: env.Model, s: s, c: 1}
	if s.Exploration != nil {
		if *s.Exploration < 0 {
			return nodekind.Built{}, &config.SettingError{Key: "exploration", Err: fmt.Errorf("%w: exploration must not be negative", config.ErrSettings)}
		}
		n.c = *s.Exploration
	}
	temp := 0.7
	if s.Temperature != nil {
		temp = *s.Temperature
	}
	n.opts = []llms.CallOption{llms.WithTemperature(temp)}
	if s.Scorer == "" {
		s.Scorer = "em"
	}
	var err error
	if n.scorer, err = verify.ByName(s.Scorer); err != nil {
		return nodekind.Built{}, &config.SettingError{Key: "scorer", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
	}
	valueSpec, reflectSpec := latsSpecs()
	for _, t := range []struct {
		text, def string
		spec      nodekind.TemplateSpec
		dst       **nodekind.Template
	}{{s.ValuePrompt, latsValue, valueSpec, &n.value}, {s.ReflectPrompt, latsReflect, reflectSpec, &n.reflectT}} {
		if *t.dst, err = env.Template(t.spec, t.text, "", t.def); err != nil {
			return nodekind.Built{}, err
		}
	}
	if n.loop, err = newReActLoop(env.Nested("react"), s.ReAct); err != nil {
		return nodekind.Built{}, err
	}
	return nodekind.Built{Node: n}, nil
}

// newReActLoop builds the ReAct loop of a `react:` settings block; errors
// name the key under "react.".
func newReActLoop(env nodekind.Env, settings map[string]any) (*executor.Loop, error) {
	var cfg executor.ReActConfig
	err := config.Decode(settings, &cfg)
	if cfg.ShowVars == nil {
		// Sibling branches grow at once and would change the vars
		// while a branch's prompt shows them.
		cfg.ShowVars = new(false)
	}
	var l *executor.Loop
	if err == nil {
		l, err = executor.NewLoop(env, cfg)
	}
	if err != nil {
		return nil, config.NestSetting("react", err)
	}
	return l, nil
}

// latsNode is one state of the search tree: the ReAct branch that the
// path of turns from the root has grown.
type latsNode struct {
	parent   *latsNode
	children []*latsNode
	// branch is the ReAct run up to and including this node's turn.
	branch *executor.Branch
	// turn is what the node's own turn did (zero for the root).
	turn  executor.Turn
	depth int
	// value is the model's (or the scorer's) estimate in [0, 1].
	value float64
	// visits and total are the MCTS statistics of backpropagation.
	visits int
	total  float64
	// terminal is set for a final answer, a branch the loop's guards
	// stopped, or the depth limit; reward is then the node's reward.
	terminal bool
	reward   float64
	// dead marks an expanded node none of whose children can be selected
	// and that may not be expanded again.
	dead bool
	// expansions counts how often the node was expanded.
	expansions int
	idx        int
}

// latsMaxExpansions is how often a state may be expanded: a second
// expansion samples fresh next steps when every child of the first ended
// in a failure.
const latsMaxExpansions = 2

// answer is the node's final answer, or "".
func (n *latsNode) answer() string {
	if n.turn.Final {
		return n.turn.Answer
	}
	return ""
}

// uct is the selection score: the mean of the rewards backpropagated
// through the node, with its initial value counted as one visit, plus the
// exploration bonus.
func (n *latsNode) uct(c float64) float64 {
	mean := (n.total + n.value) / float64(n.visits+1)
	return mean + c*math.Sqrt(math.Log(float64(n.parent.visits+1))/float64(n.visits+1))
}

// latsRun is one run of the nodekind.
type latsRun struct {
	n  *LATS
	st *state.State
	tr *trace.Tracer
	// bound is shared by every model call (with its tool calls) of the
	// run: at most Concurrency are in flight.
	bound   *par.Bound
	lessons []string
	nodes   int
}

// Run searches and sets the answer.
func (n *LATS) Run(ctx context.Context, st *state.State) (string, error) {
	r := &latsRun{n: n, st: st, tr: trace.From(ctx), bound: par.NewBound(n.s.Concurrency)}
	start, err := n.loop.Begin(st, executor.Input{NodeID: n.id, Kind: n.kind, Role: "expand", Task: st.Task.Question})
	if err != nil {
		return "", err
	}
	root := &latsNode{idx: -1, branch: start}
	var best *latsNode
	iter := 0
	for ; iter < n.s.Iterations && !root.dead; iter++ {
		leaf := r.selectLeaf(root)
		if leaf == nil {
			break
		}
		children, err := r.expandNode(ctx, leaf)
		if err != nil {
			return "", err
		}
		var pick *latsNode
		for _, c := range children {
			if c.terminal && c.reward >= 1 {
				best = c
				break
			}
			if !c.terminal && (pick == nil || c.value > pick.value) {
				pick = c
			}
		}
		if best != nil {
			r.backprop(best, best.reward)
			break
		}
		end := pick
		if pick != nil {
			if end, err = r.rollout(ctx, pick); err != nil {
				return "", err
			}
		} else {
			// Every child is terminal and failed: back up the best of them.
			for _, c := range children {
				if end == nil || c.reward > end.reward {
					end = c
				}
			}
		}
		if end == nil {
			leaf.dead = true
			r.backprop(leaf, 0)
			continue
		}
		r.backprop(end, end.reward)
		r.tr.Emit(trace.Event{Node: n.id, Kind: trace.KindStep, Text: fmt.Sprintf("iteration %d: reward %.2f at depth %d", iter+1, end.reward, end.depth),
			Data: map[string]any{"iteration": iter + 1, "reward": end.reward, "depth": end.depth, "nodes": r.nodes}})
		if end.terminal && end.reward >= 1 {
			best = end
			break
		}
	}
	data := map[string]any{"iterations": iter, "nodes": r.nodes, "reflections": len(r.lessons)}
	end := best
	if end == nil {
		end = bestTerminal(root)
	}
	switch {
	case best != nil:
		st.SetAnswer(best.answer())
	case end != nil:
		st.SetPartial(end.answer(), fmt.Sprintf("lats found no answer the evaluator accepted in %d iterations", iter), state.FailureWrong)
	default:
		st.SetPartial("", fmt.Sprintf("lats reached no final answer in %d iterations", iter), state.FailureBudget)
	}
	if end != nil {
		st.Scratchpad = end.branch.Entries()
	}
	data["complete"] = st.Complete
	r.tr.Emit(trace.Event{Node: n.id, Kind: trace.KindAnswer, Text: st.Answer, Data: data})
	return "", nil
}

// bestTerminal returns the final-answer node with the highest reward, ties
// to the one found first.
func bestTerminal(root *latsNode) *latsNode {
	var best *latsNode
	var walk func(*latsNode)
	walk = func(x *latsNode) {
		if x.terminal && x.turn.Final && (best == nil || x.reward > best.reward) {
			best = x
		}
		for _, c := range x.children {
			walk(c)
		}
	}
	walk(root)
	return best
}

// selectLeaf descends from the root by UCT to a node to expand: one
// without children, or one whose children all ended in failure and that
// may be expanded again. It skips terminal and dead children, marks nodes
// that are used up dead, and returns nil when the whole tree is.
func (r *latsRun) selectLeaf(root *latsNode) *latsNode {
	x := root
	for len(x.children) > 0 {
		var next *latsNode
		for _, c := range x.children {
			if c.terminal || c.dead {
				continue
			}
			if next == nil || c.uct(r.n.c) > next.uct(r.n.c) {
				next = c
			}
		}
		if next != nil {
			x = next
			continue
		}
		if x.expansions < latsMaxExpansions {
			return x
		}
		x.dead = true
		if x == root {
			return nil
		}
		x = root
	}
	return x
}

// expandNode samples Children next steps of leaf concurrently, runs their
// tool calls, values them, and attaches the distinct ones.
func (r *latsRun) expandNode(ctx context.Context, leaf *latsNode) ([]*latsNode, error) {
	leaf.expansions++
	k := r.n.s.Children
	samples, errs := par.MapBound(ctx, r.bound, k, func(ctx context.Context, i int) (*latsNode, error) {
		return r.sample(journal.Branch(ctx, fmt.Sprintf("sample.%d", i+1)), leaf, i+1)
	})
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	seen := map[string]bool{}
	for _, c := range leaf.children {
		seen[sampleKey(c.turn)] = true
	}
	var kids []*latsNode
	failed := 0
	for i, c := range samples {
		if errs[i] != nil {
			failed++
			continue
		}
		key := sampleKey(c.turn)
		if seen[key] {
			continue
		}
		seen[key] = true
		kids = append(kids, c)
	}
	if failed == k {
		return nil, fmt.Errorf("lats: all %d expansions failed: %w", k, par.First(errs))
	}
	if err := r.evaluate(ctx, kids); err != nil {
		return nil, err
	}
	leaf.children = append(leaf.children, kids...)
	for _, c := range kids {
		r.record(c)
	}
	return kids, nil
}

// sampleKey identifies a sampled turn for de-duplication: two samples with
// the same calls, answer or format error make one child.
func sampleKey(t executor.Turn) string {
	var b strings.Builder
	for _, e := range t.Entries {
		b.WriteString(e.Tool + "\x00" + e.Input + "\x00" + e.Final + "\x00" + e.Error + "\x01")
	}
	return b.String()
}

// rollout continues greedily from x, one sampled step at a time, until a
// terminal state, adding the steps to the tree, and returns the last nodekind.
func (r *latsRun) rollout(ctx context.Context, x *latsNode) (*latsNode, error) {
	for !x.terminal {
		c, err := r.sample(ctx, x, 0)
		if err != nil {
			return nil, err
		}
		if err := r.evaluate(ctx, []*latsNode{c}); err != nil {
			return nil, err
		}
		x.children = append(x.children, c)
		r.record(c)
		x = c
	}
	return x, nil
}

// sample takes one ReAct turn from x's branch (the model's next step and
// its tool calls, under the loop's guards) and returns the new node, not
// yet attached. A seed above 0 is passed to the model, so concurrent
// samples differ.
func (r *latsRun) sample(ctx context.Context, x *latsNode, seed int) (*latsNode, error) {
	opts := slices.Clone(r.n.opts)
	if seed > 0 {
		opts = append(opts, llms.WithSeed(seed))
	}
	b, t, err := x.branch.Next(ctx, executor.TurnOptions{Reflections: slices.Clone(r.lessons), CallOptions: opts})
	if err != nil {
		return nil, err
	}
	return &latsNode{parent: x, branch: b, turn: t, depth: x.depth + 1}, nil
}

// evaluate sets each node's value: a final answer is scored against the
// task when it can be, else every state is valued by the model. A branch
// the loop's guards stopped ends with reward 0, and so does the depth
// limit; a format error answered with feedback is a state valued 0.
func (r *latsRun) evaluate(ctx context.Context, kids []*latsNode) error {
	var ask []*latsNode
	for _, c := range kids {
		switch {
		case c.turn.Failure != "":
			c.terminal, c.reward, c.value = true, 0, 0
		case c.turn.Invalid:
			c.value = 0
		case c.turn.Final:
			c.terminal = true
			if v := r.n.scorer.Score(c.turn.Answer, r.st.Task.Reference()); !v.Unscorable {
				c.reward = 0
				if v.Correct {
					c.reward = 1
				}
				c.value = c.reward
				continue
			}
			ask = append(ask, c)
		default:
			ask = append(ask, c)
		}
	}
	values, errs := par.MapBound(ctx, r.bound, len(ask), func(ctx context.Context, i int) (float64, error) {
		ctx = journal.Branch(ctx, fmt.Sprintf("value.%d", i))
		prompt, err := r.n.value.Render(r.st, map[string]any{"Trajectory": ask[i].branch.Transcript()})
		if err != nil {
			return 0, err
		}
		text, _, err := r.n.model.Call(ctx, r.st, llm.CallMeta{Node: r.n.id, Kind: r.n.kind, Role: "value"}, llm.Prompt(defaultSystem, prompt))
		if err != nil {
			return 0, err
		}
		return math.Min(1, ParseValue(text)/2), nil
	})
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	for i, c := range ask {
		if errs[i] != nil {
			values[i] = 0 // an unvalued state is not worth exploring first
		}
		c.value = values[i]
		if c.terminal {
			c.reward = c.value
		}
	}
	for _, c := range kids {
		if !c.terminal && c.depth >= r.n.s.MaxDepth {
			c.terminal, c.reward = true, 0
		}
	}
	// Reflect on failed answers, so later expansions see the lessons.
	for _, c := range kids {
		if c.turn.Final && c.reward < 1 {
			if err := r.reflect(ctx, c); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *latsRun) reflect(ctx context.Context, c *latsNode) error {
	prompt, err := r.n.reflectT.Render(r.st, map[string]any{"Trajectory": c.parent.branch.Transcript(), "Answer": c.answer(),
		"Feedback": fmt.Sprintf("reward %.2f", c.reward)})
	if err != nil {
		return err
	}
	text, _, err := r.n.model.Call(ctx, r.st, llm.CallMeta{Node: r.n.id, Kind: r.n.kind, Role: "reflect"}, llm.Prompt(defaultSystem, prompt))
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return nil // a missing lesson does not stop the search
	}
	lesson := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "Lesson:"))
	if lesson == "" {
		return nil
	}
	r.lessons = append(r.lessons, lesson)
	if len(r.lessons) > r.n.s.Memory {
		r.lessons = r.lessons[len(r.lessons)-r.n.s.Memory:]
	}
	r.st.Reflections = append([]string(nil), r.lessons...)
	r.tr.Emit(trace.Event{Node: r.n.id, Kind: trace.KindReflection, Text: lesson, Data: map[string]any{"answer": c.answer()}})
	return nil
}

// backprop adds reward to every node from x up to the root.
func (r *latsRun) backprop(x *latsNode, reward float64) {
	for ; x != nil; x = x.parent {
		x.visits++
		x.total += reward
	}
}

// record appends a node to the state's candidates and traces it.
func (r *latsRun) record(c *latsNode) {
	r.nodes++
	parent := -1
	if c.parent != nil {
		parent = c.parent.idx
	}
	c.idx = len(r.st.Candidates)
	text := latsText(c.turn)
	r.st.Candidates = append(r.st.Candidates, state.Candidate{Text: text, Answer: c.answer(), Score: c.value, Depth: c.depth, Parent: parent})
	r.tr.Emit(trace.Event{Node: r.n.id, Kind: trace.KindCandidate, Text: text,
		Data: map[string]any{"depth": c.depth, "value": c.value, "terminal": c.terminal, "reward": c.reward, "parent": parent, "index": c.idx}})
}

// latsText is a turn as a candidate's text: its calls as tool[input],
// its answer, or what went wrong.
func latsText(t executor.Turn) string {
	switch {
	case t.Final:
		return t.Answer
	case t.Failure != "":
		return fmt.Sprintf("(stopped: %s)", t.Failure)
	case t.Invalid:
		return "(format error)"
	}
	var calls []string
	for _, e := range t.Entries {
		if e.Tool != "" {
			calls = append(calls, fmt.Sprintf("%s[%s]", e.Tool, e.Input))
		}
	}
	return strings.Join(calls, "; ")
}
