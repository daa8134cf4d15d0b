package builtin

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/sqltool"
)

// newSQLFixture creates data.db with a table of 10 rows in a new folder and
// returns the folder.
func newSQLFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, "data.db"))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE n (i INTEGER);
		WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 10) INSERT INTO n SELECT i FROM s`)
	require.NoError(t, err)
	return dir
}

func TestBuildSQLDecodesSettings(t *testing.T) {
	dir := newSQLFixture(t)
	ctx := context.Background()
	ts, err := buildSQL(ctx, map[string]any{"path": "./data.db", "max_rows": "3", "timeout": "2s", "max_cell_bytes": 50, "max_output_bytes": 5000}, dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"sql_query", "sql_schema"}, fileSQLNames(ts))
	q := fileSQLTool(t, ts, "sql_query")
	m := tools.MetaOf(q)
	assert.True(t, m.ReadOnly)
	assert.False(t, m.NeedsApproval)
	assert.Greater(t, m.Timeout, 2*time.Second)
	out, err := q.Call(ctx, "SELECT i FROM n ORDER BY i")
	require.NoError(t, err)
	assert.Contains(t, out, "(3 rows shown; 7 more not shown", "max_rows applies; path is relative to the pipeline's folder")
	_, err = q.Call(ctx, "DELETE FROM n")
	require.ErrorIs(t, err, sqltool.ErrReadOnly)

	ts, err = buildSQL(ctx, map[string]any{"path": filepath.Join(dir, "data.db"), "write": true}, "/elsewhere")
	require.NoError(t, err)
	q = fileSQLTool(t, ts, "sql_query")
	assert.True(t, tools.MetaOf(q).NeedsApproval, "writes need approval by default")
	assert.False(t, tools.MetaOf(q).ReadOnly)
	out, err = q.Call(ctx, "DELETE FROM n WHERE i > 5")
	require.NoError(t, err)
	assert.Equal(t, "OK: 5 rows changed.", out)

	ts, err = buildSQL(ctx, map[string]any{"path": "data.db", "write": true, "approve_writes": "false"}, dir)
	require.NoError(t, err)
	assert.False(t, tools.MetaOf(fileSQLTool(t, ts, "sql_query")).NeedsApproval)

	ts, err = buildSQL(ctx, map[string]any{"path": "new.db", "write": true, "create": true}, dir)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, "new.db"))
	assert.Len(t, ts, 2)
}

func TestBuildSQLRejectsBadSettings(t *testing.T) {
	dir := newSQLFixture(t)
	cases := []struct {
		name     string
		settings map[string]any
		key      string
		missing  bool
	}{
		{"no path", map[string]any{}, "path", true},
		{"blank path", map[string]any{"path": ""}, "path", true},
		{"no such file", map[string]any{"path": "nope.db"}, "path", false},
		{"no such file, write", map[string]any{"path": "nope.db", "write": true}, "path", false},
		{"a folder", map[string]any{"path": "."}, "path", false},
		{"unknown key", map[string]any{"path": "data.db", "max_row": 5}, "max_row", false},
		{"bad type", map[string]any{"path": "data.db", "max_rows": "many"}, "max_rows", false},
		{"negative", map[string]any{"path": "data.db", "timeout": "-1s"}, "timeout", false},
		{"create without write", map[string]any{"path": "nope.db", "create": true}, "create", false},
		{"approve without write", map[string]any{"path": "data.db", "approve_writes": true}, "approve_writes", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildSQL(context.Background(), tc.settings, dir)
			require.ErrorIs(t, err, config.ErrSettings)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.key, se.Key)
			assert.Equal(t, tc.missing, errors.Is(err, ErrMissingSetting))
		})
	}
	assert.NoFileExists(t, filepath.Join(dir, "nope.db"), "a missing database is never created")
	_, err := buildSQL(context.Background(), map[string]any{"path": "nope.db"}, dir)
	require.ErrorIs(t, err, sqltool.ErrNoDatabase)
	assert.True(t, strings.Contains(err.Error(), "does not exist"), err.Error())
}
