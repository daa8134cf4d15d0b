package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
)

// The outcome routes every node can take, when an edge from it maps them
// and its kind does not emit them itself.
const (
	// RouteFailed is taken when the node fails with an error that a
	// later node can recover from: anything but the run's end (its
	// timeout or cancellation), a wait for a person, a spent budget or a
	// failed branch's join. The failure is noted as an incident.
	RouteFailed = "failed"
	// RouteIncomplete is taken when the node ends without error and the
	// run's answer is not complete (there is none yet, or the node marked
	// it incomplete, as a ReAct loop that ran out of iterations does).
	RouteIncomplete = "incomplete"
)

// outcomeRoutes returns the outcome routes (RouteFailed,
// RouteIncomplete) that the edges from node id map and that its kind does
// not declare, in that order.
func outcomeRoutes(p *config.Pipeline, id string, declared []string) []string {
	var out []string
	for _, e := range p.Edges {
		if e.From != id {
			continue
		}
		targets, err := e.Targets()
		if err != nil {
			continue
		}
		for _, r := range []string{RouteFailed, RouteIncomplete} {
			if _, ok := targets[r]; ok && !slices.Contains(declared, r) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}

// outcomeNode takes the outcome routes of node for it.
type outcomeNode struct {
	nodekind.Node
	id                 string
	failed, incomplete bool
}

func withOutcomes(n nodekind.Node, id string, routes []string) nodekind.Node {
	if len(routes) == 0 {
		return n
	}
	return &outcomeNode{Node: n, id: id, failed: slices.Contains(routes, RouteFailed), incomplete: slices.Contains(routes, RouteIncomplete)}
}

// Run runs the node and takes an outcome route where one applies.
func (o *outcomeNode) Run(ctx context.Context, st *state.State) (string, error) {
	route, err := o.Node.Run(ctx, st)
	switch {
	case err != nil && o.failed && !Fatal(ctx, err):
		kind := failureClass(err)
		st.NoteIncident(kind)
		trace.From(ctx).Emit(trace.Event{Node: o.id, Kind: trace.KindError, Text: err.Error(), Data: map[string]any{"route": RouteFailed, "failure": kind}})
		return RouteFailed, nil
	case err == nil && route == "" && o.incomplete && !st.Complete:
		trace.From(ctx).Emit(trace.Event{Node: o.id, Kind: trace.KindRoute, Text: fmt.Sprintf("the answer is not complete (%s)", describeIncomplete(st)),
			Data: map[string]any{"route": RouteIncomplete}})
		return RouteIncomplete, nil
	}
	return route, err
}

func describeIncomplete(st *state.State) string {
	switch {
	case !st.Done:
		return "no answer yet"
	case st.Reason != "":
		return st.Reason
	}
	return "marked incomplete"
}

// Fatal reports whether a node's error err must end the run rather than
// be routed on or kept as one failed part (a `failed` route, a map item
// kept as empty): the run's own end (its context is done, or err is a
// cancellation or a timeout), a wait for a person (journal.ErrWaiting),
// or a spent budget (llm.ErrBudgetExceeded).
func Fatal(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	for _, fatal := range []error{context.Canceled, context.DeadlineExceeded, journal.ErrWaiting, llm.ErrBudgetExceeded} {
		if errors.Is(err, fatal) {
			return true
		}
	}
	return false
}
