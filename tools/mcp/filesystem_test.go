//go:build integration

package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/mcp"
	"github.com/planner-engine/planner/tools/mcp/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRealFilesystemServer runs the reference npm filesystem server
// (mcptest; it fails without node and npm or an installed server).
func TestRealFilesystemServer(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("Kepler found three laws.\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))

	c := connect(t, mcp.Config{
		Command:        mcptest.FilesystemServer(t, root),
		Prefix:         "fs_",
		Exclude:        []string{"write_file", "edit_file", "move_file", "create_directory"},
		StartupTimeout: time.Minute,
	})
	reg := registry(t, c)
	for _, name := range []string{"fs_list_directory", "fs_read_text_file"} {
		tl, ok := reg.Resolve(name)
		require.True(t, ok, "%s among %v", name, reg.Names())
		assert.NotEmpty(t, tl.Description())
		props := tools.SchemaOf(tl)["properties"].(map[string]any)
		assert.Equal(t, "string", props["path"].(map[string]any)["type"], name)
		assert.True(t, tools.MetaOf(tl).ReadOnly, name)
	}
	assert.False(t, reg.Has("fs_write_file"))

	ctx := context.Background()
	out, err := reg.Call(ctx, "fs_list_directory", `{"path": "`+root+`"}`)
	require.NoError(t, err)
	assert.Contains(t, out, "[FILE] notes.txt")
	assert.Contains(t, out, "[DIR] sub")

	// Plain text goes to the one required argument, path.
	out, err = reg.Call(ctx, "fs_read_text_file", filepath.Join(root, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "Kepler found three laws.\n", out)

	outside, err := filepath.Abs(filepath.Join(root, "..", "elsewhere.txt"))
	require.NoError(t, err)
	_, err = reg.Call(ctx, "fs_read_text_file", outside)
	require.ErrorIs(t, err, mcp.ErrToolError)
	assert.Contains(t, err.Error(), "Access denied")
}
