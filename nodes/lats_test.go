package nodes_test

import (
	"testing"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/node"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

const latsLesson = "compute with the calculator instead of guessing"

// runLATS builds a lats node with the calculator and runs it on task.
func runLATS(t *testing.T, settings map[string]any, m llms.Model, task agent.Task) (*agent.State, *trace.Recorder) {
	t.Helper()
	reg, err := tools.NewRegistry([]tools.Tool{calc.New()})
	require.NoError(t, err)
	built, err := nodes.NewLATS(node.Env{Model: llm.Model{LLM: m}, Tools: reg}, node.Spec{ID: "lats", Type: "lats", Settings: settings})
	require.NoError(t, err)
	st := agent.NewState(task)
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

	expands := rec.requests("expand")
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
	assert.NotContains(t, rec.requests("expand")[2].prompt, "Action Input: 3 + 5", "the low-valued branch is not rolled out")
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
	assert.Len(t, rec.requests("expand"), 4, "the root is expanded twice, then the search stops")
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
	assert.Equal(t, agent.FailureBudget, st.Failure)
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
			_, err := nodes.NewLATS(node.Env{}, node.Spec{ID: "lats", Type: "lats", Settings: tc.settings})
			requireSettingError(t, err, tc.key)
		})
	}
}
