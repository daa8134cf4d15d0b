package parse

import (
	"fmt"
	"strings"
)

// Format hints appended to error messages, one per Format.
const (
	hintReAct = `Reply with "Thought: <your reasoning>" followed either by "Action: <tool name>" and "Action Input: <tool input>" on separate lines to call a tool, or by "Final Answer: <answer>" when you are done.`
	hintPaper = `Reply with "Thought: <your reasoning>" followed either by "Action: <Tool>[<input>]" to call a tool, or by "Action: Finish[<answer>]" when you are done.`
	hintAuto  = hintReAct + ` "Action: <Tool>[<input>]" and "Finish[<answer>]" are accepted too.`

	hintObservation = ` Do not write "Observation:" yourself: stop after the Action and the tool's result will be sent to you.`
)

// candidate is one decision found in the reply.
type candidate struct {
	kind    Kind // KindAction, KindFinal, or KindInvalid for a malformed one
	tool    string
	input   string
	answer  string
	err     string // for KindInvalid: the problem, without the format hint
	thought string
	notes   []string
}

// parser holds the state of one Parse call.
type parser struct {
	cfg     config
	cands   []candidate
	thought []string // thought text seen before the first candidate
	notes   []string
	// fallback is the problem to report when no candidate is found.
	fallback string
}

func (p *parser) hint() string {
	switch p.cfg.format {
	case FormatReAct:
		return hintReAct
	case FormatPaper:
		return hintPaper
	}
	return hintAuto
}

func (p *parser) noDecision() string {
	if p.cfg.format == FormatPaper {
		return `no "Action: <Tool>[<input>]" or "Finish[<answer>]" found.`
	}
	return `no "Action:" or "Final Answer:" found.`
}

func (p *parser) thoughtSoFar() string {
	return cleanText(strings.Join(p.thought, "\n"))
}

func (p *parser) add(c candidate) {
	if len(p.cands) == 0 {
		c.thought = p.thoughtSoFar()
	}
	p.cands = append(p.cands, c)
}

// run finds the candidates in text (already cut of invented observations)
// and picks the result.
func (p *parser) run(text string) Result {
	secs := splitSections(text)
	used := make([]bool, len(secs)) // Action Input sections paired with an Action
	read := len(secs)               // sections read; those after an invented Question are not
sections:
	for i, s := range secs {
		switch s.kind {
		case labelNone, labelThought:
			p.thoughtSection(s.value)
		case labelAction:
			in := -1
			switch {
			case i+1 < len(secs) && secs[i+1].kind == labelActionInput:
				in = i + 1
			case i > 0 && secs[i-1].kind == labelActionInput && !used[i-1]:
				in = i - 1
			}
			var input *string
			if in >= 0 {
				used[in] = true
				input = &secs[in].value
			}
			p.action(s.value, input, in >= 0 && in < i)
		case labelFinalAnswer:
			p.finalAnswer(s.value)
		case labelQuestion:
			if len(p.cands) > 0 {
				p.notes = append(p.notes, `ignored an invented new "Question:" and everything after it`)
				read = i
				break sections
			}
		}
	}
	for i, s := range secs[:read] {
		if s.kind == labelActionInput && !used[i] {
			if len(p.cands) == 0 && p.fallback == "" {
				p.fallback = `"Action Input:" found without an "Action:" naming the tool before it.`
			} else if len(p.cands) > 0 {
				p.notes = append(p.notes, `ignored an "Action Input:" with no "Action:"`)
			}
		}
	}
	return p.decide()
}

// thoughtSection handles text before the first label or after "Thought:":
// reasoning, possibly with a bare Tool[input] line standing for an action.
func (p *parser) thoughtSection(value string) {
	start := 0 // start of the text not yet added to the thought
	flush := func(end int) {
		if len(p.cands) == 0 {
			if t := strings.TrimSpace(value[start:end]); t != "" {
				p.thought = append(p.thought, t)
			}
		}
	}
	if p.cfg.paper() {
		for i := 0; i < len(value); {
			end := strings.IndexByte(value[i:], '\n')
			if end < 0 {
				end = len(value)
			} else {
				end += i
			}
			if c, n, ok := bareCall(value[i:end]); ok {
				flush(i)
				p.call(c, n, "", false)
				start = end
			}
			i = end + 1
		}
	}
	flush(len(value))
}

// action handles an "Action:" section; input is the paired "Action Input:"
// value, if any, and before reports that it preceded the Action.
func (p *parser) action(value string, input *string, before bool) {
	var notes []string
	if before {
		notes = append(notes, `"Action Input:" came before "Action:"; paired them`)
	}
	head := strings.TrimLeft(strings.TrimLeft(value, " \t\n"), "*`")
	if p.cfg.paper() {
		c, n, rest, st := readCalls(head, true)
		switch st {
		case callOK:
			if strings.TrimSpace(rest) != "" {
				notes = append(notes, "ignored text after the action")
			}
			in := ""
			if input != nil {
				in = *input
			}
			p.call(c, n, in, input != nil, notes...)
			return
		case callUnclosed:
			p.add(candidate{kind: KindInvalid, err: fmt.Sprintf(`"%s[" has no closing "]" (the reply may have been cut off). Write the whole call, e.g. "Action: %s[<input>]".`, c.name, c.name)})
			return
		}
	}
	tool, extra := firstLine(value)
	tool = cleanTool(tool)
	if p.cfg.format == FormatReAct {
		if _, st := readCall(tool, true); st != callNone {
			p.add(candidate{kind: KindInvalid, err: `write the tool name alone after "Action:" and its input on an "Action Input:" line, not "Tool[input]".`})
			return
		}
	}
	if p.cfg.format == FormatPaper && !isNoTool(tool) {
		p.add(candidate{kind: KindInvalid, err: `write the action as "Tool[input]", e.g. "Action: Search[<query>]".`})
		return
	}
	extra = strings.TrimSpace(extra)
	var raw string // the input as written
	switch {
	case input != nil:
		raw = *input
		if extra != "" {
			notes = append(notes, `ignored text between "Action:" and "Action Input:"`)
		}
	case extra != "" && (strings.HasPrefix(extra, "```") || strings.HasPrefix(extra, "{")):
		raw = extra
		notes = append(notes, `no "Action Input:"; took the input from the lines below "Action:"`)
	case extra != "":
		notes = append(notes, `ignored text after the tool name`)
	}
	switch {
	case isNoTool(tool) && strings.TrimSpace(raw) != "":
		p.add(candidate{kind: KindInvalid, err: `"Action:" does not name a tool (the reply may have been cut off).`})
	case isNoTool(tool):
		if p.fallback == "" {
			p.fallback = `"Action:" does not name a tool (the reply may have been cut off).`
		}
		p.notes = append(p.notes, fmt.Sprintf(`ignored an action with no tool (%q)`, tool))
	case isFinishTool(tool):
		p.final(raw, append(notes, fmt.Sprintf(`read action %q as the final answer`, tool)))
	default:
		switch {
		case input == nil && raw == "":
			notes = append(notes, `no "Action Input:"; used an empty input`)
		case strings.TrimSpace(raw) == "":
			notes = append(notes, `empty "Action Input:"; used an empty input`)
		}
		p.add(candidate{kind: KindAction, tool: tool, input: cleanInput(raw, &notes), notes: notes})
	}
}

// call records a Tool[input] call; n is how many calls shared its line.
// labelled reports an "Action Input:" paired with it.
func (p *parser) call(c call, n int, labelled string, hasLabelled bool, notes ...string) {
	if n > 1 {
		notes = append(notes, fmt.Sprintf("%d actions on one line; took the first", n))
	}
	input := c.input
	verbatim := p.cfg.verbatim
	if hasLabelled {
		if strings.TrimSpace(input) == "" {
			input, verbatim = labelled, false
			notes = append(notes, `empty brackets; took the input from "Action Input:"`)
		} else {
			notes = append(notes, `ignored "Action Input:"; the input in brackets wins`)
		}
	}
	if isFinishTool(c.name) {
		p.final(input, notes)
		return
	}
	if verbatim {
		input = strings.TrimSpace(input)
	} else {
		input = cleanInput(input, &notes)
	}
	p.add(candidate{kind: KindAction, tool: c.name, input: input, notes: notes})
}

// finalAnswer handles a "Final Answer:" section.
func (p *parser) finalAnswer(value string) {
	if p.cfg.format == FormatPaper {
		p.add(candidate{kind: KindInvalid, err: `write the final answer as "Action: Finish[<answer>]", not "Final Answer:".`})
		return
	}
	p.final(value, nil)
}

// final records a final answer.
func (p *parser) final(answer string, notes []string) {
	answer = cleanText(answer)
	if answer == "" {
		p.add(candidate{kind: KindInvalid, err: `the final answer is empty (the reply may have been cut off). Write the answer after "Final Answer:".`})
		return
	}
	p.add(candidate{kind: KindFinal, answer: answer, notes: notes})
}

// decide applies the precedence rules of the package documentation to the
// candidates found.
func (p *parser) decide() Result {
	if len(p.cands) == 0 {
		msg := p.fallback
		if msg == "" {
			msg = p.noDecision()
		}
		return Result{Kind: KindInvalid, Thought: p.thoughtSoFar(), Error: msg, Notes: p.notes}
	}
	first := p.cands[0]
	notes := append(first.notes, p.notes...)
	var actions, finals, broken int
	for _, c := range p.cands[1:] {
		switch c.kind {
		case KindAction:
			actions++
		case KindFinal:
			finals++
		default:
			broken++
		}
	}
	switch first.kind {
	case KindAction:
		if actions > 0 {
			notes = append(notes, fmt.Sprintf("ignored %d later action(s); only the first is run", actions))
		}
		if finals > 0 {
			notes = append(notes, "ignored a final answer written after the action: it cannot depend on the action's result")
		}
		return Result{Kind: KindAction, Thought: first.thought, Tool: first.tool, Input: first.input, Notes: notes}
	case KindFinal:
		if actions > 0 {
			return Result{Kind: KindInvalid, Thought: first.thought, Notes: notes,
				Error: `the reply has a final answer followed by an action. Send either an action (to call a tool and see its result) or a final answer (when you are done), not both.`}
		}
		if finals > 0 {
			notes = append(notes, fmt.Sprintf("ignored %d later final answer(s)", finals))
		}
		return Result{Kind: KindFinal, Thought: first.thought, Answer: first.answer, Notes: notes}
	}
	return Result{Kind: KindInvalid, Thought: first.thought, Error: first.err, Notes: notes}
}

// finish completes a result: it removes any Observation label left inside a
// field, prefixes errors and appends the format hint. empty reports a blank
// reply; onlyObservation a reply that was blank before its invented
// observation.
func (p *parser) finish(r Result, truncated, empty, onlyObservation bool) Result {
	r.Truncated = truncated
	var cut bool
	r.Thought, cut = cutField(r.Thought, cut)
	r.Tool, cut = cutField(r.Tool, cut)
	r.Input, cut = cutField(r.Input, cut)
	r.Answer, cut = cutField(r.Answer, cut)
	if cut {
		r.Truncated = true
	}
	switch {
	case r.Kind == KindAction && r.Tool == "":
		r = Result{Kind: KindInvalid, Thought: r.Thought, Truncated: r.Truncated, Notes: r.Notes,
			Error: `"Action:" does not name a tool (the reply may have been cut off).`}
	case r.Kind == KindFinal && r.Answer == "":
		r = Result{Kind: KindInvalid, Thought: r.Thought, Truncated: r.Truncated, Notes: r.Notes,
			Error: `the final answer is empty (the reply may have been cut off). Write the answer after "Final Answer:".`}
	}
	if r.Truncated {
		r.Notes = append(r.Notes, "cut an invented Observation and everything after it")
	}
	if r.Kind == KindInvalid {
		switch {
		case empty:
			r.Error = "the reply is empty."
		case truncated && onlyObservation:
			r.Error = `the reply starts with "Observation:".`
		}
		r.Error = "Invalid format: " + r.Error + " " + p.hint()
		if r.Truncated {
			r.Error += hintObservation
		}
	}
	return r
}

// cutField removes an Observation label and what follows from one field.
func cutField(s string, cut bool) (string, bool) {
	kept, c := CutObservation(s)
	if !c {
		return s, cut
	}
	return strings.TrimSpace(kept), true
}
