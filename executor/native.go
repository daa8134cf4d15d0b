package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/internal/par"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
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
		r.out.Entries = append(r.out.Entries, state.Entry{Thought: thought, Final: answer, Raw: rep.text})
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
		r.resolve(n, c)
		s.calls = append(s.calls, c)
	}
	results, err := r.execAll(ctx, s.calls)
	if err != nil {
		return false, nil, err
	}
	var stop *halt
	for i, c := range s.calls {
		th, raw := "", ""
		if i == 0 {
			th, raw = thought, rep.text
		}
		e := entryOf(th, c, raw)
		if h := r.checkRepeat(n, c); h != nil && stop == nil {
			stop = h
			e.Error = h.reason
		}
		c.report(ctx, results[i])
		r.out.Entries = append(r.out.Entries, e)
	}
	if stop != nil {
		return false, stop, nil
	}
	r.steps = append(r.steps, s)
	return false, nil, nil
}

// execAll runs the calls concurrently (par.Map, unbounded: the model chose
// how many), announcing every action first in the model's call order; the
// caller reports each result, in that order, once the repeat guard has
// seen it. Calls of stateful tools (tools.Meta.Stateful: the docstore's
// page, the vars tool) run one after another in the model's order, beside
// the others: their results depend on the calls before them, and a resumed
// thread runs them again in that order to rebuild the state, so the order
// must not depend on scheduling.
func (r *run) execAll(ctx context.Context, calls []*call) ([]nodekind.ToolResult, error) {
	for _, c := range calls {
		c.tc.Announce(ctx)
	}
	var groups [][]int
	stateful := -1
	for i, c := range calls {
		if c.tc.Tool != nil && tools.MetaOf(c.tc.Tool).Stateful {
			if stateful < 0 {
				stateful = len(groups)
				groups = append(groups, nil)
			}
			groups[stateful] = append(groups[stateful], i)
			continue
		}
		groups = append(groups, []int{i})
	}
	results := make([]nodekind.ToolResult, len(calls))
	_, errs := par.Map(ctx, 0, len(groups), func(ctx context.Context, g int) (struct{}, error) {
		for _, i := range groups[g] {
			res, err := calls[i].tc.Run(journal.Branch(ctx, fmt.Sprintf("call.%d", i)), r.st)
			if err != nil {
				return struct{}{}, err
			}
			results[i] = res
		}
		return struct{}{}, nil
	})
	if err := par.First(errs); err != nil {
		return nil, err
	}
	for i, c := range calls {
		c.observe(results[i])
	}
	return results, nil
}
