package toolset_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/toolset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFactoryBuildsOnlyItsFamilies(t *testing.T) {
	ctx := context.Background()
	f := toolset.New(toolset.Calculator(), toolset.Clock())
	assert.Equal(t, []string{"calculator", "get_time"}, f.Names())
	assert.True(t, f.Has("calculator"))
	assert.False(t, f.Has("search"))

	ts, err := f.Tools(ctx, config.Tool{Name: "calculator"}, "")
	require.NoError(t, err)
	require.Len(t, ts, 1)
	out, err := ts[0].Call(ctx, "3 * 17 * 23")
	require.NoError(t, err)
	assert.Equal(t, "1173", out)

	_, err = f.Tools(ctx, config.Tool{Name: "search"}, "")
	require.ErrorIs(t, err, tools.ErrUnknownTool)
	assert.ErrorContains(t, err, "registered tools: calculator, get_time")

	_, err = toolset.New().Tools(ctx, config.Tool{Name: "calculator"}, "")
	require.ErrorIs(t, err, tools.ErrUnknownTool)
	assert.ErrorContains(t, err, "registered tools: none")
}

func TestALaterFamilyOfTheSameNameWins(t *testing.T) {
	mine := toolset.Family{Name: "calculator", Build: func(context.Context, map[string]any, string) ([]tools.Tool, error) {
		return nil, nil
	}}
	ts, err := toolset.New(toolset.Calculator(), mine).Tools(context.Background(), config.Tool{Name: "calculator"}, "")
	require.NoError(t, err)
	assert.Empty(t, ts)
}

func TestBasicFamiliesCheckTheirSettings(t *testing.T) {
	f := toolset.New(toolset.Basic()...)
	assert.Equal(t, []string{"calculator", "files", "get_time", "serpapi", "vars", "weather"}, f.Names())
	_, err := f.Tools(context.Background(), config.Tool{Name: "files"}, "")
	require.ErrorIs(t, err, toolset.ErrMissingSetting)
	require.ErrorIs(t, err, config.ErrSettings)
	_, err = f.Tools(context.Background(), config.Tool{Name: "get_time", Settings: map[string]any{"zone": "UTC"}}, "")
	require.ErrorIs(t, err, config.ErrSettings)
	assert.Equal(t, "/abs/p", toolset.PipelinePath("/abs/p", "/base"))
	assert.Equal(t, "/base/rel", toolset.PipelinePath(" rel ", "/base"))
	require.ErrorIs(t, toolset.NonNegativeSettings(map[string]int64{"a": 1, "b": -1}), config.ErrSettings)
}
