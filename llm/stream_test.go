package llm_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// Token events are the pipeline's (its token hook); what llm owes a
// stream is to pass the caller's streaming function to the provider and
// to add none of its own.

func TestACallersStreamingFunctionGetsTheProvidersChunks(t *testing.T) {
	var chunks []string
	own := llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
		chunks = append(chunks, string(c))
		return nil
	})
	spy := &providerSpy{}
	stream := &llmtest.Stream{Chunks: []string{"Thought: ", "half done", "\nAnswer: 7"}}
	text, _, err := llm.Model{LLM: stream}.Call(context.Background(), runWith(spy), llm.CallMeta{Node: "plan"}, prompt("q"), own)
	require.NoError(t, err)
	assert.Equal(t, "Thought: half done\nAnswer: 7", text)
	assert.Equal(t, []string{"Thought: ", "half done", "\nAnswer: 7"}, chunks)
	require.Len(t, spy.calls(), 1)
	assert.Len(t, spy.calls()[0].call.Options, 1, "the provider hooks see the caller's option")
}

func TestABareCallStreamsNothing(t *testing.T) {
	rec := &llmtest.Recorder{Model: &llmtest.Stream{Chunks: []string{"a", "b"}}}
	for _, run := range []llm.Run{nil, runWith(hooks.Funcs{})} {
		text, _, err := llm.Model{LLM: rec}.Call(context.Background(), run, llm.CallMeta{Node: "act"}, prompt("q"))
		require.NoError(t, err)
		assert.Equal(t, "ab", text)
	}
	for _, r := range rec.Requests() {
		assert.Nil(t, r.Options.StreamingFunc, "no streaming function without a hook that adds one")
	}
}
