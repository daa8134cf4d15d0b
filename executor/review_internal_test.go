package executor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/retrieve"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Paging through a step with several tool calls: the hint of the first page
// leads to the next page of the long output even though a shorter output of
// the same step has no more.
func TestRecallPagesAStepWithSeveralCalls(t *testing.T) {
	v := &recallView{calls: []recalled{
		{step: 3, tool: "fetch", input: "a", output: strings.Repeat("x", 2000)},
		{step: 3, tool: "fetch", input: "b", output: "short"},
	}}
	ctx, tool := context.Background(), recallTool{view: v}
	first, err := tool.Call(ctx, "3")
	require.NoError(t, err)
	assert.Contains(t, first, `(more: recall {"step": 3, "from": 1500})`)
	assert.Contains(t, first, "fetch(b), characters 0-5 of 5")
	next, err := tool.Call(ctx, `{"step": 3, "from": 1500}`)
	require.NoError(t, err)
	assert.Contains(t, next, "fetch(a), characters 1500-2000 of 2000")
	assert.NotContains(t, next, "fetch(b)")
	_, err = tool.Call(ctx, `{"step": 3, "from": 2500}`)
	assert.ErrorIs(t, err, tools.ErrBadInput)
}

type namedTool struct{ n string }

func (t namedTool) Name() string                                 { return t.n }
func (t namedTool) Description() string                          { return "does " + t.n }
func (t namedTool) Call(context.Context, string) (string, error) { return "", nil }

// slowEmbedder blocks embedding the tools until release is closed.
type slowEmbedder struct{ release chan struct{} }

func (e slowEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	<-e.release
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, float32(i)}
	}
	return out, nil
}

func (slowEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return []float32{1, 1}, nil
}

// A caller that arrives while the retriever is being built waits for the
// build or for its own context, whichever ends first.
func TestAWaitForTheRetrieverBuildHonoursTheContext(t *testing.T) {
	var ts []tools.Tool
	for i := range 5 {
		ts = append(ts, namedTool{fmt.Sprintf("t%d", i)})
	}
	reg, err := tools.NewRegistry(ts)
	require.NoError(t, err)
	release := make(chan struct{})
	tr := &toolRetrieval{s: retrievalSettings{method: retrieve.MethodEmbedding}, reg: reg, embedder: slowEmbedder{release}}
	built := make(chan error, 1)
	go func() {
		_, err := tr.retriever(context.Background())
		built <- err
	}()
	require.Eventually(t, func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.building != nil
	}, time.Second, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = tr.retriever(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	require.NoError(t, <-built)
	ret, err := tr.retriever(context.Background())
	require.NoError(t, err)
	assert.NotNil(t, ret)
	tr.close()
}
