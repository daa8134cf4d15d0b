package sim

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/plan"
	"github.com/tmc/langchaingo/llms"
)

// progress counts the tool results the current (sub-)run has seen: tool
// responses in native mode, else observation labels after the last place
// the task text appears (few-shot examples come before it); plus the
// results a summary of older steps (compaction "summarize") lists, which
// the prompt no longer shows.
func progress(c call) int {
	n := 0
	for _, msg := range c.msgs {
		for _, p := range msg.Parts {
			if _, ok := p.(llms.ToolCallResponse); ok {
				n++
			}
		}
	}
	done := len(summaryLines(c.prompt))
	if n > 0 {
		return n + done
	}
	tail := c.prompt
	if i := questionEnd(tail, c.task.Question); i >= 0 {
		tail = tail[i:]
	}
	for _, label := range []string{"Observation", "观察"} {
		n += countLabels(tail, label)
	}
	return n + done
}

// questionEnd is the index just after the last place the task text
// appears in prompt, or -1. The text may differ in case and in its final
// punctuation, as a question a user typed differs from the suite's ("in
// which city was Galileo Galilei born" for "In which city was Galileo
// Galilei born?").
func questionEnd(prompt, question string) int {
	q := strings.TrimSpace(question)
	if q == "" {
		return -1
	}
	if i := strings.LastIndex(prompt, q); i >= 0 {
		return i + len(q)
	}
	q = strings.ToLower(strings.TrimRight(q, "?.! "))
	lower := strings.ToLower(prompt)
	if q == "" || len(lower) != len(prompt) {
		return -1
	}
	if i := strings.LastIndex(lower, q); i >= 0 {
		return i + len(q)
	}
	return -1
}

// summaryLine matches a line of the sim's own summaries: one per tool
// result the summarized steps held.
var summaryLine = regexp.MustCompile(`(?m)^- result \d+ \(([^)]*)\): .*$`)

// summaryLines returns the lines of the sim's summaries in text.
func summaryLines(text string) []string { return summaryLine.FindAllString(text, -1) }

// summarize plays the summary call of compaction "summarize": the lines
// of the summary before (in the prompt), then one line per tool result of
// the steps to summarize, each with its tool and the head of its result,
// so that the run's progress survives the compaction.
func (m *Model) summarize(c call) *llms.ContentChoice {
	lines := summaryLines(c.prompt)
	steps := c.prompt
	if i := strings.LastIndex(steps, "Steps to summarize:"); i >= 0 {
		steps = steps[i:]
	}
	for _, line := range strings.Split(steps, "\n") {
		line = strings.TrimSpace(line)
		for _, label := range []string{"Observation:", "观察："} {
			rest, ok := strings.CutPrefix(line, label)
			if !ok {
				continue
			}
			rest = strings.TrimSpace(rest)
			tool, obs, ok := strings.Cut(strings.TrimPrefix(rest, "["), "] ")
			if !ok || !strings.HasPrefix(rest, "[") {
				continue // the engine's own feedback, not a tool result
			}
			line := fmt.Sprintf("- result %d (%s): %s", len(lines)+1, tool, textutil.Clip(obs, 120))
			// A summary keeps the facts the task needs, as a model
			// summarising with the question in mind would.
			kept := normalize(line)
			for _, st := range c.task.Gold.Steps {
				if st.Output != "" && normalize(obs).contains(st.Output) && !kept.contains(st.Output) {
					line += " (key fact: " + st.Output + ")"
					kept = normalize(line)
				}
			}
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return &llms.ContentChoice{Content: "No tool has returned anything useful yet.", StopReason: "stop"}
	}
	return &llms.ContentChoice{Content: strings.Join(lines, "\n"), StopReason: "stop"}
}

// countLabels counts tool results: lines starting with label, an optional
// number and a colon, followed by the executor's "[tool]" source tag.
// Untagged observations are the engine's own feedback (format errors,
// unknown tools, repeat warnings), not progress through the program.
func countLabels(text, label string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, label) {
			continue
		}
		rest := strings.TrimLeft(line[len(label):], " 0123456789")
		for _, colon := range []string{":", "："} {
			if after, ok := strings.CutPrefix(rest, colon); ok && strings.HasPrefix(strings.TrimSpace(after), "[") {
				n++
			}
		}
	}
	return n
}

// hash64 hashes parts to 64 well-mixed bits. FNV-1a alone leaves inputs
// that differ only in their last bytes (a retry's attempt number) with
// nearly equal high bits, which made the fault draws of a retried request
// strongly correlated; the SplitMix64 finaliser spreads every input bit
// over the whole word.
func hash64(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// draw picks the fault for a call (or ""), deterministically from the
// seed, the task, the caller, the prompt and how often this exact request
// was seen before (so a retried request draws again). It also returns the
// draw's 64 random bits, from which a fault's details are chosen (which
// element a sort error drops); they are 0 when the profile has no faults.
func (m *Model) draw(c call) (string, uint64) {
	if len(m.profile.Faults) == 0 {
		return "", 0
	}
	key := hash64(c.task.ID, c.caller.Node, c.caller.Role, c.stepID, c.prompt)
	m.mu.Lock()
	attempt := m.attempts[key]
	m.attempts[key] = attempt + 1
	m.mu.Unlock()
	bits := hash64(strconv.FormatUint(m.seed, 10), strconv.FormatUint(key, 16), strconv.Itoa(attempt))
	u := float64(bits>>11) / float64(1<<53)
	acc := 0.0
	for _, f := range FaultKinds() {
		acc += m.profile.Faults[f]
		if u < acc {
			if applicable(f, c) {
				return f, bits
			}
			return "", bits
		}
	}
	return "", bits
}

// applicable says whether a fault makes sense for the role: action faults
// only where the model is choosing actions; an early wrong answer where the
// model commits to an answer or a judgement (a premature wrong leaf for the
// ToT proposer, a flipped value or verdict for evaluators and judges); a
// sort error only where the model sorts or merges a list that is not empty.
func applicable(f string, c call) bool {
	switch f {
	case FaultSortError:
		switch roleOf(c) {
		case roleSort, roleMerge:
			return len(sortedReply(c)) > 0
		}
		return false
	case FaultMalformedAction, FaultFullwidthColon, FaultInventedObservation, FaultUnknownTool, FaultRepeatedAction:
		return roleOf(c) == roleReAct && len(c.opts.Tools) == 0
	case FaultEarlyWrongAnswer:
		switch roleOf(c) {
		case roleReAct, roleAnswer, rolePropose, roleEvaluate, roleSubSolve, roleJudge, roleValue:
			return true
		}
		return false
	}
	return true
}

func (m *Model) latency(c call, out *llms.ContentChoice) time.Duration {
	l := m.profile.Latency
	d := l.Base + time.Duration(len(c.prompt)/4)*l.PerPromptToken + time.Duration(len(out.Content)/4+1)*l.PerCompletionToken
	if l.Jitter > 0 {
		u := float64(hash64(c.task.ID, c.caller.Node, c.prompt, "latency")>>11) / float64(1<<53)
		d = time.Duration(float64(d) * (1 + l.Jitter*(2*u-1)))
	}
	return time.Duration(math.Max(0, float64(d)))
}

type role int

const (
	roleAnswer role = iota
	roleReAct
	rolePlanner
	roleDecide
	roleFinal
	roleWorker
	rolePropose
	roleEvaluate
	roleDecompose
	roleSubSolve
	roleJudge
	roleReflect
	roleValue
	roleSummarize
	roleSort
	roleMerge
)

func roleOf(c call) role {
	switch c.caller.Role {
	case "propose":
		return rolePropose
	case "evaluate":
		return roleEvaluate
	case "decompose":
		return roleDecompose
	case "judge":
		return roleJudge
	case "reflect":
		return roleReflect
	case "expand":
		return roleReAct
	case "value":
		return roleValue
	case "solve":
		if c.caller.Kind == "least_to_most" {
			return roleSubSolve
		}
		return roleFinal
	case "finalize":
		return roleFinal
	case "summarize":
		return roleSummarize
	case "worker":
		return roleWorker
	case "sort":
		return roleSort
	case "merge":
		return roleMerge
	}
	switch c.caller.Kind {
	case "react", "execute":
		return roleReAct
	case "planner":
		return rolePlanner
	case "replanner", "joiner":
		return roleDecide
	case "finalizer", "solver":
		return roleFinal
	}
	return roleAnswer
}

// outputs maps gold step ids to their outputs.
func outputs(g *suite.Gold) map[string]string {
	out := make(map[string]string, len(g.Steps))
	for _, s := range g.Steps {
		out[s.ID] = s.Output
	}
	return out
}

// substitute replaces #E<id> references with the gold outputs; references
// to unknown ids are kept.
func substitute(input string, outs map[string]string) string {
	return plan.ReplaceReferences(input, func(id string) string {
		if out, ok := outs[id]; ok {
			return out
		}
		return "#E" + id
	})
}

func wrongAnswer(gold string) string {
	if r, err := strconv.ParseFloat(strings.TrimSpace(gold), 64); err == nil {
		return strconv.FormatFloat(r+1, 'f', -1, 64)
	}
	return "unknown"
}

// respond plays the caller's role.
func (m *Model) respond(c call, fault string) *llms.ContentChoice {
	switch roleOf(c) {
	case roleReAct:
		return m.react(c, fault)
	case rolePlanner:
		return m.plan(c)
	case roleDecide:
		return m.decide(c, fault)
	case roleFinal:
		return m.final(c, fault)
	case roleWorker:
		return m.worker(c, fault)
	case rolePropose:
		return m.propose(c, fault)
	case roleEvaluate:
		return m.evaluate(c, fault)
	case roleDecompose:
		return m.decompose(c, fault)
	case roleSubSolve:
		return m.subSolve(c, fault)
	case roleJudge:
		return m.judge(c, fault)
	case roleReflect:
		return m.reflect(c, fault)
	case roleValue:
		return m.value(c, fault)
	case roleSummarize:
		return m.summarize(c)
	case roleSort, roleMerge:
		return m.sortList(c, fault)
	}
	return m.answer(c, fault)
}

// answer plays a node that answers directly (chain of thought and the
// like), as far as the model's capability allows (recall): the gold
// reasoning, the tool steps with their results, and the answer line; or,
// when it misses, a short wrong line of reasoning and a wrong answer. A
// prompt that asks for the answer only gets the answer alone.
func (m *Model) answer(c call, fault string) *llms.ContentChoice {
	g := c.task.Gold
	if fault == FaultEarlyWrongAnswer {
		return &llms.ContentChoice{Content: "Answer: " + wrongAnswer(g.Answer), StopReason: "stop"}
	}
	if fault == FaultEmptyReply {
		return &llms.ContentChoice{Content: "", StopReason: "stop"}
	}
	o := m.recall(c)
	if answerOnlyRe.MatchString(c.prompt) {
		return &llms.ContentChoice{Content: o.answer, StopReason: "stop"}
	}
	if o.miss != "" {
		wrongOut := ""
		if o.miss == missSlip {
			wrongOut = m.wrongValue(c, o.step.Output, "step")
		}
		return &llms.ContentChoice{Content: o.note(outputs(g), wrongOut) + "\nAnswer: " + o.answer, StopReason: "stop"}
	}
	var b strings.Builder
	for _, r := range g.Reasoning {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	outs := outputs(g)
	for _, s := range g.Steps {
		if s.Tool == "calculator" || s.Output != "" {
			b.WriteString(stepLine(s, outs) + "\n")
		}
	}
	b.WriteString("Answer: " + g.Answer)
	return &llms.ContentChoice{Content: b.String(), StopReason: "stop"}
}

func (m *Model) react(c call, fault string) *llms.ContentChoice {
	g := c.task.Gold
	outs := outputs(g)
	steps := g.Steps
	if c.stepID != "" {
		steps = nil
		for _, s := range g.Steps {
			if s.ID == c.stepID {
				steps = []suite.GoldStep{s}
			}
		}
	}
	answerText := g.Answer
	if c.stepID != "" && len(steps) == 1 {
		answerText = steps[0].Output
	}
	if c.caller.Role == "finalize" || c.progress >= len(steps) {
		if fault == FaultEmptyReply {
			return &llms.ContentChoice{Content: ""}
		}
		if c.stepID == "" || len(steps) != 1 {
			// The task's answer: only as far as the observations (or
			// the model's memory) support it.
			answerText = m.recall(c).answer
		}
		return &llms.ContentChoice{Content: "Thought: I have what I need.\nFinal Answer: " + answerText, StopReason: "stop"}
	}
	s := steps[c.progress]
	input := substitute(s.Input, outs)
	thought := s.Thought
	if thought == "" {
		thought = fmt.Sprintf("I should use %s.", s.Tool)
	}
	if len(c.opts.Tools) > 0 {
		args, _ := json.Marshal(map[string]string{argName(c.opts.Tools, s.Tool): input})
		return &llms.ContentChoice{Content: thought, StopReason: "tool_calls", ToolCalls: []llms.ToolCall{{
			ID: fmt.Sprintf("call_%s_%d", s.ID, c.progress), Type: "function",
			FunctionCall: &llms.FunctionCall{Name: s.Tool, Arguments: string(args)},
		}}}
	}
	paper := strings.Contains(c.prompt, "Finish[")
	action := func(tool, in string) string {
		if paper {
			return fmt.Sprintf("Thought: %s\nAction: %s[%s]", thought, strings.ToUpper(tool[:1])+tool[1:], in)
		}
		return fmt.Sprintf("Thought: %s\nAction: %s\nAction Input: %s", thought, tool, in)
	}
	text := action(s.Tool, input)
	switch fault {
	case FaultMalformedAction:
		text = fmt.Sprintf("Thought: %s I will call %s with %s now.", thought, s.Tool, input)
	case FaultFullwidthColon:
		text = strings.ReplaceAll(text, ": ", "： ")
	case FaultInventedObservation:
		text += "\nObservation: (invented) the answer is " + wrongAnswer(g.Answer) + "\nThought: done\nFinal Answer: " + wrongAnswer(g.Answer)
	case FaultUnknownTool:
		text = action("google_search", input)
	case FaultRepeatedAction:
		if c.progress > 0 {
			p := steps[c.progress-1]
			text = action(p.Tool, substitute(p.Input, outs))
		}
	case FaultEarlyWrongAnswer:
		text = "Thought: I am confident.\nFinal Answer: " + wrongAnswer(answerText)
	case FaultEmptyReply:
		text = ""
	}
	return &llms.ContentChoice{Content: text, StopReason: "stop"}
}

// argName picks the tool's first required property as the argument name.
func argName(ts []llms.Tool, name string) string {
	for _, t := range ts {
		if t.Function == nil || t.Function.Name != name {
			continue
		}
		if params, ok := t.Function.Parameters.(map[string]any); ok {
			switch req := params["required"].(type) {
			case []string:
				if len(req) > 0 {
					return req[0]
				}
			case []any:
				if len(req) > 0 {
					return fmt.Sprint(req[0])
				}
			}
		}
	}
	return "input"
}
