package docstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/docstore"
)

// jsonlStore reads a JSON Lines corpus from text and returns a store over
// it, closed at cleanup.
func jsonlStore(t testing.TB, text string, opts ...docstore.Option) *docstore.Store {
	t.Helper()
	ctx := context.Background()
	c, err := docstore.ReadJSONL(ctx, strings.NewReader(text), "fixture.jsonl")
	require.NoError(t, err)
	s, err := docstore.New(ctx, c, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// step is one action of a trajectory, written as the ReAct paper's harness
// writes it ("search[Titan]", "lookup[born]"), and the observation it must
// return.
type step struct {
	action string
	want   string
}

// act runs one "search[...]" or "lookup[...]" action with the store's
// shared tools: the text between the brackets is the tool input, verbatim.
func act(ctx context.Context, t *testing.T, store *docstore.Store, action string) (string, error) {
	t.Helper()
	name, rest, ok := strings.Cut(action, "[")
	require.True(t, ok && strings.HasSuffix(rest, "]"), "action %q", action)
	arg := strings.TrimSuffix(rest, "]")
	switch strings.ToLower(name) {
	case "search":
		return store.SearchTool().Call(ctx, arg)
	case "lookup":
		return store.LookupTool().Call(ctx, arg)
	}
	t.Fatalf("unknown action %q", action)
	return "", nil
}

// runSteps plays steps in one run (a fresh tools.RunState) and checks each
// observation exactly.
func runSteps(t *testing.T, store *docstore.Store, steps []step) {
	t.Helper()
	ctx := tools.WithRunState(context.Background(), tools.NewRunState())
	for i, st := range steps {
		got, err := act(ctx, t, store, st.action)
		require.NoError(t, err, "step %d: %s", i+1, st.action)
		assert.Equal(t, st.want, got, "step %d: %s", i+1, st.action)
	}
}
