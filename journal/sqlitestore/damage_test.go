package sqlitestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/journal"
)

// snapshotRun opens a store at path, creates thread "th" with n entries,
// and returns the store file as it was on disk before the store closed
// (the write-ahead log then held every transaction since the store's
// creation), and the log itself. The store is closed.
func snapshotRun(t *testing.T, path string, n int) (file, wal []byte) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, path)
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, journal.Thread{Name: "th", Pipeline: "p.yaml", Status: journal.StatusRunning}))
	for i := range n {
		_, err := s.Append(ctx, "th", journal.Entry{Kind: journal.KindTool, Scope: "1:a", Digest: fmt.Sprint(i),
			Request: json.RawMessage(`{"tool":"t","input":"x"}`), Response: json.RawMessage(`{"output":"y"}`)})
		require.NoError(t, err)
	}
	file, err = os.ReadFile(path)
	require.NoError(t, err)
	wal, err = os.ReadFile(path + "-wal")
	require.NoError(t, err)
	require.Greater(t, len(wal), 32, "the transactions are in the write-ahead log")
	require.NoError(t, s.Close())
	return file, wal
}

// restore puts file back at path with wal as its write-ahead log (none
// when nil), as a process killed before a checkpoint leaves them.
func restore(t *testing.T, path string, file, wal []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, file, 0o600))
	require.NoError(t, os.RemoveAll(path+"-shm"))
	require.NoError(t, os.RemoveAll(path+"-wal"))
	if wal != nil {
		require.NoError(t, os.WriteFile(path+"-wal", wal, 0o600))
	}
}

// openThread opens the store at path and reads thread "th" and its
// journal.
func openThread(path string) error {
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	if _, err := s.Thread(ctx, "th"); err != nil {
		return err
	}
	_, err = s.Entries(ctx, "th")
	return err
}

// A store file whose write-ahead log was lost, damaged or cut short lost
// its last transactions: opening it reports damage, naming the files and
// what to do, rather than a missing thread (or a shorter journal, whose
// calls a resumed run would make again).
func TestLostWriteAheadLogIsDamage(t *testing.T) {
	for _, tc := range []struct {
		name string
		wal  func(wal []byte) []byte
	}{
		{"deleted", func([]byte) []byte { return nil }},
		{"emptied", func([]byte) []byte { return []byte{} }},
		{"cut short", func(wal []byte) []byte { return wal[:len(wal)/2] }},
		{"damaged", func(wal []byte) []byte {
			out := append([]byte(nil), wal...)
			for i := len(out) / 2; i < len(out); i += 7 {
				out[i] ^= 0x5a
			}
			return out
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "threads.db")
			file, wal := snapshotRun(t, path, 40)
			restore(t, path, file, tc.wal(wal))
			err := openThread(path)
			require.Error(t, err)
			assert.ErrorIs(t, err, journal.ErrCorrupt)
			assert.ErrorIs(t, err, ErrLostWrites)
			assert.NotErrorIs(t, err, journal.ErrNotFound)
			for _, want := range []string{path + " holds", path + "-wal", "delete " + path + ".writes"} {
				assert.Contains(t, err.Error(), want)
			}
			t.Log(err)

			// Deleting the .writes file accepts the loss.
			require.NoError(t, os.Remove(path+".writes"))
			s, err := Open(context.Background(), path)
			require.NoError(t, err)
			require.NoError(t, s.Close())
		})
	}
}

// The write-ahead log of a killed process, kept with its file, loses
// nothing: the store opens whole.
func TestKeptWriteAheadLogIsWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "threads.db")
	file, wal := snapshotRun(t, path, 40)
	restore(t, path, file, wal)
	s, err := Open(context.Background(), path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	es, err := s.Entries(context.Background(), "th")
	require.NoError(t, err)
	assert.Len(t, es, 40)
}

// A store started afresh (its file deleted, the .writes file left), and
// a store file given another store's .writes file, open without a false
// alarm.
func TestAnotherStoresWritesFileIsNotDamage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "threads.db")
	snapshotRun(t, path, 5)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		require.NoError(t, os.RemoveAll(path+suffix))
	}
	s, err := Open(ctx, path)
	require.NoError(t, err, "a fresh store")
	require.NoError(t, s.Close())

	other := filepath.Join(dir, "other.db")
	snapshotRun(t, other, 50)
	b, err := os.ReadFile(other + ".writes")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".writes", b, 0o600))
	s, err = Open(ctx, path)
	require.NoError(t, err, "another store's .writes file")
	require.NoError(t, s.Close())

	require.NoError(t, os.WriteFile(path+".writes", []byte("garbage"), 0o600))
	s, err = Open(ctx, path)
	require.NoError(t, err, "a damaged .writes file")
	require.NoError(t, s.Close())
}

// A store file made before stores counted their writes gets the count
// when opened, and is checked from then on.
func TestStoreFileWithoutWriteCountIsUpgraded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "threads.db")
	snapshotRun(t, path, 3)
	db := rawDB(t, path)
	_, err := db.Exec(`DROP TABLE store`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.NoError(t, os.Remove(path+".writes"))

	s, err := Open(ctx, path)
	require.NoError(t, err)
	es, err := s.Entries(ctx, "th")
	require.NoError(t, err)
	assert.Len(t, es, 3)
	_, err = s.Append(ctx, "th", journal.Entry{Kind: journal.KindNode})
	require.NoError(t, err)
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	for i := range 10 {
		_, err = s.Append(ctx, "th", journal.Entry{Kind: journal.KindNode, Digest: fmt.Sprint(i)})
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	restore(t, path, file, nil)
	err = openThread(path)
	assert.ErrorIs(t, err, ErrLostWrites)
}

// EntryPage checks the entries of its page as Entries checks a journal.
func TestEntryPageChecksItsEntries(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	fill(t, s, "th", 10)
	db := rawDB(t, s.Path())
	_, err := db.Exec(`UPDATE entries SET response = CAST('{}' AS BLOB) WHERE thread = 'th' AND seq = 7`)
	require.NoError(t, err)
	s2, err := Open(ctx, s.Path())
	require.NoError(t, err)
	defer func() { _ = s2.Close() }()

	page, total, err := s2.EntryPage(ctx, "th", 0, 5)
	require.NoError(t, err, "the first page is whole")
	assert.Len(t, page, 5)
	assert.Equal(t, int64(10), total)
	_, _, err = s2.EntryPage(ctx, "th", 5, 5)
	require.ErrorIs(t, err, journal.ErrCorrupt)
	assert.Contains(t, err.Error(), "entry 7")

	_, err = db.Exec(`DELETE FROM entries WHERE thread = 'th' AND seq >= 9`)
	require.NoError(t, err)
	_, _, err = s2.EntryPage(ctx, "th", 7, 5)
	require.ErrorIs(t, err, journal.ErrCorrupt, "a page that ends before the journal does")
	assert.Contains(t, err.Error(), "entry 9")
	_, _, err = s2.EntryPage(ctx, "nope", 0, 5)
	require.ErrorIs(t, err, journal.ErrNotFound)
	require.False(t, errors.Is(err, journal.ErrCorrupt))
}

// The .writes file is private, like the store file.
func TestWritesFileMode(t *testing.T) {
	s := open(t)
	st, err := os.Stat(s.Path() + ".writes")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	assert.True(t, strings.HasSuffix(s.writesPath(), ".db.writes"))
}
