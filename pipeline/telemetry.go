package pipeline

import (
	"context"

	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/telemetry"
)

// nodeHook is the graph.NodeHook of a run: the journal's when ctx carries a
// journal, the telemetry's when it carries a tracer provider, both
// composed, or nil.
func (p *Pipeline) nodeHook(ctx context.Context) graph.NodeHook {
	var hooks nodeHooks
	if telemetry.Enabled(ctx) {
		hooks = append(hooks, spanHook{kinds: p.kinds})
	}
	if j := journal.From(ctx); j != nil {
		hooks = append(hooks, journalHook{j})
	}
	switch len(hooks) {
	case 0:
		return nil
	case 1:
		return hooks[0]
	}
	return hooks
}

// nodeHooks runs several hooks around each node execution: Before in
// order, After in reverse order, each After getting the error the one
// inside it returned.
type nodeHooks []graph.NodeHook

func (hs nodeHooks) Before(ctx context.Context, step int, node string) context.Context {
	for _, h := range hs {
		ctx = h.Before(ctx, step, node)
	}
	return ctx
}

func (hs nodeHooks) After(ctx context.Context, step int, node, route string, err error) error {
	for i := len(hs) - 1; i >= 0; i-- {
		err = hs[i].After(ctx, step, node, route, err)
	}
	return err
}

// spanHook gives each node execution its OpenTelemetry span, "node {id}".
type spanHook struct{ kinds map[string]string }

func (h spanHook) Before(ctx context.Context, step int, node string) context.Context {
	ctx, _ = telemetry.StartNode(ctx, node, h.kinds[node], step)
	return ctx
}

func (h spanHook) After(ctx context.Context, step int, node, route string, err error) error {
	class := ""
	if err != nil {
		class = failureClass(err)
	}
	if class == state.FailureWaiting {
		// Waiting for a human is not a failure, as the run's span says.
		telemetry.EndNode(ctx, route, "", nil)
		return err
	}
	telemetry.EndNode(ctx, route, class, err)
	return err
}

// startRunSpan starts the run's span, "invoke_agent {pipeline}", the parent
// of the run's node, model and tool spans.
func (p *Pipeline) startRunSpan(ctx context.Context, task state.Task, runID string) (context.Context, telemetry.Span) {
	return telemetry.StartRun(ctx, telemetry.Run{Agent: p.Config.Name, RunID: runID, TaskID: task.ID, Question: task.Question})
}
