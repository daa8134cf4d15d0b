package replanner_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/replanner"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type echo string

func (e echo) Name() string                                      { return string(e) }
func (e echo) Description() string                               { return "echoes" }
func (e echo) Call(_ context.Context, in string) (string, error) { return in, nil }

func build(t *testing.T, ctor func(nodekind.Env, nodekind.Spec) (nodekind.Built, error), settings map[string]any, replies ...scripted.Reply) (nodekind.Node, *scripted.Model) {
	t.Helper()
	m, err := scripted.New(scripted.Script{Replies: replies})
	require.NoError(t, err)
	reg, err := tools.NewRegistry([]tools.Tool{calc.New(), echo("search")})
	require.NoError(t, err)
	built, err := ctor(nodekind.Env{Model: llm.Model{LLM: m}, Tools: reg}, nodekind.Spec{ID: "replan", Type: "replanner", Settings: settings})
	require.NoError(t, err)
	assert.Equal(t, []string{replanner.RouteContinue, replanner.RouteFinish}, built.Routes)
	return built.Node, m
}

func executedState() *state.State {
	st := state.NewState(state.Task{Question: "How many years passed between the discoveries of Uranus and Neptune?"})
	st.Plan = []plan.Step{
		{ID: "1", Description: "Find the year Uranus was discovered", Tool: "search", Input: "Uranus discovered", Status: plan.StatusDone, Result: "William Herschel found it on 13 March 1781"},
		{ID: "2", Description: "Find the year Neptune was discovered", Tool: "search", Input: "Neptun", Status: plan.StatusFailed, Error: "no match"},
		{ID: "3", Description: "Subtract", Tool: "calculator", Input: "#E2 - #E1", Status: plan.StatusSkipped, Error: "references #E2 of step 2, which failed: no match"},
	}
	return st
}

func runNode(t *testing.T, node nodekind.Node, st *state.State) (string, *trace.Recorder) {
	t.Helper()
	rec := &trace.Recorder{}
	route, err := node.Run(trace.WithTracer(context.Background(), trace.New("r", rec)), st)
	require.NoError(t, err)
	return route, rec
}

func TestReplannerFinishesWithTheAnswer(t *testing.T) {
	node, _ := build(t, replanner.New, nil, scripted.Reply{Node: "replanner", Contains: "result: William Herschel found it on 13 March 1781",
		Text: "```json\n{\"thought\": \"enough\", \"action\": \"finish\", \"answer\": 65}\n```"})
	st := executedState()
	route, rec := runNode(t, node, st)
	assert.Equal(t, replanner.RouteFinish, route)
	assert.Equal(t, "65", st.Answer)
	assert.True(t, st.Complete)
	d := rec.OfKind(trace.KindDecision)
	require.Len(t, d, 1)
	assert.Equal(t, "finish", d[0].Data["action"])
	assert.Equal(t, "enough", d[0].Data["thought"])
}

func TestReplannerReplacesTheRemainingStepsAndKeepsHistory(t *testing.T) {
	node, _ := build(t, replanner.New, nil, scripted.Reply{Contains: `New step ids start at "4"`,
		Text: `{"action":"replan","steps":[{"id":"4","description":"Find the year Neptune was discovered","tool":"search","input":"Neptune discovered"},{"id":"5","description":"Subtract","tool":"calculator","input":"#E4 - 1781","depends_on":["4"]}]}`})
	st := executedState()
	route, rec := runNode(t, node, st)
	assert.Equal(t, replanner.RouteContinue, route)
	assert.Equal(t, 1, st.Replans)
	var ids, statuses []string
	for _, s := range st.Plan {
		ids = append(ids, s.ID)
		statuses = append(statuses, s.Status)
	}
	assert.Equal(t, []string{"1", "2", "3", "4", "5"}, ids)
	assert.Equal(t, []string{"done", "failed", "skipped", "pending", "pending"}, statuses)
	assert.False(t, st.Done)
	d := rec.OfKind(trace.KindDecision)
	require.Len(t, d, 1)
	assert.Equal(t, "replan (1 of 3): 2 new step(s)", d[0].Text)
	require.Len(t, rec.OfKind(trace.KindPlan), 1, "the revised plan is traced")
}

func TestReplannerRefusesToReplanOnceTheBudgetIsSpent(t *testing.T) {
	node, _ := build(t, replanner.New, map[string]any{"max_replans": 2}, scripted.Reply{Contains: "No more re-planning is possible",
		Text: `{"action":"replan","steps":[{"id":"4","description":"again","tool":"search","input":"Neptune"}]}`})
	st := executedState()
	st.Replans = 2
	route, rec := runNode(t, node, st)
	assert.Equal(t, replanner.RouteFinish, route)
	assert.False(t, st.Done, "the finalizer composes the answer")
	assert.Equal(t, state.FailureBudget, st.Failure)
	assert.Contains(t, st.Reason, "re-planning budget is spent (2 re-plan(s))")
	assert.Len(t, st.Plan, 3, "the refused steps are not added")
	assert.Equal(t, 2, st.Replans)
	require.Len(t, rec.OfKind(trace.KindDecision), 1)
}

func TestReplannerRetriesUnusableRepliesThenHandsOverToTheFinalizer(t *testing.T) {
	cases := []struct {
		name     string
		reply    string
		feedback string
	}{
		{"prose", "I am not sure what to do.", "no JSON object"},
		{"unknown action", `{"action":"ponder"}`, `unknown action "ponder"`},
		{"replan without steps", `{"action":"replan"}`, "needs \"steps\""},
		{"replan reusing a finished id", `{"action":"replan","steps":[{"id":"1","description":"x","tool":"search"}]}`, `number new steps after "3"`},
		{"replan with an unknown tool", `{"action":"replan","steps":[{"id":"4","description":"x","tool":"wiki"}]}`, `uses "wiki"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node, m := build(t, replanner.New, nil, scripted.Reply{Text: tc.reply}, scripted.Reply{Contains: tc.feedback, Text: tc.reply})
			st := executedState()
			route, _ := runNode(t, node, st)
			assert.Equal(t, replanner.RouteFinish, route)
			assert.Equal(t, 0, m.Remaining(), "the reason was fed back once")
			assert.False(t, st.Done)
			assert.Equal(t, state.FailureParse, st.Failure)
			assert.Contains(t, st.Reason, tc.feedback)
		})
	}
}

func TestReplannerAcceptsACorrectedReply(t *testing.T) {
	node, _ := build(t, replanner.New, nil,
		scripted.Reply{Text: "not json"},
		scripted.Reply{Contains: "could not be used", Text: `{"action": "FINISH", "answer": "65"}`})
	st := executedState()
	route, _ := runNode(t, node, st)
	assert.Equal(t, replanner.RouteFinish, route)
	assert.Equal(t, "65", st.Answer)
	assert.Empty(t, st.Failure)
}

func TestReplannerSkipsTheModelWhenTheAnswerIsKnown(t *testing.T) {
	node, m := build(t, replanner.New, nil)
	st := executedState()
	st.SetAnswer("65")
	route, _ := runNode(t, node, st)
	assert.Equal(t, replanner.RouteFinish, route)
	assert.Equal(t, 0, m.Calls())
}

func TestJoinerRequiresToolsByDefault(t *testing.T) {
	node, _ := build(t, replanner.NewJoiner, nil,
		scripted.Reply{Contains: "Tool calls made so far", Text: `{"action":"replan","steps":[{"id":"4","description":"think harder"}]}`},
		scripted.Reply{Contains: "must name the tool", Text: `{"action":"replan","steps":[{"id":"4","description":"search","tool":"search","input":"Neptune discovered"}]}`})
	st := executedState()
	route, _ := runNode(t, node, st)
	assert.Equal(t, replanner.RouteContinue, route)
	assert.Equal(t, "search", st.Plan[3].Tool)
}

func TestReplannerRejectsBadSettings(t *testing.T) {
	cases := []struct {
		settings map[string]any
		key      string
	}{
		{map[string]any{"max_replans": -1}, "max_replans"},
		{map[string]any{"max_retries": -1}, "max_retries"},
		{map[string]any{"max_plan_steps": -3}, "max_plan_steps"},
		{map[string]any{"llm_tool": "calculator"}, "llm_tool"},
		{map[string]any{"max_replan": 2}, "max_replan"},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			reg, err := tools.NewRegistry([]tools.Tool{calc.New()})
			require.NoError(t, err)
			_, err = replanner.New(nodekind.Env{Tools: reg}, nodekind.Spec{ID: "r", Type: "replanner", Settings: tc.settings})
			require.Error(t, err)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.key, se.Key)
		})
	}
}

func TestParseDecisionIsTolerant(t *testing.T) {
	cases := []struct {
		name string
		text string
		want replanner.Decision
	}{
		{"bare finish", `{"action":"finish","answer":"Voyager 2"}`, replanner.Decision{Action: "finish", Answer: "Voyager 2"}},
		{"synonym and numeric answer", `{"action":"final_answer","answer":24}`, replanner.Decision{Action: "finish", Answer: "24"}},
		{"answer without action", `Sure: {"answer": "1930"}`, replanner.Decision{Action: "finish", Answer: "1930"}},
		{"non-string answer kept as compact JSON", `{"action": "finish", "answer": {"years": [1781, 1846]}}`, replanner.Decision{Action: "finish", Answer: `{"years":[1781,1846]}`}},
		{"answer line without JSON", "Thought: done\nFinal Answer: 1930", replanner.Decision{Action: "finish", Answer: "1930"}},
		{"finish without an answer", `{"action":"finish"}`, replanner.Decision{Action: "finish"}},
		{"replan via continue", "```\n{\"action\":\"continue\",\"steps\":[{\"id\":4,\"description\":\"x\",\"tool\":\"search\",\"input\":\"#E1\"}]}\n```",
			replanner.Decision{Action: "replan", Steps: []plan.Step{{ID: "4", Description: "x", Tool: "search", Input: "#E1", DependsOn: []string{"1"}}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := replanner.ParseDecision(tc.text)
			require.NoError(t, err)
			assert.Equal(t, tc.want, d)
		})
	}
	for _, bad := range []string{"", "no idea", `{"thought":"hmm"}`, `{"action": 3}`} {
		_, err := replanner.ParseDecision(bad)
		assert.ErrorIs(t, err, replanner.ErrMalformedDecision, "%q", bad)
	}
	_, err := replanner.ParseDecision(`{"action":"replan","steps":"do more"}`)
	assert.ErrorIs(t, err, plan.ErrMalformedPlan)
}
