package flow_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/nodes/flow"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func classifyRouter(extra map[string]any) map[string]any {
	c := map[string]any{"labels": []any{"math", "lookup", "needs_tool"}}
	for k, v := range extra {
		c[k] = v
	}
	return map[string]any{"classify": c, "default": "other"}
}

// classify builds a classifying router on model m and runs it once.
func classify(t *testing.T, m llms.Model, extra map[string]any) (string, *state.State, *trace.Recorder) {
	t.Helper()
	b := mustBuild(t, flow.NewRouter, "router", classifyRouter(extra), m)
	assert.Equal(t, []string{"math", "lookup", "needs_tool", "other"}, b.Routes)
	st := state.NewState(state.Task{Question: "What is 17 * 23?"})
	route, rec, err := run(t, b.Node, st)
	require.NoError(t, err)
	return route, st, rec
}

func TestClassifyValidLabelInOneCall(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Replies(`{"label": "math"}`), Meta: func(ctx context.Context) any { return llm.CallMetaFrom(ctx) }}
	route, st, tr := classify(t, rec, nil)
	assert.Equal(t, "math", route)
	assert.Empty(t, st.Incidents)
	require.Equal(t, 1, rec.Calls())
	req := rec.Requests()[0]
	assert.Contains(t, req.Text(), "What is 17 * 23?")
	assert.Contains(t, req.Text(), "- math\n- lookup\n- needs_tool\n", "the label set is in the prompt")
	assert.Equal(t, llm.CallMeta{Node: "n", Kind: "router"}, req.Meta)
	assert.Equal(t, []map[string]any{{"route": "math", "by": "classify", "attempt": 1}}, eventData(tr, trace.KindDecision))
}

func TestClassifyReadsMessyReplies(t *testing.T) {
	cases := map[string]string{
		"Math":           "math",
		"  LOOKUP.  ":    "lookup",
		"**needs tool**": "needs_tool",
		"Needs-Tool!":    "needs_tool",
		"`math`":         "math",
		"Label: lookup":  "lookup",
		"The task is arithmetic.\nCategory: Math.":      "math",
		"```json\n{\"label\": \"Needs_Tool\"}\n```":     "needs_tool",
		"Sure! {\"LABEL\": \"lookup\", \"why\": \"x\"}": "lookup",
		"\"math\"": "math",
	}
	for reply, want := range cases {
		t.Run(reply, func(t *testing.T) {
			route, st, _ := classify(t, llmtest.Replies(reply), nil)
			assert.Equal(t, want, route)
			assert.Empty(t, st.Incidents)
		})
	}
}

func TestClassifyRetriesAnInvalidLabelOnceWithTheError(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Replies(`{"label": "arithmetic"}`, "lookup")}
	route, st, tr := classify(t, rec, nil)
	assert.Equal(t, "lookup", route)
	assert.Empty(t, st.Incidents)
	require.Equal(t, 2, rec.Calls())
	second := rec.Requests()[1].Messages
	require.Len(t, second, 4, "system, prompt, the rejected reply, the feedback")
	assert.Equal(t, llms.ChatMessageTypeAI, second[2].Role)
	assert.Equal(t, `{"label": "arithmetic"}`, strings.TrimSpace(llmtest.Text(second[2:3])))
	assert.Contains(t, llmtest.LastText(second), `"arithmetic" is not one of the labels (math, lookup, needs_tool)`)
	assert.Contains(t, llmtest.LastText(second), "exactly one of: math, lookup, needs_tool")
	pe := eventData(tr, trace.KindParseError)
	require.Len(t, pe, 1)
	assert.Equal(t, 1, pe[0]["attempt"])
	assert.Equal(t, 1, pe[0]["retries_left"])
	assert.Equal(t, []map[string]any{{"route": "lookup", "by": "classify", "attempt": 2}}, eventData(tr, trace.KindDecision))
}

func TestClassifyInvalidTwiceTakesTheDefaultWithAGuardAndAnIncident(t *testing.T) {
	for name, replies := range map[string][]string{
		"no label":       {"I cannot tell.", "Hmm."},
		"several labels": {"math or lookup", "math\nlookup"},
		"empty":          {"", ""},
		"wrong json":     {`{"label": "sports"}`, `{"category": "math"}`},
	} {
		t.Run(name, func(t *testing.T) {
			rec := &llmtest.Recorder{Model: llmtest.Replies(replies...)}
			route, st, tr := classify(t, rec, nil)
			assert.Equal(t, "other", route)
			assert.Equal(t, 2, rec.Calls(), "one retry, no more")
			assert.Equal(t, []string{state.FailureParse}, st.Incidents)
			g := tr.OfKind(trace.KindGuard)
			require.Len(t, g, 1)
			assert.Equal(t, flow.GuardClassifyLabel, g[0].Data["guard"])
			assert.Equal(t, "other", g[0].Data["route"])
			assert.Contains(t, g[0].Text, "no valid label after 2 replies")
			assert.Len(t, tr.OfKind(trace.KindParseError), 2)
			assert.Empty(t, tr.OfKind(trace.KindDecision))
		})
	}
}

func TestClassifyModelErrorIsReturned(t *testing.T) {
	boom := errors.New("provider down")
	b := mustBuild(t, flow.NewRouter, "router", classifyRouter(nil), llmtest.Fail(boom))
	_, _, err := run(t, b.Node, state.NewState(state.Task{Question: "q"}))
	require.ErrorIs(t, err, llm.ErrModel)
	assert.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "router n:")
}

func TestClassifyCustomPromptAndOptions(t *testing.T) {
	rec := &llmtest.Recorder{Model: llmtest.Replies("math")}
	route, _, _ := classify(t, rec, map[string]any{
		"system":     "Sort it.",
		"prompt":     "Route {{.Question}} given {{.Vars.hint}}",
		"max_tokens": 5,
		"json_mode":  true,
	})
	assert.Equal(t, "math", route)
	req := rec.Requests()[0]
	assert.Equal(t, "Sort it.", strings.TrimSpace(llmtest.Text(req.Messages[:1])))
	user := llmtest.LastText(req.Messages)
	assert.Contains(t, user, "Route What is 17 * 23? given ")
	assert.Contains(t, user, "where <label> is one of: math, lookup, needs_tool.", "a custom prompt without the labels gets them appended")
	opts := req.Options
	assert.Equal(t, 5, opts.MaxTokens)
	assert.True(t, opts.JSONMode)
}

func TestClassifyReadsTheVarsItsPromptReads(t *testing.T) {
	b := mustBuild(t, flow.NewRouter, "router", classifyRouter(map[string]any{"prompt": "{{.Vars.hint}} {{.Extra.Labels}}"}), llmtest.Replies("math"))
	assert.Equal(t, []string{"hint"}, b.Node.(*flow.Router).ReadsVars())
}
