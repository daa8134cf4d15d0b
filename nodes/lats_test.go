package nodes_test

import (
	"context"
	"errors"
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

const latsLesson = "compute with the calculator instead of guessing"

// runLATS builds a lats node with the calculator and runs it on task.
func runLATS(t *testing.T, settings map[string]any, m llms.Model, task state.Task) (*state.State, *trace.Recorder) {
	t.Helper()
	reg, err := tools.NewRegistry([]tools.Tool{calc.New()})
	require.NoError(t, err)
	built, err := nodes.NewLATS(nodekind.Env{Model: llm.Model{LLM: m}, Tools: reg}, nodekind.Spec{ID: "lats", Type: "lats", Settings: settings})
	require.NoError(t, err)
	st := hookedState(task)
	rec := &trace.Recorder{}
	_, err = built.Node.Run(traceCtx(rec), st)
	require.NoError(t, err)
	return st, rec
}

func TestLATSReflectsOnAWrongAnswerAndRollsOutTheBestBranch(t *testing.T) {
	rec, m := script(t, false,
		scripted.Reply{Role: "expand", Contains: "Observation: [calculator] 18", Text: "Thought: the calculator says 18.\nFinal Answer: 18", Times: 3},
		scripted.Reply{Role: "expand", Text: "Thought: a quick guess.\nFinal Answer: 17"},
		scripted.Reply{Role: "expand", Text: "Thought: compute it.\nAction: calculator\nAction Input: 3 * 5 + 3"},
		scripted.Reply{Role: "value", Contains: "Action Input: 3 * 5 + 3", Text: "Score: 9/10"},
		scripted.Reply{Role: "reflect", Contains: "Your answer: 17", Text: "Lesson: " + latsLesson},
	)
	st, tr := runLATS(t, map[string]any{"children": 2}, rec, arithmeticTask)
	assert.Equal(t, "18", st.Answer)
	assert.True(t, st.Complete)
	assert.Equal(t, []string{latsLesson}, st.Reflections)
	require.Len(t, tr.OfKind(trace.KindReflection), 1)

	expands := requests(rec, "expand")
	require.Len(t, expands, 3, "two samples at the root, one rollout step")
	assert.NotContains(t, expands[0].prompt, latsLesson)
	assert.Contains(t, expands[2].prompt, "Lessons from earlier attempts at this task")
	assert.Contains(t, expands[2].prompt, latsLesson, "the rollout sees the lesson")
	assert.Contains(t, expands[2].prompt, "Action: calculator\nAction Input: 3 * 5 + 3\nObservation: [calculator] 18")

	require.Len(t, st.Scratchpad, 2, "the winning trajectory is the scratchpad")
	assert.Equal(t, "calculator", st.Scratchpad[0].Tool)
	assert.Equal(t, "18", st.Scratchpad[1].Final)

	u := st.Usage.Snapshot()
	assert.Equal(t, m.Calls(), u.ModelCalls)
	assert.Equal(t, 1, u.ToolCalls)
	assert.Len(t, tr.OfKind(trace.KindLLMCall), u.ModelCalls)
	for _, c := range st.Candidates {
		if c.Depth > 1 {
			require.GreaterOrEqual(t, c.Parent, 0)
			assert.Equal(t, c.Depth-1, st.Candidates[c.Parent].Depth)
		}
	}
}

func TestLATSSelectsTheMostValuableChildFirst(t *testing.T) {
	rec, _ := script(t, false,
		scripted.Reply{Role: "expand", Contains: "Observation: [calculator] 18", Text: "Final Answer: 18", Times: 3},
		scripted.Reply{Role: "expand", Contains: "Observation: [calculator] 8", Text: "Final Answer: 8", Times: 3},
		scripted.Reply{Role: "expand", Text: "Thought: add first.\nAction: calculator\nAction Input: 3 + 5", Times: 1},
		scripted.Reply{Role: "expand", Text: "Thought: multiply first.\nAction: calculator\nAction Input: 3 * 5 + 3", Times: 1},
		scripted.Reply{Role: "value", Contains: "Action Input: 3 + 5", Text: "Score: 2/10", Times: 3},
		scripted.Reply{Role: "value", Text: "Score: 8/10", Times: 3},
	)
	st, _ := runLATS(t, map[string]any{"children": 2}, rec, arithmeticTask)
	assert.Equal(t, "18", st.Answer)
	assert.NotContains(t, requests(rec, "expand")[2].prompt, "Action Input: 3 + 5", "the low-valued branch is not rolled out")
}

func TestLATSKeepsTheBestWrongAnswerIncompleteWhenTheTreeIsUsedUp(t *testing.T) {
	rec, _ := script(t, false,
		scripted.Reply{Role: "expand", Text: "Final Answer: 17", Times: 20},
		scripted.Reply{Role: "reflect", Text: "Lesson: check the arithmetic", Times: 20},
	)
	st, tr := runLATS(t, map[string]any{"children": 2, "iterations": 10}, rec, arithmeticTask)
	assert.Equal(t, "17", st.Answer)
	assert.False(t, st.Complete)
	assert.Equal(t, "wrong", st.Failure)
	assert.Len(t, requests(rec, "expand"), 4, "the root is expanded twice, then the search stops")
	assert.Len(t, st.Candidates, 1, "identical samples make one child")
	answers := tr.OfKind(trace.KindAnswer)
	require.Len(t, answers, 1)
	assert.Equal(t, false, answers[0].Data["complete"])
}

func TestLATSStopsTrajectoriesAtTheDepthLimit(t *testing.T) {
	rec, _ := script(t, false,
		scripted.Reply{Role: "expand", Text: "Thought: again.\nAction: calculator\nAction Input: 1 + 1", Times: 50},
		scripted.Reply{Role: "value", Text: "Score: 5/10", Times: 50},
	)
	st, _ := runLATS(t, map[string]any{"children": 1, "max_depth": 2}, rec, arithmeticTask)
	assert.False(t, st.Complete)
	assert.Equal(t, state.FailureBudget, st.Failure)
	for _, c := range st.Candidates {
		assert.LessOrEqual(t, c.Depth, 2)
	}
}

func TestLATSRejectsBadSettings(t *testing.T) {
	cases := []struct {
		settings map[string]any
		key      string
	}{
		{map[string]any{"iterations": -1}, "iterations"},
		{map[string]any{"exploration": -0.5}, "exploration"},
		{map[string]any{"scorer": "bleu"}, "scorer"},
		{map[string]any{"value_prompt": "{{"}, "value_prompt"},
		{map[string]any{"rollouts": 2}, "rollouts"},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			_, err := nodes.NewLATS(nodekind.Env{}, nodekind.Spec{ID: "lats", Type: "lats", Settings: tc.settings})
			requireSettingError(t, err, tc.key)
		})
	}
}

func TestLATSStepsAreReActTurnsWithTheRepeatGuard(t *testing.T) {
	rec, _ := script(t, false,
		scripted.Reply{Role: "expand", Text: "Thought: again.\nAction: calculator\nAction Input: `1 + 1`", Times: 50},
		scripted.Reply{Role: "value", Text: "Score: 5/10", Times: 50},
	)
	st, tr := runLATS(t, map[string]any{"children": 1, "iterations": 1}, rec, arithmeticTask)
	assert.Equal(t, 4, st.Usage.Snapshot().ToolCalls, "repeated calls run: only their result tells a loop from progress")

	expands := requests(rec, "expand")
	require.Len(t, expands, 4, "one run, two tolerated repeats, then the guard stops the branch")
	assert.Contains(t, expands[1].prompt, "Action: calculator\nAction Input: 1 + 1\nObservation: [calculator] 2", "the input was unwrapped")
	assert.Contains(t, expands[2].prompt, "You already called calculator with this input in step 1")

	var repeats, loops int
	for _, e := range tr.OfKind(trace.KindGuard) {
		switch e.Data["guard"] {
		case "repeat":
			repeats++
		case state.FailureLoop:
			loops++
		}
	}
	assert.Equal(t, 2, repeats)
	assert.Equal(t, 1, loops)
	last := st.Candidates[len(st.Candidates)-1]
	assert.Equal(t, "(stopped: loop)", last.Text)
	assert.Equal(t, 4, last.Depth)
	assert.False(t, st.Complete)
}

func TestLATSAnswersAFormatErrorWithFeedbackAndGoesOn(t *testing.T) {
	rec, _ := script(t, false,
		scripted.Reply{Role: "expand", Contains: `no "Action:" or "Final Answer:" found`, Text: "Thought: fixed.\nFinal Answer: 18"},
		scripted.Reply{Role: "expand", Text: "I believe it is eighteen"},
	)
	st, tr := runLATS(t, map[string]any{"children": 1}, rec, arithmeticTask)
	assert.True(t, st.Complete)
	assert.Equal(t, "18", st.Answer)
	require.Len(t, requests(rec, "expand"), 2)
	assert.Empty(t, requests(rec, "value"), "a format error is valued 0 without asking the model")
	require.Len(t, tr.OfKind(trace.KindParseError), 1)
	require.Len(t, st.Scratchpad, 2)
	assert.NotEmpty(t, st.Scratchpad[0].Error, "the format error and its feedback stay on the winning branch")
	assert.Equal(t, "18", st.Scratchpad[1].Final)
	assert.Equal(t, "(format error)", st.Candidates[0].Text)
}

func TestLATSStopsWhenTheContextEnds(t *testing.T) {
	rec, _ := script(t, false, scripted.Reply{Role: "expand", Text: "Final Answer: 17", Times: 20})
	reg, err := tools.NewRegistry([]tools.Tool{calc.New()})
	require.NoError(t, err)
	built, err := nodes.NewLATS(nodekind.Env{Model: llm.Model{LLM: rec}, Tools: reg}, nodekind.Spec{ID: "lats", Type: "lats", Settings: map[string]any{"children": 3}})
	require.NoError(t, err)
	cause := errors.New("deadline of the run")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	_, err = built.Node.Run(ctx, hookedState(arithmeticTask))
	require.ErrorIs(t, err, cause)
	assert.Empty(t, requests(rec, ""), "no sample starts once the context has ended")
}

func TestLATSNeedsTheToolsOfItsReActTurns(t *testing.T) {
	_, err := nodes.NewLATS(nodekind.Env{}, nodekind.Spec{ID: "lats", Type: "lats"})
	requireSettingError(t, err, "react.tools")
	reg, err := tools.NewRegistry([]tools.Tool{calc.New()})
	require.NoError(t, err)
	_, err = nodes.NewLATS(nodekind.Env{Tools: reg}, nodekind.Spec{ID: "lats", Type: "lats", Settings: map[string]any{"react": map[string]any{"max_repeats": -1}}})
	requireSettingError(t, err, "react.max_repeats")
}

// explodeTool panics on every call.
type explodeTool struct{}

func (explodeTool) Name() string                                 { return "explode" }
func (explodeTool) Description() string                          { return "panics" }
func (explodeTool) Call(context.Context, string) (string, error) { panic("boom") }

func TestLATSShowsAPanickingToolAsAnErrorWithoutItsStack(t *testing.T) {
	rec, _ := script(t, false,
		scripted.Reply{Role: "expand", Contains: "tool panicked", Text: "Thought: the tool is broken.\nFinal Answer: 18"},
		scripted.Reply{Role: "expand", Text: "Thought: try it.\nAction: explode\nAction Input: now"},
		scripted.Reply{Role: "value", Text: "Score: 5/10", Times: 5},
	)
	reg, err := tools.NewRegistry([]tools.Tool{calc.New(), explodeTool{}})
	require.NoError(t, err)
	built, err := nodes.NewLATS(nodekind.Env{Model: llm.Model{LLM: rec}, Tools: reg}, nodekind.Spec{ID: "lats", Type: "lats", Settings: map[string]any{"children": 1}})
	require.NoError(t, err)
	st := hookedState(arithmeticTask)
	_, err = built.Node.Run(context.Background(), st)
	require.NoError(t, err)
	assert.Equal(t, "18", st.Answer)
	expands := requests(rec, "expand")
	require.Len(t, expands, 2)
	assert.Contains(t, expands[1].prompt, "Observation: [explode] Error: tool \"explode\": tool panicked: boom\n")
	assert.NotContains(t, expands[1].prompt, "goroutine")
	assert.NotContains(t, st.Scratchpad[0].Observation, ".go:", "no stack frames in the scratchpad")
}
