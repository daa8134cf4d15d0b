package builtin_test

import (
	"context"
	"os"
	"path/filepath"
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

func TestFactoryRejectsSettingsAToolDoesNotUse(t *testing.T) {
	cases := []struct {
		tool     string
		settings map[string]any
		key      string
	}{
		{"wikipedia", map[string]any{"max_results": 3}, "max_results"},
		{"weather", map[string]any{"days": 10}, "days"},
		{"get_time", map[string]any{"zone": "UTC"}, "zone"},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			_, err := builtin.Factory{}.Tools(context.Background(), config.Tool{Name: tc.tool, Settings: tc.settings}, "")
			require.ErrorIs(t, err, config.ErrSettings)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.key, se.Key)
		})
	}
}

func TestSearchCorpusIsResolvedAgainstThePipelineFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "docs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "docs", "kepler.md"), []byte("# Kepler\nKepler found three laws of planetary motion."), 0o644))
	ts, err := builtin.Factory{}.Tools(context.Background(), config.Tool{Name: "search", Settings: map[string]any{"corpus": "docs"}}, dir)
	require.NoError(t, err)
	require.Len(t, ts, 1)
	out, err := ts[0].Call(context.Background(), "planetary laws")
	require.NoError(t, err)
	assert.Contains(t, out, "[1] Kepler")
}

func TestEveryBuiltinDescriptionIsOneCleanLine(t *testing.T) {
	for _, name := range builtin.Names() {
		ts, err := builtin.Factory{}.Tools(context.Background(), config.Tool{Name: name}, "")
		require.NoError(t, err, name)
		for _, tool := range ts {
			d := tool.Description()
			assert.Equal(t, tools.CleanDescription(d), d, "%s: description is not clean", tool.Name())
			assert.NotRegexp(t, `^"|"$|[\t\n]|  `, d, tool.Name())
		}
	}
}
