package executor

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/planner-engine/planner/agent"
)

// toolsTurn handles one native tool-calling reply: the text is the thought,
// each tool call is run (concurrently, answered in call order), and a reply
// without tool calls is the final answer.
func (r *run) toolsTurn(ctx context.Context, n int, rep reply) (bool, *halt, error) {
	if rep.empty {
		return false, r.invalid(n, "", rep.text, r.l.lb.emptyReply, rep.text), nil
	}
	r.parseFails = 0
	if len(rep.calls) == 0 {
		// The prompt asks for "Final Answer: ..." on the last line; the
		// text before it is the thought.
		answer, thought := finalReply(rep.text)
		r.out.Answer = answer
		r.thought(n, thought, nil)
		r.out.Entries = append(r.out.Entries, agent.Entry{Thought: thought, Final: answer, Raw: rep.text})
		return true, nil, nil
	}
	thought := strings.TrimSpace(rep.text)
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
		r.resolve(c)
		if h := r.prepare(n, c); h != nil {
			r.out.Entries = append(r.out.Entries, agent.Entry{Thought: thought, Tool: c.toolName(), Input: c.input, ToolCallID: c.id, Raw: rep.text, Error: h.reason})
			return false, h, nil
		}
		s.calls = append(s.calls, c)
	}
	for _, c := range s.calls {
		if c.run {
			r.action(n, c)
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
