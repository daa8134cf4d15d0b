package files_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/files"
)

// hardLinks links root/hard.txt to the secret outside the root, and
// root/twin.md to root/a.md, inside it.
func hardLinks(t *testing.T, root, outside string) {
	t.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" && runtime.GOOS != "freebsd" {
		t.Skipf("hard links are not counted on %s", runtime.GOOS)
	}
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(root, "hard.txt")); err != nil {
		t.Skipf("hard links unsupported here: %v", err)
	}
	require.NoError(t, os.Link(filepath.Join(root, "a.md"), filepath.Join(root, "twin.md")))
}

func TestHardLinksAreRefused(t *testing.T) {
	root, outside := tree(t)
	hardLinks(t, root, outside)
	f := newFS(t, files.Config{Root: root, Write: true})
	secret := filepath.Join(outside, "secret.txt")

	for _, p := range []string{"hard.txt", "twin.md", "a.md"} {
		out, err := call(t, tool(t, f, files.ReadName), p)
		require.ErrorIs(t, err, files.ErrHardLink, p)
		require.ErrorIs(t, err, tools.ErrBadInput, p)
		assert.Empty(t, out)
		assert.Contains(t, err.Error(), "has 2 hard links", p)
		assert.Contains(t, err.Error(), "read_file does not open files with more than one link", p)
		assert.NotContains(t, err.Error(), outside, "the host path is not shown")
	}

	for _, args := range []map[string]any{
		{"path": "hard.txt", "content": "overwritten"},
		{"path": "hard.txt", "content": "appended", "append": true},
		{"path": "twin.md", "content": "overwritten"},
	} {
		_, err := call(t, tool(t, f, files.WriteName), args)
		require.ErrorIs(t, err, files.ErrHardLink, "%v", args)
		assert.Contains(t, err.Error(), "write_file does not open files with more than one link")
	}
	b, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, "TOP SECRET\n", string(b), "the file outside the root is neither cut nor changed")

	// A search skips them and says so; searching one of them is refused.
	out, err := call(t, tool(t, f, files.SearchName), map[string]any{"pattern": "SECRET|Title"})
	require.NoError(t, err)
	assert.NotContains(t, out, "TOP SECRET")
	assert.NotContains(t, out, "# Title")
	assert.Contains(t, out, "skipped")
	assert.Contains(t, out, "3 files with several hard links")
	_, err = call(t, tool(t, f, files.SearchName), map[string]any{"pattern": "SECRET", "path": "hard.txt"})
	require.ErrorIs(t, err, files.ErrHardLink)
	assert.Contains(t, err.Error(), "search_files does not open files with more than one link")

	// A listing shows them, marked.
	out, err = call(t, tool(t, f, files.ListName), ".")
	require.NoError(t, err)
	assert.Contains(t, out, "file  hard.txt  (11 bytes; 2 hard links, so not accessible)")
	assert.Contains(t, out, "file  bin.dat  (14 bytes)\n")

	// A file of one link is read and written as before.
	_, err = call(t, tool(t, f, files.WriteName), map[string]any{"path": "notes/todo.txt", "content": "new"})
	require.NoError(t, err)
	out, err = call(t, tool(t, f, files.ReadName), "notes/todo.txt")
	require.NoError(t, err)
	assert.Equal(t, "new\n", out)
}
