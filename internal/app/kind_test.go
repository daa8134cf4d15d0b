package app

import (
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryProviderSaysWhatKindOfModelItBuilds: compare announces simulated
// and scripted numbers from these kinds, never from provider names.
func TestEveryProviderSaysWhatKindOfModelItBuilds(t *testing.T) {
	t.Parallel()
	a, err := New()
	require.NoError(t, err)
	for p, k := range map[string]llm.Kind{"sim": llm.KindSimulated, "scripted": llm.KindScripted, "replay": llm.KindReplayed, "openai": llm.KindReal} {
		assert.Equal(t, k, a.ModelKind(p), p)
	}
}
