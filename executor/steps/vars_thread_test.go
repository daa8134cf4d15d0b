package steps_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The thread of a ReAct agent that keeps vars with the vars tool, stops
// to wait for a human's approval of a calculator call and is resumed:
// the resumed session replays the recorded calls, the vars tool's among
// them, and ends with the vars an uninterrupted run ends with.
func TestVarsSurviveAThreadsResume(t *testing.T) {
	cfgPath := writeFile(t, "p.yaml", `name: vars_thread
tools:
  - vars
  - {name: calculator, approve: true}
nodes:
  - {id: act, type: react, max_iterations: 6}
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`)
	// Not strict, latest stage first: a resumed session asks the model
	// only for the calls after the journal's end, and each prompt holds
	// every earlier stage's marker.
	script, err := filepath.Abs(writeFile(t, "s.yaml", `strict: false
replies:
  - contains: "deleted step"
    text: "Thought: Done.\nFinal Answer: 24"
  - contains: "Observation: [calculator] 24"
    text: "Thought: Keep the result.\nAction: vars\nAction Input: age = 24\ndelete step"
  - contains: "set step = subtract"
    text: "Thought: Now subtract.\nAction: calculator\nAction Input: 1930 - 1906"
  - contains: "set found = 1930"
    text: "Thought: Note the plan.\nAction: vars\nAction Input: step = subtract"
  - contains: "Task: How old"
    text: "Thought: Keep the years first.\nAction: vars\nAction Input: {\"set\": {\"born\": \"1906\", \"found\": \"1930\"}}"
`))
	require.NoError(t, err)
	build := func() *pipeline.Pipeline {
		cfg, err := config.Load(cfgPath)
		require.NoError(t, err)
		p, err := pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: kinds(t),
			Models: llm.NewFactory(llm.WithProvider("scripted", scripted.Label, scripted.Build)),
			Tools:  builtin.Factory{}, LLM: config.LLM{Provider: "scripted", Script: script}})
		require.NoError(t, err)
		return p
	}
	task := state.Task{Question: "How old was Clyde Tombaugh when he discovered Pluto?"}
	approve := journal.ApproverFunc(func(context.Context, journal.Approval) (journal.Decision, error) {
		return journal.Decision{Approved: true, By: "test"}, nil
	})
	want := map[string]string{"born": "1906", "found": "1930", "age": "24"}

	// Uninterrupted.
	whole, _, err := build().RunThread(context.Background(), task, trace.New("whole", &trace.Recorder{}),
		pipeline.Thread{Store: memstore.New(), Name: "whole", Approver: approve})
	require.NoError(t, err)
	require.Equal(t, "24", whole.State.Answer)
	require.Equal(t, want, whole.State.Vars.All())

	// Stopped at the approval, then resumed.
	store := memstore.New()
	first, tr, err := build().RunThread(context.Background(), task, trace.New("first", &trace.Recorder{}),
		pipeline.Thread{Store: store, Name: "t", Approver: journal.Defer()})
	require.ErrorIs(t, err, journal.ErrWaiting)
	require.Equal(t, journal.StatusWaiting, tr.Status)
	assert.Equal(t, map[string]string{"born": "1906", "found": "1930", "step": "subtract"}, first.State.Vars.All())

	resumed, tr, err := build().RunThread(context.Background(), task, trace.New("resumed", &trace.Recorder{}),
		pipeline.Thread{Store: store, Name: "t", Approver: approve})
	require.NoError(t, err)
	assert.Equal(t, journal.StatusDone, tr.Status)
	assert.Positive(t, tr.Replayed, "the first session's calls are replayed")
	assert.Equal(t, "24", resumed.State.Answer)
	assert.Equal(t, want, resumed.State.Vars.All(), "the vars the replayed calls set are set again")
	assert.Equal(t, whole.State.Vars.Version(), resumed.State.Vars.Version())
}
