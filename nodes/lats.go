package nodes

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor/parse"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/node"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/tmc/langchaingo/llms"
)

// LATSSettings configure `lats`, Language Agent Tree Search: Monte-Carlo
// tree search over ReAct trajectories.
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
	// shown in later prompts. Default 3.
	Memory int `mapstructure:"memory"`
	// ExpandPrompt overrides the ReAct step template. It sees
	// {{.Question}}, {{.Extra.Tools}} (one "- name: description" line per
	// tool), {{.Extra.Lessons}} (reflections, a []string) and
	// {{.Extra.Trajectory}} (the steps so far as Thought / Action / Action
	// Input / Observation lines).
	ExpandPrompt string `mapstructure:"expand_prompt"`
	// ValuePrompt overrides the value template. It sees {{.Question}} and
	// {{.Extra.Trajectory}}; the reply is read with ParseValue.
	ValuePrompt string `mapstructure:"value_prompt"`
	// ReflectPrompt overrides the reflection template. It sees
	// {{.Question}}, {{.Extra.Trajectory}}, {{.Extra.Answer}} and
	// {{.Extra.Feedback}}.
	ReflectPrompt string `mapstructure:"reflect_prompt"`
	// Concurrency bounds model and tool calls in flight. Default Children.
	Concurrency int `mapstructure:"concurrency"`
}

const latsExpand = `Answer the question by reasoning in steps and using tools. Available tools:
{{.Extra.Tools}}
Write exactly one next step, either
Thought: <your reasoning>
Action: <tool name>
Action Input: <tool input>
or, once you know the answer,
Thought: <your reasoning>
Final Answer: <the answer>
{{with .Extra.Lessons}}
Lessons from earlier attempts at this task (do not repeat these mistakes):
{{numbered .}}{{end}}
Question: {{.Question}}
{{.Extra.Trajectory}}`

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
// search: UCT selection, expansion by sampling several next steps (tool
// calls are executed), model-valued states, a greedy rollout to a final
// answer, and backpropagation of the rollout's reward. A failed final
// answer is reflected on, and the lesson is shown in later prompts. The
// search stops at the first answer whose reward is 1.
type LATS struct {
	id, kind                string
	model                   llm.Model
	env                     node.Env
	s                       LATSSettings
	c                       float64
	scorer                  verify.Scorer
	expand, value, reflectT *node.Template
	tools                   string
	opts                    []llms.CallOption
}

// NewLATS builds a `lats` node.
func NewLATS(env node.Env, spec node.Spec) (node.Built, error) {
	var s LATSSettings
	if err := config.Decode(spec.Settings, &s); err != nil {
		return node.Built{}, err
	}
	for _, f := range []struct {
		key string
		v   *int
		def int
	}{{"iterations", &s.Iterations, 8}, {"children", &s.Children, 3}, {"max_depth", &s.MaxDepth, 6}, {"memory", &s.Memory, 3}, {"concurrency", &s.Concurrency, 0}} {
		if *f.v < 0 {
			return node.Built{}, &config.SettingError{Key: f.key, Err: fmt.Errorf("%w: %s must be positive, got %d", config.ErrSettings, f.key, *f.v)}
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if s.Concurrency == 0 {
		s.Concurrency = s.Children
	}
	n := &LATS{id: spec.ID, kind: spec.Type, model: env.Model, env: env, s: s, c: 1}
	if s.Exploration != nil {
		if *s.Exploration < 0 {
			return node.Built{}, &config.SettingError{Key: "exploration", Err: fmt.Errorf("%w: exploration must not be negative", config.ErrSettings)}
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
		return node.Built{}, &config.SettingError{Key: "scorer", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
	}
	for _, t := range []struct {
		key, text, def string
		dst            **node.Template
	}{{"expand_prompt", s.ExpandPrompt, latsExpand, &n.expand}, {"value_prompt", s.ValuePrompt, latsValue, &n.value}, {"reflect_prompt", s.ReflectPrompt, latsReflect, &n.reflectT}} {
		if *t.dst, err = env.Template(t.key, t.text, "", t.def); err != nil {
			return node.Built{}, err
		}
	}
	var lines []string
	if env.Tools != nil {
		for _, info := range env.Tools.Infos() {
			lines = append(lines, fmt.Sprintf("- %s: %s", info.Name, info.Description))
		}
	}
	if len(lines) == 0 {
		lines = []string{"(none: answer from what you know)"}
	}
	n.tools = strings.Join(lines, "\n")
	return node.Built{Node: n}, nil
}

// latsNode is one state of the search tree: the trajectory up to it is the
// path of steps from the root.
type latsNode struct {
	parent   *latsNode
	children []*latsNode
	step     agent.Entry
	depth    int
	// value is the model's (or the scorer's) estimate in [0, 1].
	value float64
	// visits and total are the MCTS statistics of backpropagation.
	visits int
	total  float64
	// terminal is set for a final answer, a format error that ends the
	// branch, or the depth limit; reward is then the node's reward.
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

func (n *latsNode) trajectory() []agent.Entry {
	var out []agent.Entry
	for x := n; x != nil && x.parent != nil; x = x.parent {
		out = append(out, x.step)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// uct is the selection score: the mean of the rewards backpropagated
// through the node, with its initial value counted as one visit, plus the
// exploration bonus.
func (n *latsNode) uct(c float64) float64 {
	mean := (n.total + n.value) / float64(n.visits+1)
	return mean + c*math.Sqrt(math.Log(float64(n.parent.visits+1))/float64(n.visits+1))
}

func formatTrajectory(steps []agent.Entry) string {
	var b strings.Builder
	for _, e := range steps {
		if e.Thought != "" {
			fmt.Fprintf(&b, "Thought: %s\n", e.Thought)
		}
		switch {
		case e.Final != "":
			fmt.Fprintf(&b, "Final Answer: %s\n", e.Final)
		case e.Tool != "":
			fmt.Fprintf(&b, "Action: %s\nAction Input: %s\nObservation: [%s] %s\n", e.Tool, e.Input, e.Tool, clip(e.Observation, 1500))
		case e.Error != "":
			fmt.Fprintf(&b, "(format error: %s)\n", clip(e.Error, 200))
		}
	}
	return b.String()
}

// latsRun is one run of the node.
type latsRun struct {
	n       *LATS
	st      *agent.State
	tr      *trace.Tracer
	sem     chan struct{}
	lessons []string
	nodes   int
}

// Run searches and sets the answer.
func (n *LATS) Run(ctx context.Context, st *agent.State) (string, error) {
	r := &latsRun{n: n, st: st, tr: trace.From(ctx), sem: make(chan struct{}, n.s.Concurrency)}
	root := &latsNode{idx: -1}
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
		st.SetAnswer(best.step.Final)
	case end != nil:
		st.SetPartial(end.step.Final, fmt.Sprintf("lats found no answer the evaluator accepted in %d iterations", iter), agent.FailureWrong)
	default:
		st.SetPartial("", fmt.Sprintf("lats reached no final answer in %d iterations", iter), agent.FailureBudget)
	}
	if end != nil {
		st.Scratchpad = end.trajectory()
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
		if x.terminal && x.step.Final != "" && (best == nil || x.reward > best.reward) {
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
	steps := make([]agent.Entry, k)
	errs := make([]error, k)
	r.parallel(k, func(i int) {
		steps[i], errs[i] = r.sample(ctx, leaf, i+1)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, c := range leaf.children {
		seen[sampleKey(c.step)] = true
	}
	var kids []*latsNode
	failed := 0
	for i, e := range steps {
		if errs[i] != nil {
			failed++
			continue
		}
		key := sampleKey(e)
		if seen[key] {
			continue
		}
		seen[key] = true
		kids = append(kids, &latsNode{parent: leaf, step: e, depth: leaf.depth + 1})
	}
	if failed == k {
		return nil, fmt.Errorf("lats: all %d expansions failed: %w", k, errs[0])
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

// sampleKey identifies a sampled step for de-duplication: two samples with
// the same call, answer or format error make one child.
func sampleKey(e agent.Entry) string {
	return e.Tool + "\x00" + e.Input + "\x00" + e.Final + "\x00" + e.Error
}

// rollout continues greedily from x, one sampled step at a time, until a
// terminal state, adding the steps to the tree, and returns the last node.
func (r *latsRun) rollout(ctx context.Context, x *latsNode) (*latsNode, error) {
	for !x.terminal {
		e, err := r.sample(ctx, x, 0)
		if err != nil {
			return nil, err
		}
		c := &latsNode{parent: x, step: e, depth: x.depth + 1}
		if err := r.evaluate(ctx, []*latsNode{c}); err != nil {
			return nil, err
		}
		x.children = append(x.children, c)
		r.record(c)
		x = c
	}
	return x, nil
}

// sample asks the model for one next step after x and runs its tool call.
func (r *latsRun) sample(ctx context.Context, x *latsNode, seed int) (agent.Entry, error) {
	prompt, err := r.n.expand.Render(r.st, map[string]any{"Tools": r.n.tools, "Lessons": r.lessons, "Trajectory": formatTrajectory(x.trajectory())})
	if err != nil {
		return agent.Entry{}, err
	}
	opts := append([]llms.CallOption{}, r.n.opts...)
	if seed > 0 {
		opts = append(opts, llms.WithSeed(seed))
	}
	text, _, err := r.n.model.Call(ctx, r.st, llm.CallMeta{Node: r.n.id, Kind: r.n.kind, Role: "expand"}, llm.Prompt(defaultSystem, prompt), opts...)
	if err != nil {
		return agent.Entry{}, err
	}
	res := parse.Parse(text)
	e := agent.Entry{Thought: res.Thought, Raw: text}
	switch res.Kind {
	case parse.KindFinal:
		e.Final = res.Answer
	case parse.KindAction:
		e.Tool, e.Input = parse.NormalizeToolName(res.Tool), res.Input
		if r.n.env.Tools == nil {
			e.Observation = "error: no tools are available"
			break
		}
		r.st.Usage.AddToolCall(r.n.id)
		r.tr.Emit(trace.Event{Node: r.n.id, Kind: trace.KindAction, Text: e.Tool + ": " + e.Input, Data: map[string]any{"tool": e.Tool, "input": e.Input, "depth": x.depth + 1}})
		out, err := r.n.env.Tools.Call(ctx, e.Tool, e.Input)
		if err != nil {
			if ctx.Err() != nil {
				return agent.Entry{}, ctx.Err()
			}
			out = "error: " + err.Error()
		}
		e.Observation = out
		r.tr.Emit(trace.Event{Node: r.n.id, Kind: trace.KindObservation, Text: out, Data: map[string]any{"tool": e.Tool, "depth": x.depth + 1}})
	default:
		e.Error = res.Error
	}
	return e, nil
}

// evaluate sets each node's value: a final answer is scored against the
// task when it can be, else every state is valued by the model. A format
// error ends its branch with reward 0, and so does the depth limit.
func (r *latsRun) evaluate(ctx context.Context, kids []*latsNode) error {
	var ask []*latsNode
	for _, c := range kids {
		switch {
		case c.step.Error != "":
			c.terminal, c.reward, c.value = true, 0, 0
		case c.step.Final != "":
			c.terminal = true
			if v := r.n.scorer.Score(c.step.Final, r.st.Task.Reference()); !v.Unscorable {
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
	values := make([]float64, len(ask))
	errs := make([]error, len(ask))
	r.parallel(len(ask), func(i int) {
		prompt, err := r.n.value.Render(r.st, map[string]any{"Trajectory": formatTrajectory(ask[i].trajectory())})
		if err != nil {
			errs[i] = err
			return
		}
		text, _, err := r.n.model.Call(ctx, r.st, llm.CallMeta{Node: r.n.id, Kind: r.n.kind, Role: "value"}, llm.Prompt(defaultSystem, prompt))
		if err != nil {
			errs[i] = err
			return
		}
		values[i] = math.Min(1, ParseValue(text)/2)
	})
	for i, c := range ask {
		if errs[i] != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
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
		if c.step.Final != "" && c.reward < 1 {
			if err := r.reflect(ctx, c); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *latsRun) reflect(ctx context.Context, c *latsNode) error {
	prompt, err := r.n.reflectT.Render(r.st, map[string]any{"Trajectory": formatTrajectory(c.trajectory()[:c.depth-1]), "Answer": c.step.Final,
		"Feedback": fmt.Sprintf("reward %.2f", c.reward)})
	if err != nil {
		return err
	}
	text, _, err := r.n.model.Call(ctx, r.st, llm.CallMeta{Node: r.n.id, Kind: r.n.kind, Role: "reflect"}, llm.Prompt(defaultSystem, prompt))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
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
	r.tr.Emit(trace.Event{Node: r.n.id, Kind: trace.KindReflection, Text: lesson, Data: map[string]any{"answer": c.step.Final}})
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
	text := c.step.Final
	switch {
	case c.step.Tool != "":
		text = fmt.Sprintf("%s[%s]", c.step.Tool, c.step.Input)
	case c.step.Error != "":
		text = "(format error)"
	}
	r.st.Candidates = append(r.st.Candidates, agent.Candidate{Text: text, Answer: c.step.Final, Score: c.value, Depth: c.depth, Parent: parent})
	r.tr.Emit(trace.Event{Node: r.n.id, Kind: trace.KindCandidate, Text: text,
		Data: map[string]any{"depth": c.depth, "value": c.value, "terminal": c.terminal, "reward": c.reward, "parent": parent, "index": c.idx}})
}

// parallel runs f(0..n-1) concurrently under the node's bound.
func (r *latsRun) parallel(n int, f func(i int)) {
	done := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			r.sem <- struct{}{}
			defer func() { <-r.sem; done <- struct{}{} }()
			f(i)
		}(i)
	}
	for i := 0; i < n; i++ {
		<-done
	}
}
