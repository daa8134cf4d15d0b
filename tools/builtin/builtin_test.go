package builtin_test

import (
	"context"
	"io"
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
	t.Setenv("SERPAPI_API_KEY", "") // serpapi needs a key from the environment
	needSettings := map[string]bool{"files": true, "sql": true, "mcp": true, "serpapi": true}
	for _, name := range builtin.Names() {
		ts, err := builtin.Factory{}.Tools(context.Background(), config.Tool{Name: name}, "")
		if needSettings[name] {
			require.ErrorIs(t, err, builtin.ErrMissingSetting, name)
			continue
		}
		require.NoError(t, err, name)
		require.NotEmpty(t, ts, name)
		for _, tl := range ts {
			assert.NotEmpty(t, tl.Name(), name)
			assert.NotEmpty(t, tl.Description(), name)
		}
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

// sampleSettings are settings that let every built-in that needs some be
// built offline (mcp, which needs a server, is left out). It sets the
// environment variable the serpapi sample reads its key from.
func sampleSettings(t *testing.T) map[string]map[string]any {
	dir := t.TempDir()
	t.Setenv("PLANNER_TEST_SERPAPI_KEY", "sample-serpapi-key")
	return map[string]map[string]any{
		"files":   {"root": dir, "write": true},
		"sql":     {"path": filepath.Join(dir, "s.db"), "write": true, "create": true},
		"serpapi": {"api_key_env": "PLANNER_TEST_SERPAPI_KEY"},
	}
}

func TestEveryBuiltinDescriptionIsOneCleanLine(t *testing.T) {
	samples := sampleSettings(t)
	for _, name := range builtin.Names() {
		if name == "mcp" {
			continue // an MCP server's descriptions are its own
		}
		ts, err := builtin.Factory{}.Tools(context.Background(), config.Tool{Name: name, Settings: samples[name]}, "")
		require.NoError(t, err, name)
		for _, tl := range ts {
			if c, ok := tl.(io.Closer); ok {
				t.Cleanup(func() { _ = c.Close() })
			}
		}
		for _, tool := range ts {
			d := tool.Description()
			assert.Equal(t, tools.CleanDescription(d), d, "%s: description is not clean", tool.Name())
			assert.NotRegexp(t, `^"|"$|[\t\n]|  `, d, tool.Name())
		}
	}
}
