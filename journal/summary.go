package journal

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/llm/cassette"
)

// Summary says in one line what e holds: a node's step and route, a
// model's reply (with its tool calls), a tool call and its result, or a
// decision and who gave it. It is for people (planner history); it is not
// scrubbed of secrets.
func (e Entry) Summary() string {
	short := func(s string) string { return textutil.Clip(textutil.OneLine(s), 100) }
	switch e.Kind {
	case KindNode:
		var req nodeRequest
		var resp nodeResponse
		_ = json.Unmarshal(e.Request, &req)
		_ = json.Unmarshal(e.Response, &resp)
		route := resp.Route
		if route == "" {
			route = "default"
		}
		return fmt.Sprintf("step %d %s done, route %s", req.Step, req.Node, route)
	case KindModel:
		var resp cassette.Response
		_ = json.Unmarshal(e.Response, &resp)
		if len(resp.Choices) == 0 {
			return "(no reply)"
		}
		ch := resp.Choices[0]
		text := ch.Content
		for _, tc := range ch.ToolCalls {
			text += fmt.Sprintf(" [%s %s]", tc.Name, tc.Arguments)
		}
		return "reply: " + short(text)
	case KindTool:
		var req toolRequest
		var res ToolResult
		_ = json.Unmarshal(e.Request, &req)
		_ = json.Unmarshal(e.Response, &res)
		out := res.Output
		if res.Error != "" {
			out = "error: " + res.Error
		}
		return fmt.Sprintf("%s(%s) -> %s", req.Tool, short(req.Input), short(out))
	case KindApproval:
		var req toolRequest
		var d Decision
		_ = json.Unmarshal(e.Request, &req)
		_ = json.Unmarshal(e.Response, &d)
		verb := "approved"
		if !d.Approved {
			verb = "denied"
		}
		s := fmt.Sprintf("%s %s by %s", req.Tool, verb, d.By)
		if d.Reason != "" {
			s += ": " + short(d.Reason)
		}
		return s
	}
	return string(e.Kind)
}

// LiveStatus is t's status as it stands: a thread that says it is running
// but whose lock is free lost its process (a crash, a kill) and is
// interrupted.
func LiveStatus(ctx context.Context, s Store, t Thread) Status {
	if t.Status != StatusRunning {
		return t.Status
	}
	unlock, err := s.Lock(ctx, t.Name)
	if err != nil {
		return t.Status
	}
	_ = unlock()
	return StatusInterrupted
}
