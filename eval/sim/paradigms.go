package sim

import (
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/verify"
	"github.com/tmc/langchaingo/llms"
)

// This file plays the roles of the paradigm nodes: Tree of Thoughts
// (propose, evaluate), Least-to-Most (decompose, solve), Reflexion (judge,
// reflect) and LATS (value; its expand role is the ReAct role). Each reads the parts of the node's default prompt it
// needs ("Steps so far:", "Candidate ...:", "Sub-question:", "Proposed
// answer:"), so custom prompts that drop those labels get generic replies.

var (
	// game24StepRe is one Game of 24 step as verify.Solve24Steps writes it.
	game24StepRe = regexp.MustCompile(`^(\S+) ([-+*/]) (\S+) = (\S+) \(left: ([^)]*)\)$`)
	upToRe       = regexp.MustCompile(`(?i)\bup to (\d+)\b`)
	needRe       = regexp.MustCompile(`^I need (.+?)\.?$`)
)

// stepLine is how a reasoning model states a gold tool step and its result.
func stepLine(s suite.GoldStep, outs map[string]string) string {
	if s.Tool == "calculator" {
		return fmt.Sprintf("%s = %s", substitute(s.Input, outs), s.Output)
	}
	return fmt.Sprintf("From what I know, %s: %s", substitute(s.Input, outs), s.Output)
}

// thoughts is the gold solution as a chain of thoughts, one per step: the
// tool steps that have a known result, or else the reasoning lines. The
// last thought of a Tree of Thoughts path is the answer line, not included.
func thoughts(g *suite.Gold) []string {
	outs := outputs(g)
	var out []string
	for _, s := range resultSteps(g) {
		out = append(out, stepLine(s, outs))
	}
	if len(out) == 0 {
		out = append(out, g.Reasoning...)
	}
	return out
}

// isGame24 reports whether the gold solution is a Game of 24 derivation:
// no tool steps and every reasoning line a "a op b = c (left: ...)" step.
func isGame24(g *suite.Gold) bool {
	if len(g.Steps) > 0 || len(g.Reasoning) == 0 {
		return false
	}
	for _, r := range g.Reasoning {
		if !game24StepRe.MatchString(strings.TrimSpace(r)) {
			return false
		}
	}
	return true
}

// promptPath returns the thoughts listed under "Steps so far:", up to a
// blank line or the next "Candidate"/"Propose" line.
func promptPath(prompt string) []string {
	lines := strings.Split(prompt, "\n")
	start := -1
	for i, l := range lines {
		if strings.EqualFold(strings.TrimSpace(l), "Steps so far:") {
			start = i + 1
		}
	}
	if start < 0 {
		return nil
	}
	var path []string
	for _, l := range lines[start:] {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "Candidate") || strings.HasPrefix(t, "Propose") {
			break
		}
		path = append(path, t)
	}
	return path
}

// labelled returns the text after the last line starting with label and a
// colon, or "".
func labelled(prompt, label string) string {
	out := ""
	for _, l := range strings.Split(prompt, "\n") {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, label) {
			continue
		}
		if _, rest, ok := strings.Cut(t, ":"); ok {
			out = strings.TrimSpace(rest)
		}
	}
	return out
}

// onGold reports whether path is a prefix of the gold thoughts.
func onGold(path, gold []string) bool {
	if len(path) > len(gold) {
		return false
	}
	for i, p := range path {
		if strings.TrimSpace(p) != strings.TrimSpace(gold[i]) {
			return false
		}
	}
	return true
}

// totGold is the full gold path of a Tree of Thoughts search: the thoughts
// and the answer line.
func totGold(g *suite.Gold) []string {
	return append(thoughts(g), "Answer: "+g.Answer)
}

// propose plays the ToT proposer: a numbered list of next steps holding
// the gold next step (when the path is still on the gold solution) among
// distractors, at a position fixed by the task and the path.
func (m *Model) propose(c call, fault string) *llms.ContentChoice {
	g := c.task.Gold
	if fault == FaultEmptyReply {
		return &llms.ContentChoice{Content: "", StopReason: "stop"}
	}
	k := 3
	if mm := upToRe.FindStringSubmatch(c.prompt); mm != nil {
		if n, err := strconv.Atoi(mm[1]); err == nil && n > 0 {
			k = n
		}
	}
	path := promptPath(c.prompt)
	gold := totGold(g)
	var next string
	if len(path) < len(gold) && onGold(path, gold) {
		next = m.nextThought(c, len(path), gold[len(path)])
	}
	var distract []string
	if isGame24(g) {
		if !strings.HasPrefix(next, "Answer:") {
			// With one value left the only move is the answer itself.
			distract = game24Moves(c.task.Question, path)
		}
	} else {
		distract = genericDistractors(c.task, next)
	}
	distract = without(distract, next)
	key := strings.Join(path, "\n")
	sort.SliceStable(distract, func(i, j int) bool {
		return hash64(c.task.ID, key, distract[i]) < hash64(c.task.ID, key, distract[j])
	})
	items := distract
	if next != "" {
		if fault == FaultEarlyWrongAnswer {
			next = "Answer: " + wrongFinal(c.task)
			items = without(items, next)
		}
		if len(items) > k-1 {
			items = items[:k-1]
		}
		pos := int(hash64(c.task.ID, key, "position") % uint64(len(items)+1))
		items = append(items[:pos:pos], append([]string{next}, items[pos:]...)...)
	} else if len(items) > k {
		items = items[:k]
	}
	var b strings.Builder
	for i, it := range items {
		fmt.Fprintf(&b, "%d. %s\n", i+1, it)
	}
	return &llms.ContentChoice{Content: strings.TrimSpace(b.String()), StopReason: "stop"}
}

// nextThought is the gold thought at index i of the Tree of Thoughts path
// as far as the model can state it (see capability.go): a lookup result
// it neither sees nor knows comes out wrong, a calculation may slip, and
// a knowledge task it does not know is answered wrongly at once. Game of
// 24 moves are not limited: the search over legal moves is what solves a
// puzzle.
func (m *Model) nextThought(c call, i int, next string) string {
	g := c.task.Gold
	if isGame24(g) {
		return next
	}
	if len(g.Steps) == 0 {
		if i == 0 && !m.knows(c.task) {
			return "Answer: " + m.wrongValue(c, g.Answer, "answer")
		}
		return next
	}
	steps := resultSteps(g)
	if i >= len(steps) {
		return next
	}
	s := steps[i]
	if normalize(evidence(c)).contains(s.Output) {
		return next
	}
	wrong := s
	wrong.Output = m.wrongValue(c, s.Output, "step")
	switch {
	case s.Tool != "calculator" && !m.knows(c.task):
		return stepLine(wrong, outputs(g))
	case s.Tool == "calculator" && c.dice.u("slip "+s.ID) < m.slipRate(c):
		return stepLine(wrong, outputs(g))
	}
	return next
}

// wrongFinal is a plausible wrong final answer for the task.
func wrongFinal(t *suite.Task) string {
	if isGame24(t.Gold) {
		if nums, err := verify.PuzzleNumbers(t.Question); err == nil {
			parts := make([]string, len(nums))
			for i, n := range nums {
				parts[i] = strconv.Itoa(n)
			}
			expr := strings.Join(parts, " + ")
			if verify.Verify24(nums, expr) != nil {
				return expr
			}
			return strings.Join(parts, " * ")
		}
	}
	return wrongAnswer(t.Gold.Answer)
}

func without(items []string, s string) []string {
	out := items[:0:0]
	seen := map[string]bool{s: true}
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}

// genericDistractors are wrong next steps for a task that is not a Game of
// 24: a premature wrong answer, the next step with a wrong result, and a
// step that makes no progress.
func genericDistractors(t *suite.Task, next string) []string {
	out := []string{"Answer: " + wrongAnswer(t.Gold.Answer)}
	if i := strings.LastIndex(next, " = "); i >= 0 {
		out = append(out, next[:i]+" = "+wrongAnswer(next[i+3:]))
	} else if i := strings.LastIndex(next, ": "); i >= 0 && !strings.HasPrefix(next, "Answer:") {
		out = append(out, next[:i]+": unknown")
	}
	return append(out, "Restate the problem: "+strings.TrimSpace(t.Question))
}

// replay24 replays path over the puzzle numbers. Each step must combine
// two values that are left and state its result correctly. It returns the
// values left and the expression each stands for; ok is false when the
// path is not a legal sequence of steps.
func replay24(question string, path []string) (vals []*big.Rat, exprs []string, ok bool) {
	nums, err := verify.PuzzleNumbers(question)
	if err != nil {
		return nil, nil, false
	}
	for _, n := range nums {
		vals = append(vals, big.NewRat(int64(n), 1))
		exprs = append(exprs, strconv.Itoa(n))
	}
	take := func(v string) (*big.Rat, string, bool) {
		want, ok := new(big.Rat).SetString(v)
		if !ok {
			return nil, "", false
		}
		for i, x := range vals {
			if x.Cmp(want) == 0 {
				e := exprs[i]
				vals = append(vals[:i:i], vals[i+1:]...)
				exprs = append(exprs[:i:i], exprs[i+1:]...)
				return x, e, true
			}
		}
		return nil, "", false
	}
	for _, step := range path {
		m := game24StepRe.FindStringSubmatch(strings.TrimSpace(step))
		if m == nil {
			return nil, nil, false
		}
		x, ex, ok1 := take(m[1])
		y, ey, ok2 := take(m[3])
		stated, ok3 := new(big.Rat).SetString(m[4])
		if !ok1 || !ok2 || !ok3 {
			return nil, nil, false
		}
		v := new(big.Rat)
		switch m[2] {
		case "+":
			v.Add(x, y)
		case "-":
			v.Sub(x, y)
		case "*":
			v.Mul(x, y)
		default:
			if y.Sign() == 0 {
				return nil, nil, false
			}
			v.Quo(x, y)
		}
		if v.Cmp(stated) != 0 {
			return nil, nil, false
		}
		vals = append(vals, v)
		exprs = append(exprs, "("+ex+" "+m[2]+" "+ey+")")
	}
	return vals, exprs, true
}

// game24State returns the values left after path, or ok false when the
// path is not a legal sequence of steps.
func game24State(question string, path []string) ([]*big.Rat, bool) {
	vals, _, ok := replay24(question, path)
	return vals, ok
}

// game24Moves lists every legal next step from the state after path, in
// Solve24Steps's format, or the answer expression the path builds when one
// value is left.
func game24Moves(question string, path []string) []string {
	vals, ok := game24State(question, path)
	if !ok || len(vals) == 0 {
		return nil
	}
	if len(vals) == 1 {
		if expr, ok := game24Expr(question, path); ok {
			return []string{"Answer: " + expr}
		}
		return nil
	}
	sort.SliceStable(vals, func(i, j int) bool { return vals[i].Cmp(vals[j]) < 0 })
	var out []string
	for i := 0; i < len(vals); i++ {
		for j := i + 1; j < len(vals); j++ {
			a, b := vals[i], vals[j]
			for _, mv := range []struct {
				x, y *big.Rat
				op   byte
			}{{a, b, '+'}, {a, b, '*'}, {b, a, '-'}, {b, a, '/'}, {a, b, '/'}} {
				var v *big.Rat
				switch mv.op {
				case '+':
					v = new(big.Rat).Add(mv.x, mv.y)
				case '*':
					v = new(big.Rat).Mul(mv.x, mv.y)
				case '-':
					v = new(big.Rat).Sub(mv.x, mv.y)
				default:
					if mv.y.Sign() == 0 {
						continue
					}
					v = new(big.Rat).Quo(mv.x, mv.y)
				}
				left := []*big.Rat{v}
				for k, o := range vals {
					if k != i && k != j {
						left = append(left, o)
					}
				}
				sort.SliceStable(left, func(p, q int) bool { return left[p].Cmp(left[q]) < 0 })
				strs := make([]string, len(left))
				for k, l := range left {
					strs[k] = l.RatString()
				}
				out = append(out, fmt.Sprintf("%s %c %s = %s (left: %s)", mv.x.RatString(), mv.op, mv.y.RatString(), v.RatString(), strings.Join(strs, " ")))
			}
		}
	}
	return out
}

// game24Expr returns the expression a legal path that leaves one value
// builds over the puzzle numbers.
func game24Expr(question string, path []string) (string, bool) {
	_, exprs, ok := replay24(question, path)
	if !ok || len(exprs) != 1 {
		return "", false
	}
	return strings.TrimSuffix(strings.TrimPrefix(exprs[0], "("), ")"), true
}

// evaluate plays the ToT value evaluator: "sure" for a candidate that keeps
// the path on the gold solution (or, in Game of 24, an answer that
// verifies), "likely" for a legal Game of 24 state whose values can still
// make 24, and "impossible" otherwise. An early-wrong-answer fault flips
// the judgement of a sure or impossible candidate.
func (m *Model) evaluate(c call, fault string) *llms.ContentChoice {
	if fault == FaultEmptyReply {
		return &llms.ContentChoice{Content: "", StopReason: "stop"}
	}
	g := c.task.Gold
	path := append(promptPath(c.prompt), labelled(c.prompt, "Candidate"))
	verdict := "impossible"
	switch {
	case onGold(path, totGold(g)):
		verdict = "sure"
	case isGame24(g):
		verdict = game24Value(c.task.Question, path)
	}
	if fault == FaultEarlyWrongAnswer {
		switch verdict {
		case "sure":
			verdict = "impossible"
		case "impossible":
			verdict = "sure"
		}
	}
	reason := map[string]string{
		"sure":       "This step follows a correct solution.",
		"likely":     "The numbers left can still be combined into 24.",
		"impossible": "This step cannot lead to the correct answer.",
	}[verdict]
	return &llms.ContentChoice{Content: reason + "\n" + verdict, StopReason: "stop"}
}

// game24Value judges an off-gold Game of 24 path.
func game24Value(question string, path []string) string {
	last := path[len(path)-1]
	if a, ok := strings.CutPrefix(last, "Answer:"); ok {
		nums, err := verify.PuzzleNumbers(question)
		if err == nil && verify.Verify24(nums, a) == nil {
			return "sure"
		}
		return "impossible"
	}
	vals, ok := game24State(question, path)
	if ok && reaches24(vals) {
		return "likely"
	}
	return "impossible"
}

// reaches24 reports whether vals can be combined, each exactly once, with
// + - * / into exactly 24.
func reaches24(vals []*big.Rat) bool {
	if len(vals) == 1 {
		return vals[0].Cmp(big.NewRat(24, 1)) == 0
	}
	for i := range vals {
		for j := range vals {
			if i == j {
				continue
			}
			rest := make([]*big.Rat, 0, len(vals)-1)
			for k, v := range vals {
				if k != i && k != j {
					rest = append(rest, v)
				}
			}
			a, b := vals[i], vals[j]
			outs := []*big.Rat{new(big.Rat).Add(a, b), new(big.Rat).Sub(a, b), new(big.Rat).Mul(a, b)}
			if b.Sign() != 0 {
				outs = append(outs, new(big.Rat).Quo(a, b))
			}
			for _, v := range outs {
				if reaches24(append(rest, v)) {
					return true
				}
			}
		}
	}
	return false
}

// resultSteps are the gold steps with a known result, in order.
func resultSteps(g *suite.Gold) []suite.GoldStep {
	var out []suite.GoldStep
	for _, s := range g.Steps {
		if s.Output != "" {
			out = append(out, s)
		}
	}
	return out
}

// subQuestions are the sub-questions a Least-to-Most decomposition derives
// from the gold solution, one per step with a result, without the task
// itself. References to earlier results read "the answer to sub-question
// N".
func subQuestions(g *suite.Gold) []string {
	var out []string
	number := map[string]int{} // gold step id -> sub-question number
	for _, s := range resultSteps(g) {
		q := fmt.Sprintf("What do we know about %q?", s.Input)
		switch {
		case s.Tool == "calculator":
			q = fmt.Sprintf("What is %s?", s.Input)
		case needRe.MatchString(strings.TrimSpace(s.Thought)):
			q = "What is " + needRe.FindStringSubmatch(strings.TrimSpace(s.Thought))[1] + "?"
		}
		q = plan.ReplaceReferences(q, func(id string) string {
			if n, ok := number[id]; ok {
				return fmt.Sprintf("(the answer to sub-question %d)", n)
			}
			return "#E" + id
		})
		out = append(out, q)
		number[s.ID] = len(out)
	}
	if len(out) > 0 {
		return out
	}
	for i := range g.Reasoning {
		out = append(out, fmt.Sprintf("What is the result of step %d of the solution?", i+1))
	}
	return out
}

// decompose plays Least-to-Most's decomposer.
func (m *Model) decompose(c call, fault string) *llms.ContentChoice {
	if fault == FaultEmptyReply {
		return &llms.ContentChoice{Content: "", StopReason: "stop"}
	}
	subs := append(subQuestions(c.task.Gold), strings.TrimSpace(c.task.Question))
	var b strings.Builder
	for i, s := range subs {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	return &llms.ContentChoice{Content: strings.TrimSpace(b.String()), StopReason: "stop"}
}

// subSolve plays Least-to-Most's sub-question solver. An intermediate
// sub-question is answered only when the results it builds on appear in
// the prompt (Least-to-Most must show earlier answers); the task itself is
// answered from the gold reasoning, like the chain-of-thought role.
func (m *Model) subSolve(c call, fault string) *llms.ContentChoice {
	g := c.task.Gold
	switch fault {
	case FaultEmptyReply:
		return &llms.ContentChoice{Content: "", StopReason: "stop"}
	case FaultEarlyWrongAnswer:
		return &llms.ContentChoice{Content: "Answer: " + wrongAnswer(g.Answer), StopReason: "stop"}
	}
	current := labelled(c.prompt, "Sub-question")
	subs := subQuestions(g)
	idx := -1
	for i, s := range subs {
		if strings.EqualFold(strings.TrimSpace(s), current) {
			idx = i
		}
	}
	if idx < 0 {
		return m.respond(call{caller: llm.CallMeta{Kind: "cot"}, task: c.task, prompt: c.prompt, msgs: c.msgs, opts: c.opts, dice: c.dice}, "")
	}
	outs := outputs(g)
	if len(g.Steps) == 0 {
		return &llms.ContentChoice{Content: fmt.Sprintf("%s\nAnswer: %s", g.Reasoning[idx], g.Reasoning[idx]), StopReason: "stop"}
	}
	s := resultSteps(g)[idx]
	for _, d := range s.DependsOn {
		if o := outs[d]; o != "" && !strings.Contains(c.prompt, o) {
			return &llms.ContentChoice{Content: "I do not have the result this depends on yet.\nAnswer: unknown", StopReason: "stop"}
		}
	}
	if !normalize(evidence(c)).contains(s.Output) {
		// No tool here: a lookup comes from memory, a calculation from
		// the head.
		switch {
		case s.Tool != "calculator" && !m.knows(c.task):
			w := m.wrongValue(c, s.Output, "step")
			return &llms.ContentChoice{Content: fmt.Sprintf("From memory, I believe it is %s.\nAnswer: %s", w, w), StopReason: "stop"}
		case s.Tool == "calculator" && c.dice.u("slip "+s.ID) < m.slipRate(c):
			w := m.wrongValue(c, s.Output, "step")
			return &llms.ContentChoice{Content: fmt.Sprintf("%s = %s\nAnswer: %s", substitute(s.Input, outs), w, w), StopReason: "stop"}
		}
	}
	return &llms.ContentChoice{Content: fmt.Sprintf("%s\nAnswer: %s", stepLine(s, outs), s.Output), StopReason: "stop"}
}

// judgeCorrect reports whether a proposed answer solves the task.
func judgeCorrect(t *suite.Task, proposed string) bool {
	if isGame24(t.Gold) {
		nums, err := verify.PuzzleNumbers(t.Question)
		return err == nil && verify.Verify24(nums, proposed) == nil
	}
	ref := *t
	ref.Answer = t.Gold.Answer
	return verify.ExactMatch{}.Score(proposed, ref.Reference()).Correct || verify.Numeric{}.Score(proposed, ref.Reference()).Correct
}

// judge plays Reflexion's LLM judge: PASS when the proposed answer matches
// the gold solution, FAIL otherwise, without revealing the right answer.
// An early-wrong-answer fault flips the verdict.
func (m *Model) judge(c call, fault string) *llms.ContentChoice {
	if fault == FaultEmptyReply {
		return &llms.ContentChoice{Content: "", StopReason: "stop"}
	}
	ok := judgeCorrect(c.task, labelled(c.prompt, "Proposed answer"))
	if fault == FaultEarlyWrongAnswer {
		ok = !ok
	}
	if ok {
		return &llms.ContentChoice{Content: "PASS\nThe answer is supported by the solution.", StopReason: "stop"}
	}
	return &llms.ContentChoice{Content: "FAIL\nThe answer does not follow from the facts the question needs.", StopReason: "stop"}
}

// reflect plays Reflexion's self-reflection: a lesson naming the wrong
// answer and the gold plan of tool steps (or reasoning) to follow next
// time, without stating the answer itself.
func (m *Model) reflect(c call, fault string) *llms.ContentChoice {
	if fault == FaultEmptyReply {
		return &llms.ContentChoice{Content: "", StopReason: "stop"}
	}
	g := c.task.Gold
	var plan []string
	for _, s := range g.Steps {
		plan = append(plan, fmt.Sprintf("%s %q", s.Tool, s.Input))
	}
	given := labelled(c.prompt, "Your answer")
	if given == "" {
		given = "nothing"
	}
	lesson := fmt.Sprintf("I answered %s without establishing the facts the question needs.", given)
	switch {
	case len(plan) > 0:
		lesson += " Next time I will " + strings.Join(plan, ", then ") + ", and answer only from what those return."
	case len(g.Reasoning) > 0:
		lesson += fmt.Sprintf(" Next time I will work through %d explicit steps and check each result before answering.", len(g.Reasoning))
	}
	return &llms.ContentChoice{Content: "Lesson: " + lesson, StopReason: "stop"}
}

// value plays LATS's state evaluator on a ReAct trajectory: a final answer
// scores 10 when it solves the task and 1 otherwise; an open trajectory
// scores by how far it follows the gold tool results in order (5 to 9), or
// 2 once an observation strays from them. An early-wrong-answer fault
// turns a good score bad and a bad one good.
func (m *Model) value(c call, fault string) *llms.ContentChoice {
	if fault == FaultEmptyReply {
		return &llms.ContentChoice{Content: "", StopReason: "stop"}
	}
	g := c.task.Gold
	good := true
	score := 2
	if final := labelled(c.prompt, "Final Answer"); final != "" {
		good = judgeCorrect(c.task, final)
		if good {
			score = 10
		} else {
			score = 1
		}
	} else {
		steps := resultSteps(g)
		for i := 0; i < c.progress && i < len(steps); i++ {
			good = good && strings.Contains(c.prompt, steps[i].Output)
		}
		if good {
			score = 5
			if len(steps) > 0 {
				score += 4 * min(c.progress, len(steps)) / len(steps)
			}
		}
	}
	if fault == FaultEarlyWrongAnswer {
		score = 11 - score
	}
	return &llms.ContentChoice{Content: fmt.Sprintf("Score: %d/10", score), StopReason: "stop"}
}
