package executor

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/executor/parse"
	"github.com/planner-engine/planner/trace"
)

// toolsTurn handles one native tool-calling reply: the text is the thought,
// each tool call is run (concurrently, answered in call order), and a reply
// without tool calls is the final answer.
func (r *run) toolsTurn(ctx context.Context, n int, rep reply) (bool, *halt, error) {
	if rep.empty {
		return false, r.invalid(n, "", rep.text, r.l.lb.emptyReply, rep.text), nil
	}
	thought := strings.TrimSpace(rep.text)
	if len(rep.calls) == 0 {
		// The prompt asks for "Final Answer: ..." on the last line; the
		// text before it is the thought. Without the label the whole reply
		// is the answer.
		r.parseFails = 0
		answer, thought := thought, ""
		if res := parse.Parse(rep.text); res.Kind == parse.KindFinal {
			answer, thought = res.Answer, res.Thought
		}
		r.out.Answer = answer
		r.thought(n, thought, nil)
		r.out.Entries = append(r.out.Entries, agent.Entry{Thought: thought, Final: answer, Raw: rep.text})
		return true, nil, nil
	}
	r.parseFails = 0
	r.thought(n, thought, nil)
	s := &step{n: n, kind: stepAction, thought: thought}
	for i, tc := range rep.calls {
		c := &call{id: tc.ID, args: "{}"}
		if c.id == "" {
			c.id = fmt.Sprintf("call_%d_%d", n, i+1)
		}
		if tc.FunctionCall != nil {
			c.name = tc.FunctionCall.Name
			if strings.TrimSpace(tc.FunctionCall.Arguments) != "" {
				c.args = tc.FunctionCall.Arguments
			}
		}
		c.input = c.args
		if t, ok := r.l.tools.Resolve(c.name); ok {
			c.tool = t
			c.input = unwrapInput(t, c.args)
		}
		if h := r.prepare(n, c); h != nil {
			r.out.Entries = append(r.out.Entries, agent.Entry{Thought: thought, Tool: c.toolName(), Input: c.input, ToolCallID: c.id, Raw: rep.text, Error: h.reason})
			return false, h, nil
		}
		s.calls = append(s.calls, c)
	}
	for _, c := range s.calls {
		if c.run {
			r.emit(trace.KindAction, c.toolName()+": "+c.input, map[string]any{"step": n, "tool": c.toolName(), "input": c.input, "tool_call_id": c.id})
		}
	}
	if err := r.execAll(ctx, s.calls); err != nil {
		return false, nil, err
	}
	for i, c := range s.calls {
		r.observed(n, c)
		th, raw := "", ""
		if i == 0 {
			th, raw = thought, rep.text
		}
		r.out.Entries = append(r.out.Entries, entryOf(th, c, raw))
	}
	r.steps = append(r.steps, s)
	return false, nil, nil
}

// execAll runs the calls that passed the guards concurrently; each writes
// only its own call, so the results keep the model's call order.
func (r *run) execAll(ctx context.Context, calls []*call) error {
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		if !c.run {
			continue
		}
		wg.Go(func() { errs[i] = r.exec(ctx, c) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
