package audit_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/redact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func open(t testing.TB, path string, opts ...audit.Option) *audit.Log {
	t.Helper()
	l, err := audit.Open(context.Background(), path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func tools(rs []audit.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Tool
	}
	return out
}

// Records come back as appended, oldest first, and the filters select by
// thread, tool, time and count.
func TestAppendAndQuery(t *testing.T) {
	ctx := context.Background()
	l := open(t, filepath.Join(t.TempDir(), "audit.db"))
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)
	first := audit.Record{Time: t0, Thread: "a", Run: "r1", Node: "act", Step: "E1", Tool: "search", CallID: "c1", Input: "go",
		OutputSHA256: audit.Digest("out"), OutputBytes: 3, DurationMS: 1.234, Decision: audit.DecisionApproved, DecidedBy: "ops", Reason: "fine"}
	require.NoError(t, l.Append(ctx, first))
	require.NoError(t, l.Append(ctx, audit.Record{Time: t0.Add(time.Second), Thread: "a", Tool: "calc", Input: "1+1"}))
	require.NoError(t, l.Append(ctx, audit.Record{Time: t0.Add(2 * time.Second), Thread: "b", Tool: "search", Input: "rust", Error: "timeout"}))
	require.NoError(t, l.Append(ctx, audit.Record{Time: t0.Add(3 * time.Second), Tool: "search", Input: "zig"}))

	all, err := l.Query(ctx, audit.Filter{})
	require.NoError(t, err)
	require.Len(t, all, 4)
	assert.Equal(t, []string{"search", "calc", "search", "search"}, tools(all))
	for i, r := range all {
		assert.Equal(t, int64(i+1), r.ID)
	}
	got := all[0]
	assert.True(t, t0.Equal(got.Time), "time kept to the nanosecond: %v", got.Time)
	got.Time, got.ID = first.Time, 0
	first.InputBytes = 2
	assert.Equal(t, first, got)

	rs, err := l.Query(ctx, audit.Filter{Thread: "a"})
	require.NoError(t, err)
	assert.Equal(t, []string{"search", "calc"}, tools(rs))
	rs, err = l.Query(ctx, audit.Filter{Tool: "search"})
	require.NoError(t, err)
	assert.Equal(t, []string{"go", "rust", "zig"}, []string{rs[0].Input, rs[1].Input, rs[2].Input})
	rs, err = l.Query(ctx, audit.Filter{Thread: "a", Tool: "search"})
	require.NoError(t, err)
	assert.Len(t, rs, 1)
	rs, err = l.Query(ctx, audit.Filter{Since: t0.Add(2 * time.Second)})
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 4}, []int64{rs[0].ID, rs[1].ID})
	rs, err = l.Query(ctx, audit.Filter{Limit: 2})
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, []int64{3, 4}, []int64{rs[0].ID, rs[1].ID}, "the newest two, oldest first")
	rs, err = l.Query(ctx, audit.Filter{Thread: "nobody"})
	require.NoError(t, err)
	assert.Empty(t, rs)
}

// The table refuses UPDATE and DELETE from anyone going through SQLite.
func TestTheLogIsAppendOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	l := open(t, path)
	require.NoError(t, l.Append(ctx, audit.Record{Tool: "rm", Input: "/", Decision: audit.DecisionDenied}))
	require.NoError(t, l.Flush(ctx))

	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `UPDATE calls SET decision = 'approved'`)
	require.ErrorContains(t, err, "append-only")
	_, err = db.ExecContext(ctx, `DELETE FROM calls`)
	require.ErrorContains(t, err, "append-only")
	_, err = db.ExecContext(ctx, `INSERT OR REPLACE INTO calls SELECT * FROM calls`)
	require.Error(t, err, "replacing a row deletes it first")

	rs, err := l.Query(ctx, audit.Filter{})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, audit.DecisionDenied, rs[0].Decision)
}

// Many goroutines and two Logs on one file (as two processes would) lose
// no record and number them uniquely.
func TestConcurrentAppends(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	logs := []*audit.Log{open(t, path), open(t, path)}
	const writers, each = 16, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				err := logs[w%2].Append(ctx, audit.Record{Thread: fmt.Sprint("t", w), Tool: "search", Input: fmt.Sprint(i)})
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	require.NoError(t, logs[0].Close())
	require.NoError(t, logs[1].Close())

	l := open(t, path)
	rs, err := l.Query(ctx, audit.Filter{})
	require.NoError(t, err)
	require.Len(t, rs, writers*each)
	ids := map[int64]bool{}
	for _, r := range rs {
		ids[r.ID] = true
	}
	assert.Len(t, ids, writers*each)
	for w := range writers {
		rs, err := l.Query(ctx, audit.Filter{Thread: fmt.Sprint("t", w)})
		require.NoError(t, err)
		require.Len(t, rs, each)
		for i, r := range rs {
			assert.Equal(t, fmt.Sprint(i), r.Input, "one writer's records keep their order")
		}
	}
}

// A secret never reaches the file: not in the input, the error, the
// reason or the decider, not in the database nor its WAL.
func TestSecretsAreScrubbedBeforeStoring(t *testing.T) {
	const secret = "s3cr3t-audit-value-42"
	t.Setenv("PLANNER_AUDIT_TEST_API_KEY", secret)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	l := open(t, path) // the default scrubber reads the environment
	require.NoError(t, l.Append(ctx, audit.Record{Tool: "http", Input: "GET /?key=" + secret, Error: "401 for " + secret,
		Reason: "used " + secret, DecidedBy: secret, Decision: audit.DecisionApproved}))
	require.NoError(t, l.Append(ctx, audit.Record{Tool: "http", Input: "Authorization: Bearer abcdefghijklmnop"}))
	rs, err := l.Query(ctx, audit.Filter{})
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, "GET /?key=[REDACTED:PLANNER_AUDIT_TEST_API_KEY]", rs[0].Input)
	assert.NotContains(t, rs[0].Error+rs[0].Reason+rs[0].DecidedBy, secret)
	assert.Equal(t, len("GET /?key="+secret), rs[0].InputBytes, "the size is the original input's")
	assert.Equal(t, "Authorization: Bearer [REDACTED]", rs[1].Input)

	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		assert.NotContains(t, string(b), secret, f)
	}
	require.NoError(t, l.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(b), secret)
}

// Inputs are clipped to the limit after scrubbing, keeping their size.
func TestLongInputsAreClipped(t *testing.T) {
	ctx := context.Background()
	l := open(t, filepath.Join(t.TempDir(), "audit.db"), audit.WithInputLimit(5), audit.WithScrubber(redact.New(redact.WithEnviron(nil))))
	require.NoError(t, l.Append(ctx, audit.Record{Tool: "x", Input: "héllo world"}))
	rs, err := l.Query(ctx, audit.Filter{})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, "héllo…", rs[0].Input)
	assert.Equal(t, len("héllo world"), rs[0].InputBytes)

	d := open(t, filepath.Join(t.TempDir(), "audit.db"))
	long := strings.Repeat("a", audit.DefaultInputLimit+10)
	require.NoError(t, d.Append(ctx, audit.Record{Tool: "x", Input: long}))
	rs, err = d.Query(ctx, audit.Filter{})
	require.NoError(t, err)
	assert.Equal(t, long[:audit.DefaultInputLimit]+"…", rs[0].Input)
}

// Close writes what is queued; a reopened log has every record, and a
// closed one refuses more.
func TestCloseFlushesAndReopenKeepsRecords(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	l, err := audit.Open(ctx, path)
	require.NoError(t, err)
	for i := range 100 {
		require.NoError(t, l.Append(ctx, audit.Record{Tool: "t", Input: fmt.Sprint(i)}))
	}
	require.NoError(t, l.Close())
	require.NoError(t, l.Close(), "a second Close does nothing")
	require.ErrorIs(t, l.Append(ctx, audit.Record{Tool: "late"}), audit.ErrClosed)
	_, err = l.Query(ctx, audit.Filter{})
	require.ErrorIs(t, err, audit.ErrClosed)

	again := open(t, path, audit.MustExist())
	rs, err := again.Query(ctx, audit.Filter{})
	require.NoError(t, err)
	require.Len(t, rs, 100)
	assert.Equal(t, "99", rs[99].Input)
}

// Opening what is not an audit log fails clearly.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_, err := audit.Open(ctx, filepath.Join(dir, "missing.db"), audit.MustExist())
	require.ErrorIs(t, err, audit.ErrNoLog)
	_, statErr := os.Stat(filepath.Join(dir, "missing.db"))
	assert.True(t, os.IsNotExist(statErr), "MustExist creates nothing")

	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte(strings.Repeat("not a database\n", 200)), 0o600))
	_, err = audit.Open(ctx, text)
	require.ErrorIs(t, err, audit.ErrNotLog)

	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `CREATE TABLE t (x INTEGER)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = audit.Open(ctx, other)
	require.ErrorIs(t, err, audit.ErrNotLog)
	assert.ErrorContains(t, err, "not an audit log")
}

func TestPathBeside(t *testing.T) {
	assert.Equal(t, filepath.Join("state", "planner", "audit.db"), audit.PathBeside(filepath.Join("state", "planner", "threads.db")))
}

// BenchmarkAppend measures what a tool call pays: queueing one record.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	l := open(b, filepath.Join(b.TempDir(), "audit.db"))
	r := audit.Record{Thread: "bench", Run: "r", Node: "act", Tool: "search", Input: strings.Repeat("query ", 20), OutputSHA256: audit.Digest("x"), OutputBytes: 1}
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Append(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAppendFlush measures one record written to disk before going on
// (the worst case: no batching).
func BenchmarkAppendFlush(b *testing.B) {
	ctx := context.Background()
	l := open(b, filepath.Join(b.TempDir(), "audit.db"))
	r := audit.Record{Thread: "bench", Run: "r", Node: "act", Tool: "search", Input: strings.Repeat("query ", 20), OutputSHA256: audit.Digest("x"), OutputBytes: 1}
	for b.Loop() {
		if err := l.Append(ctx, r); err != nil {
			b.Fatal(err)
		}
		if err := l.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// lockFile holds SQLite's write lock on the log's file from another
// connection until the returned function is called.
func lockFile(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
	require.NoError(t, err)
	return func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		_ = conn.Close()
		_ = db.Close()
	}
}

// A batch that cannot be written stays queued and is written once the file
// is free again: nothing is lost, and later appends do not report the
// earlier failure.
func TestAFailedWriteIsTriedAgainNotLost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	l := open(t, path, audit.WithBusyTimeout(10*time.Millisecond))
	ctx := context.Background()
	release := lockFile(t, path)
	require.NoError(t, l.Append(ctx, audit.Record{Tool: "a"}))
	err := l.Flush(ctx)
	require.Error(t, err, "the write failed while the file was locked")
	assert.Contains(t, err.Error(), "could not be written")
	release()
	require.NoError(t, l.Append(ctx, audit.Record{Tool: "b"}), "an append does not carry an earlier failure")
	require.NoError(t, l.Flush(ctx))
	got, err := l.Query(ctx, audit.Filter{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, tools(got))
	assert.NoError(t, l.Close())
}

// Records whose writes still fail when the log closes are given up, and
// Close says how many.
func TestCloseReportsRecordsItCouldNotWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	l, err := audit.Open(context.Background(), path, audit.WithBusyTimeout(10*time.Millisecond))
	require.NoError(t, err)
	release := lockFile(t, path)
	defer release()
	require.NoError(t, l.Append(context.Background(), audit.Record{Tool: "a"}))
	require.NoError(t, l.Append(context.Background(), audit.Record{Tool: "b"}))
	err = l.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 record(s) were given up at close")
	assert.ErrorIs(t, l.Append(context.Background(), audit.Record{Tool: "c"}), audit.ErrClosed)
}
