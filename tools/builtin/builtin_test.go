package builtin_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFactoryBuildsEveryBuiltin(t *testing.T) {
	for _, name := range builtin.Names() {
		ts, err := builtin.Factory{}.Tools(context.Background(), config.Tool{Name: name}, "")
		require.NoError(t, err, name)
		require.NotEmpty(t, ts, name)
		assert.Equal(t, name, ts[0].Name())
		assert.NotEmpty(t, ts[0].Description())
	}
}

func TestFactoryRejectsUnknownToolsAndSettings(t *testing.T) {
	_, err := builtin.Factory{}.Tools(context.Background(), config.Tool{Name: "calculater"}, "")
	require.ErrorIs(t, err, tools.ErrUnknownTool)
	assert.Contains(t, err.Error(), "calculator")
	_, err = builtin.Factory{}.Tools(context.Background(), config.Tool{Name: "search", Settings: map[string]any{"topk": 3}}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "topk")
}

func TestDemoSearchAndCalculatorAnswer(t *testing.T) {
	ctx := context.Background()
	var all []tools.Tool
	for _, n := range []string{"calculator", "search"} {
		ts, err := builtin.Factory{}.Tools(ctx, config.Tool{Name: n, Settings: map[string]any{}}, "")
		require.NoError(t, err)
		all = append(all, ts...)
	}
	reg, err := tools.NewRegistry(all)
	require.NoError(t, err)
	out, err := reg.Call(ctx, "Calculator", "123456789*987654321")
	require.NoError(t, err)
	assert.Equal(t, "121932631112635269", out)
	out, err = reg.Call(ctx, "search", "Eiffel Tower")
	require.NoError(t, err)
	assert.NotEmpty(t, out)
}
