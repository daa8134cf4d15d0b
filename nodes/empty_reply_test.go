package nodes_test

import (
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runWithRetries builds one node whose model retries empty replies as the
// Factory's default does, and runs it on a fresh state.
func runWithRetries(t *testing.T, ctor nodekind.Constructor, kind string, retries int, task state.Task, replies ...string) (*state.State, *trace.Recorder, *scripted.Model) {
	t.Helper()
	m := scripted.Texts(replies...)
	built, err := ctor(nodekind.Env{Model: llm.Model{LLM: m, EmptyRetries: retries}}, nodekind.Spec{ID: kind, Type: kind})
	require.NoError(t, err)
	st := hookedState(task)
	rec := &trace.Recorder{}
	_, err = built.Node.Run(traceCtx(rec), st)
	require.NoError(t, err)
	return st, rec, m
}

func TestCoTRecoversFromAnEmptyReply(t *testing.T) {
	st, rec, m := runWithRetries(t, nodes.NewCoT, "cot", config.DefaultEmptyRetries, arithmeticTask,
		" \n", "Three fives are 15, plus 3.\nAnswer: 18")
	assert.True(t, st.Complete)
	assert.Equal(t, "18", st.Answer)
	assert.Empty(t, st.Failure)
	assert.Equal(t, 2, m.Calls())
	guards := rec.OfKind(trace.KindGuard)
	require.Len(t, guards, 1)
	assert.Equal(t, llm.GuardEmptyReply, guards[0].Data["guard"])
	assert.Equal(t, "cot", guards[0].Node)
	assert.Equal(t, 2, st.Usage.Snapshot().ModelCalls)
}

func TestFinalizerEmptyRepliesPastTheRetriesAreAParseFailure(t *testing.T) {
	built, err := nodes.NewFinalizer(nodekind.Env{Model: llm.Model{LLM: scripted.Texts(" ", "\n"), EmptyRetries: 1}}, nodekind.Spec{ID: "final", Type: "finalizer"})
	require.NoError(t, err)
	st := planState()
	rec := runCompose(t, built.Node, st)
	assert.True(t, st.Done)
	assert.False(t, st.Complete)
	assert.Equal(t, state.FailureParse, st.Failure)
	assert.Equal(t, "the model returned an empty answer", st.Reason)
	assert.Len(t, rec.OfKind(trace.KindGuard), 1, "the finalizer's call is retried too")
}
