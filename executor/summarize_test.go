package executor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// docTool returns a long page per input whose middle holds a fact that
// names the input, so a test can tell whether that detail is in a prompt.
func docTool() *fakeTool {
	return &fakeTool{name: "doc", fn: func(_ context.Context, in string) (string, error) {
		pad := strings.Repeat("filler text about nothing in particular. ", 60)
		return "page " + in + ": " + pad + "The secret code of " + in + " is " + strings.ToUpper(in) + "-42. " + pad, nil
	}}
}

func summarizeConfig() executor.ReActConfig {
	return executor.ReActConfig{Compaction: executor.CompactionSummarize, KeepSteps: intp(1), CompactionBudget: 7000, ObservationLimit: executor.Unlimited}
}

func act(tool, input string) scripted.Reply {
	return scripted.Reply{Text: fmt.Sprintf("Thought: look up %s\nAction: %s\nAction Input: %s", input, tool, input)}
}

func TestSummarizeReplacesABlockWithTheModelsSummary(t *testing.T) {
	s := scripted.Script{Replies: []scripted.Reply{
		act("doc", "alpha"),
		act("doc", "beta"),
		{Role: executor.RoleSummarize, Text: "Summary: doc(alpha) says the secret code of alpha is ALPHA-42."},
		act("echo", "gamma"),
		{Text: "Thought: done\nFinal Answer: ALPHA-42"},
	}}
	h := runScript(t, summarizeConfig(), s, "Find the secret code of alpha.", docTool(), echoTool())
	require.NoError(t, h.err)
	require.True(t, h.out.Complete, h.out.Reason)
	assert.Equal(t, "ALPHA-42", h.out.Answer)

	reqs := requests(h.model)
	require.Len(t, reqs, 5)
	// The summary call sees the task and the block's observations in full.
	sum := reqs[2]
	assert.Equal(t, executor.RoleSummarize, sum.caller.Role)
	assert.Equal(t, 512, sum.opts.MaxTokens)
	assert.Contains(t, sum.text(), "Find the secret code of alpha.")
	assert.Contains(t, sum.text(), "The secret code of alpha is ALPHA-42.")
	assert.NotContains(t, sum.text(), "beta-42", "the kept step is not summarized")

	// After it the prompt shows the summary after the task, not step 1,
	// and step 2 in full.
	after := reqs[3]
	task := after.msgs[1].Parts[0].(llms.TextContent).Text
	assert.Contains(t, task, "Summary of steps 1-1 (no longer shown in full):")
	assert.Contains(t, task, "recall tool")
	assert.Contains(t, task, "doc(alpha) says the secret code of alpha is ALPHA-42.")
	assert.NotContains(t, task, "Summary: doc", "the label the model wrote is dropped")
	assert.NotContains(t, after.text(), "Action Input: alpha")
	assert.Contains(t, after.text(), "The secret code of beta is BETA-42.")

	// Between compactions the prompt is append-only: the last call's
	// messages extend the one before.
	last := reqs[4]
	require.Greater(t, len(last.msgs), len(after.msgs))
	assert.Equal(t, after.msgs, last.msgs[:len(after.msgs)])

	var summarized []trace.Event
	for _, e := range h.ofKind(trace.KindGuard) {
		if e.Data["guard"] == "compaction" && e.Data["mode"] == executor.CompactionSummarize {
			summarized = append(summarized, e)
		}
	}
	require.Len(t, summarized, 1)
	assert.Equal(t, 1, summarized[0].Data["from_step"])
	assert.Equal(t, 1, summarized[0].Data["to_step"])
	assert.Equal(t, 5, h.state.Usage.Totals().ModelCalls, "the summary is a model call of the run")
}

func TestSummariesMergeAcrossBlocks(t *testing.T) {
	s := scripted.Script{Replies: []scripted.Reply{
		act("doc", "alpha"),
		act("doc", "beta"),
		{Role: executor.RoleSummarize, Text: "alpha is ALPHA-42."},
		act("doc", "gamma"),
		{Role: executor.RoleSummarize, Text: "alpha is ALPHA-42; beta is BETA-42."},
		{Text: "Final Answer: done"},
	}}
	h := runScript(t, summarizeConfig(), s, "Collect the codes.", docTool())
	require.NoError(t, h.err)
	reqs := requests(h.model)
	require.Len(t, reqs, 6)
	second := reqs[4]
	assert.Contains(t, second.text(), "Summary of the steps before these:\nalpha is ALPHA-42.", "the earlier summary is merged in")
	assert.Contains(t, second.text(), "The secret code of beta is BETA-42.")
	assert.NotContains(t, second.text(), "The secret code of alpha is", "steps already summarized are not sent again")
	final := reqs[5].msgs[1].Parts[0].(llms.TextContent).Text
	assert.Contains(t, final, "Summary of steps 1-2")
	assert.Contains(t, final, "beta is BETA-42.")
}

func TestAFailedSummaryFallsBackToElision(t *testing.T) {
	s := scripted.Script{Replies: []scripted.Reply{
		act("doc", "alpha"),
		act("doc", "beta"),
		{Role: executor.RoleSummarize, Text: "   ", Times: 3}, // the reply and its two empty-reply retries
		act("doc", "gamma"),
		{Role: executor.RoleSummarize, Text: "alpha and beta checked."},
		{Text: "Final Answer: done"},
	}}
	h := runScript(t, summarizeConfig(), s, "Collect the codes.", docTool())
	require.NoError(t, h.err)
	require.True(t, h.out.Complete)
	assert.Contains(t, h.guards(), executor.GuardSummaryFailed)
	reqs := requests(h.model)
	require.Len(t, reqs, 8)
	// Step 1 is elided, as compaction "block" would.
	assert.Contains(t, reqs[5].text(), "[observation of step 1 elided:")
	assert.NotContains(t, reqs[5].text(), "Summary of steps")
	// The next summary covers the failed block too.
	assert.Contains(t, reqs[6].text(), "The secret code of alpha is ALPHA-42.")
	assert.Contains(t, reqs[7].msgs[1].Parts[0].(llms.TextContent).Text, "Summary of steps 1-2")
}

func TestRecallFetchesBackASummarizedObservation(t *testing.T) {
	s := scripted.Script{Replies: []scripted.Reply{
		act("doc", "alpha"),
		act("doc", "beta"),
		{Role: executor.RoleSummarize, Text: "Looked up alpha."},
		{Text: "Thought: the summary lost the code\nAction: recall\nAction Input: secret code alpha"},
		{Text: "Thought: read step 1\nAction: recall\nAction Input: {\"step\": 1, \"from\": 1500}"},
		{Text: "Final Answer: ALPHA-42"},
	}}
	cfg := summarizeConfig()
	cfg.CompactionBudget = 9000
	h := runScript(t, cfg, s, "Find the secret code of alpha.", docTool())
	require.NoError(t, h.err)
	require.True(t, h.out.Complete, h.out.Reason)
	obs := h.ofKind(trace.KindObservation)
	require.Len(t, obs, 4)
	assert.Contains(t, obs[2].Text, "[step 1] doc(alpha):")
	assert.Contains(t, obs[2].Text, "ALPHA-42", "the search finds the passage with the code")
	assert.Contains(t, obs[3].Text, "[step 1] doc(alpha), characters 1500-")
	// The tool list names recall, and the run counts it as a tool call.
	assert.Contains(t, h.prompt(0), "recall")
	assert.Equal(t, 4, h.state.Usage.Totals().ToolCalls)
}

func TestRecallParsesItsInputForms(t *testing.T) {
	tool := recallFromLoop(t)
	_, err := tool.Call(context.Background(), "1")
	require.ErrorIs(t, err, executor.ErrRecallOutsideRun)

	// Inside a run, through the loop: bad inputs are observations.
	s := scripted.Script{Replies: []scripted.Reply{
		act("doc", "alpha"),
		{Text: "Action: recall\nAction Input: step 7"},
		{Text: "Action: recall\nAction Input: {\"step\": 1, \"from\": 99999}"},
		{Text: "Action: recall\nAction Input: {\"from\": 3}"},
		{Text: "Action: recall\nAction Input: step 1"},
		{Text: "Final Answer: ok"},
	}}
	cfg := executor.ReActConfig{Recall: boolp(true), ObservationLimit: executor.Unlimited}
	h := runScript(t, cfg, s, "Check recall.", docTool())
	require.NoError(t, h.err)
	obs := h.ofKind(trace.KindObservation)
	require.Len(t, obs, 5)
	assert.Contains(t, obs[1].Text, "no tool call in step 7; steps with tool output: 1")
	assert.Contains(t, obs[2].Text, "past its end")
	assert.Contains(t, obs[3].Text, `needs a positive "step" or a "query"`)
	assert.Contains(t, obs[4].Text, "characters 0-1500 of")
	assert.Contains(t, obs[4].Text, `(more: recall {"step": 1, "from": 1500})`)
}

// recallFromLoop returns the recall tool a loop with recall on adds.
func recallFromLoop(t *testing.T) tools.Tool {
	t.Helper()
	l, err := executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Tools: registry(t, echoTool())}, executor.ReActConfig{Recall: boolp(true)})
	require.NoError(t, err)
	assert.Equal(t, []string{"echo", "recall"}, l.Tools())
	reg := registry(t, echoTool())
	assert.False(t, reg.Has("recall"), "the pipeline's registry is not changed")
	l2, err := executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Tools: reg}, executor.ReActConfig{})
	require.NoError(t, err)
	assert.Equal(t, []string{"echo"}, l2.Tools(), "recall is off by default outside summarize")
	full, err := reg.With(executor.RecallTool())
	require.NoError(t, err)
	tool, ok := full.Resolve("recall")
	require.True(t, ok)
	return tool
}

func TestRecallNameClashIsASettingError(t *testing.T) {
	clash := &fakeTool{name: "recall", fn: func(context.Context, string) (string, error) { return "", nil }}
	_, err := executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Tools: registry(t, clash)}, executor.ReActConfig{Compaction: executor.CompactionSummarize})
	var se *config.SettingError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "recall", se.Key)
	_, err = executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Tools: registry(t, clash)}, executor.ReActConfig{Compaction: executor.CompactionSummarize, Recall: boolp(false)})
	assert.NoError(t, err)
}

func TestFinalizerSeesTheSummary(t *testing.T) {
	s := scripted.Script{Replies: []scripted.Reply{
		act("doc", "alpha"),
		act("doc", "beta"),
		{Role: executor.RoleSummarize, Text: "alpha is ALPHA-42."},
		act("echo", "gamma"),
		{Role: "finalize", Text: "Final Answer: ALPHA-42"},
	}}
	cfg := summarizeConfig()
	cfg.MaxIterations = 3
	h := runScript(t, cfg, s, "Find the secret code of alpha.", docTool(), echoTool())
	require.NoError(t, h.err)
	assert.False(t, h.out.Complete)
	fin := h.prompt(-1)
	assert.Contains(t, fin, "Summary of steps 1-1")
	assert.Contains(t, fin, "alpha is ALPHA-42.")
	assert.NotContains(t, fin, "The secret code of alpha is", "the summarized step is not repeated")
	assert.Contains(t, fin, "echo: gamma")
}

func TestASummaryCallThatFailsFallsBackToElision(t *testing.T) {
	s := scripted.Script{Replies: []scripted.Reply{
		act("doc", "alpha"),
		act("doc", "beta"),
		{Role: executor.RoleSummarize, Error: "HTTP 503: overloaded"},
		{Text: "Final Answer: done"},
	}}
	h := runScript(t, summarizeConfig(), s, "Collect the codes.", docTool())
	require.NoError(t, h.err)
	require.True(t, h.out.Complete)
	var failed []trace.Event
	for _, e := range h.ofKind(trace.KindGuard) {
		if e.Data["guard"] == executor.GuardSummaryFailed {
			failed = append(failed, e)
		}
	}
	require.Len(t, failed, 1)
	assert.Contains(t, failed[0].Text, "503")
	assert.Contains(t, h.prompt(-1), "[observation of step 1 elided:")
}

// A journaled run replays its summary calls: the resumed run makes no
// live model call and shows the model the same prompts.
func TestSummaryCallsAreJournaled(t *testing.T) {
	replies := []scripted.Reply{
		act("doc", "alpha"),
		act("doc", "beta"),
		{Role: executor.RoleSummarize, Text: "alpha is ALPHA-42."},
		act("echo", "gamma"),
		{Text: "Final Answer: ALPHA-42"},
	}
	store := memstore.New()
	ctx := context.Background()
	require.NoError(t, store.Create(ctx, journal.Thread{Name: "t", Status: journal.StatusRunning}))
	run := func(m llms.Model) (executor.Outcome, *state.State, *trace.Recorder) {
		j, err := journal.Open(ctx, store, "t")
		require.NoError(t, err)
		l, err := executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Model: llm.Model{LLM: m}, Tools: registry(t, docTool(), echoTool())}, summarizeConfig())
		require.NoError(t, err)
		rec := &trace.Recorder{}
		rctx := journal.WithScope(journal.WithRun(trace.WithTracer(ctx, trace.New("test", rec)), j), journal.NodeScope(1, "act"))
		st := hookedState(state.Task{Question: "q"})
		out, err := l.Run(rctx, st, executor.Input{NodeID: "act", Task: "Find the secret code of alpha."})
		require.NoError(t, err)
		return out, st, rec
	}
	sm, err := scripted.New(scripted.Script{Replies: replies})
	require.NoError(t, err)
	first, _, _ := run(sm)
	require.True(t, first.Complete)

	// The replay's model fails every call: only the journal can answer.
	dead, err := scripted.New(scripted.Script{Replies: []scripted.Reply{{Error: "no live calls in a replay", Times: 100}}})
	require.NoError(t, err)
	again, st, rec := run(dead)
	require.True(t, again.Complete, again.Reason)
	assert.Equal(t, first.Answer, again.Answer)
	assert.Equal(t, first.Entries, again.Entries)
	assert.Equal(t, 5, st.Usage.Totals().ModelCalls)
	var summarized int
	for _, e := range rec.OfKind(trace.KindGuard) {
		if e.Data["mode"] == executor.CompactionSummarize {
			summarized++
		}
	}
	assert.Equal(t, 1, summarized)
}
