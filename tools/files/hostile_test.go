package files_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/files"
)

// hostilePaths are paths a model might give to reach outside the root, or
// that are malformed, with the error each must fail with.
func hostilePaths() []struct {
	path string
	want error
} {
	return []struct {
		path string
		want error
	}{
		{"../etc/passwd", files.ErrOutsideRoot},
		{"../outside/secret.txt", files.ErrOutsideRoot},
		{"/etc/passwd", files.ErrOutsideRoot},
		{"a/../../x", files.ErrOutsideRoot},
		{"notes/../../outside/secret.txt", files.ErrOutsideRoot},
		{"..", files.ErrOutsideRoot},
		{"out_file", files.ErrOutsideRoot},           // relative link to a file outside
		{"out_abs", files.ErrOutsideRoot},            // absolute link to a file outside
		{"out_dir/secret.txt", files.ErrOutsideRoot}, // link to a folder outside
		{"c1", files.ErrOutsideRoot},                 // a chain of links that ends outside
		{"in_dir/../out_file", files.ErrOutsideRoot}, // through a link inside first
		{"a.md\x00.txt", files.ErrBadPath},
		{"\x00", files.ErrBadPath},
		{"loop1", files.ErrBadPath},
		{"dangling", files.ErrNotFound},
		{"missing.md", files.ErrNotFound},
	}
}

func TestReadFileRefusesHostilePaths(t *testing.T) {
	root, outside := tree(t)
	symlinks(t, root, outside)
	rd := tool(t, newFS(t, files.Config{Root: root}), files.ReadName)
	for _, tc := range hostilePaths() {
		t.Run(strings.ToValidUTF8(strings.ReplaceAll(tc.path, "\x00", "NUL"), "?"), func(t *testing.T) {
			out, err := call(t, rd, map[string]any{"path": tc.path})
			require.ErrorIs(t, err, tc.want)
			require.ErrorIs(t, err, tools.ErrBadInput)
			assert.Empty(t, out)
			assert.NotContains(t, err.Error(), "TOP SECRET")
			assert.NotContains(t, err.Error(), outside, "the host path is not shown")
			assert.NotContains(t, err.Error(), root, "the host path is not shown")
		})
	}
}

func TestSymlinkOutsideRootIsRefused(t *testing.T) {
	root, outside := tree(t)
	symlinks(t, root, outside)
	f := newFS(t, files.Config{Root: root, Write: true})

	// Links that stay inside the root work, chains included.
	out, err := call(t, tool(t, f, files.ReadName), "i1")
	require.NoError(t, err)
	assert.Equal(t, "# Title\nline two\nline three\n", out)
	out, err = call(t, tool(t, f, files.ReadName), "in_dir/todo.txt")
	require.NoError(t, err)
	assert.Contains(t, out, "buy milk")

	for _, p := range []string{"out_file", "out_abs", "c1"} {
		_, err = call(t, tool(t, f, files.ReadName), p)
		require.ErrorIs(t, err, files.ErrOutsideRoot, p)
		assert.Contains(t, err.Error(), "resolves outside the root folder", p)
	}

	for _, p := range []string{"out_dir", "../", "/", "/tmp"} {
		_, err = call(t, tool(t, f, files.ListName), map[string]any{"path": p})
		require.ErrorIs(t, err, files.ErrOutsideRoot, p)
	}
	out, err = call(t, tool(t, f, files.ListName), map[string]any{"recursive": true})
	require.NoError(t, err)
	assert.Contains(t, out, "link  out_dir  (a symbolic link that leads outside the root folder or nowhere; not accessible)")
	assert.Contains(t, out, "link  in_dir/  (a symbolic link to a folder")
	assert.Contains(t, out, "link  i1  (a symbolic link to a file, 28 bytes)")
	assert.NotContains(t, out, "secret.txt", "links to folders are not followed")

	out, err = call(t, tool(t, f, files.SearchName), "SECRET")
	require.NoError(t, err)
	assert.Contains(t, out, "No matches", "search never reads through links that leave the root")
	_, err = call(t, tool(t, f, files.SearchName), map[string]any{"pattern": "SECRET", "path": "out_dir"})
	require.ErrorIs(t, err, files.ErrOutsideRoot)
	_, err = call(t, tool(t, f, files.SearchName), map[string]any{"pattern": "SECRET", "path": "out_file"})
	require.ErrorIs(t, err, files.ErrOutsideRoot)

	// Writing through a link that leaves the root changes nothing outside.
	wr := tool(t, f, files.WriteName)
	for _, p := range []string{"out_file", "out_abs", "c1", "out_dir/secret.txt", "out_dir/new.txt", "out_dir/sub/new.txt"} {
		_, err = call(t, wr, map[string]any{"path": p, "content": "pwned"})
		require.ErrorIs(t, err, files.ErrOutsideRoot, p)
	}
	got, err := os.ReadFile(filepath.Join(outside, "secret.txt"))
	require.NoError(t, err)
	assert.Equal(t, "TOP SECRET\n", string(got))
	assert.NoFileExists(t, filepath.Join(outside, "new.txt"))
	assert.NoDirExists(t, filepath.Join(outside, "sub"))
}

func TestWriteFileRefusesHostilePaths(t *testing.T) {
	root, outside := tree(t)
	symlinks(t, root, outside)
	wr := tool(t, newFS(t, files.Config{Root: root, Write: true}), files.WriteName)
	for _, tc := range hostilePaths() {
		if tc.want == files.ErrNotFound {
			continue // writing creates missing files
		}
		_, err := call(t, wr, map[string]any{"path": tc.path, "content": "pwned"})
		require.ErrorIs(t, err, tc.want, "%q", tc.path)
		require.ErrorIs(t, err, tools.ErrBadInput, "%q", tc.path)
	}
	_, err := call(t, wr, map[string]any{"path": filepath.Join(outside, "abs.txt"), "content": "pwned"})
	require.ErrorIs(t, err, files.ErrOutsideRoot)
	assert.NoFileExists(t, filepath.Join(outside, "abs.txt"))
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing was created outside the root")
}

func TestSearchAndListRefuseHostilePaths(t *testing.T) {
	root, outside := tree(t)
	symlinks(t, root, outside)
	f := newFS(t, files.Config{Root: root})
	for _, tc := range hostilePaths() {
		if tc.path == "dangling" || tc.path == "missing.md" || tc.path == "loop1" {
			continue
		}
		_, err := call(t, tool(t, f, files.SearchName), map[string]any{"pattern": "x", "path": tc.path})
		require.ErrorIs(t, err, tc.want, "search %q", tc.path)
		_, err = call(t, tool(t, f, files.ListName), map[string]any{"path": tc.path})
		require.ErrorIs(t, err, tc.want, "list %q", tc.path)
	}
}

func TestWriteFileIsAbsentWithoutWrite(t *testing.T) {
	root, _ := tree(t)
	reg, err := tools.NewRegistry(newFS(t, files.Config{Root: root}).Tools())
	require.NoError(t, err)
	assert.False(t, reg.Has(files.WriteName))
	_, err = reg.Call(t.Context(), files.WriteName, `{"path": "x.txt", "content": "x"}`)
	require.ErrorIs(t, err, tools.ErrUnknownTool)
	assert.NoFileExists(t, filepath.Join(root, "x.txt"))
}

func TestBinaryAndSpecialFilesAreRefused(t *testing.T) {
	root, _ := tree(t)
	f := newFS(t, files.Config{Root: root})
	_, err := call(t, tool(t, f, files.ReadName), "bin.dat")
	require.ErrorIs(t, err, files.ErrBinary)
	assert.Contains(t, err.Error(), "binary")
	_, err = call(t, tool(t, f, files.ReadName), "notes")
	require.ErrorIs(t, err, files.ErrNotFile)

	// Mostly control characters, no NUL: still binary.
	require.NoError(t, os.WriteFile(filepath.Join(root, "ctl.bin"), []byte(strings.Repeat("\x01\x02\x03abc", 100)), 0o644))
	_, err = call(t, tool(t, f, files.ReadName), "ctl.bin")
	require.ErrorIs(t, err, files.ErrBinary)

	fifo := filepath.Join(root, "pipe")
	if err := mkfifo(fifo); err != nil {
		t.Logf("no named pipe: %v", err)
		return
	}
	_, err = call(t, tool(t, f, files.ReadName), "pipe")
	require.ErrorIs(t, err, files.ErrNotFile)
	out, err := call(t, tool(t, f, files.SearchName), "zzz")
	require.NoError(t, err, "search skips special files instead of blocking on them")
	assert.Contains(t, out, "No matches")
	out, err = call(t, tool(t, f, files.ListName), ".")
	require.NoError(t, err)
	assert.Contains(t, out, "other pipe  (a special file, not readable)")
}
