package nodekind

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/trace"
)

// ToolAuditor records the tool calls of a run: ToolCall.Run hands it one
// audit.Record per call (package audit's *Log is one). It must be safe
// for concurrent use and should not block: Append is called on the tool
// call's path.
type ToolAuditor interface {
	Append(ctx context.Context, r audit.Record) error
}

type auditorKey struct{}

// WithToolAuditor returns ctx whose tool calls are recorded by a (nil: not
// recorded).
func WithToolAuditor(ctx context.Context, a ToolAuditor) context.Context {
	return context.WithValue(ctx, auditorKey{}, a)
}

// ToolAuditorFrom returns the ToolAuditor in ctx, or nil.
func ToolAuditorFrom(ctx context.Context) ToolAuditor {
	a, _ := ctx.Value(auditorKey{}).(ToolAuditor)
	return a
}

// GuardAuditError names the trace event of a tool call the ToolAuditor
// could not record (Data: tool, error).
const GuardAuditError = "audit_error"

// callAudit gathers what one tool call's record needs while it runs. A nil
// *callAudit (no auditor in the context) does nothing.
//
// What is recorded: every call whose tool ran live (not replayed from a
// journal), with its decision when it needed approval; a call a human
// denied, or that waits for a decision, when that decision was asked
// live; a call that could not be approved (no approver); and a call of an
// unknown tool, unless a journal is still replaying (a resumed thread
// would record it again). Calls answered from the journal are not
// recorded again, so resuming a thread adds only its new calls; neither
// is the re-run of a stateful tool's replayed call that rebuilds its
// state.
type callAudit struct {
	to  ToolAuditor
	rec audit.Record
	// asked: the approver was asked live; decision: the decision applied
	// (live or replayed); approvalErr: why none was had.
	asked       bool
	decision    *journal.Decision
	approvalErr error
	// live: the tool was invoked, not answered from the journal.
	live bool
}

// startAudit begins c's record when ctx has a ToolAuditor.
func (c ToolCall) startAudit(ctx context.Context) *callAudit {
	to := ToolAuditorFrom(ctx)
	if to == nil {
		return nil
	}
	r := audit.Record{Time: time.Now(), Run: trace.From(ctx).RunID(), Node: c.meta.Node, Tool: c.Name, Input: c.Input}
	if j := journal.From(ctx); j != nil {
		r.Thread = j.Thread()
	}
	r.Step = c.meta.StepID
	if r.Step == "" {
		r.Step = llm.CallMetaFrom(ctx).StepID
	}
	if r.Step == "" {
		if s, ok := c.opts.Trace["step"]; ok && s != nil {
			r.Step = fmt.Sprint(s)
		}
	}
	r.CallID, _ = c.opts.Trace["tool_call_id"].(string)
	return &callAudit{to: to, rec: r}
}

// watch returns ctx whose approver notes that it was asked (a live
// decision, not one replayed from the journal).
func (a *callAudit) watch(ctx context.Context) context.Context {
	if a == nil {
		return ctx
	}
	next := journal.ApproverFrom(ctx)
	if next == nil {
		return ctx
	}
	return journal.WithApprover(ctx, journal.ApproverFunc(func(ctx context.Context, ap journal.Approval) (journal.Decision, error) {
		a.asked = true
		return next.Approve(ctx, ap)
	}))
}

// decided notes the outcome of the call's approval.
func (a *callAudit) decided(d journal.Decision, err error) {
	if a == nil {
		return
	}
	if err != nil {
		a.approvalErr = err
		return
	}
	a.decision = &d
}

// ran notes whether the tool was invoked rather than replayed.
func (a *callAudit) ran(live bool) {
	if a != nil {
		a.live = live
	}
}

// finish records the call, if it is to be recorded (see callAudit).
func (a *callAudit) finish(ctx context.Context, c ToolCall, res ToolResult, err error) {
	if a == nil {
		return
	}
	r := a.rec
	if d := a.decision; d != nil {
		r.Decision, r.DecidedBy, r.Reason = audit.DecisionDenied, d.By, d.Reason
		if d.Approved {
			r.Decision = audit.DecisionApproved
		}
	}
	switch {
	case res.Unknown():
		if replaying(ctx) {
			return
		}
		r.Error = res.Err.Error()
	case a.live:
		r.OutputSHA256, r.OutputBytes = audit.Digest(res.Output), len(res.Output)
		r.DurationMS = float64(res.Elapsed.Microseconds()) / 1000
		if res.Err != nil {
			r.Error = res.Err.Error()
		} else if err != nil {
			r.Error = "the run stopped during the call: " + err.Error()
		}
	case a.approvalErr != nil:
		if journal.Stopped(a.approvalErr) {
			return // the journal's failure, not the call's
		}
		r.Error = a.approvalErr.Error()
		if errors.Is(a.approvalErr, journal.ErrWaiting) {
			r.Decision = audit.DecisionPending
		}
	case a.asked && a.decision != nil:
		// Decided live, and the tool did not run: denied, or the run
		// stopped before it could.
		switch {
		case res.Err != nil:
			r.Error = res.Err.Error()
		case err != nil:
			r.Error = "the run stopped before the call: " + err.Error()
		}
	default:
		return // answered from the journal, or stopped before anything happened
	}
	if aerr := a.to.Append(context.WithoutCancel(ctx), r); aerr != nil {
		c.emit(ctx, trace.KindGuard, "the audit log did not record this call of "+c.Name+": "+aerr.Error(), 0,
			map[string]any{"guard": GuardAuditError, "tool": c.Name, "error": aerr.Error()})
	}
}

// replaying reports whether ctx's journal still holds calls to replay.
func replaying(ctx context.Context) bool {
	j := journal.From(ctx)
	if j == nil {
		return false
	}
	_, _, unused := j.Stats()
	return unused > 0
}
