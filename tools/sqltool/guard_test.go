package sqltool

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// TestEngineRefusesWritesWithoutTheTextChecks runs hostile SQL straight
// through the pool, past parseStatement, to show that SQLite itself (the
// read-only open, query_only and the authorizer) refuses it.
func TestEngineRefusesWritesWithoutTheTextChecks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.db")
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = raw.Exec("CREATE TABLE t (x); INSERT INTO t VALUES (1), (2)")
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	d, err := Open(context.Background(), Config{Path: path})
	require.NoError(t, err)
	defer d.Close()
	d.db.SetMaxOpenConns(1) // every statement on the connection checked below
	ctx := context.Background()
	for _, q := range []string{
		"INSERT INTO t VALUES (3)",
		"DELETE FROM t",
		"DROP TABLE t",
		"CREATE TEMP TABLE tmp (x)",
		"PRAGMA query_only = 0",
		"PRAGMA query_only = ''",
		"PRAGMA user_version = 5",
		"PRAGMA journal_mode = ''",
		"PRAGMA writable_schema = 1",
		"ATTACH '" + filepath.Join(dir, "x.db") + "' AS x",
		"VACUUM INTO '" + filepath.Join(dir, "copy.db") + "'",
		"BEGIN",
		"SELECT load_extension('x')",
		"SELECT 1; DROP TABLE t",
	} {
		_, err := d.db.ExecContext(ctx, q)
		require.Error(t, err, q)
		var se *sqlite.Error
		require.True(t, errors.As(err, &se), "%q: %v", q, err)
		code := se.Code() & 0xff
		assert.Contains(t, []int{sqlite3.SQLITE_AUTH, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_ERROR}, code, "%q: %v", q, err)
	}
	// query_only is still on: read it with the authorizer lifted for a
	// moment, then put back.
	conn, err := d.db.Conn(ctx)
	require.NoError(t, err)
	setAuth := func(fn sqlite.AuthorizerFn) {
		require.NoError(t, conn.Raw(func(dc any) error { return dc.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(fn) }))
	}
	setAuth(nil)
	var on int
	require.NoError(t, conn.QueryRowContext(ctx, "PRAGMA query_only").Scan(&on))
	assert.Equal(t, 1, on)
	setAuth(authorizer(false))
	require.NoError(t, conn.Close())
	var n int
	require.NoError(t, d.db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n))
	assert.Equal(t, 2, n)
	assert.NoFileExists(t, filepath.Join(dir, "x.db"))
	assert.NoFileExists(t, filepath.Join(dir, "copy.db"))
}

func TestParseStatement(t *testing.T) {
	for _, tc := range []struct {
		in, text, kind string
		explain        bool
	}{
		{"SELECT 1", "SELECT 1", "SELECT", false},
		{"  select 1 ;; ", "select 1", "SELECT", false},
		{"/* c */ SELECT 'a;b' -- ;\n;", "SELECT 'a;b'", "SELECT", false},
		{`SELECT "we""ird;" FROM [x;y]`, `SELECT "we""ird;" FROM [x;y]`, "SELECT", false},
		{"EXPLAIN QUERY PLAN SELECT 1", "EXPLAIN QUERY PLAN SELECT 1", "SELECT", true},
		{"with x as (select 1) select * from x", "with x as (select 1) select * from x", "WITH", false},
		{"CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET x = 1; DELETE FROM u; END;",
			"CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET x = 1; DELETE FROM u; END", "CREATE", false},
		{"PRAGMA table_info(t)", "PRAGMA table_info(t)", "PRAGMA", false},
		{"PRAGMA main.index_list = t", "PRAGMA main.index_list = t", "PRAGMA", false},
	} {
		st, err := parseStatement(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.text, st.text, tc.in)
		assert.Equal(t, tc.kind, st.kind, tc.in)
		assert.Equal(t, tc.explain, st.explain, tc.in)
	}
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END; DROP TABLE t", ErrMultipleStatements},
		{"SELECT 'it''s'; SELECT 2", ErrMultipleStatements},
		{"SELECT [a", ErrSQL},
		{"PRAGMA user_version(3)", ErrNotAllowed},
		{"pragma MAIN . cache_size = 1", ErrNotAllowed},
		{"-- only a comment", ErrEmptyStatement},
	} {
		_, err := parseStatement(tc.in)
		require.ErrorIs(t, err, tc.want, tc.in)
	}
}

func TestFormatting(t *testing.T) {
	assert.Equal(t, "1,234,567", itoa(1234567))
	assert.Equal(t, "-1,000", itoa(-1000))
	assert.Equal(t, "999", itoa(999))
	assert.Equal(t, "1 row", plural(1, "row", "rows"))
	assert.Equal(t, "0 rows", plural(int64(0), "row", "rows"))
	assert.Equal(t, "abc…", clip("abcdef", 3))
	assert.Equal(t, "é…", clip("éé", 3), "never splits a rune")
	assert.Equal(t, "attempt to write a readonly database", sqliteMessage(errors.New("attempt to write a readonly database (8)")))
}
