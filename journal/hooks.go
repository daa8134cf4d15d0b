package journal

import (
	"cmp"
	"context"
	"fmt"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/tools"
)

// WrapTool makes r a hooks.ToolHook, the innermost of a journaled run's
// tool calls: a journaled result is replayed rather than run again, and a
// live one is journaled before the run goes on (see Tool). A replayed
// failure matches the sentinel error of its recorded class
// (tools.ReplayedError); a live one is returned with everything it wraps.
// A replayed call of a stateful tool is run again, so that the state
// later calls depend on (the page a docstore search opened) is there once
// the run goes live, and must return what the journal recorded. Calls of
// unknown tools pass through unjournaled. An error of the journal (it
// could not be written, or the resumed run diverged from it) is returned
// as the chain's error: it ends the run.
func (r *Run) WrapTool(next hooks.ToolFunc) hooks.ToolFunc {
	return func(ctx context.Context, call *hooks.ToolCall) (*hooks.ToolResult, error) {
		if call.Unknown {
			return next(ctx, call)
		}
		var live *hooks.ToolResult
		rec, err := r.Tool(ctx, call.Node, call.Tool, call.Input, func(ctx context.Context) (ToolResult, error) {
			res, err := next(ctx, call)
			if err != nil {
				return ToolResult{}, err
			}
			live = res
			out := ToolResult{Output: res.Output}
			if res.Err != nil {
				out.Error, out.Class = res.Err.Error(), tools.ErrorClass(res.Err)
			}
			return out, nil
		})
		switch {
		case err != nil:
			if live != nil {
				return live, err
			}
			return nil, err
		case live != nil:
			return live, nil
		}
		if call.Stateful {
			if err := r.rebuild(ctx, next, call, rec); err != nil {
				return nil, err
			}
		}
		res := &hooks.ToolResult{Output: rec.Output}
		if rec.Error != "" {
			res.Err = &tools.ReplayedError{Msg: rec.Error, Class: rec.Class}
		}
		return res, nil
	}
}

// rebuild runs a stateful tool's replayed call again and checks it still
// returns what the journal recorded.
func (r *Run) rebuild(ctx context.Context, next hooks.ToolFunc, call *hooks.ToolCall, rec ToolResult) error {
	res, err := next(ctx, call)
	if err != nil {
		return err
	}
	got := ToolResult{Output: res.Output}
	if res.Err != nil {
		got.Error = res.Err.Error()
	}
	if got.Output != rec.Output || got.Error != rec.Error {
		return fmt.Errorf("%w: re-running the recorded call %s(%s) of a stateful tool to rebuild its state gave %q, the journal holds %q",
			ErrDiverged, call.Tool, textutil.Clip(call.Input, 80), textutil.Clip(cmp.Or(got.Error, got.Output), 200), textutil.Clip(cmp.Or(rec.Error, rec.Output), 200))
	}
	return nil
}

// WrapNode makes r a hooks.NodeHook: it journals the end of every node
// execution that returned without an error, with its route (see Node).
func (r *Run) WrapNode(next hooks.NodeFunc) hooks.NodeFunc {
	return func(ctx context.Context, n hooks.Node) (string, error) {
		// The node's code reaches the session through its context (From):
		// a model that keeps its place across calls (the scripted one)
		// and the ReAct loop's journaled tool retrieval read it.
		ctx = WithRun(ctx, r)
		route, err := next(ctx, n)
		if err != nil {
			return route, err
		}
		return route, r.Node(ctx, n.Step, n.ID, route)
	}
}
