package nodekind_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// auditRecorder is a nodekind.ToolAuditor that keeps the records.
type auditRecorder struct {
	mu   sync.Mutex
	recs []audit.Record
	err  error
}

func (a *auditRecorder) Append(_ context.Context, r audit.Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, r)
	return a.err
}

func (a *auditRecorder) take() []audit.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.recs
	a.recs = nil
	return out
}

// guardEvents returns rec's guard events named guard.
func guardEvents(rec *trace.Recorder, guard string) []trace.Event {
	var out []trace.Event
	for _, e := range rec.OfKind(trace.KindGuard) {
		if e.Data["guard"] == guard {
			out = append(out, e)
		}
	}
	return out
}

func audited(ctx context.Context) (context.Context, *auditRecorder) {
	a := &auditRecorder{}
	return context.WithValue(ctx, auditorKey{}, a), a
}

// Every tool call of a run with a ToolAuditor is recorded once: what ran,
// its output's digest and size, how it failed, and the human decision.
func TestToolCallsAreAudited(t *testing.T) {
	reg := testRegistry(t, echo("search"),
		funcTool{name: "fail", fn: func(context.Context, string) (string, error) { return "partial", errors.New("disk full") }},
		tools.RequireApproval(echo("rm")))
	st := state.NewState(state.Task{})
	ctx, rec := traced()
	ctx, aud := audited(ctx)

	res, err := callTool(ctx, st, meta, reg, "search", "golang", nodekind.ToolOptions{Trace: map[string]any{"step": 3, "tool_call_id": "call_7"}})
	require.NoError(t, err)
	rs := aud.take()
	require.Len(t, rs, 1)
	r := rs[0]
	assert.Equal(t, "run", r.Run)
	assert.Equal(t, "act", r.Node)
	assert.Equal(t, "search", r.Tool)
	assert.Equal(t, "golang", r.Input)
	assert.Equal(t, "3", r.Step)
	assert.Equal(t, "call_7", r.CallID)
	assert.Equal(t, audit.Digest("got golang"), r.OutputSHA256)
	assert.Equal(t, len(res.Output), r.OutputBytes)
	assert.Equal(t, float64(res.Elapsed.Microseconds())/1000, r.DurationMS)
	assert.Empty(t, r.Error)
	assert.Equal(t, audit.DecisionNone, r.Decision)
	assert.False(t, r.Time.IsZero())

	_, err = callTool(ctx, st, meta, reg, "fail", "x", nodekind.ToolOptions{})
	require.NoError(t, err)
	rs = aud.take()
	require.Len(t, rs, 1)
	assert.Equal(t, "disk full", rs[0].Error)
	assert.Equal(t, audit.Digest("partial"), rs[0].OutputSHA256, "a failed tool's output is digested too")

	_, err = callTool(ctx, st, meta, reg, "nosuch", "x", nodekind.ToolOptions{})
	require.NoError(t, err)
	rs = aud.take()
	require.Len(t, rs, 1)
	assert.Equal(t, "nosuch", rs[0].Tool)
	assert.ErrorContains(t, errors.New(rs[0].Error), "nosuch")
	assert.Empty(t, rs[0].OutputSHA256, "an unknown tool produced nothing")

	decide := func(d journal.Decision) context.Context {
		return withApprover(ctx, journal.ApproverFunc(func(context.Context, journal.Approval) (journal.Decision, error) { return d, nil }))
	}
	_, err = callTool(decide(journal.Decision{Reason: "not today", By: "ops"}), st, meta, reg, "rm", "/tmp/x", nodekind.ToolOptions{})
	require.NoError(t, err)
	rs = aud.take()
	require.Len(t, rs, 1)
	assert.Equal(t, audit.DecisionDenied, rs[0].Decision)
	assert.Equal(t, "ops", rs[0].DecidedBy)
	assert.Equal(t, "not today", rs[0].Reason)
	assert.Contains(t, rs[0].Error, "denied")
	assert.Empty(t, rs[0].OutputSHA256, "a denied call did not run")

	_, err = callTool(decide(journal.Decision{Approved: true, By: "ops"}), st, meta, reg, "rm", "/tmp/x", nodekind.ToolOptions{})
	require.NoError(t, err)
	rs = aud.take()
	require.Len(t, rs, 1)
	assert.Equal(t, audit.DecisionApproved, rs[0].Decision)
	assert.Equal(t, audit.Digest("got /tmp/x"), rs[0].OutputSHA256)

	_, err = callTool(withApprover(ctx, journal.Defer()), st, meta, reg, "rm", "/tmp/y", nodekind.ToolOptions{})
	require.ErrorIs(t, err, journal.ErrWaiting)
	rs = aud.take()
	require.Len(t, rs, 1)
	assert.Equal(t, audit.DecisionPending, rs[0].Decision)
	assert.Equal(t, "/tmp/y", rs[0].Input)

	_, err = callTool(ctx, st, meta, reg, "rm", "/tmp/z", nodekind.ToolOptions{})
	require.ErrorIs(t, err, journal.ErrNoApprover)
	rs = aud.take()
	require.Len(t, rs, 1)
	assert.Contains(t, rs[0].Error, "no approver")
	assert.Equal(t, audit.DecisionNone, rs[0].Decision)

	assert.Empty(t, guardEvents(rec, pipeline.GuardAuditError), "every record was accepted")
}

// A resumed thread records only the calls it makes live: the journaled
// ones (the call and its approval) are not recorded twice.
func TestResumedThreadAuditsOnlyLiveCalls(t *testing.T) {
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "j.db"))
	require.NoError(t, err)
	defer s.Close()
	runs := 0
	reg := testRegistry(t, tools.RequireApproval(funcTool{name: "rm", fn: func(_ context.Context, in string) (string, error) { runs++; return "removed " + in, nil }}))
	st := state.NewState(state.Task{})
	approve := journal.ApproverFunc(func(context.Context, journal.Approval) (journal.Decision, error) {
		return journal.Decision{Approved: true, By: "resume --approve"}, nil
	})

	ctx, aud := audited(withApprover(journaled(t, s), approve))
	_, err = callTool(ctx, st, meta, reg, "rm", "a", nodekind.ToolOptions{})
	require.NoError(t, err)
	rs := aud.take()
	require.Len(t, rs, 1)
	assert.Equal(t, "t", rs[0].Thread)
	assert.Equal(t, audit.DecisionApproved, rs[0].Decision)
	assert.Equal(t, "resume --approve", rs[0].DecidedBy)

	ctx, aud = audited(withApprover(journaled(t, s), approve))
	_, err = callTool(ctx, st, meta, reg, "nosuch", "x", nodekind.ToolOptions{}) // replayed model output naming an unknown tool
	require.NoError(t, err)
	_, err = callTool(ctx, st, meta, reg, "rm", "a", nodekind.ToolOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1, runs)
	assert.Empty(t, aud.take(), "replayed calls are not recorded again")
	_, err = callTool(ctx, st, meta, reg, "rm", "b", nodekind.ToolOptions{})
	require.NoError(t, err)
	rs = aud.take()
	require.Len(t, rs, 1, "the live call past the journal's end is")
	assert.Equal(t, "b", rs[0].Input)
	assert.Equal(t, audit.DecisionApproved, rs[0].Decision)
}

// A record the auditor refuses is reported on the trace, and the call
// itself goes on.
func TestAnAuditFailureIsTraced(t *testing.T) {
	ctx, rec := traced()
	a := &auditRecorder{err: audit.ErrClosed}
	res, err := callTool(context.WithValue(ctx, auditorKey{}, pipeline.ToolAuditor(a)), state.NewState(state.Task{}), meta, testRegistry(t, echo("search")), "search", "q", nodekind.ToolOptions{})
	require.NoError(t, err)
	assert.Equal(t, "got q", res.Observation)
	guards := guardEvents(rec, pipeline.GuardAuditError)
	require.Len(t, guards, 1)
	assert.Contains(t, guards[0].Text, "search")
}

// BenchmarkToolCall measures a tool call without and with an audit log.
func BenchmarkToolCall(b *testing.B) {
	reg, err := tools.NewRegistry([]tools.Tool{echo("search")})
	require.NoError(b, err)
	st := state.NewState(state.Task{})
	l, err := audit.Open(context.Background(), filepath.Join(b.TempDir(), "audit.db"))
	require.NoError(b, err)
	defer l.Close()
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{{"plain", context.Background()}, {"audited", context.WithValue(context.Background(), auditorKey{}, pipeline.ToolAuditor(l))}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := callTool(c.ctx, st, meta, reg, "search", "golang generics", nodekind.ToolOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
