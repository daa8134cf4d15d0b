package llm_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCallNamesThePipelineOfItsRun: the pipeline name a run puts in its
// context reaches the model with the call's metadata, whatever the caller
// passes, and survives WithStep.
func TestCallNamesThePipelineOfItsRun(t *testing.T) {
	t.Parallel()
	rec := &llmtest.Recorder{Model: llmtest.Reply("ok"), Meta: metaOf}
	m := llm.Model{LLM: rec, Meter: fixedMeter{}}
	st := state.NewState(state.Task{ID: "t1", Question: "q"})
	ctx := llm.WithStep(llm.WithPipeline(context.Background(), "cot"), "s1")

	_, _, err := m.Call(ctx, st, llm.CallMeta{Node: "n", Kind: "cot", Pipeline: "not the run's"}, llm.Prompt("sys", "hi"))
	require.NoError(t, err)
	_, _, err = m.Call(context.Background(), st, llm.CallMeta{Node: "n", Pipeline: "not the run's"}, llm.Prompt("sys", "hi"))
	require.NoError(t, err)

	reqs := rec.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, llm.CallMeta{Node: "n", Kind: "cot", TaskID: "t1", StepID: "s1", Pipeline: "cot"}, reqs[0].Meta.(seenByModel).meta)
	assert.Empty(t, reqs[1].Meta.(seenByModel).meta.Pipeline, "a call outside a pipeline's run names none")
}
