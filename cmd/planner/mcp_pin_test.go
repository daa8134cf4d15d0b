package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/tools/mcp/mcptest"
	"github.com/stretchr/testify/require"
)

// The shipped MCP example runs the server version the integration tests
// install (mcp_test.go, built with -tags integration, runs it against that
// server).
func TestShippedMCPExamplePinsTheServerVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "pipelines", "react_mcp.yaml"))
	require.NoError(t, err)
	npx := `[npx, -y, "` + mcptest.FilesystemPackage + "@" + mcptest.FilesystemVersion + `", ".."]`
	require.Contains(t, string(b), npx, "the example runs the server version the tests install")
}
