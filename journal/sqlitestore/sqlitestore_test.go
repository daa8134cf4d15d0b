package sqlitestore

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/journaltest"
)

// open opens a store in a fresh file and closes it when t ends.
func open(t testing.TB, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "sub", "journal.db"), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	journaltest.Run(t, func(t *testing.T) journal.Store { return open(t) })
}

// fill makes thread name with n entries and closes s.
func fill(t *testing.T, s *Store, name string, n int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.Create(ctx, journal.Thread{Name: name, Pipeline: "p.yaml", Status: journal.StatusRunning}))
	for i := range n {
		_, err := s.Append(ctx, name, journal.Entry{
			Kind: journal.KindModel, Scope: "1:react", Node: "react", Digest: fmt.Sprint("d", i),
			Request:  json.RawMessage(fmt.Sprintf(`{"i":%d,"pad":%q}`, i, strings.Repeat("r", 3000))),
			Response: json.RawMessage(fmt.Sprintf(`{"content":"answer %d"}`, i)),
		})
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
}

// rawDB opens the store's file with database/sql, bypassing the store.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestFilesAndModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	path := filepath.Join(dir, "j.db")
	s, err := Open(context.Background(), path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	assert.Equal(t, path, s.Path())
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "directory mode")
	st, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "file mode")

	unlock, err := s.Lock(context.Background(), "th")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(path+".locks", "th.lock"))
	require.NoError(t, err, "the lock file is <db>.locks/<thread>.lock")
	st, err = os.Stat(path + ".locks")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "lock directory mode")
	require.NoError(t, unlock())
	require.NoError(t, unlock(), "a second unlock does nothing")

	var mode string
	require.NoError(t, rawDB(t, path).QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
}

func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	s, err := Open(ctx, path)
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, journal.Thread{Name: "keep", Pipeline: "p.yaml", Status: journal.StatusRunning,
		Task: json.RawMessage(`{"q":"x"}`)}))
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	_, err = s.Append(ctx, "keep", journal.Entry{Kind: journal.KindTool, Scope: "1:a", Node: "a", Digest: "dd",
		Request: json.RawMessage(`{"tool":"t","input":"i"}`), Response: json.RawMessage(`{"output":"o"}`), Time: at})
	require.NoError(t, err)
	require.NoError(t, s.SetStatus(ctx, "keep", journal.Update{Status: journal.StatusInterrupted, Error: "killed"}))
	before, err := s.Thread(ctx, "keep")
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s, err = Open(ctx, path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	after, err := s.Thread(ctx, "keep")
	require.NoError(t, err)
	assert.Equal(t, before, after)
	assert.Equal(t, time.UTC, after.Created.Location())
	es, err := s.Entries(ctx, "keep")
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.True(t, es[0].Time.Equal(at), "time kept to the nanosecond: %v", es[0].Time)
	assert.Equal(t, time.UTC, es[0].Time.Location())
	assert.Equal(t, `{"output":"o"}`, string(es[0].Response))
	seq, err := s.Append(ctx, "keep", journal.Entry{Kind: journal.KindNode, Request: json.RawMessage(`{}`), Response: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.Equal(t, int64(2), seq)
}

func TestTwoStoresOneFile(t *testing.T) {
	// Two Stores on one file stand in for two processes: appends to
	// different threads interleave and each sees the other's writes.
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	a, err := Open(ctx, path)
	require.NoError(t, err)
	defer func() { _ = a.Close() }()
	b, err := Open(ctx, path)
	require.NoError(t, err)
	defer func() { _ = b.Close() }()
	require.NoError(t, a.Create(ctx, journal.Thread{Name: "ta", Pipeline: "p", Status: journal.StatusRunning}))
	require.NoError(t, b.Create(ctx, journal.Thread{Name: "tb", Pipeline: "p", Status: journal.StatusRunning}))
	done := make(chan error, 2)
	for _, w := range []struct {
		s    *Store
		name string
	}{{a, "ta"}, {b, "tb"}} {
		go func() {
			for range 50 {
				if _, err := w.s.Append(ctx, w.name, journal.Entry{Kind: journal.KindNode, Request: json.RawMessage(`{}`), Response: json.RawMessage(`{}`)}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	require.NoError(t, <-done)
	require.NoError(t, <-done)
	for _, s := range []*Store{a, b} {
		for _, name := range []string{"ta", "tb"} {
			es, err := s.Entries(ctx, name)
			require.NoError(t, err)
			assert.Len(t, es, 50)
		}
	}
	unlock, err := a.Lock(ctx, "ta")
	require.NoError(t, err)
	_, err = b.Lock(ctx, "ta")
	require.ErrorIs(t, err, journal.ErrLocked, "the lock spans stores on one file")
	require.NoError(t, unlock())
}

func TestChangedEntryIsCorrupt(t *testing.T) {
	s := open(t)
	fill(t, s, "th", 5)
	_, err := rawDB(t, s.Path()).Exec(`UPDATE entries SET response = CAST(? AS BLOB) WHERE thread = 'th' AND seq = 3`, `{"content":"forged"}`)
	require.NoError(t, err)

	s2, err := Open(context.Background(), s.Path())
	require.NoError(t, err)
	defer func() { _ = s2.Close() }()
	es, err := s2.Entries(context.Background(), "th")
	require.ErrorIs(t, err, journal.ErrCorrupt)
	assert.Nil(t, es, "never a partial journal")
	assert.Contains(t, err.Error(), `"th"`)
	assert.Contains(t, err.Error(), "entry 3")
}

func TestChangedFieldsAreCorrupt(t *testing.T) {
	for _, set := range []string{"kind = 'tool'", "scope = '2:react'", "node = 'x'", "digest = 'e'", "request = NULL", "seq = 9"} {
		t.Run(set, func(t *testing.T) {
			s := open(t)
			fill(t, s, "th", 3)
			_, err := rawDB(t, s.Path()).Exec(`UPDATE entries SET ` + set + ` WHERE thread = 'th' AND seq = 2`)
			require.NoError(t, err)
			s2, err := Open(context.Background(), s.Path())
			require.NoError(t, err)
			defer func() { _ = s2.Close() }()
			_, err = s2.Entries(context.Background(), "th")
			require.ErrorIs(t, err, journal.ErrCorrupt)
			assert.Contains(t, err.Error(), "entry 2")
		})
	}
}

func TestDeletedEntryIsCorrupt(t *testing.T) {
	for _, tc := range []struct {
		seq  int
		want string
	}{{3, "entry 3"}, {5, "entry 5"}, {1, "entry 1"}} {
		t.Run(fmt.Sprint(tc.seq), func(t *testing.T) {
			s := open(t)
			fill(t, s, "th", 5)
			_, err := rawDB(t, s.Path()).Exec(`DELETE FROM entries WHERE thread = 'th' AND seq = ?`, tc.seq)
			require.NoError(t, err)
			s2, err := Open(context.Background(), s.Path())
			require.NoError(t, err)
			defer func() { _ = s2.Close() }()
			es, err := s2.Entries(context.Background(), "th")
			require.ErrorIs(t, err, journal.ErrCorrupt)
			assert.Nil(t, es)
			assert.Contains(t, err.Error(), tc.want)

			// Append refuses to write past a damaged end too.
			if tc.seq == 5 {
				return
			}
			_, err = rawDB(t, s.Path()).Exec(`UPDATE threads SET entries = 3 WHERE name = 'th'`)
			require.NoError(t, err)
			_, err = s2.Append(context.Background(), "th", journal.Entry{Kind: journal.KindNode})
			require.ErrorIs(t, err, journal.ErrCorrupt)
		})
	}
}

func TestExtraEntryIsCorrupt(t *testing.T) {
	s := open(t)
	fill(t, s, "th", 3)
	_, err := rawDB(t, s.Path()).Exec(`UPDATE threads SET entries = 2 WHERE name = 'th'`)
	require.NoError(t, err)
	s2, err := Open(context.Background(), s.Path())
	require.NoError(t, err)
	defer func() { _ = s2.Close() }()
	_, err = s2.Entries(context.Background(), "th")
	require.ErrorIs(t, err, journal.ErrCorrupt)
	assert.Contains(t, err.Error(), "entry 3")
}

// damage closes a filled store, removes its -wal and -shm files and
// applies f to the database file.
func damage(t *testing.T, f func(path string, data []byte) []byte) string {
	t.Helper()
	s := open(t)
	fill(t, s, "th", 100)
	path := s.Path()
	for _, suffix := range []string{"-wal", "-shm"} {
		require.NoError(t, os.RemoveAll(path+suffix))
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(data), 200_000, "the test file spans many pages")
	require.NoError(t, os.WriteFile(path, f(path, data), 0o600))
	return path
}

// openAndRead opens path and reads thread "th"; it fails the test if that
// yields a journal that is not the full one.
func openAndRead(t *testing.T, path string) error {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	es, err := s.Entries(ctx, "th")
	if err != nil {
		return err
	}
	require.Len(t, es, 100, "a damaged file gave a partial journal without an error")
	return nil
}

func TestTruncatedFile(t *testing.T) {
	path := damage(t, func(_ string, data []byte) []byte { return data[:len(data)/2] })
	err := openAndRead(t, path)
	require.Error(t, err)
	assert.ErrorIs(t, err, journal.ErrCorrupt)
	t.Log(err)
}

func TestGarbageFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(string, []byte) []byte
	}{
		{"all", func(_ string, data []byte) []byte {
			return []byte(strings.Repeat("this is not a database\n", len(data)/23))
		}},
		{"tail", func(_ string, data []byte) []byte {
			out := append([]byte(nil), data...)
			for i := len(out) / 2; i < len(out); i++ {
				out[i] = byte(i * 7)
			}
			return out
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := damage(t, tc.f)
			err := openAndRead(t, path)
			require.Error(t, err)
			assert.ErrorIs(t, err, journal.ErrCorrupt)
			t.Log(err)
		})
	}
}

func TestNotAJournalStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "other.db")
	db := rawDB(t, path)
	_, err := db.Exec(`CREATE TABLE results (x INTEGER)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = Open(ctx, path)
	require.ErrorIs(t, err, journal.ErrCorrupt)
	assert.Contains(t, err.Error(), "not a journal store")
}

func TestFutureVersion(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.Close())
	db := rawDB(t, s.Path())
	_, err := db.Exec(`PRAGMA user_version = 2`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = Open(ctx, s.Path())
	require.ErrorIs(t, err, ErrVersion)
	assert.Contains(t, err.Error(), "version 2")
	assert.Contains(t, err.Error(), s.Path())
}

func TestFullSync(t *testing.T) {
	ctx := context.Background()
	s := open(t, WithFullSync())
	require.NoError(t, s.Create(ctx, journal.Thread{Name: "f", Pipeline: "p", Status: journal.StatusRunning}))
	seq, err := s.Append(ctx, "f", journal.Entry{Kind: journal.KindNode, Request: json.RawMessage(`{}`), Response: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.Equal(t, int64(1), seq)
	es, err := s.Entries(ctx, "f")
	require.NoError(t, err)
	assert.Len(t, es, 1)
	var mode int
	require.NoError(t, s.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&mode))
	assert.Equal(t, 2, mode, "synchronous=FULL")
	require.NoError(t, open(t).db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&mode))
	assert.Equal(t, 1, mode, "synchronous=NORMAL by default")
}

func TestOddPath(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a dir?x=1#frag%20", "j.db")
	s, err := Open(ctx, path)
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, journal.Thread{Name: "t", Pipeline: "p", Status: journal.StatusRunning}))
	require.NoError(t, s.Close())
	_, err = os.Stat(path)
	require.NoError(t, err, "the database is at the path given, not at a URI's reading of it")
	s, err = Open(ctx, path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	_, err = s.Thread(ctx, "t")
	require.NoError(t, err)
}

// helperEnv names the store file a re-executed test binary appends to.
const helperEnv = "SQLITESTORE_TEST_HELPER"

// TestHelperProcess is the child of TestKilledProcess: it locks thread
// "child", appends to it forever and prints each committed seq.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("only run by TestKilledProcess")
	}
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	if _, err := s.Lock(ctx, "child"); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	req := json.RawMessage(fmt.Sprintf(`{"pad":%q}`, strings.Repeat("c", 5000)))
	for {
		seq, err := s.Append(ctx, "child", journal.Entry{Kind: journal.KindModel, Scope: "1:x", Request: req, Response: req})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(seq)
	}
}

func TestKilledProcess(t *testing.T) {
	// Another process appends to one thread, holding its lock, while this
	// one appends to another; it is then killed with SIGKILL in the middle
	// of its appends. Every entry it reported committed survives, the
	// journal is intact, the lock is free, and this process's thread is
	// whole.
	if testing.Short() {
		t.Skip("starts a process")
	}
	ctx := context.Background()
	s := open(t)
	for _, name := range []string{"child", "parent"} {
		require.NoError(t, s.Create(ctx, journal.Thread{Name: name, Pipeline: "p", Status: journal.StatusRunning}))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+s.Path())
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	lines := bufio.NewScanner(out)
	var last int64
	next := func() {
		t.Helper()
		require.True(t, lines.Scan(), "the helper ended: %v", lines.Err())
		n, err := strconv.ParseInt(lines.Text(), 10, 64)
		require.NoError(t, err, "helper: %s", lines.Text())
		require.Equal(t, last+1, n)
		last = n
	}
	next() // it holds the lock now
	_, err = s.Lock(ctx, "child")
	require.ErrorIs(t, err, journal.ErrLocked, "the other process holds the lock")
	for i := range 40 {
		_, err := s.Append(ctx, "parent", journal.Entry{Kind: journal.KindNode, Digest: fmt.Sprint(i),
			Request: json.RawMessage(`{}`), Response: json.RawMessage(`{}`)})
		require.NoError(t, err)
		next()
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL on Unix
	killed = true
	for lines.Scan() { // seqs committed before the kill, still in the pipe
		n, err := strconv.ParseInt(lines.Text(), 10, 64)
		require.NoError(t, err)
		last = n
	}
	_ = cmd.Wait()

	unlock, err := s.Lock(ctx, "child")
	require.NoError(t, err, "the dead process's lock is free")
	require.NoError(t, unlock())
	es, err := s.Entries(ctx, "child")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, int64(len(es)), last, "every reported append survived")
	th, err := s.Thread(ctx, "child")
	require.NoError(t, err)
	assert.Equal(t, int64(len(es)), th.ModelCalls)
	es, err = s.Entries(ctx, "parent")
	require.NoError(t, err)
	assert.Len(t, es, 40)
	seq, err := s.Append(ctx, "child", journal.Entry{Kind: journal.KindNode})
	require.NoError(t, err, "the journal continues after the kill")
	assert.Equal(t, th.Entries+1, seq)
}

func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	s := open(b)
	require.NoError(b, s.Create(ctx, journal.Thread{Name: "bench", Pipeline: "p", Status: journal.StatusRunning}))
	e := journal.Entry{
		Kind: journal.KindModel, Scope: "3:react", Node: "react", Digest: strings.Repeat("ab", 32),
		Request:  json.RawMessage(fmt.Sprintf(`{"messages":[{"role":"user","content":%q}]}`, strings.Repeat("lorem ipsum ", 680))),
		Response: json.RawMessage(fmt.Sprintf(`{"content":%q,"usage":{"prompt_tokens":2000,"completion_tokens":100}}`, strings.Repeat("y", 420))),
	}
	b.SetBytes(int64(len(e.Request) + len(e.Response)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Append(ctx, "bench", e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEntries(b *testing.B) {
	ctx := context.Background()
	s := open(b)
	require.NoError(b, s.Create(ctx, journal.Thread{Name: "bench", Pipeline: "p", Status: journal.StatusRunning}))
	for i := range 200 {
		_, err := s.Append(ctx, "bench", journal.Entry{
			Kind: journal.KindModel, Scope: "3:react", Node: "react", Digest: strings.Repeat("ab", 32),
			Request:  json.RawMessage(fmt.Sprintf(`{"i":%d,"content":%q}`, i, strings.Repeat("lorem ipsum ", 680))),
			Response: json.RawMessage(fmt.Sprintf(`{"content":%q}`, strings.Repeat("y", 480))),
		})
		require.NoError(b, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		es, err := s.Entries(ctx, "bench")
		if err != nil || len(es) != 200 {
			b.Fatal(len(es), err)
		}
	}
}

// BenchmarkAppendConcurrent appends from 32 threads at once, as a server's
// 32 running runs do, each entry the digest-sized model entry a journal
// writes: appends waiting together share a commit.
func BenchmarkAppendConcurrent(b *testing.B) {
	ctx := context.Background()
	s := open(b)
	const threads = 32
	for i := range threads {
		require.NoError(b, s.Create(ctx, journal.Thread{Name: fmt.Sprintf("t%d", i), Pipeline: "p", Status: journal.StatusRunning}))
	}
	e := journal.Entry{
		Kind: journal.KindModel, Scope: "3:react", Node: "react", Digest: strings.Repeat("ab", 32),
		Request:  json.RawMessage(`{"role":"react","shape":{"messages":4,"options":"0123456789abcdef"}}`),
		Response: json.RawMessage(fmt.Sprintf(`{"content":%q,"usage":{"prompt_tokens":2000,"completion_tokens":100}}`, strings.Repeat("y", 420))),
	}
	var next atomic.Int64
	b.SetParallelism(threads / max(1, runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		name := fmt.Sprintf("t%d", next.Add(1)%threads)
		for pb.Next() {
			if _, err := s.Append(ctx, name, e); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// Appends that commit together are checked one by one: one whose thread
// is gone fails alone, the others are written with their own seqs.
func TestConcurrentAppendsFailAlone(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	for _, n := range []string{"a", "b"} {
		require.NoError(t, s.Create(ctx, journal.Thread{Name: n, Pipeline: "p", Status: journal.StatusRunning}))
	}
	const each = 50
	var wg sync.WaitGroup
	var missing atomic.Int64
	seqs := make([][]int64, 2)
	var mu sync.Mutex
	for g := range 8 {
		wg.Go(func() {
			for i := range each {
				name := []string{"a", "b", "gone"}[(g+i)%3]
				seq, err := s.Append(ctx, name, journal.Entry{Kind: journal.KindNode, Node: fmt.Sprint(g, i)})
				if name == "gone" {
					if assert.ErrorIs(t, err, journal.ErrNotFound) {
						missing.Add(1)
					}
					continue
				}
				if assert.NoError(t, err) {
					mu.Lock()
					k := map[string]int{"a": 0, "b": 1}[name]
					seqs[k] = append(seqs[k], seq)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	assert.Positive(t, missing.Load())
	for k, n := range []string{"a", "b"} {
		es, err := s.Entries(ctx, n)
		require.NoError(t, err)
		require.Len(t, es, len(seqs[k]), "every append of %s that succeeded, and none other", n)
		sort.Slice(seqs[k], func(i, j int) bool { return seqs[k][i] < seqs[k][j] })
		for i, seq := range seqs[k] {
			assert.Equal(t, int64(i+1), seq, "seqs of %s run 1..n with no gap or repeat", n)
		}
		th, err := s.Thread(ctx, n)
		require.NoError(t, err)
		assert.Equal(t, int64(len(es)), th.Steps)
	}
}

// An Append whose context ends while it waits for a commit fails and is
// not written; the Append leading the commit is not held up by it.
func TestAppendCancelledWhileWaitingIsNotWritten(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.Create(ctx, journal.Thread{Name: "a", Pipeline: "p", Status: journal.StatusRunning}))
	require.NoError(t, s.lockWrite(ctx)) // another write in progress
	waiting := func(n int) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.pending) == n
	}
	type result struct {
		seq int64
		err error
	}
	lead := make(chan result, 1)
	go func() {
		seq, err := s.Append(ctx, "a", journal.Entry{Kind: journal.KindNode, Node: "lead"})
		lead <- result{seq, err}
	}()
	require.Eventually(t, func() bool { return waiting(1) }, 10*time.Second, time.Millisecond)
	cctx, cancel := context.WithCancel(ctx)
	follow := make(chan error, 1)
	go func() {
		_, err := s.Append(cctx, "a", journal.Entry{Kind: journal.KindNode, Node: "follow"})
		follow <- err
	}()
	require.Eventually(t, func() bool { return waiting(2) }, 10*time.Second, time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-follow, context.Canceled)
	s.unlockWrite()
	r := <-lead
	require.NoError(t, r.err)
	assert.Equal(t, int64(1), r.seq)
	es, err := s.Entries(ctx, "a")
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, "lead", es[0].Node)
}

// A file made before threads had an answer column gets it when opened, and
// its threads read with an empty answer.
func TestOpenAddsTheAnswerColumnToAnOlderFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := Open(ctx, path)
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, journal.Thread{Name: "old", Pipeline: "p.yaml", Status: journal.StatusDone}))
	require.NoError(t, s.Close())
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	_, err = db.Exec(`ALTER TABLE threads DROP COLUMN answer`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err = Open(ctx, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	th, err := s.Thread(ctx, "old")
	require.NoError(t, err)
	assert.Empty(t, th.Answer)
	require.NoError(t, s.SetStatus(ctx, "old", journal.Update{Status: journal.StatusDone, Answer: "42"}))
	th, err = s.Thread(ctx, "old")
	require.NoError(t, err)
	assert.Equal(t, "42", th.Answer)
}
