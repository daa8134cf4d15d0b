package planner_test

import (
	"context"
	"errors"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/planner"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// newPlanner builds a planner node on a scripted model of replies, with a
// recorder of its calls around the model.
func newPlanner(t *testing.T, settings map[string]any, replies ...scripted.Reply) (nodekind.Node, *llmtest.Recorder, *scripted.Model) {
	t.Helper()
	m, err := scripted.New(scripted.Script{Replies: replies})
	require.NoError(t, err)
	rec := &llmtest.Recorder{Model: m}
	built, err := planner.New(nodekind.Env{Model: llm.Model{LLM: rec}, Tools: registry(t)}, nodekind.Spec{ID: "plan", Type: "planner", Settings: settings})
	require.NoError(t, err)
	return built.Node, rec, m
}

const goodPlan = `{"steps":[{"id":"1","description":"Find the birth year","tool":"search","input":"Clyde Tombaugh born"},{"id":"2","description":"Find the discovery year","tool":"search","input":"Pluto discovered"},{"id":"3","description":"Subtract","tool":"calculator","input":"#E2 - #E1","depends_on":["1","2"]}]}`

func TestPlannerStoresAValidPlanAsPendingSteps(t *testing.T) {
	node, rec, _ := newPlanner(t, nil, scripted.Reply{Node: "planner", Contains: "Clyde Tombaugh", Text: goodPlan})
	st := hookedState(state.Task{Question: "How old was Clyde Tombaugh when he discovered Pluto?"})
	tr := &trace.Recorder{}
	route, err := node.Run(trace.WithTracer(context.Background(), trace.New("r", tr)), st)
	require.NoError(t, err)
	assert.Equal(t, "", route)
	require.Len(t, st.Plan, 3)
	for _, s := range st.Plan {
		assert.Equal(t, plan.StatusPending, s.Status)
	}
	assert.Equal(t, []string{"1", "2"}, st.Plan[2].DependsOn)
	plans := tr.OfKind(trace.KindPlan)
	require.Len(t, plans, 1)
	assert.Contains(t, plans[0].Text, "3. Subtract [calculator: #E2 - #E1] (after 1, 2)")
	assert.Equal(t, 1, st.Usage.Snapshot().ModelCalls)
	require.Len(t, rec.Requests(), 1)
	assert.True(t, rec.Requests()[0].Options.JSONMode, "json output uses JSON mode")
	for _, want := range []string{"- calculator: Evaluates", `"expression"`, "- search: echoes its input", "at most 8 steps", `"depends_on"`} {
		assert.Contains(t, rec.Requests()[0].Text(), want)
	}
}

func TestPlannerFeedsRejectedPlansBackThenFailsWithTypedError(t *testing.T) {
	cyclic := `{"steps":[{"id":"1","description":"a","tool":"search","depends_on":["2"]},{"id":"2","description":"b","tool":"search","depends_on":["1"]}]}`
	dangling := `{"steps":[{"id":"1","description":"a","tool":"search"},{"id":"2","description":"b","tool":"calculator","input":"#E1","depends_on":["5"]}]}`
	unknown := `{"steps":[{"id":"1","description":"a","tool":"wikipedia","input":"Pluto"}]}`
	malformed := `{"steps": [{"id": "1", "description": "a"`
	cases := []struct {
		name     string
		reply    string
		sentinel error
		feedback string
	}{
		{"cyclic plan", cyclic, plan.ErrPlanCycle, "cycle"},
		{"dangling dependency", dangling, plan.ErrDanglingDependency, `depends on step "5"`},
		{"unknown tool", unknown, plan.ErrUnknownTool, `uses "wikipedia"; available tools: calculator, search, web_search`},
		{"malformed plan", malformed, plan.ErrMalformedPlan, "no plan found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node, rec, m := newPlanner(t, nil,
				scripted.Reply{Text: tc.reply},
				scripted.Reply{Contains: "That plan was rejected", Text: tc.reply},
				scripted.Reply{Contains: tc.feedback, Text: tc.reply})
			st := hookedState(state.Task{Question: "q"})
			tr := &trace.Recorder{}
			_, err := node.Run(trace.WithTracer(context.Background(), trace.New("r", tr)), st)
			require.Error(t, err)
			assert.ErrorIs(t, err, planner.ErrInvalidPlan)
			assert.ErrorIs(t, err, tc.sentinel)
			var ipe *planner.InvalidPlanError
			require.ErrorAs(t, err, &ipe)
			assert.Equal(t, 3, ipe.Attempts, "one plan plus max_retries (2) corrections")
			assert.Equal(t, tc.reply, ipe.Reply)
			assert.Equal(t, 0, m.Remaining(), "every retry reached the model")
			require.Len(t, rec.Requests(), 3)
			assert.Contains(t, rec.Requests()[2].Text(), tc.feedback, "the reason is fed back")
			assert.Empty(t, st.Plan)
			assert.Len(t, append(tr.OfKind(trace.KindGuard), tr.OfKind(trace.KindParseError)...), 3)
		})
	}
}

func TestPlannerRecoversWhenTheCorrectedPlanIsValid(t *testing.T) {
	node, _, _ := newPlanner(t, map[string]any{"max_retries": 1},
		scripted.Reply{Text: `{"steps":[{"id":"1","description":"a","tool":"serch","input":"x"}]}`},
		scripted.Reply{Contains: `uses "serch"`, Text: goodPlan})
	st := hookedState(state.Task{Question: "q"})
	_, err := node.Run(context.Background(), st)
	require.NoError(t, err)
	assert.Len(t, st.Plan, 3)
	assert.Equal(t, 2, st.Usage.Snapshot().ModelCalls)
}

func TestPlannerWithFailedRouteRecordsTheFailureInsteadOfErroring(t *testing.T) {
	m := scripted.Texts("no plan", "still no plan")
	built, err := planner.New(nodekind.Env{Model: llm.Model{LLM: m}, Tools: registry(t)},
		nodekind.Spec{ID: "plan", Type: "planner", Settings: map[string]any{"on_failure": "route", "max_retries": 1}})
	require.NoError(t, err)
	assert.Equal(t, []string{planner.RouteFailed}, built.Routes)
	st := hookedState(state.Task{Question: "q"})
	route, err := built.Node.Run(context.Background(), st)
	require.NoError(t, err)
	assert.Equal(t, planner.RouteFailed, route)
	assert.Equal(t, state.FailurePlan, st.Failure)
	assert.Contains(t, st.Reason, "no valid plan")
	assert.False(t, st.Done)
}

func TestPlannerReadsAForcedPlanToolCall(t *testing.T) {
	node, rec, _ := newPlanner(t, map[string]any{"output": "tool"}, scripted.Reply{
		Text: "", SplitChoices: true,
		ToolCalls: []scripted.ToolCall{{Name: "plan", Arguments: map[string]any{"steps": []any{
			map[string]any{"id": "1", "description": "Look up", "tool": "search", "input": "Pluto"}}}}},
	})
	st := hookedState(state.Task{Question: "q"})
	_, err := node.Run(context.Background(), st)
	require.NoError(t, err)
	require.Len(t, st.Plan, 1)
	assert.Equal(t, "Pluto", st.Plan[0].Input)
	require.Len(t, rec.Requests(), 1)
	require.Len(t, rec.Requests()[0].Options.Tools, 1)
	assert.Equal(t, planner.PlanToolName, rec.Requests()[0].Options.Tools[0].Function.Name)
	assert.Equal(t, llms.ToolChoice{Type: "function", Function: &llms.FunctionReference{Name: "plan"}}, rec.Requests()[0].Options.ToolChoice)
	assert.False(t, rec.Requests()[0].Options.JSONMode)
	assert.Contains(t, rec.Requests()[0].Text(), `Call the "plan" function`)
}

func TestPlannerTextOutputAcceptsANumberedList(t *testing.T) {
	node, rec, _ := newPlanner(t, map[string]any{"output": "text"}, scripted.Reply{Text: "1. Find Pluto's discoverer\n2. Find his birth year"})
	st := hookedState(state.Task{Question: "q"})
	_, err := node.Run(context.Background(), st)
	require.NoError(t, err)
	require.Len(t, st.Plan, 2)
	assert.Equal(t, []string{"1"}, st.Plan[1].DependsOn)
	assert.False(t, rec.Requests()[0].Options.JSONMode)
}

func TestPlannerRequireToolsAndLLMToolShapeThePrompt(t *testing.T) {
	node, rec, _ := newPlanner(t, map[string]any{"require_tools": true, "llm_tool": "llm"},
		scripted.Reply{Text: `{"steps":[{"id":"1","description":"think","input":"x"}]}`},
		scripted.Reply{Contains: "must name the tool", Text: `{"steps":[{"id":"1","description":"read","tool":"llm","input":"x"}]}`})
	st := hookedState(state.Task{Question: "q"})
	_, err := node.Run(context.Background(), st)
	require.NoError(t, err)
	assert.Equal(t, "llm", st.Plan[0].Tool)
	assert.Contains(t, rec.Requests()[0].Text(), "Every step is exactly one call")
	assert.Contains(t, rec.Requests()[0].Text(), "- llm: Asks a language model")
}

func TestPlannerRejectsBadSettings(t *testing.T) {
	empty, err := tools.NewRegistry(nil)
	require.NoError(t, err)
	cases := []struct {
		name     string
		settings map[string]any
		reg      *tools.Registry
		key      string
	}{
		{"unknown output", map[string]any{"output": "yaml"}, registry(t), "output"},
		{"negative max_plan_steps", map[string]any{"max_plan_steps": -1}, registry(t), "max_plan_steps"},
		{"negative max_retries", map[string]any{"max_retries": -1}, registry(t), "max_retries"},
		{"unknown on_failure", map[string]any{"on_failure": "panic"}, registry(t), "on_failure"},
		{"typo", map[string]any{"max_plan_step": 3}, registry(t), "max_plan_step"},
		{"llm_tool clashes with a tool", map[string]any{"llm_tool": "Search"}, registry(t), "llm_tool"},
		{"require_tools without tools", map[string]any{"require_tools": true}, empty, "require_tools"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := planner.New(nodekind.Env{Tools: tc.reg}, nodekind.Spec{ID: "p", Type: "planner", Settings: tc.settings})
			require.Error(t, err)
			assert.ErrorIs(t, err, config.ErrSettings)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.key, se.Key)
		})
	}
}

func TestPlannerProviderErrorEndsTheRun(t *testing.T) {
	node, _, _ := newPlanner(t, map[string]any{"on_failure": "route"}, scripted.Reply{Error: "HTTP 500"})
	_, err := node.Run(context.Background(), hookedState(state.Task{Question: "q"}))
	require.Error(t, err)
	assert.ErrorIs(t, err, llm.ErrModel)
	assert.NotErrorIs(t, err, planner.ErrInvalidPlan)
}

// namedTool is a tool that echoes its input, for registries in tests.
type namedTool string

func (n namedTool) Name() string        { return string(n) }
func (n namedTool) Description() string { return "echoes its input" }
func (n namedTool) Call(_ context.Context, in string) (string, error) {
	return string(n) + ": " + in, nil
}

// registry holds a calculator, "search" and "web_search".
func registry(t *testing.T) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry([]tools.Tool{calc.New(), namedTool("search"), namedTool("web_search")})
	require.NoError(t, err)
	return reg
}

func TestInvalidPlanErrorMatchesBothSentinels(t *testing.T) {
	err := error(&planner.InvalidPlanError{Attempts: 3, Err: errors.Join(plan.ErrPlanCycle, plan.ErrUnknownTool)})
	assert.ErrorIs(t, err, planner.ErrInvalidPlan)
	assert.ErrorIs(t, err, plan.ErrPlanCycle)
	assert.ErrorIs(t, err, plan.ErrUnknownTool)
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), "after 3 attempt(s)")
}
