package builtin

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMCPSettingsDecode(t *testing.T) {
	base := t.TempDir()
	cfg, err := mcpConfig(map[string]any{
		"command":         []any{"npx", "-y", "@modelcontextprotocol/server-filesystem", "./docs"},
		"name":            "fs",
		"include":         []any{"read_text_file", "list_directory"},
		"exclude":         []any{"write_file"},
		"prefix":          "fs_",
		"env":             map[string]any{"DEBUG": "1", "LEVEL": 3},
		"inherit_env":     true,
		"cwd":             "work",
		"startup_timeout": "5s",
		"call_timeout":    "90s",
		"max_restarts":    5,
	}, base)
	require.NoError(t, err)
	assert.Equal(t, mcp.Config{
		Name:           "fs",
		Command:        []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "./docs"},
		Env:            map[string]string{"DEBUG": "1", "LEVEL": "3"},
		InheritEnv:     true,
		Dir:            filepath.Join(base, "work"),
		Include:        []string{"read_text_file", "list_directory"},
		Exclude:        []string{"write_file"},
		Prefix:         "fs_",
		StartupTimeout: 5 * time.Second,
		CallTimeout:    90 * time.Second,
		MaxRestarts:    5,
	}, cfg)

	// Defaults: the pipeline's folder; the mcp package's timeouts and
	// restarts.
	cfg, err = mcpConfig(map[string]any{"command": []any{"server"}}, base)
	require.NoError(t, err)
	assert.Equal(t, mcp.Config{Command: []string{"server"}, Dir: base}, cfg)

	abs := t.TempDir()
	cfg, err = mcpConfig(map[string]any{"command": []any{"server"}, "cwd": abs, "max_restarts": 0}, base)
	require.NoError(t, err)
	assert.Equal(t, abs, cfg.Dir)
	assert.Negative(t, cfg.MaxRestarts, "max_restarts: 0 never restarts")

	cfg, err = mcpConfig(map[string]any{
		"url":     "https://mcp.example.com/mcp",
		"headers": map[string]any{"Authorization": "Bearer ${TOKEN}"},
	}, base)
	require.NoError(t, err)
	assert.Equal(t, mcp.Config{URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}, cfg)
}

func TestMCPSettingsRefusals(t *testing.T) {
	cases := []struct {
		name     string
		settings map[string]any
		key      string
		says     string
	}{
		{"both", map[string]any{"command": []any{"server"}, "url": "http://localhost:1/mcp"}, "command", "not both"},
		{"neither", map[string]any{"name": "x"}, "command", "needs command"},
		{"unknown key", map[string]any{"command": []any{"server"}, "args": []any{"-v"}}, "args", "unknown setting"},
		{"bad timeout", map[string]any{"command": []any{"server"}, "call_timeout": "soon"}, "call_timeout", "want a duration such as 30s"},
		{"negative timeout", map[string]any{"command": []any{"server"}, "startup_timeout": "-1s"}, "startup_timeout", "positive"},
		{"negative restarts", map[string]any{"command": []any{"server"}, "max_restarts": -2}, "max_restarts", "0 or more"},
		{"command as a string", map[string]any{"command": "npx -y server"}, "command", "list of words"},
		{"bad url", map[string]any{"url": "localhost:8080/mcp"}, "url", "not an http"},
		{"env for url", map[string]any{"url": "http://localhost:1/mcp", "env": map[string]any{"A": "b"}}, "env", "command server"},
		{"cwd for url", map[string]any{"url": "http://localhost:1/mcp", "cwd": "x"}, "cwd", "command server"},
		{"headers for command", map[string]any{"command": []any{"server"}, "headers": map[string]any{"A": "b"}}, "headers", "url server"},
		{"unset header variable", map[string]any{"url": "http://localhost:1/mcp", "headers": map[string]any{"Authorization": "Bearer ${PLANNER_TEST_UNSET_VARIABLE}"}}, "headers", "PLANNER_TEST_UNSET_VARIABLE"},
		{"missing cwd", map[string]any{"command": []any{"server"}, "cwd": "no-such-folder"}, "cwd", "no-such-folder"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildMCP(context.Background(), tc.settings, t.TempDir())
			require.ErrorIs(t, err, config.ErrSettings)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.key, se.Key)
			assert.Contains(t, err.Error(), tc.says)
		})
	}
}

func TestMCPStartupFailureNamesTheCommand(t *testing.T) {
	_, err := buildMCP(context.Background(), map[string]any{"command": []any{"planner-no-such-mcp-server", "--stdio"}}, t.TempDir())
	require.ErrorIs(t, err, mcp.ErrStartup)
	assert.Contains(t, err.Error(), "planner-no-such-mcp-server --stdio")
}
