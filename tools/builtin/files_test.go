package builtin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/files"
	"github.com/planner-engine/planner/tools/toolset"
)

// fileSQLNames returns the names of ts.
func fileSQLNames(ts []tools.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

// fileSQLTool returns the tool of ts named name.
func fileSQLTool(t *testing.T, ts []tools.Tool, name string) tools.Tool {
	t.Helper()
	for _, tl := range ts {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %q among %v", name, fileSQLNames(ts))
	return nil
}

func TestBuildFilesDecodesSettings(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(base, "docs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "docs", "a.md"), []byte("one\ntwo\nthree\n"), 0o644))

	ts, err := buildFiles(context.Background(), map[string]any{"root": "./docs"}, base)
	require.NoError(t, err)
	assert.Equal(t, []string{"list_files", "read_file", "search_files"}, fileSQLNames(ts), "read-only by default")
	out, err := fileSQLTool(t, ts, "read_file").Call(context.Background(), "a.md")
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\nthree\n", out, "root is relative to the pipeline's folder")

	ts, err = buildFiles(context.Background(), map[string]any{
		"root": filepath.Join(base, "docs"), "write": true, "max_read_bytes": "20", "timeout": "2s",
		"include_git": true, "line_numbers": true, "max_entries": 5, "max_depth": 2, "max_matches": 3,
		"max_search_file_bytes": 1000, "max_write_bytes": 100,
	}, "/elsewhere")
	require.NoError(t, err)
	assert.Equal(t, []string{"list_files", "read_file", "search_files", "write_file"}, fileSQLNames(ts))
	rd := fileSQLTool(t, ts, "read_file")
	assert.Equal(t, 2*time.Second, tools.MetaOf(rd).Timeout)
	out, err = rd.Call(context.Background(), "a.md")
	require.NoError(t, err)
	assert.Contains(t, out, "     1| one\n[output capped at 20 bytes", "max_read_bytes and line_numbers apply")
	wr := fileSQLTool(t, ts, "write_file")
	assert.True(t, tools.MetaOf(wr).NeedsApproval, "write_file needs approval by default")
	assert.False(t, tools.MetaOf(wr).ReadOnly)
	_, err = wr.Call(context.Background(), `{"path": "b.md", "content": "new"}`)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(base, "docs", "b.md"))

	ts, err = buildFiles(context.Background(), map[string]any{"root": "docs", "write": true, "approve_writes": false}, base)
	require.NoError(t, err)
	assert.False(t, tools.MetaOf(fileSQLTool(t, ts, "write_file")).NeedsApproval)
}

func TestBuildFilesRejectsBadSettings(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(base, "file.txt"), []byte("x"), 0o644))
	cases := []struct {
		name     string
		settings map[string]any
		key      string
		missing  bool
	}{
		{"no root", map[string]any{}, "root", true},
		{"blank root", map[string]any{"root": " "}, "root", true},
		{"root missing", map[string]any{"root": "nope"}, "root", false},
		{"root is a file", map[string]any{"root": "file.txt"}, "root", false},
		{"unknown key", map[string]any{"root": ".", "rot": "."}, "rot", false},
		{"bad type", map[string]any{"root": ".", "max_read_bytes": "lots"}, "max_read_bytes", false},
		{"bad duration", map[string]any{"root": ".", "timeout": "soon"}, "timeout", false},
		{"negative", map[string]any{"root": ".", "max_entries": -1}, "max_entries", false},
		{"approve without write", map[string]any{"root": ".", "approve_writes": true}, "approve_writes", false},
		{"write limit without write", map[string]any{"root": ".", "max_write_bytes": 10}, "max_write_bytes", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildFiles(context.Background(), tc.settings, base)
			require.ErrorIs(t, err, config.ErrSettings)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.key, se.Key)
			assert.Equal(t, tc.missing, errors.Is(err, ErrMissingSetting))
		})
	}
	_, err := buildFiles(context.Background(), map[string]any{"root": "nope"}, base)
	require.ErrorIs(t, err, files.ErrInvalidConfig)
}

// buildFiles builds a files entry through its family.
func buildFiles(ctx context.Context, settings map[string]any, baseDir string) ([]tools.Tool, error) {
	return toolset.Files().Build(ctx, settings, baseDir)
}
