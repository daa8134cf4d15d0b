package nodes_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// fallbackModel answers chain-of-thought prompts with cot(i), i counting
// those calls from 0, and ReAct prompts (those offering the tools) with
// react(j), j counting ReAct calls from 0.
func fallbackModel(cot func(i int) string, react func(j int) string) llms.Model {
	var mu sync.Mutex
	var c, r int
	return llmtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(llmtest.Text(msgs), "Action Input") {
			r++
			return llmtest.TextResponse(react(r - 1)), nil
		}
		c++
		return llmtest.TextResponse(cot(c - 1)), nil
	})
}

// decisions returns the routes the run's routers took, in order.
func decisions(rec *trace.Recorder) []string {
	var out []string
	for _, e := range rec.OfKind(trace.KindDecision) {
		out = append(out, e.Text)
	}
	return out
}

// cot_sc_react hands a question to ReAct when the samples disagree, and
// keeps the majority when they agree.
func TestCoTSCFallsBackToReActOnAWeakMajority(t *testing.T) {
	task := state.Task{Question: "Who discovered Saturn's moon Iapetus?", Answer: "Giovanni Domenico Cassini"}
	react := func(int) string {
		return "Thought: I recall it.\nFinal Answer: Giovanni Domenico Cassini"
	}
	weak := fallbackModel(func(i int) string { return "Let me think.\nAnswer: guess " + string(rune('a'+i)) }, react)
	st, rec := runTask(t, buildConfig(t, "../configs/cot_sc_react.yaml", weak), task)
	assert.Equal(t, "Giovanni Domenico Cassini", st.Answer)
	assert.True(t, st.Complete)
	require.Len(t, decisions(rec), 1)
	assert.Contains(t, decisions(rec)[0], "route fallback")

	strong := fallbackModel(func(i int) string { return "Answer: Cassini" }, react)
	st, rec = runTask(t, buildConfig(t, "../configs/cot_sc_react.yaml", strong), task)
	assert.Equal(t, "Cassini", st.Answer, "the majority stands; ReAct is not asked")
	assert.Contains(t, decisions(rec)[0], "route finish")
}

// react_cot_sc hands a question to CoT-SC when ReAct ends without a
// complete answer.
func TestReActFallsBackToCoTSCWhenItDoesNotFinish(t *testing.T) {
	task := state.Task{Question: "In which city was Galileo Galilei born?", Answer: "Pisa"}
	// ReAct keeps searching and never answers; its finalizer answers from
	// the scratchpad, incomplete, and its incomplete route hands over.
	stuck := fallbackModel(func(int) string { return "Galileo was born in Pisa.\nAnswer: Pisa" },
		func(j int) string {
			return "Thought: search again.\nAction: search\nAction Input: Galileo birthplace " + strings.Repeat("x", j)
		})
	st, rec := runTask(t, buildConfig(t, "../configs/react_cot_sc.yaml", stuck), task)
	assert.Equal(t, "Pisa", st.Answer)
	assert.True(t, st.Complete, st.Reason)
	var routes []string
	for _, e := range rec.OfKind(trace.KindRoute) {
		if e.Node == "act" {
			routes = append(routes, fmt.Sprint(e.Data["route"]))
		}
	}
	assert.Equal(t, []string{"incomplete", "incomplete"}, routes, "the outcome route, and the graph's route event")
	require.NotNil(t, st.SelfConsistency, "the samples voted")
	assert.Equal(t, 5, st.SelfConsistency.Samples)
}
