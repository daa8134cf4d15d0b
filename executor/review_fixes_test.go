package executor_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failSelectionStore fails the first save of an embedding selection.
type failSelectionStore struct {
	journal.Store
	failed bool
}

func (s *failSelectionStore) Append(ctx context.Context, name string, e journal.Entry) (int64, error) {
	if !s.failed && e.Kind == journal.KindTool && strings.Contains(string(e.Request), executor.RetrievalJournalTool) {
		s.failed = true
		return 0, errors.New("disk full")
	}
	return s.Store.Append(ctx, name, e)
}

// A selection the journal cannot save ends the run (as a model reply it
// cannot save does) instead of falling back to every tool: the thread's
// journal would otherwise lack it and a resume would diverge.
func TestAnEmbeddingSelectionTheJournalCannotSaveEndsTheRun(t *testing.T) {
	srv := newOpenAIServer(t, umbrellaReplies...)
	store := &failSelectionStore{Store: memstore.New()}
	ctx := context.Background()
	require.NoError(t, store.Create(ctx, journal.Thread{Name: "t", Status: journal.StatusRunning}))
	j, err := journal.Open(ctx, store, "t")
	require.NoError(t, err)
	rec := &trace.Recorder{}
	rctx := trace.WithTracer(journal.WithScope(journal.WithRun(ctx, j), journal.NodeScope(1, "act")), trace.New("test", rec))
	_, err = embeddingLoop(t, srv, "embedding").Run(rctx, hookedState(state.Task{Question: umbrellaTask}), executor.Input{NodeID: "act", Task: umbrellaTask})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disk full")
	for _, e := range rec.OfKind(trace.KindGuard) {
		assert.NotEqual(t, executor.GuardToolRetrievalFallback, e.Data["guard"], "no fallback to every tool")
	}
}

// The loop's own recall tool does not count toward max_tools: a pipeline
// with exactly max_tools tools shows every one of them with compaction
// "summarize" as without it.
func TestRecallDoesNotCountTowardMaxTools(t *testing.T) {
	ts := manyTools()
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name() < ts[j].Name() })
	ts = ts[:executor.DefaultMaxTools]
	h := runScript(t, executor.ReActConfig{Compaction: executor.CompactionSummarize}, text("Thought: x\nFinal Answer: y"), "Find cooking recipes by ingredient: eggs", ts...)
	require.NoError(t, h.err)
	shown := shownTools(requests(h.model)[0])
	assert.Len(t, shown, executor.DefaultMaxTools+1, "every pipeline tool and recall: %v", shown)
	assert.NotContains(t, shown, "find_tools", "retrieval is off")
}

// A typo in tool_retrieval.always is an error even while the loop has too
// few tools for retrieval to be on.
func TestRetrievalSettingsAreCheckedBelowTheThreshold(t *testing.T) {
	_, err := executor.NewLoop(nodekind.Env{Keywords: search.Keywords{}, Tools: registry(t, echoTool())}, executor.ReActConfig{ToolRetrieval: executor.ToolRetrieval{Always: []string{"calculater"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tool_retrieval.always")
}
