package planner

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor/steps"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
)

// newDispatch builds the step runner of a planner with `dispatch:` set:
// true (or an empty mapping) for the defaults, or a mapping of execute
// node settings. The strategy defaults to parallel (rewoo runs the steps
// one at a time) and llm_tool to the planner's; react is refused, since
// a streamed step is one direct tool call.
func newDispatch(env nodekind.Env, spec nodekind.Spec, raw any, llmTool string, requireTools bool) (*steps.Execute, error) {
	var settings map[string]any
	switch v := raw.(type) {
	case nil:
		return nil, nil
	case bool:
		if !v {
			return nil, nil
		}
		settings = map[string]any{}
	case map[string]any:
		settings = maps.Clone(v)
	default:
		return nil, config.SettingErrorf("dispatch", "want true, false or a mapping of execute settings (strategy, max_concurrency, llm_tool, result_limit), got %T", raw)
	}
	if !requireTools {
		return nil, config.SettingErrorf("dispatch", "runs each step as one tool call while the plan streams, so every step needs a tool: set require_tools: true")
	}
	if _, ok := settings["strategy"]; !ok {
		settings["strategy"] = steps.StrategyParallel
	}
	if settings["strategy"] == steps.StrategyReAct {
		return nil, config.SettingErrorf("dispatch.strategy", "want parallel or rewoo: a streamed step is one direct tool call")
	}
	if _, ok := settings["llm_tool"]; !ok && llmTool != "" {
		settings["llm_tool"] = llmTool
	}
	b, err := steps.NewExecute(env, nodekind.Spec{ID: spec.ID, Type: spec.Type, Settings: settings})
	if err != nil {
		return nil, config.NestSetting("dispatch", err)
	}
	ex, ok := b.Node.(*steps.Execute)
	if !ok {
		return nil, config.SettingErrorf("dispatch", "the execute node builder returned %T", b.Node)
	}
	return ex, nil
}

// streamedPlan is one planning call whose plan runs as it streams: each
// step that passes the checks a step can pass alone goes to the
// dispatcher as soon as its text is complete.
type streamedPlan struct {
	p      *Planner
	st     *state.State
	tr     *trace.Tracer
	d      *steps.Dispatcher
	stream *plan.Stream
	began  time.Time

	// mu guards what the streaming callback writes: the steps handed to
	// the dispatcher, the ids seen, and whether dispatching stopped (a
	// step failed its checks, so the plan will be rejected).
	mu      sync.Mutex
	added   []plan.Step
	ids     map[string]bool
	stopped bool
}

// startStream resets the plan and starts a dispatcher for it.
func (p *Planner) startStream(ctx context.Context, st *state.State) *streamedPlan {
	st.Plan = nil
	return &streamedPlan{p: p, st: st, tr: trace.From(ctx), d: p.dispatch.Dispatch(ctx, st), stream: plan.NewStream(),
		began: time.Now(), ids: map[string]bool{}}
}

// write is the model call's streaming function.
func (s *streamedPlan) write(_ context.Context, chunk []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offer(s.stream.Write(string(chunk)))
	return nil
}

// offer dispatches the steps that pass the checks a step can pass before
// the plan is whole; the first that fails stops dispatching. Called with
// mu held.
func (s *streamedPlan) offer(steps []plan.Step) {
	for _, st := range steps {
		if s.stopped {
			return
		}
		r := s.p.rules
		switch {
		case s.ids[st.ID],
			r.MaxSteps > 0 && len(s.added) >= r.MaxSteps,
			r.RequireTools && st.Tool == "",
			st.Tool != "" && r.Tools != nil && !r.Tools.Has(st.Tool):
			s.stopped = true
			return
		}
		s.ids[st.ID] = true
		s.added = append(s.added, st)
		s.tr.Emit(trace.Event{Node: s.p.id, Kind: trace.KindInfo, Text: fmt.Sprintf("step %s dispatched while the plan streams: %s[%s]", st.ID, st.Tool, st.Input),
			ElapsedMS: float64(time.Since(s.began).Microseconds()) / 1000,
			Data:      map[string]any{"id": st.ID, "tool": st.Tool, "streamed": true}})
		s.d.Add(st)
	}
}

// finish completes a valid plan: the steps the stream did not dispatch
// (the last line of a text plan, or all of a plan that did not stream)
// are added, every step is run, and st.Plan holds the final plan with
// the outcomes. When the final plan does not begin with the streamed
// steps (the stream read the reply differently), the streamed results are
// discarded and st.Plan is the final plan, pending, for the execute nodekind.
func (s *streamedPlan) finish(final []plan.Step) error {
	s.mu.Lock()
	s.offer(s.stream.Close())
	added := s.added
	s.mu.Unlock()
	same := len(added) <= len(final)
	for i := 0; same && i < len(added); i++ {
		same = plan.Same(added[i], final[i])
	}
	if !same {
		s.d.Abort()
		s.tr.Emit(trace.Event{Node: s.p.id, Kind: trace.KindGuard,
			Text: fmt.Sprintf("the streamed plan differs from the final reply; the results of %d streamed step(s) are discarded and the final plan runs from its start", len(added)),
			Data: map[string]any{"guard": "stream_mismatch", "streamed": len(added)}})
		s.st.Plan = pendingSteps(final)
		return nil
	}
	s.d.Add(final[len(added):]...)
	err := s.d.Close()
	for i := range final {
		if i < len(s.st.Plan) {
			s.st.Plan[i].Description = final[i].Description
		}
	}
	return err
}

// discard stops the dispatched steps of a rejected plan and clears it;
// it returns how many steps had been dispatched.
func (s *streamedPlan) discard() int {
	s.d.Abort()
	s.mu.Lock()
	n := len(s.added)
	s.mu.Unlock()
	s.st.Plan = nil
	return n
}

// pendingSteps returns steps with every status reset to pending.
func pendingSteps(steps []plan.Step) []plan.Step {
	for i := range steps {
		steps[i].Status = plan.StatusPending
		steps[i].Result, steps[i].Error = "", ""
	}
	return steps
}
