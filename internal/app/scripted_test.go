package app

import (
	"errors"
	"sync"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const reactConfig = "../../configs/react.yaml"

// spiders is a task with the replies of a recorded ReAct run.
func spiders(id string, replies ...string) suite.Task {
	t := suite.Task{Task: state.Task{ID: id, Question: "How many legs do 3 spiders have?", Answer: "24"}}
	for _, r := range replies {
		t.Replies = append(t.Replies, scripted.Reply{Text: r})
	}
	return t
}

var spiderRun = []string{
	"Thought: Each spider has 8 legs.\nAction: calculator\nAction Input: 3*8",
	"Thought: 3 spiders have 24 legs.\nFinal Answer: 24",
}

func TestScriptedWithoutAFilePlaysEachTasksReplies(t *testing.T) {
	t.Parallel()
	tasks := []suite.Task{spiders("spiders", spiderRun...), spiders("short", spiderRun[0])}
	a, err := New(WithTasks(tasks))
	require.NoError(t, err)
	assert.Equal(t, llm.KindScripted, a.ModelKind("scripted"))
	assert.Equal(t, ScriptedLabel, a.ModelLabel("scripted"))
	p, err := a.Load(t.Context(), reactConfig, "scripted", 0)
	require.NoError(t, err)

	// Concurrent runs of one task each start at its first reply.
	const runs = 4
	answers := make([]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			res, err := p.Run(t.Context(), "", planner.WithTask(tasks[0].Task))
			if assert.NoError(t, err) {
				answers[i] = res.Answer
			}
		})
	}
	wg.Wait()
	assert.Equal(t, []string{"24", "24", "24", "24"}, answers)

	_, err = p.Run(t.Context(), "", planner.WithTask(tasks[1].Task))
	require.ErrorIs(t, err, scripted.ErrRepliesUsedUp)
	assert.Contains(t, err.Error(), `task "short" had 1 reply`)
}

func TestScriptedWithoutAFileNeedsTasksWithReplies(t *testing.T) {
	t.Parallel()
	a, err := New(WithTasks([]suite.Task{spiders("bare")}))
	require.NoError(t, err)
	_, err = a.Load(t.Context(), reactConfig, "scripted", 0)
	require.ErrorIs(t, err, ErrNoReplies)
	require.ErrorIs(t, err, ErrModelFlag)
	assert.Contains(t, err.Error(), "--llm scripted: no scripted replies to play: without a file, the scripted model plays each suite task's own \"replies\"")

	_, err = New(WithTasks([]suite.Task{{Task: state.Task{ID: "x", Question: "q"}, Replies: []scripted.Reply{{Text: "x", Times: -1}}}}))
	require.ErrorIs(t, err, scripted.ErrBadReply)
}

func TestScriptedWithAFileStillPlaysTheScript(t *testing.T) {
	t.Parallel()
	a, err := New(WithTasks([]suite.Task{spiders("spiders", "unused")}))
	require.NoError(t, err)
	p, err := a.Load(t.Context(), cotConfig, "scripted:"+cotScript, 0)
	require.NoError(t, err)
	res, err := p.Run(t.Context(), cotTask)
	require.NoError(t, err)
	assert.Equal(t, "1173", res.Answer)
}

func TestParseSpecReadsScriptedAlone(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"scripted", " Scripted "} {
		cfg, err := ParseSpec(spec)
		require.NoError(t, err)
		assert.Equal(t, config.LLM{Provider: "scripted"}, cfg)
		assert.True(t, PlaysTaskReplies(cfg))
	}
	cfg, err := ParseSpec("scripted:run.yaml")
	require.NoError(t, err)
	assert.False(t, PlaysTaskReplies(cfg))
	_, err = ParseSpec("replay")
	require.ErrorIs(t, err, llm.ErrBadSpec, "replay still needs its cassette")

	a, err := New()
	require.NoError(t, err)
	m, err := a.ParseModel("scripted", FromEnv)
	require.NoError(t, err)
	assert.Equal(t, "scripted", m.LLM.Provider)
}

func TestTaskRepliesErrorSaysWhatToPass(t *testing.T) {
	t.Parallel()
	task := spiders("t1")
	for _, tc := range []struct {
		q     TaskQuery
		found bool
		want  string
	}{
		{TaskQuery{Suite: "runs.jsonl", ID: "t1"}, true, "task t1 of the runs.jsonl suite has none"},
		{TaskQuery{Suite: "runs.jsonl"}, false, "this question is no task of the runs.jsonl suite; pass --task ID"},
		{TaskQuery{}, false, "pass --suite FILE --task ID for a task with replies"},
	} {
		err := TaskRepliesError(tc.q, task, tc.found)
		require.True(t, errors.Is(err, ErrNoReplies))
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestReplyDigestsChangeWithTheReplies(t *testing.T) {
	t.Parallel()
	a, err := ReplyDigests([]suite.Task{spiders("a", "x"), spiders("b")})
	require.NoError(t, err)
	b, err := ReplyDigests([]suite.Task{spiders("a", "y")})
	require.NoError(t, err)
	assert.Len(t, a, 1, "only tasks with replies")
	assert.NotEqual(t, a["a"], b["a"])
	assert.Equal(t, []string{"b"}, WithoutReplies([]suite.Task{spiders("a", "x"), spiders("b")}))
}
