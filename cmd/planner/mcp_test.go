//go:build integration

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/tools/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpPipeline writes a ReAct pipeline whose only tools are those of the
// MCP server argv, and returns its path.
func mcpPipeline(t *testing.T, argv []string) string {
	t.Helper()
	cmd, err := json.Marshal(argv)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "react_mcp.yaml")
	body := "name: react_mcp_e2e\ntools:\n  - mcp: {command: " + string(cmd) + ", include: [list_directory, read_text_file]}\n" +
		"nodes:\n  - {id: react, type: react, max_iterations: 5}\nedges:\n  - {from: START, to: react}\n  - {from: react, to: END}\n"
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// A ReAct run on the scripted model lists a folder and reads a file
// through the real filesystem server from npm (the reference MCP server),
// started and stopped by the pipeline; `planner tools` lists the server's
// tools with their schemas and calls one.
func TestReActReadsAFileThroughTheNpmMCPServer(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("The launch code is 7421.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "todo.md"), []byte("- water the plants\n"), 0o644))
	cfg := mcpPipeline(t, mcptest.FilesystemServer(t, root))

	quoted, err := json.Marshal(root)
	require.NoError(t, err)
	notes, err := json.Marshal(filepath.Join(root, "notes.txt"))
	require.NoError(t, err)
	script := filepath.Join(t.TempDir(), "script.yaml")
	require.NoError(t, os.WriteFile(script, []byte(`strict: true
replies:
  - node: react
    contains: "What is the launch code"
    text: |
      Thought: The notes should be in the folder. I will list it.
      Action: list_directory
      Action Input: {"path": `+string(quoted)+`}
  - node: react
    contains: "[FILE] notes.txt"
    text: |
      Thought: notes.txt looks right. I will read it.
      Action: read_text_file
      Action Input: {"path": `+string(notes)+`}
  - node: react
    contains: "The launch code is 7421."
    text: |
      Thought: The file gives the code.
      Final Answer: 7421
`), 0o644))

	res := cli(t, "run", "--config", cfg, "--llm", "scripted:"+script, "--json", "What is the launch code in my notes?")
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	var out runOutput
	res.lastJSON(t, &out)
	assert.Equal(t, "7421", out.Answer)
	assert.True(t, out.Complete)
	assert.Equal(t, 2, out.Usage.ToolCalls)

	res = cli(t, "tools", "--config", cfg, "--json")
	require.Equal(t, 0, res.code, res.stderr)
	var infos []struct {
		Name   string         `json:"name"`
		Schema map[string]any `json:"schema"`
		Meta   struct {
			ReadOnly bool `json:"read_only"`
		} `json:"meta"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &infos))
	require.Len(t, infos, 2, "include: keeps only the two tools named")
	assert.Equal(t, "list_directory", infos[0].Name)
	assert.Equal(t, "read_text_file", infos[1].Name)
	props, _ := infos[1].Schema["properties"].(map[string]any)
	assert.Contains(t, props, "path", "the server's input schema is the tool's schema")
	assert.True(t, infos[1].Meta.ReadOnly, "the server marks read_text_file read-only")

	res = cli(t, "tools", "call", "read_text_file", `{"path": "/etc/hostname"}`, "--config", cfg)
	assert.NotEqual(t, 0, res.code)
	assert.Contains(t, strings.ToLower(res.stderr), "access denied", "the server refuses a path outside its root")
}

// The shipped MCP example builds against the server version CI installs:
// its include list names tools the real server has, and it pins that
// version (which TestShippedMCPExamplePinsTheServerVersion checks without
// the server too).
func TestShippedMCPExampleBuildsAgainstTheRealServer(t *testing.T) {
	path := filepath.Join(repoRoot, "examples", "pipelines", "react_mcp.yaml")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	npx := `[npx, -y, "` + mcptest.FilesystemPackage + "@" + mcptest.FilesystemVersion + `", ".."]`
	require.Contains(t, string(b), npx, "the example runs the server version the tests install")

	argv, err := json.Marshal(mcptest.FilesystemServer(t, filepath.Join(repoRoot, "examples")))
	require.NoError(t, err)
	local := filepath.Join(t.TempDir(), "react_mcp.yaml")
	require.NoError(t, os.WriteFile(local, []byte(strings.Replace(string(b), npx, string(argv), 1)), 0o644))
	res := cli(t, "tools", "--config", local, "--json")
	require.Equal(t, 0, res.code, res.stderr)
	var infos []struct {
		Name string `json:"name"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &infos))
	var names []string
	for _, in := range infos {
		names = append(names, in.Name)
	}
	assert.Equal(t, []string{"directory_tree", "get_file_info", "list_directory", "read_text_file", "search_files"}, names)
}
