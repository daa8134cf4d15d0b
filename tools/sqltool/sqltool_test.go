package sqltool_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/sqltool"
)

// fixture creates shop.db in a new folder and returns its path.
func fixture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);
CREATE TABLE orders (
	id INTEGER PRIMARY KEY,
	customer_id INTEGER NOT NULL REFERENCES customers(id),
	total REAL DEFAULT 0,
	note TEXT,
	data BLOB
);
CREATE INDEX orders_by_customer ON orders(customer_id);
CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100;
INSERT INTO customers (name, email) VALUES ('Ada', 'ada@example.org'), ('Bob', NULL), ('Chloé', 'c@example.org');
INSERT INTO orders (customer_id, total, note, data) VALUES
	(1, 250.5, 'first order', NULL),
	(2, 20, 'line one
line two', x'00FF10'),
	(3, 99.99, '` + strings.Repeat("long ", 100) + `', NULL);
`)
	require.NoError(t, err)
	return path
}

func open(t *testing.T, cfg sqltool.Config) *sqltool.DB {
	t.Helper()
	d, err := sqltool.Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	return d
}

func tool(t *testing.T, d *sqltool.DB, name string) tools.Tool {
	t.Helper()
	for _, tl := range d.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

func query(t *testing.T, d *sqltool.DB, input string) (string, error) {
	t.Helper()
	return tool(t, d, sqltool.QueryName).Call(context.Background(), input)
}

// count returns a single integer the raw database gives for q.
func count(t *testing.T, path, q string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(q).Scan(&n))
	return n
}

func TestOpenChecksTheFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte(strings.Repeat("not a database\n", 100)), 0o644))
	cases := []struct {
		name string
		cfg  sqltool.Config
		want error
	}{
		{"no path", sqltool.Config{}, sqltool.ErrInvalidConfig},
		{"create without write", sqltool.Config{Path: missing, Create: true}, sqltool.ErrInvalidConfig},
		{"negative", sqltool.Config{Path: missing, MaxRows: -1}, sqltool.ErrInvalidConfig},
		{"missing", sqltool.Config{Path: missing}, sqltool.ErrNoDatabase},
		{"missing, write", sqltool.Config{Path: missing, Write: true}, sqltool.ErrNoDatabase},
		{"folder", sqltool.Config{Path: dir}, sqltool.ErrNoDatabase},
		{"not a database", sqltool.Config{Path: text}, sqltool.ErrNoDatabase},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sqltool.Open(context.Background(), tc.cfg)
			require.ErrorIs(t, err, tc.want)
		})
	}
	assert.NoFileExists(t, missing, "a read-only open never creates the database")

	d := open(t, sqltool.Config{Path: missing, Write: true, Create: true})
	assert.FileExists(t, missing)
	out, err := query(t, d, "CREATE TABLE t (x)")
	require.NoError(t, err)
	assert.Equal(t, "OK: 0 rows changed.", out)
}

func TestQueryRendersATable(t *testing.T) {
	d := open(t, sqltool.Config{Path: fixture(t)})
	out, err := query(t, d, "SELECT id, name, email FROM customers ORDER BY id;")
	require.NoError(t, err)
	assert.Equal(t, `id | name  | email
---+-------+----------------
1  | Ada   | ada@example.org
2  | Bob   | NULL
3  | Chloé | c@example.org
(3 rows)
`, out)

	for _, in := range []string{
		`{"query": "SELECT count(*) AS n FROM customers"}`,
		`{"SQL": "SELECT count(*) AS n FROM customers;;"}`,
		"-- how many?\nSELECT count(*) AS n FROM customers; -- done",
		"\"SELECT count(*) AS n FROM customers\"",
	} {
		out, err = query(t, d, in)
		require.NoError(t, err, in)
		assert.Equal(t, "n\n-\n3\n(1 row)\n", out, in)
	}

	out, err = query(t, d, "SELECT note, data, total FROM orders WHERE id = 2")
	require.NoError(t, err)
	assert.Equal(t, "note               | data      | total\n-------------------+-----------+------\nline one\\nline two | x'00FF10' | 20\n(1 row)\n", out)

	out, err = query(t, d, "SELECT 'a;b' AS s, 1.5 AS f, NULL AS z, x'68656c6c6f' AS t")
	require.NoError(t, err)
	assert.Contains(t, out, "a;b | 1.5 | NULL | hello")

	out, err = query(t, d, "SELECT * FROM customers WHERE id > 99")
	require.NoError(t, err)
	assert.Equal(t, "id | name | email\n---+------+------\n(0 rows)\n", out)

	out, err = query(t, d, "PRAGMA table_info(customers)")
	require.NoError(t, err)
	assert.Contains(t, out, "(3 rows)")
	out, err = query(t, d, "EXPLAIN QUERY PLAN SELECT * FROM orders WHERE customer_id = 1")
	require.NoError(t, err)
	assert.Contains(t, out, "orders_by_customer")
	out, err = query(t, d, "SELECT name FROM pragma_table_info('orders') ORDER BY cid LIMIT 1")
	require.NoError(t, err)
	assert.Contains(t, out, "id\n(1 row)")

	_, err = query(t, d, "SELECT * FROM nope")
	require.ErrorIs(t, err, sqltool.ErrSQL)
	require.ErrorIs(t, err, tools.ErrBadInput)
	assert.Contains(t, err.Error(), "no such table: nope; sql_schema lists")
	_, err = query(t, d, "SELEC 1")
	require.ErrorIs(t, err, sqltool.ErrSQL)
	_, err = query(t, d, `{"query": "SELECT 1", "limit": 3}`)
	require.ErrorIs(t, err, sqltool.ErrBadArgument)
}

func TestQueryCapsRowsCellsAndOutput(t *testing.T) {
	path := fixture(t)
	d := open(t, sqltool.Config{Path: path, MaxRows: 5, MaxCellBytes: 20})
	series := "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 20) SELECT n FROM s"
	out, err := query(t, d, series)
	require.NoError(t, err)
	assert.Equal(t, "n\n-\n1\n2\n3\n4\n5\n(5 rows shown; 15 more not shown: narrow the query with WHERE or LIMIT, or aggregate)\n", out)

	out, err = query(t, d, "SELECT note FROM orders WHERE id = 3")
	require.NoError(t, err)
	assert.Contains(t, out, "long long long long …\n")

	small := open(t, sqltool.Config{Path: path, MaxOutputBytes: 600})
	out, err = query(t, small, "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 90) SELECT n, 'some padding text' AS pad FROM s")
	require.NoError(t, err)
	assert.LessOrEqual(t, len(out), 600)
	assert.Contains(t, out, "more not shown: the output reached its 600-byte cap")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Regexp(t, `^\((\d+) rows shown; (\d+) more not shown`, lines[len(lines)-1])
	var shown, more int
	_, err = fmt.Sscanf(lines[len(lines)-1], "(%d rows shown; %d more", &shown, &more)
	require.NoError(t, err)
	assert.Equal(t, 90, shown+more)
	assert.Len(t, lines, shown+3)

	wide := open(t, sqltool.Config{Path: path, MaxOutputBytes: 100}) // raised to MinOutputBytes
	var cols []string
	for i := range 100 {
		cols = append(cols, fmt.Sprintf("%d AS column_%d", i, i))
	}
	out, err = query(t, wide, "SELECT "+strings.Join(cols, ", "))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(out), sqltool.MinOutputBytes)
	assert.Contains(t, out, "(0 rows shown; 1 more not shown")
	assert.Contains(t, out, "column_0 | column_1")

	// A value over MaxValueBytes fails instead of taking the memory.
	_, err = query(t, d, "SELECT length(randomblob(100000000)) AS n")
	require.ErrorIs(t, err, sqltool.ErrSQL)
	assert.Contains(t, err.Error(), "too big")
}

// hostileReadOnly lists statements a read-only database must refuse, with
// the error each must fail with.
func hostileReadOnly(dir string) []struct {
	sql  string
	want error
} {
	return []struct {
		sql  string
		want error
	}{
		{"INSERT INTO customers (name) VALUES ('Eve')", sqltool.ErrReadOnly},
		{"insert into customers (name) values ('Eve')", sqltool.ErrReadOnly},
		{"REPLACE INTO customers (id, name) VALUES (1, 'Eve')", sqltool.ErrReadOnly},
		{"UPDATE customers SET name = 'Eve'", sqltool.ErrReadOnly},
		{"DELETE FROM customers", sqltool.ErrReadOnly},
		{"DROP TABLE customers", sqltool.ErrReadOnly},
		{"DROP VIEW big_orders", sqltool.ErrReadOnly},
		{"CREATE TABLE t (x)", sqltool.ErrReadOnly},
		{"CREATE TEMP TABLE t (x)", sqltool.ErrReadOnly},
		{"CREATE INDEX i ON customers(name)", sqltool.ErrReadOnly},
		{"ALTER TABLE customers ADD COLUMN age INTEGER", sqltool.ErrReadOnly},
		{"WITH x AS (SELECT 'Eve' AS n) INSERT INTO customers (name) SELECT n FROM x", sqltool.ErrReadOnly},
		{"VACUUM", sqltool.ErrNotAllowed}, // it attaches a scratch database
		{"REINDEX", sqltool.ErrReadOnly},
		{"ANALYZE", sqltool.ErrReadOnly},
		{"ATTACH DATABASE '" + filepath.Join(dir, "other.db") + "' AS other", sqltool.ErrNotAllowed},
		{"ATTACH ':memory:' AS m", sqltool.ErrNotAllowed},
		{"DETACH DATABASE other", sqltool.ErrNotAllowed},
		{"VACUUM INTO '" + filepath.Join(dir, "copy.db") + "'", sqltool.ErrNotAllowed},
		{"PRAGMA query_only = 0", sqltool.ErrNotAllowed},
		{"PRAGMA query_only = ''", sqltool.ErrNotAllowed},
		{"PRAGMA user_version = 7", sqltool.ErrNotAllowed},
		{"PRAGMA main.user_version = 7", sqltool.ErrNotAllowed},
		{"PRAGMA journal_mode = WAL", sqltool.ErrNotAllowed},
		{"PRAGMA journal_mode('')", sqltool.ErrNotAllowed},
		{"PRAGMA writable_schema = ON", sqltool.ErrNotAllowed},
		{"PRAGMA foreign_keys = OFF", sqltool.ErrNotAllowed},
		{"PRAGMA wal_checkpoint", sqltool.ErrNotAllowed},
		{"BEGIN", sqltool.ErrNotAllowed},
		{"BEGIN IMMEDIATE", sqltool.ErrNotAllowed},
		{"COMMIT", sqltool.ErrNotAllowed},
		{"SAVEPOINT s", sqltool.ErrNotAllowed},
		{"SELECT load_extension('" + filepath.Join(dir, "evil.so") + "')", sqltool.ErrNotAllowed},
		{"SELECT 1; DROP TABLE customers", sqltool.ErrMultipleStatements},
		{"SELECT 1; SELECT 2", sqltool.ErrMultipleStatements},
		{"SELECT ';'; DELETE FROM customers", sqltool.ErrMultipleStatements},
		{"SELECT 1 /* ; */; -- x\n DELETE FROM customers", sqltool.ErrMultipleStatements},
		{"", sqltool.ErrEmptyStatement},
		{"  ;; -- nothing\n", sqltool.ErrEmptyStatement},
		{"SELECT 'unterminated", sqltool.ErrSQL},
		{"SELECT 1\x00; DROP TABLE customers", sqltool.ErrSQL},
		{"SELECT " + strings.Repeat("1+", sqltool.MaxStatementBytes) + "1", sqltool.ErrSQL},
	}
}

func TestReadOnlyDatabaseRefusesHostileStatements(t *testing.T) {
	path := fixture(t)
	dir := filepath.Dir(path)
	d := open(t, sqltool.Config{Path: path})
	for _, tc := range hostileReadOnly(dir) {
		t.Run(clip(tc.sql), func(t *testing.T) {
			out, err := query(t, d, tc.sql)
			require.ErrorIs(t, err, tc.want)
			require.ErrorIs(t, err, tools.ErrBadInput)
			assert.Empty(t, out)
		})
	}
	assert.Equal(t, 3, count(t, path, "SELECT count(*) FROM customers"))
	assert.Equal(t, 3, count(t, path, "SELECT count(*) FROM orders"))
	assert.Equal(t, 0, count(t, path, "PRAGMA user_version"))
	assert.Equal(t, 0, count(t, path, "SELECT count(*) FROM customers WHERE name = 'Eve'"))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"shop.db"}, names, "no database file was attached, copied or created")

	// The pool still works, and reads are unaffected.
	out, err := query(t, d, "SELECT count(*) AS n FROM customers")
	require.NoError(t, err)
	assert.Contains(t, out, "3")
}

func TestWritableDatabase(t *testing.T) {
	path := fixture(t)
	dir := filepath.Dir(path)
	d := open(t, sqltool.Config{Path: path, Write: true})
	q := tool(t, d, sqltool.QueryName)
	assert.True(t, tools.MetaOf(q).NeedsApproval, "writes need approval by default")
	assert.False(t, tools.MetaOf(q).ReadOnly)
	assert.True(t, tools.MetaOf(tool(t, d, sqltool.SchemaName)).ReadOnly)
	assert.Contains(t, q.Description(), "INSERT, UPDATE, DELETE")

	for _, tc := range []struct{ sql, want string }{
		{"INSERT INTO customers (name) VALUES ('Eve')", "OK: 1 row changed."},
		{"UPDATE customers SET email = 'x@example.org' WHERE email IS NULL", "OK: 2 rows changed."},
		{"CREATE TABLE log (msg TEXT)", "OK: 0 rows changed."},
		{"CREATE TRIGGER t AFTER DELETE ON customers BEGIN INSERT INTO log VALUES ('deleted'); INSERT INTO log VALUES (old.name); END;", "OK: 0 rows changed."},
		{"DELETE FROM customers WHERE name = 'Eve'", "OK: 3 rows changed."}, // the trigger's two inserts count too
		{"INSERT INTO customers (name) VALUES ('Fay') RETURNING id, name", "id | name\n---+-----\n4  | Fay\n(1 row)\n"},
		{"DROP TABLE log", "OK: 0 rows changed."},
	} {
		out, err := query(t, d, tc.sql)
		require.NoError(t, err, tc.sql)
		assert.Equal(t, tc.want, out, tc.sql)
	}
	assert.Equal(t, 4, count(t, path, "SELECT count(*) FROM customers"))

	// Still never allowed with write: true.
	for _, tc := range hostileReadOnly(dir) {
		if tc.want == sqltool.ErrReadOnly {
			continue
		}
		_, err := query(t, d, tc.sql)
		require.ErrorIs(t, err, tc.want, tc.sql)
	}
	assert.Equal(t, 0, count(t, path, "PRAGMA user_version"))
	assert.NoFileExists(t, filepath.Join(dir, "other.db"))
	assert.NoFileExists(t, filepath.Join(dir, "copy.db"))

	no := false
	d2 := open(t, sqltool.Config{Path: path, Write: true, ApproveWrites: &no})
	assert.False(t, tools.MetaOf(tool(t, d2, sqltool.QueryName)).NeedsApproval)
}

func TestRunawayQueryIsInterrupted(t *testing.T) {
	d := open(t, sqltool.Config{Path: fixture(t), Timeout: 300 * time.Millisecond})
	reg, err := tools.NewRegistry(d.Tools())
	require.NoError(t, err)
	start := time.Now()
	out, err := reg.Call(context.Background(), sqltool.QueryName,
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")
	elapsed := time.Since(start)
	require.ErrorIs(t, err, sqltool.ErrTimeout)
	require.ErrorIs(t, err, tools.ErrToolTimeout)
	assert.Empty(t, out)
	assert.Contains(t, err.Error(), "ran past the 300ms limit")
	assert.Less(t, elapsed, 5*time.Second, "the query stops near its limit")

	// A runaway query that streams rows shows the capped rows and says
	// that more exist.
	out, err = query(t, d, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c")
	require.NoError(t, err)
	assert.Contains(t, out, "(100 rows shown; more than ")

	// The pool recovers.
	out, err = query(t, d, "SELECT 1 AS one")
	require.NoError(t, err)
	assert.Contains(t, out, "(1 row)")

	// A cancelled call reports the cancellation, not a time limit.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = tool(t, d, sqltool.QueryName).Call(ctx, "SELECT 1")
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, sqltool.ErrTimeout)
}

func TestSchema(t *testing.T) {
	d := open(t, sqltool.Config{Path: fixture(t)})
	sc := tool(t, d, sqltool.SchemaName)
	out, err := sc.Call(context.Background(), "")
	require.NoError(t, err)
	assert.Equal(t, `table customers: id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT
table orders: id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), total REAL, note TEXT, data BLOB
view big_orders: id INTEGER, total REAL
(2 tables, 1 view; sql_schema with a table name shows its CREATE statement, indexes and triggers)
`, out)

	for _, in := range []string{"orders", "ORDERS", `{"table": "orders"}`, `"orders"`, "main.orders"} {
		out, err = sc.Call(context.Background(), in)
		require.NoError(t, err, in)
		assert.True(t, strings.HasPrefix(out, "table orders, 5 columns:\n  id INTEGER PRIMARY KEY\n  customer_id INTEGER NOT NULL REFERENCES customers(id)\n  total REAL DEFAULT 0\n"), out)
		assert.Contains(t, out, "CREATE TABLE orders (")
		assert.Contains(t, out, "CREATE INDEX orders_by_customer ON orders(customer_id)")
	}
	out, err = sc.Call(context.Background(), "big_orders")
	require.NoError(t, err)
	assert.Contains(t, out, "view big_orders, 2 columns:")

	_, err = sc.Call(context.Background(), "nope")
	require.ErrorIs(t, err, sqltool.ErrNoTable)
	require.ErrorIs(t, err, tools.ErrBadInput)
	assert.Contains(t, err.Error(), "customers, orders, big_orders")
	_, err = sc.Call(context.Background(), `{"tabel": "orders"}`)
	require.ErrorIs(t, err, sqltool.ErrBadArgument)

	empty := filepath.Join(t.TempDir(), "empty.db")
	e := open(t, sqltool.Config{Path: empty, Write: true, Create: true})
	out, err = tool(t, e, sqltool.SchemaName).Call(context.Background(), "")
	require.NoError(t, err)
	assert.Equal(t, "The database has no tables or views.\n", out)
}

func TestToolsDescribeThemselves(t *testing.T) {
	d := open(t, sqltool.Config{Path: fixture(t)})
	for _, tl := range d.Tools() {
		assert.Equal(t, tools.CleanDescription(tl.Description()), tl.Description(), tl.Name())
		assert.Contains(t, tl.Description(), "shop.db")
		_, err := json.Marshal(tools.SchemaOf(tl))
		require.NoError(t, err)
		m := tools.MetaOf(tl)
		assert.True(t, m.ReadOnly, tl.Name())
		assert.False(t, m.NeedsApproval, tl.Name())
		assert.Greater(t, m.Timeout, sqltool.DefaultTimeout, "the registry's limit leaves the statement's own limit room")
	}
	assert.Contains(t, tool(t, d, sqltool.QueryName).Description(), "read-only")
}

func TestConcurrentQueries(t *testing.T) {
	d := open(t, sqltool.Config{Path: fixture(t)})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 5 {
				out, err := query(t, d, fmt.Sprintf("SELECT %d + %d AS s", i, j))
				if assert.NoError(t, err) {
					assert.Contains(t, out, fmt.Sprintf("\n%d\n", i+j))
				}
				_, err = tool(t, d, sqltool.SchemaName).Call(context.Background(), "orders")
				assert.NoError(t, err)
				_, err = query(t, d, "DELETE FROM orders")
				assert.ErrorIs(t, err, sqltool.ErrReadOnly)
			}
		})
	}
	wg.Wait()
}

func clip(s string) string {
	s = strings.ReplaceAll(s, "\x00", "NUL")
	if len(s) > 60 {
		return s[:60]
	}
	return s
}
