package journal_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestModelResponsesAreTheJournaledModelCallsInOrder(t *testing.T) {
	t.Parallel()
	s := memstore.New()
	ctx, r := session(t, s, "th")
	assert.Empty(t, r.ModelResponses(), "a new thread has none")
	m := &echoModel{}
	_, err := ask(ctx, r, m, "", "first")
	require.NoError(t, err)
	_, err = r.Tool(ctx, "act", "search", "x", func(ctx context.Context) (journal.ToolResult, error) { return journal.ToolResult{Output: "hit"}, nil })
	require.NoError(t, err)
	_, err = ask(ctx, r, m, "finalize", "second")
	require.NoError(t, err)
	_, err = s.Append(ctx, "th", journal.Entry{Kind: journal.KindModel, Scope: "elsewhere", Digest: "d", Response: []byte("not json")})
	require.NoError(t, err)
	assert.Empty(t, r.ModelResponses(), "the session's own live calls are not among them")

	_, again := session(t, s, "th")
	got := again.ModelResponses()
	require.Len(t, got, 2, "the tool call and the unreadable response are left out")
	assert.Equal(t, "reply to first #1", got[0].Choices[0].Content)
	assert.Equal(t, "reply to second #2", got[1].Choices[0].Content)
	assert.Equal(t, 7, got[1].Choices[0].GenerationInfo["PromptTokens"])
	assert.Same(t, got[0], again.ModelResponses()[0], "decoded once per session")
}
