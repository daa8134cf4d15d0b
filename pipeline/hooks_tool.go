package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/telemetry"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
)

// ToolAuditor records the tool calls of a run (an *audit.Log, say).
type ToolAuditor interface {
	Append(ctx context.Context, r audit.Record) error
}

// GuardAuditError names the trace event of a tool call the ToolAuditor
// could not record (Data: tool, error). The call itself goes on.
const GuardAuditError = "audit_error"

// WithAudit records every tool call of the run in a: what ran, with what
// input, its output's digest and size, its duration, its error and the
// human decision on it; a journaled run records only the calls it makes
// live, not those it replays. Default: no record.
func WithAudit(a ToolAuditor) RunOption {
	return func(c *runConfig) { c.audit = a }
}

// toolUsageHook counts every call of a known tool that is made (after its
// approval) into the run state.
type toolUsageHook struct{ st *state.State }

func (h toolUsageHook) WrapTool(next hooks.ToolFunc) hooks.ToolFunc {
	return func(ctx context.Context, call *hooks.ToolCall) (*hooks.ToolResult, error) {
		if !call.Unknown {
			h.st.Usage.AddToolCall(call.Node)
		}
		return next(ctx, call)
	}
}

// approvalHook asks for a human's decision on every call of a tool that
// needs one ((*journal.Run).Approve: from the journal when it holds the decision,
// else from the run's approver (WithApprover), whose decision is journaled). A denied
// call is not made: it fails with tools.ErrNotApproved. Waiting for a
// decision, nobody to ask, or a journal problem stop the run, which a
// thread can resume from here. An approval is reported by a guard event
// (GuardApproval in package nodekind: "approval").
type approvalHook struct {
	tracer   *trace.Tracer
	approver journal.Approver
	// journal is the run's session; nil: the session of each call's
	// context (journal.From), for ContextHooks.
	journal *journal.Run
}

// guardApproval is nodekind.GuardApproval (pipeline does not import the
// node contract).
const guardApproval = "approval"

func (h approvalHook) WrapTool(next hooks.ToolFunc) hooks.ToolFunc {
	return func(ctx context.Context, call *hooks.ToolCall) (*hooks.ToolResult, error) {
		if !call.NeedsApproval || call.Unknown {
			return next(ctx, call)
		}
		asked := false
		var ap journal.Approver
		if h.approver != nil {
			ap = journal.ApproverFunc(func(ctx context.Context, a journal.Approval) (journal.Decision, error) {
				asked = true
				return h.approver.Approve(ctx, a)
			})
		}
		j := h.journal
		if j == nil {
			j = journal.From(ctx)
		}
		d, err := j.Approve(ctx, ap, journal.Approval{Node: call.Node, Tool: call.Tool, Input: call.Input})
		if err != nil {
			return &hooks.ToolResult{Asked: asked}, err
		}
		dec := &hooks.Decision{Approved: d.Approved, By: d.By, Reason: d.Reason}
		if !d.Approved {
			reason := cmp.Or(d.Reason, "no reason given")
			err := fmt.Errorf("%w: a human denied this call of %s (%s): %s", tools.ErrNotApproved, call.Tool, cmp.Or(d.By, "unknown"), reason)
			return &hooks.ToolResult{Err: err, Decision: dec, Asked: asked}, nil
		}
		text := fmt.Sprintf("call of %s approved by %s", call.Tool, cmp.Or(d.By, "a human"))
		if d.Reason != "" {
			text += ": " + d.Reason
		}
		data := maps.Clone(call.Trace)
		if data == nil {
			data = map[string]any{}
		}
		data["guard"], data["tool"], data["approved"], data["by"] = guardApproval, call.Tool, true, d.By
		tracerOf(ctx, h.tracer).Emit(trace.Event{Node: call.Node, Kind: trace.KindGuard, Text: text, Data: data})
		res, err := next(ctx, call)
		if res != nil {
			res.Decision, res.Asked = dec, asked
		}
		return res, err
	}
}

// auditHook records every tool call of the run in its ToolAuditor: the
// calls made live, with their output's digest and duration; the calls
// that wait for a decision or were denied; an unknown tool's call unless
// a journaled run is still replaying. A replayed call is not recorded
// again. A record that cannot be written is reported by a guard event
// (GuardAuditError); the call goes on.
type auditHook struct {
	to            ToolAuditor
	runID, thread string
	replaying     func() bool
	tracer        *trace.Tracer
}

func (h auditHook) WrapTool(next hooks.ToolFunc) hooks.ToolFunc {
	return func(ctx context.Context, call *hooks.ToolCall) (*hooks.ToolResult, error) {
		began := time.Now()
		res, err := next(ctx, call)
		r, ok := h.record(call, res, err)
		if !ok {
			return res, err
		}
		r.Time = began
		if aerr := h.to.Append(context.WithoutCancel(ctx), r); aerr != nil {
			data := maps.Clone(call.Trace)
			if data == nil {
				data = map[string]any{}
			}
			data["guard"], data["tool"], data["error"] = GuardAuditError, call.Tool, aerr.Error()
			h.tracer.Emit(trace.Event{Node: call.Node, Kind: trace.KindGuard, Data: data,
				Text: "the audit log did not record this call of " + call.Tool + ": " + aerr.Error()})
		}
		return res, err
	}
}

// record is the audit record of a call, and whether it is one to keep.
func (h auditHook) record(call *hooks.ToolCall, res *hooks.ToolResult, err error) (audit.Record, bool) {
	r := audit.Record{Run: h.runID, Thread: h.thread, Node: call.Node, Step: call.Step, CallID: call.ID, Tool: call.Tool, Input: call.Input}
	if res == nil {
		res = &hooks.ToolResult{}
	}
	if d := res.Decision; d != nil {
		r.Decision, r.DecidedBy, r.Reason = audit.DecisionDenied, d.By, d.Reason
		if d.Approved {
			r.Decision = audit.DecisionApproved
		}
	}
	switch {
	case call.Unknown:
		if h.replaying != nil && h.replaying() {
			return r, false
		}
		if res.Err != nil {
			r.Error = res.Err.Error()
		}
	case res.Live:
		r.OutputSHA256, r.OutputBytes = audit.Digest(res.Output), len(res.Output)
		r.DurationMS = float64(res.Elapsed.Microseconds()) / 1000
		if res.Err != nil {
			r.Error = res.Err.Error()
		} else if err != nil {
			r.Error = "the run stopped during the call: " + err.Error()
		}
	case err != nil && call.NeedsApproval && res.Decision == nil:
		// The approval itself stopped the run: waiting for a human, or
		// nobody to ask; the journal's own failure is not the call's.
		if journal.Stopped(err) {
			return r, false
		}
		r.Error = err.Error()
		if errors.Is(err, journal.ErrWaiting) {
			r.Decision = audit.DecisionPending
		}
	case res.Asked && res.Decision != nil:
		switch {
		case res.Err != nil:
			r.Error = res.Err.Error()
		case err != nil:
			r.Error = "the run stopped before the call: " + err.Error()
		}
	default:
		return r, false // answered from the journal, or stopped before anything happened
	}
	return r, true
}

// toolSpanHook opens an OpenTelemetry span per tool call.
type toolSpanHook struct{ tp *telemetry.Provider }

func (h toolSpanHook) WrapTool(next hooks.ToolFunc) hooks.ToolFunc {
	return func(ctx context.Context, call *hooks.ToolCall) (*hooks.ToolResult, error) {
		ctx, span := h.tp.StartTool(ctx, telemetry.Tool{Name: call.Tool, CallID: call.ID, Node: call.Node, Input: call.Input})
		res, err := next(ctx, call)
		endToolSpan(span, res, err)
		return res, err
	}
}

func endToolSpan(span telemetry.Span, res *hooks.ToolResult, err error) {
	defer span.End()
	if !span.Recording() {
		return
	}
	switch {
	case err != nil:
		span.Fail(toolErrorType(err), err)
	case res != nil && res.Err != nil:
		span.Fail(toolErrorType(res.Err), res.Err)
	}
	if span.Content() && res != nil {
		span.SetContent(telemetry.KeyToolResult, res.Output)
	}
}

func toolErrorType(err error) string {
	if class := tools.ErrorClass(err); class != "" {
		return class
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "tool_error"
}
