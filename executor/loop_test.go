package executor_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

func TestTextLoopGuards(t *testing.T) {
	cases := []struct {
		name   string
		cfg    executor.ReActConfig
		script scripted.Script
		// tools builds the registry's tools; default echo and fail.
		tools func() []tools.Tool
		check func(t *testing.T, h *harness)
	}{
		{
			name:   "tool result is observed and the final answer completes the run",
			script: text("Thought: I will echo.\nAction: echo\nAction Input: hi", "Thought: I have it.\nFinal Answer: echo: hi"),
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, "echo: hi", h.out.Answer)
				assert.Equal(t, 2, h.out.Iterations)
				require.Len(t, h.out.Entries, 2)
				assert.Equal(t, state.Entry{Thought: "I will echo.", Tool: "echo", Input: "hi", Observation: "echo: hi",
					Raw: "Thought: I will echo.\nAction: echo\nAction Input: hi"}, h.out.Entries[0])
				assert.Equal(t, "echo: hi", h.out.Entries[1].Final)
				assert.Contains(t, h.prompt(1), "Observation: [echo] echo: hi")
				assert.Equal(t, 1, h.state.Usage.Snapshot().ToolCalls)
				assert.Equal(t, 2, h.state.Usage.Snapshot().PerNode["act"].ModelCalls)
				assert.Empty(t, h.guards())
			},
		},
		{
			name:   "format error is fed back and the run recovers",
			script: text("I am not sure what to do here.", "Thought: Fine.\nFinal Answer: 42"),
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, "42", h.out.Answer)
				require.Len(t, h.out.Entries, 2)
				feedback := h.out.Entries[0].Error
				assert.Contains(t, feedback, "Invalid format")
				assert.Contains(t, h.prompt(1), "Observation: "+feedback)
				require.Len(t, h.ofKind(trace.KindParseError), 1)
				assert.Equal(t, feedback, h.ofKind(trace.KindParseError)[0].Text)
			},
		},
		{
			name: "consecutive format errors stop the run with a parse failure and a finalized answer",
			cfg:  executor.ReActConfig{MaxParseFailures: 3},
			script: scripted.Script{Replies: []scripted.Reply{
				{Text: "hmm", Times: 3},
				{Role: "finalize", Contains: "did not follow the required format", Text: "Final Answer: best guess"},
			}},
			check: func(t *testing.T, h *harness) {
				assert.False(t, h.out.Complete)
				assert.Equal(t, state.FailureParse, h.out.Failure)
				assert.Equal(t, "best guess", h.out.Answer)
				assert.Equal(t, 3, h.out.Iterations)
				assert.ErrorIs(t, h.out.Err(), executor.ErrTooManyParseFailures)
				assert.Contains(t, h.out.Reason, "3 replies in a row")
				assert.Len(t, h.ofKind(trace.KindParseError), 3)
				reqs := requests(h.model)
				require.Len(t, reqs, 4)
				assert.Equal(t, "finalize", reqs[3].caller.Role)
				assert.Equal(t, []string{state.FailureParse}, h.guards())
			},
		},
		{
			name:   "format errors separated by a valid step do not add up",
			cfg:    executor.ReActConfig{MaxParseFailures: 2},
			script: text("hmm", "Thought: t\nAction: echo\nAction Input: a", "hmm", "Thought: t\nFinal Answer: done"),
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, "done", h.out.Answer)
				assert.Len(t, h.ofKind(trace.KindParseError), 2)
			},
		},
		{
			name:   "unknown tool is answered with the real tool names",
			script: text("Thought: t\nAction: serch\nAction Input: x", "Thought: t\nFinal Answer: none"),
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Contains(t, h.prompt(1), `Observation: Error: there is no tool named "serch". Use one of: echo, fail.`)
				assert.Contains(t, h.out.Entries[0].Error, `no tool named "serch"`)
				assert.Empty(t, h.out.Entries[0].Observation)
				assert.Equal(t, []string{"unknown_tool"}, h.guards())
				assert.Zero(t, h.state.Usage.Snapshot().ToolCalls)
			},
		},
		{
			name:   "tool names differing in case or separators resolve to the tool",
			script: text("Thought: t\nAction: ECHO\nAction Input: x", "Thought: t\nFinal Answer: x"),
			check: func(t *testing.T, h *harness) {
				assert.Equal(t, "echo", h.out.Entries[0].Tool)
				assert.Equal(t, "echo: x", h.out.Entries[0].Observation)
				assert.Contains(t, h.prompt(1), "Action: echo\nAction Input: x")
			},
		},
		{
			name: "a repeated call that gets the same result again is warned about",
			script: text("Thought: t\nAction: echo\nAction Input: same input",
				"Thought: again\nAction: echo\nAction Input: Same  Input", "Thought: t\nFinal Answer: ok"),
			tools: func() []tools.Tool {
				return []tools.Tool{&fakeTool{name: "echo", fn: func(_ context.Context, in string) (string, error) {
					return "echo: " + strings.Join(strings.Fields(strings.ToLower(in)), " "), nil
				}}}
			},
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, 2, h.state.Usage.Snapshot().ToolCalls, "the tool runs: only its result tells a loop from progress")
				assert.Contains(t, h.prompt(2), "Observation: [echo] echo: same input\n(You already called echo with this input in step 1 and got this same result.")
				assert.Equal(t, []string{"repeat"}, h.guards())
				obs := h.ofKind(trace.KindObservation)
				require.Len(t, obs, 2)
				assert.Contains(t, obs[1].Text, "(You already called echo", "the trace's observation is what the model saw, warning included")
			},
		},
		{
			name: "a repeated call whose result changed is progress, not a repeat",
			cfg:  executor.ReActConfig{MaxRepeats: 1},
			script: text("Thought: t\nAction: page\nAction Input: x", "Thought: t\nAction: page\nAction Input: x",
				"Thought: t\nAction: page\nAction Input: x", "Thought: t\nFinal Answer: ok"),
			tools: func() []tools.Tool {
				var n atomic.Int32
				return []tools.Tool{&fakeTool{name: "page", fn: func(context.Context, string) (string, error) {
					return fmt.Sprintf("(Result %d / 3) sentence", n.Add(1)), nil
				}}}
			},
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, 3, h.state.Usage.Snapshot().ToolCalls)
				assert.Empty(t, h.guards())
				assert.Contains(t, h.prompt(3), "Observation: [page] (Result 3 / 3) sentence")
			},
		},
		{
			name: "repeats beyond max_repeats stop the run with a loop failure",
			cfg:  executor.ReActConfig{MaxRepeats: 1},
			script: scripted.Script{Replies: []scripted.Reply{
				{Text: "Thought: t\nAction: echo\nAction Input: x", Times: 3},
				{Role: "finalize", Contains: "repeating the same tool call", Text: "Final Answer: echo: x"},
			}},
			check: func(t *testing.T, h *harness) {
				assert.False(t, h.out.Complete)
				assert.Equal(t, state.FailureLoop, h.out.Failure)
				assert.ErrorIs(t, h.out.Err(), executor.ErrLoopDetected)
				assert.Equal(t, "echo: x", h.out.Answer)
				assert.Equal(t, 3, h.out.Iterations)
				assert.Equal(t, []string{"repeat", state.FailureLoop}, h.guards())
				assert.Equal(t, 3, h.state.Usage.Snapshot().ToolCalls)
				assert.Equal(t, "echo: x", h.out.Entries[2].Observation)
				assert.Contains(t, h.out.Entries[2].Error, "got the same result each time")
			},
		},
		{
			name:   "empty replies are retried with the same prompt and a nudge",
			cfg:    executor.ReActConfig{MaxEmptyRetries: intp(2)},
			script: text("  \n", "Observation: the model skipped its action", "Thought: t\nFinal Answer: a"),
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, 1, h.out.Iterations)
				assert.Equal(t, []string{"empty_reply", "empty_reply"}, h.guards())
				reqs := requests(h.model)
				require.Len(t, reqs, 3)
				assert.Equal(t, reqs[1].msgs, reqs[2].msgs)
				require.Len(t, reqs[2].msgs, len(reqs[0].msgs)+1)
				assert.Equal(t, reqs[0].msgs, reqs[2].msgs[:len(reqs[0].msgs)])
				assert.Equal(t, llms.TextParts(llms.ChatMessageTypeHuman, "Your reply was empty. Reply in the format above: a Thought and one Action, or your Final Answer."), reqs[2].msgs[len(reqs[0].msgs)])
				assert.Equal(t, 3, h.state.Usage.Snapshot().ModelCalls, "every retry is a model call")
			},
		},
		{
			name:   "an empty reply beyond the retries becomes format feedback",
			cfg:    executor.ReActConfig{MaxEmptyRetries: intp(1)},
			script: text(" ", " ", "Thought: t\nFinal Answer: a"),
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, 2, h.out.Iterations)
				assert.Contains(t, h.out.Entries[0].Error, "the reply is empty")
				assert.Contains(t, h.prompt(2), "(empty reply)")
			},
		},
		{
			name:   "a panicking tool becomes an error observation and the run goes on",
			script: text("Thought: t\nAction: panic\nAction Input: x", "Thought: t\nFinal Answer: gave up"),
			tools:  func() []tools.Tool { return []tools.Tool{echoTool(), failTool(), panicTool()} },
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				obs := h.out.Entries[0].Observation
				assert.True(t, strings.HasPrefix(obs, "Error: "), obs)
				assert.Contains(t, obs, "tool panicked: boom")
				assert.NotContains(t, obs, "goroutine", "the stack must not reach the model")
				assert.Contains(t, h.prompt(1), "Observation: [panic] Error: ")
				assert.Equal(t, []string{"tool_error"}, h.guards())
			},
		},
		{
			name:   "a tool that overruns its timeout becomes an error observation",
			script: text("Thought: t\nAction: sleep\nAction Input: x", "Thought: t\nFinal Answer: gave up"),
			tools:  func() []tools.Tool { return []tools.Tool{echoTool(), failTool(), sleepTool()} },
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Contains(t, h.out.Entries[0].Observation, "timed out after 50ms")
				assert.Equal(t, []string{"tool_error"}, h.guards())
			},
		},
		{
			name:   "a tool error is shown to the model",
			script: text("Thought: t\nAction: fail\nAction Input: x", "Thought: t\nFinal Answer: later"),
			check: func(t *testing.T, h *harness) {
				assert.Equal(t, "Error: quota exceeded, try again tomorrow", h.out.Entries[0].Observation)
				assert.Contains(t, h.prompt(1), "Observation: [fail] Error: quota exceeded")
			},
		},
		{
			name:   "long observations are cut with a marker",
			cfg:    executor.ReActConfig{ObservationLimit: 100},
			script: text("Thought: t\nAction: big\nAction Input: q", "Thought: t\nFinal Answer: x"),
			tools:  func() []tools.Tool { return []tools.Tool{bigTool(5000)} },
			check: func(t *testing.T, h *harness) {
				full := "result for q: " + strings.Repeat("x", 5000-len("result for q: "))
				assert.Equal(t, full[:100]+"…[truncated 4,900 chars]", h.out.Entries[0].Observation)
				assert.Equal(t, []string{"observation_truncated"}, h.guards())
			},
		},
		{
			name: "an invented observation is cut when the provider ignores stop words",
			script: scripted.Script{IgnoreStop: true, Replies: []scripted.Reply{
				{Text: "Thought: t\nAction: echo\nAction Input: real\nObservation: FAKE-RESULT\nThought: so\nFinal Answer: FAKE-ANSWER"},
				{Contains: "echo: real", Text: "Thought: t\nFinal Answer: real answer"},
			}},
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, "real answer", h.out.Answer)
				assert.Equal(t, "echo: real", h.out.Entries[0].Observation)
				assert.NotContains(t, h.prompt(1), "FAKE")
				assert.Equal(t, []string{"invented_observation"}, h.guards())
			},
		},
		{
			name: "running out of iterations asks the finalizer and marks the answer incomplete",
			cfg:  executor.ReActConfig{MaxIterations: 2},
			script: scripted.Script{Replies: []scripted.Reply{
				{Text: "Thought: t\nAction: echo\nAction Input: a"},
				{Text: "Thought: t\nAction: echo\nAction Input: b"},
				{Role: "finalize", Regex: `(?s)Task: the task.*echo: a.*echo: b`, Text: "Final Answer: partial"},
			}},
			check: func(t *testing.T, h *harness) {
				assert.False(t, h.out.Complete)
				assert.Equal(t, state.FailureBudget, h.out.Failure)
				assert.Contains(t, h.out.Reason, "budget ran out")
				assert.ErrorIs(t, h.out.Err(), executor.ErrBudget)
				assert.Equal(t, "partial", h.out.Answer)
				assert.Equal(t, 2, h.out.Iterations)
				reqs := requests(h.model)
				require.Len(t, reqs, 3)
				assert.Equal(t, "finalize", reqs[2].caller.Role)
				assert.Empty(t, reqs[2].opts.StopWords)
				assert.Equal(t, []string{state.FailureBudget}, h.guards())
			},
		},
		{
			name:   "with finalize off a stopped run has no answer",
			cfg:    executor.ReActConfig{MaxIterations: 1, Finalize: boolp(false)},
			script: text("Thought: t\nAction: echo\nAction Input: a"),
			check: func(t *testing.T, h *harness) {
				assert.False(t, h.out.Complete)
				assert.Empty(t, h.out.Answer)
				assert.Equal(t, state.FailureBudget, h.out.Failure)
				assert.Len(t, requests(h.model), 1)
			},
		},
		{
			name: "old observations are elided while the task and tool list stay",
			cfg:  executor.ReActConfig{KeepSteps: intp(1), Compaction: executor.CompactionWindow},
			script: text("Thought: t\nAction: big\nAction Input: one", "Thought: t\nAction: big\nAction Input: two",
				"Thought: t\nAction: big\nAction Input: three", "Thought: t\nFinal Answer: done"),
			tools: func() []tools.Tool { return []tools.Tool{bigTool(500)} },
			check: func(t *testing.T, h *harness) {
				p := h.prompt(-1)
				assert.Contains(t, p, "Task: the task")
				assert.Contains(t, p, "test tool big")
				assert.Contains(t, p, `[observation of step 1 elided: 500 chars; it began "result for one: xxx`)
				assert.Contains(t, p, "[observation of step 2 elided: 500 chars;")
				assert.Contains(t, p, "result for three: "+strings.Repeat("x", 400))
				assert.NotContains(t, p, "result for one: "+strings.Repeat("x", 100))
				assert.Contains(t, p, "Action: big\nAction Input: one", "actions of old steps stay")
				assert.Equal(t, []string{"compaction", "compaction"}, h.guards())
			},
		},
		{
			name: "keep_steps 0 keeps every observation",
			cfg:  executor.ReActConfig{KeepSteps: intp(0)},
			script: text("Thought: t\nAction: big\nAction Input: one", "Thought: t\nAction: big\nAction Input: two",
				"Thought: t\nAction: big\nAction Input: three", "Thought: t\nFinal Answer: done"),
			tools: func() []tools.Tool { return []tools.Tool{bigTool(500)} },
			check: func(t *testing.T, h *harness) {
				p := h.prompt(-1)
				for _, q := range []string{"one", "two", "three"} {
					assert.Contains(t, p, "result for "+q+": "+strings.Repeat("x", 400))
				}
				assert.NotContains(t, p, "elided")
			},
		},
		{
			name:   "paper-format actions and Finish are understood",
			cfg:    executor.ReActConfig{Format: executor.FormatPaper},
			script: text("Thought: t\nAction: echo[hi there]", "Thought: t\nAction: Finish[echo: hi there]"),
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, "echo: hi there", h.out.Answer)
				assert.Contains(t, h.prompt(1), "Action: echo[hi there]\n")
			},
		},
		{
			name:   "the Chinese variant labels observations in Chinese and stops on them",
			cfg:    executor.ReActConfig{Language: executor.LanguageChinese},
			script: text("思考：先试一下。\n行动：echo\n行动输入：你好", "思考：好了。\n最终答案：你好"),
			check: func(t *testing.T, h *harness) {
				assert.True(t, h.out.Complete)
				assert.Equal(t, "你好", h.out.Answer)
				assert.Contains(t, h.prompt(1), "思考：先试一下。\n行动：echo\n行动输入：你好")
				assert.Contains(t, h.prompt(1), "观察：[echo] echo: 你好")
				assert.Contains(t, requests(h.model)[0].opts.StopWords, "\n观察：")
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := []tools.Tool{echoTool(), failTool()}
			if tc.tools != nil {
				ts = tc.tools()
			}
			h := runScript(t, tc.cfg, tc.script, "the task", ts...)
			require.NoError(t, h.err)
			tc.check(t, h)
		})
	}
}

func TestTextModeSendsStopWords(t *testing.T) {
	h := runScript(t, executor.ReActConfig{}, text("Thought: t\nFinal Answer: a"), "q", echoTool())
	require.NoError(t, h.err)
	reqs := requests(h.model)
	require.Len(t, reqs, 1)
	assert.Equal(t, []string{"\nObservation:", "Observation:"}, reqs[0].opts.StopWords)
	assert.Empty(t, reqs[0].opts.Tools)
	assert.Equal(t, llms.ChatMessageTypeSystem, reqs[0].msgs[0].Role)
	assert.Equal(t, llm.CallMeta{Node: "act", Kind: "react"}, reqs[0].caller)
}

func TestRepeatedCallShowsItsResultInFullAgain(t *testing.T) {
	h := runScript(t, executor.ReActConfig{KeepSteps: intp(1)}, text(
		"Thought: t\nAction: big\nAction Input: one",
		"Thought: t\nAction: big\nAction Input: two",
		"Thought: t\nAction: big\nAction Input: one",
		"Thought: t\nFinal Answer: done"), "q", bigTool(500))
	require.NoError(t, h.err)
	assert.True(t, h.out.Complete)
	assert.Contains(t, h.out.Entries[2].Observation, "result for one: ", "the repeat runs the tool, so its result is shown in full again")
	assert.Contains(t, h.out.Entries[2].Observation, "(You already called big with this input in step 1 and got this same result.")
	assert.Empty(t, h.out.Entries[2].Error)
	assert.Equal(t, 3, h.state.Usage.Snapshot().ToolCalls)
}

func TestEmptyTaskIsRejected(t *testing.T) {
	l, err := executor.NewLoop(nodekind.Env{Tools: registry(t, echoTool())}, executor.ReActConfig{})
	require.NoError(t, err)
	_, err = l.Run(t.Context(), hookedState(state.Task{}), executor.Input{Task: "  "})
	assert.ErrorIs(t, err, executor.ErrEmptyTask)
}

func TestModelFailureAbortsWithEntriesSoFar(t *testing.T) {
	s := scripted.Script{Replies: []scripted.Reply{{Text: "Thought: t\nAction: echo\nAction Input: a"}, {Error: "HTTP 500"}}}
	h := runScript(t, executor.ReActConfig{}, s, "q", echoTool())
	require.Error(t, h.err)
	assert.ErrorIs(t, h.err, llm.ErrModel)
	require.Len(t, h.out.Entries, 1)
	assert.Equal(t, "echo: a", h.out.Entries[0].Observation)
}

func TestCancelledContextStopsTheRun(t *testing.T) {
	sm, err := scripted.New(text("Thought: t\nAction: echo\nAction Input: a"))
	require.NoError(t, err)
	l, err := executor.NewLoop(nodekind.Env{Model: llm.Model{LLM: sm}, Tools: registry(t, echoTool())}, executor.ReActConfig{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = l.Run(ctx, hookedState(state.Task{}), executor.Input{Task: "q"})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestContextAndLessonsAreShownBeforeTheTask(t *testing.T) {
	sm, err := scripted.New(text("Thought: t\nFinal Answer: a"))
	require.NoError(t, err)
	m := newRecModel(sm)
	l, err := executor.NewLoop(nodekind.Env{Model: llm.Model{LLM: m}, Tools: registry(t, echoTool())}, executor.ReActConfig{})
	require.NoError(t, err)
	_, err = l.Run(t.Context(), hookedState(state.Task{}), executor.Input{Task: "step two", Context: "step one found 7",
		Reflections: []string{"check units", "search names alone"}})
	require.NoError(t, err)
	msgs := requests(m)[0].msgs
	require.Len(t, msgs, 2)
	user := msgs[1].Parts[0].(llms.TextContent).Text
	assert.Equal(t, "Context (results of earlier work you can rely on):\nstep one found 7\n\n"+
		"Lessons from earlier attempts at this task (do not repeat these mistakes):\n1. check units\n2. search names alone\n\n"+
		"Task: step two", user)
}
