// Package sqlitestore is the default journal.Store: one SQLite file in WAL
// mode that several processes on one machine may share (WAL needs a local
// file system, not a network one).
//
// # Durability
//
// Every write is one SQLite transaction. With the default
// synchronous=NORMAL a committed transaction survives the process being
// killed (SIGKILL, a panic, an OOM kill) at any instant: that is what
// journal.Store promises. It does not fsync on every commit, so a power
// loss or an operating-system crash may lose the last transactions (never
// corrupting the earlier ones); WithFullSync makes every commit wait for
// the disk, at a cost per Append. When a power loss does lose
// transactions, the next Open may report them lost (ErrLostWrites), if
// the .writes file kept a later count than the file.
//
// # Integrity
//
// Each entry carries a SHA-256 checksum of its content (see Entries), and
// a thread records how many entries it has, so a changed, missing or
// truncated journal fails with journal.ErrCorrupt instead of replaying
// part of a run; EntryPage, with which a session reads a journal a page
// at a time, checks each page so. SQLite's own "malformed"/"not a
// database" errors are reported as journal.ErrCorrupt too.
//
// A store also notes how many threads and journal entries it has written
// in a small file beside it, "<db path>.writes", after every commit that
// adds one (threads and entries are never removed, so the count only
// grows). A file that holds fewer than were written to it lost its last
// transactions: its write-ahead log ("<db path>-wal", which holds every
// transaction since the last checkpoint) was deleted, damaged or not
// copied with it, or an older copy replaced it. Open then fails with an
// error matching journal.ErrCorrupt and ErrLostWrites that names the
// files and says what to do, rather than let threads vanish or lose their
// last calls (and make them again when resumed). A store file copied
// elsewhere without its .writes file is not checked, and neither are
// status changes.
//
// # Locks
//
// Lock takes an OS file lock (flock(2) on Unix, LockFileEx on Windows) on
// "<db path>.locks/<thread>.lock"; the OS releases it when the holding
// process dies. Lock files are never removed: removing one while another
// process waits on it would let two processes hold "the" lock. On a
// case-insensitive file system threads whose names differ only in case
// share a lock.
package sqlitestore

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/planner-engine/planner/journal"
)

// SchemaVersion is the schema version this package writes and reads, kept
// in the file's user_version pragma.
const SchemaVersion = 1

// applicationID marks a SQLite file as a journal store (the
// application_id pragma): "jrnl".
const applicationID = 0x6a726e6c

// ErrVersion reports a store file written with a schema this version of
// the program does not know (a newer one).
var ErrVersion = errors.New("sqlitestore: unsupported store version")

// ErrLostWrites reports a store file that lost its last committed
// transactions (see Integrity in the package documentation). Its errors
// match journal.ErrCorrupt too.
var ErrLostWrites = errors.New("sqlitestore: the store file lost its last writes")

// Store is a journal.Store kept in one SQLite file. It is safe for
// concurrent use, and several processes may open the same file; Open
// returns one, Close releases it.
type Store struct {
	db      *sql.DB
	path    string
	lockDir string
	// Prepared statements of the hot paths, Append and Entries.
	countStmt, insertStmt, bumpStmt, entriesStmt *sql.Stmt
	// uid identifies the store (its file and copies of it); writes is
	// the .writes file, which Open checks the file's count of threads and
	// entries against; written counts them, from the file's count at Open
	// plus this Store's own writes (s.write guards it).
	uid     []byte
	writes  *os.File
	written int64
	// write serialises this process's write transactions, so that they
	// queue in Go (honouring their contexts) instead of spinning in
	// SQLite's busy handler; busy_timeout arbitrates between processes.
	write chan struct{}
	// mu guards pending, the Appends waiting for the next group commit,
	// and leader, the one of them that commits them (nil: none yet).
	mu      sync.Mutex
	pending []*appendReq
	leader  *appendReq
}

var (
	_ journal.Store      = (*Store)(nil)
	_ journal.EntryPager = (*Store)(nil)
)

// Option configures Open.
type Option func(*config)

type config struct {
	fullSync    bool
	busyTimeout time.Duration
}

// WithFullSync makes every commit wait until the data is on disk
// (synchronous=FULL), so that Append's entries survive a power loss or an
// operating-system crash too, not only the process being killed. Each
// Append then costs an fsync.
func WithFullSync() Option { return func(c *config) { c.fullSync = true } }

// WithBusyTimeout sets how long an operation waits for another process's
// write transaction on the same file before it fails (5 s by default).
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.busyTimeout = d
		}
	}
}

// schema creates version 1. Times are Unix nanoseconds; task, meta and
// pending are JSON (NULL when absent).
const schema = `
CREATE TABLE threads (
	name        TEXT    NOT NULL PRIMARY KEY,
	pipeline    TEXT    NOT NULL,
	task        BLOB,
	meta        BLOB,
	status      TEXT    NOT NULL,
	pending     BLOB,
	error       TEXT    NOT NULL,
	answer      TEXT    NOT NULL DEFAULT '',
	parent      TEXT    NOT NULL,
	forked_at   INTEGER NOT NULL,
	entries     INTEGER NOT NULL,
	steps       INTEGER NOT NULL,
	model_calls INTEGER NOT NULL,
	tool_calls  INTEGER NOT NULL,
	created     INTEGER NOT NULL,
	updated     INTEGER NOT NULL
) STRICT;
CREATE TABLE entries (
	thread   TEXT    NOT NULL,
	seq      INTEGER NOT NULL,
	kind     TEXT    NOT NULL,
	scope    TEXT    NOT NULL,
	node     TEXT    NOT NULL,
	digest   TEXT    NOT NULL,
	request  BLOB,
	response BLOB,
	time     INTEGER NOT NULL,
	sum      TEXT    NOT NULL,
	PRIMARY KEY (thread, seq)
) STRICT, WITHOUT ROWID;
` + storeSchema

// storeSchema is the store's identity, a random uid (one row), added to
// version 1 without changing its version: Open adds it to files made
// before it.
const storeSchema = `
CREATE TABLE IF NOT EXISTS store (
	id  INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
	uid BLOB    NOT NULL
) STRICT;
`

// Open opens the store in the SQLite file at path, creating the file (mode
// 0600) and its directory (0700) when missing. A file that is not a
// SQLite database, or not a journal store, fails with an error matching
// journal.ErrCorrupt; one written by a newer schema with ErrVersion.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	cfg := config{busyTimeout: 5 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", abs, err)
	}
	// Create the file ourselves for its mode; SQLite gives the -wal and
	// -shm files the database file's permissions.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", abs, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", abs, err)
	}

	syncMode := "NORMAL"
	if cfg.fullSync {
		syncMode = "FULL"
	}
	dsn := fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(%s)&_txlock=immediate",
		uriPath(abs), cfg.busyTimeout.Milliseconds(), syncMode)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", abs, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	s := &Store{db: db, path: abs, lockDir: abs + ".locks", write: make(chan struct{}, 1)}
	if err := s.init(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := s.checkWrites(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&s.countStmt, countSQL}, {&s.insertStmt, insertSQL}, {&s.bumpStmt, bumpSQL}, {&s.entriesStmt, entriesSQL},
	} {
		if *p.stmt, err = db.PrepareContext(ctx, p.sql); err != nil {
			_ = s.Close()
			return nil, s.fail("open", err)
		}
	}
	return s, nil
}

// uriPath escapes the characters that would end or change the path part
// of a SQLite URI filename.
func uriPath(p string) string {
	p = filepath.ToSlash(p)
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	p = r.Replace(p)
	if filepath.VolumeName(p) != "" { // C:/x -> /C:/x
		p = "/" + p
	}
	return p
}

// init checks the file's identity and version, creating the schema in an
// empty file.
func (s *Store) init(ctx context.Context) error {
	ver, app, objects, err := s.identity(ctx, s.db)
	if err != nil {
		return err
	}
	if ver == 0 && app == 0 && objects == 0 {
		created := false
		err := s.writeTx(ctx, "create schema", func(tx *sql.Tx) error {
			// Another process may have created it meanwhile.
			if ver, app, objects, err = s.identity(ctx, tx); err != nil || ver != 0 || app != 0 || objects != 0 {
				return err
			}
			for _, stmt := range []string{schema, fmt.Sprintf("PRAGMA application_id = %d", applicationID), fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)} {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return s.fail("create schema", err)
				}
			}
			created = true
			return s.initStore(ctx, tx)
		})
		if err != nil || created {
			return err
		}
	}
	switch {
	case app != applicationID:
		return fmt.Errorf("%w: %s is a SQLite database but not a journal store (application_id %#x)", journal.ErrCorrupt, s.path, app)
	case ver > SchemaVersion:
		return fmt.Errorf("%w: %s has schema version %d; this program reads up to version %d: use a newer one",
			ErrVersion, s.path, ver, SchemaVersion)
	case ver < 1:
		return fmt.Errorf("%w: %s is a journal store with no schema version", journal.ErrCorrupt, s.path)
	}
	if err := s.addAnswerColumn(ctx); err != nil {
		return err
	}
	return s.readStore(ctx)
}

// addAnswerColumn adds the threads' answer column, added to version 1
// without changing its version, to a file made before it. Processes that
// open the file at once may both try; the loser finds it added.
func (s *Store) addAnswerColumn(ctx context.Context) error {
	has := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) (bool, error) {
		var n int
		err := q.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('threads') WHERE name = 'answer'`).Scan(&n)
		return n > 0, err
	}
	ok, err := has(s.db)
	if err != nil {
		return s.fail("open", err)
	}
	if ok {
		return nil
	}
	return s.writeTx(ctx, "add the answer column", func(tx *sql.Tx) error {
		ok, err := has(tx)
		if err != nil {
			return s.fail("add the answer column", err)
		}
		if ok {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `ALTER TABLE threads ADD COLUMN answer TEXT NOT NULL DEFAULT ''`); err != nil {
			return s.fail("add the answer column", err)
		}
		return nil
	})
}

// initStore creates the store table and its row, with a new uid, unless
// they exist; then reads the uid. It runs in the write transaction tx.
func (s *Store) initStore(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, storeSchema); err != nil {
		return s.fail("create schema", err)
	}
	uid := make([]byte, 16)
	_, _ = rand.Read(uid)
	if _, err := tx.ExecContext(ctx, `INSERT INTO store (id, uid) VALUES (1, ?) ON CONFLICT (id) DO NOTHING`, uid); err != nil {
		return s.fail("create schema", err)
	}
	if err := s.scanStore(ctx, tx); err != nil {
		return s.fail("create schema", err)
	}
	return nil
}

// scanStore reads the store's uid.
func (s *Store) scanStore(ctx context.Context, q querier) error {
	var uid []byte
	if err := q.QueryRowContext(ctx, `SELECT uid FROM store WHERE id = 1`).Scan(&uid); err != nil {
		return err
	}
	s.uid = uid
	return nil
}

// readStore reads the store's uid, adding the store table to a file made
// before it.
func (s *Store) readStore(ctx context.Context) error {
	err := s.scanStore(ctx, s.db)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) && !strings.Contains(err.Error(), "no such table") {
		return s.fail("open", err)
	}
	return s.writeTx(ctx, "open", func(tx *sql.Tx) error { return s.initStore(ctx, tx) })
}

// writeTx runs f in a write transaction under the write lock and commits
// it, then checkpoints the write-ahead log into the file. Errors of the
// lock, the transaction and the commit are reported as op's; f's as it
// returns them.
func (s *Store) writeTx(ctx context.Context, op string, f func(*sql.Tx) error) error {
	if err := s.lockWrite(ctx); err != nil {
		return s.fail(op, err)
	}
	defer s.unlockWrite()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return s.fail(op, err)
	}
	s.checkpoint(ctx)
	return nil
}

// checkpoint copies the write-ahead log into the file, if no reader
// stands in the way, so that the file holds what was just written.
func (s *Store) checkpoint(ctx context.Context) {
	_, _ = s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
}

// The .writes file holds the store's uid (16 bytes), its count of
// threads and entries written and a checksum of both (8 bytes each,
// big-endian).
const (
	writesFileSize = 16 + 8 + 8
	writesMagic    = 0x6a726e6c77726974
)

// writesPath is the path of the .writes file.
func (s *Store) writesPath() string { return s.path + ".writes" }

// checkWrites compares the count of threads and entries the file holds
// with the .writes file's: ErrLostWrites when the file holds fewer. It
// opens the .writes file for the store's writes to update, and sets it to
// the file's count when it holds none, or another store's.
func (s *Store) checkWrites(ctx context.Context) error {
	var have int64
	if err := s.db.QueryRowContext(ctx, writtenSQL).Scan(&have); err != nil {
		return s.fail("open", err)
	}
	s.written = have
	f, err := os.OpenFile(s.writesPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("sqlitestore: open %s: %w", s.writesPath(), err)
	}
	s.writes = f
	buf := make([]byte, writesFileSize)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("sqlitestore: open %s: %w", s.writesPath(), err)
	}
	made := int64(binary.BigEndian.Uint64(buf[16:24]))
	ours := n == writesFileSize && binary.BigEndian.Uint64(buf[24:]) == writesCheck(buf[:16], uint64(made)) &&
		bytes.Equal(buf[:16], s.uid)
	switch {
	case ours && made > have:
		return fmt.Errorf("%w: %w: %s holds %d threads and journal entries, but %s records that %d were written to it: the last %d are lost. "+
			"Its write-ahead log, %s-wal, was deleted, damaged or left behind when the file was copied, or an older copy of the file replaced it. "+
			"Put the -wal file that belongs with it back beside it and open it again; "+
			"or, to go on with what the file holds (threads may have lost their last calls, which resuming them makes again), delete %s",
			journal.ErrCorrupt, ErrLostWrites, s.path, have, s.writesPath(), made, made-have, s.path, s.writesPath())
	case !ours:
		s.noteWrites()
	}
	return nil
}

// writtenSQL counts the threads and journal entries a file holds: for a
// journal, the larger of its thread's count and its last seq, so that a
// journal damaged otherwise (an entry deleted or added by hand) is
// reported by Entries, which says which entry.
const writtenSQL = `SELECT count(*) + coalesce(sum(max(t.entries,
	coalesce((SELECT max(e.seq) FROM entries e WHERE e.thread = t.name), 0))), 0) FROM threads t`

// writesCheck is the checksum of the .writes file's uid and count.
func writesCheck(uid []byte, writes uint64) uint64 {
	h := sha256.New()
	_, _ = h.Write(uid)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], writes^writesMagic)
	_, _ = h.Write(b[:])
	return binary.BigEndian.Uint64(h.Sum(nil))
}

// noteWrites records s.written in the .writes file, once the writes it
// counts are committed; s.write is held (or s is not shared yet). It is
// best effort: a failure only weakens the check of the next Open. The
// count misses what other processes wrote since Open, so it is never
// more than the file holds.
func (s *Store) noteWrites() {
	if s.writes == nil || len(s.uid) != 16 {
		return
	}
	var buf [writesFileSize]byte
	copy(buf[:16], s.uid)
	binary.BigEndian.PutUint64(buf[16:24], uint64(s.written))
	binary.BigEndian.PutUint64(buf[24:], writesCheck(s.uid, uint64(s.written)))
	_, _ = s.writes.WriteAt(buf[:], 0)
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// identity reads the file's user_version, application_id and how many
// schema objects it holds.
func (s *Store) identity(ctx context.Context, q querier) (ver, app, objects int64, err error) {
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&ver); err != nil {
		return 0, 0, 0, s.fail("open", err)
	}
	if err := q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return 0, 0, 0, s.fail("open", err)
	}
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&objects); err != nil {
		return 0, 0, 0, s.fail("open", err)
	}
	return ver, app, objects, nil
}

// Path returns the absolute path of the store's SQLite file.
func (s *Store) Path() string { return s.path }

// Close closes the database. Locks taken with Lock stay held until their
// unlock functions are called (or the process exits).
func (s *Store) Close() error {
	for _, st := range []*sql.Stmt{s.countStmt, s.insertStmt, s.bumpStmt, s.entriesStmt} {
		if st != nil {
			_ = st.Close()
		}
	}
	if s.writes != nil {
		_ = s.writes.Close()
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("sqlitestore: close %s: %w", s.path, err)
	}
	return nil
}

// lockWrite waits for this process's turn to write, or for ctx.
func (s *Store) lockWrite(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case s.write <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) unlockWrite() { <-s.write }

// fail wraps err from operation op, turning SQLite's corruption errors
// into journal.ErrCorrupt.
func (s *Store) fail(op string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%w: %s: %s: %w", journal.ErrCorrupt, s.path, op, err)
		}
	}
	return fmt.Errorf("sqlitestore: %s %s: %w", op, s.path, err)
}

func notFound(name string) error { return fmt.Errorf("%w: %q", journal.ErrNotFound, name) }

// jsonOrNil returns m, or nil (stored as NULL) when empty.
func jsonOrNil(m json.RawMessage) []byte {
	if len(m) == 0 {
		return nil
	}
	return m
}

// Create adds t with no entries; see journal.Store.
func (s *Store) Create(ctx context.Context, t journal.Thread) error {
	if err := journal.CheckName(t.Name); err != nil {
		return err
	}
	var pending []byte
	if t.Pending != nil {
		var err error
		if pending, err = json.Marshal(t.Pending); err != nil {
			return fmt.Errorf("sqlitestore: create %q: %w", t.Name, err)
		}
	}
	if err := s.lockWrite(ctx); err != nil {
		return s.fail("create", err)
	}
	defer s.unlockWrite()
	now := time.Now().UnixNano()
	res, err := s.db.ExecContext(ctx, `INSERT INTO threads
		(name, pipeline, task, meta, status, pending, error, answer, parent, forked_at,
		 entries, steps, model_calls, tool_calls, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, ?, ?)
		ON CONFLICT (name) DO NOTHING`,
		t.Name, t.Pipeline, jsonOrNil(t.Task), jsonOrNil(t.Meta), string(t.Status), pending, t.Error, t.Answer,
		t.Parent, t.ForkedAt, now, now)
	if err != nil {
		return s.fail("create", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.fail("create", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %q", journal.ErrExists, t.Name)
	}
	s.written++
	s.noteWrites()
	return nil
}

// The statements Open prepares.
const (
	countSQL  = `SELECT entries FROM threads WHERE name = ?`
	insertSQL = `INSERT INTO entries (thread, seq, kind, scope, node, digest, request, response, time, sum)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	bumpSQL = `UPDATE threads SET entries = entries + 1, steps = steps + ?, model_calls = model_calls + ?,
		tool_calls = tool_calls + ?, updated = max(updated, ?) WHERE name = ?`
	entriesSQL = `SELECT seq, kind, scope, node, digest, request, response, time, sum
		FROM entries WHERE thread = ? AND seq > ? ORDER BY seq LIMIT ?`
)

const threadColumns = `name, pipeline, task, meta, status, pending, error, answer, parent, forked_at,
	entries, steps, model_calls, tool_calls, created, updated`

// scanThread reads one row of threadColumns.
func scanThread(row interface{ Scan(...any) error }) (journal.Thread, error) {
	var (
		t                journal.Thread
		status           string
		task, meta, pend []byte
		created, updated int64
	)
	if err := row.Scan(&t.Name, &t.Pipeline, &task, &meta, &status, &pend, &t.Error, &t.Answer, &t.Parent, &t.ForkedAt,
		&t.Entries, &t.Steps, &t.ModelCalls, &t.ToolCalls, &created, &updated); err != nil {
		return t, err
	}
	t.Status = journal.Status(status)
	if len(task) > 0 {
		t.Task = task
	}
	if len(meta) > 0 {
		t.Meta = meta
	}
	if len(pend) > 0 {
		t.Pending = new(journal.Approval)
		if err := json.Unmarshal(pend, t.Pending); err != nil {
			return t, fmt.Errorf("%w: thread %q: pending approval: %w", journal.ErrCorrupt, t.Name, err)
		}
	}
	t.Created = time.Unix(0, created).UTC()
	t.Updated = time.Unix(0, updated).UTC()
	return t, nil
}

// Thread returns the named thread; see journal.Store.
func (s *Store) Thread(ctx context.Context, name string) (journal.Thread, error) {
	t, err := scanThread(s.db.QueryRowContext(ctx, `SELECT `+threadColumns+` FROM threads WHERE name = ?`, name))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return journal.Thread{}, notFound(name)
	case errors.Is(err, journal.ErrCorrupt):
		return journal.Thread{}, err
	case err != nil:
		return journal.Thread{}, s.fail("thread "+name, err)
	}
	return t, nil
}

// Threads lists every thread, the most recently updated first (then by
// name); see journal.Store.
func (s *Store) Threads(ctx context.Context) ([]journal.Thread, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+threadColumns+` FROM threads ORDER BY updated DESC, name ASC`)
	if err != nil {
		return nil, s.fail("threads", err)
	}
	defer func() { _ = rows.Close() }()
	var out []journal.Thread
	for rows.Next() {
		t, err := scanThread(rows)
		if errors.Is(err, journal.ErrCorrupt) {
			return nil, err
		}
		if err != nil {
			return nil, s.fail("threads", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("threads", err)
	}
	return out, nil
}

// SetStatus applies u to the named thread; see journal.Store. Updated
// never moves back, even if the clock does.
func (s *Store) SetStatus(ctx context.Context, name string, u journal.Update) error {
	var pending []byte
	if u.Pending != nil {
		var err error
		if pending, err = json.Marshal(u.Pending); err != nil {
			return fmt.Errorf("sqlitestore: set status of %q: %w", name, err)
		}
	}
	if err := s.lockWrite(ctx); err != nil {
		return s.fail("set status of "+name, err)
	}
	defer s.unlockWrite()
	res, err := s.db.ExecContext(ctx, `UPDATE threads SET status = ?, pending = ?, error = ?, answer = ?, updated = max(updated, ?)
		WHERE name = ?`, string(u.Status), pending, u.Error, u.Answer, time.Now().UnixNano(), name)
	if err != nil {
		return s.fail("set status of "+name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.fail("set status of "+name, err)
	}
	if n == 0 {
		return notFound(name)
	}
	return nil
}

// Append adds e to the named thread's journal and returns its seq; see
// journal.Store. Request and Response are stored as given (the store does
// not check that they are JSON).
//
// Appends commit in groups. One waiting Append at a time leads: it takes
// the write lock and commits, in one transaction, every Append waiting by
// then, each checked as if alone; the others wait for its outcome, and it
// hands the lead to the first that arrived meanwhile. Concurrent runs (a
// server's, a comparison's) thus share commits instead of queueing one
// each, and an Append alone commits at once. An Append whose ctx ends
// while it waits returns ctx's error unless its entry is already taken
// into a commit, whose outcome it then returns: an entry is never written
// after its Append has failed.
func (s *Store) Append(ctx context.Context, name string, e journal.Entry) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, s.fail("append to "+name, err)
	}
	now := time.Now()
	if e.Time.IsZero() {
		e.Time = now
	}
	req := &appendReq{name: name, e: e, now: now, done: make(chan struct{}), lead: make(chan struct{})}
	s.mu.Lock()
	s.pending = append(s.pending, req)
	if s.leader == nil {
		s.leader = req
		close(req.lead)
	}
	s.mu.Unlock()
	select {
	case <-req.done:
		return req.seq, req.err
	case <-req.lead:
	case <-ctx.Done():
		if s.withdraw(req) {
			return 0, s.fail("append to "+name, ctx.Err())
		}
		select { // taken into a commit, or made the leader
		case <-req.done:
			return req.seq, req.err
		case <-req.lead:
		}
	}
	s.leadCommit(context.WithoutCancel(ctx))
	<-req.done
	return req.seq, req.err
}

// appendReq is one Append waiting for a group commit; seq and err are its
// outcome, set before done is closed. lead is closed when it is to lead
// the next commit.
type appendReq struct {
	name string
	e    journal.Entry
	now  time.Time
	seq  int64
	err  error
	done chan struct{}
	lead chan struct{}
}

// withdraw removes req from the appends waiting to commit, and reports
// whether it was still there and not the leader (which must commit).
func (s *Store) withdraw(req *appendReq) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leader == req {
		return false
	}
	for i, r := range s.pending {
		if r == req {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return true
		}
	}
	return false
}

// leadCommit commits every waiting Append under the write lock, then
// makes the first Append waiting after them the leader, if any.
func (s *Store) leadCommit(ctx context.Context) {
	_ = s.lockWrite(ctx) // ctx is not cancelled: others wait on this commit
	s.mu.Lock()
	batch := s.pending
	s.pending = nil
	s.mu.Unlock()
	s.commit(ctx, batch)
	s.unlockWrite()
	s.mu.Lock()
	s.leader = nil
	if len(s.pending) > 0 {
		s.leader = s.pending[0]
		close(s.leader.lead)
	}
	s.mu.Unlock()
}

// commit writes batch in one transaction, under the write lock, and
// closes each request's done with its outcome. An entry that cannot be
// added (its thread is gone, its seq is taken) fails alone; a failure of
// the transaction fails them all.
func (s *Store) commit(ctx context.Context, batch []*appendReq) {
	defer func() {
		for _, r := range batch {
			close(r.done)
		}
	}()
	failAll := func(err error) {
		for _, r := range batch {
			r.seq, r.err = 0, s.fail("append to "+r.name, err)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		failAll(err)
		return
	}
	defer func() { _ = tx.Rollback() }()
	count, insert, bump := tx.StmtContext(ctx, s.countStmt), tx.StmtContext(ctx, s.insertStmt), tx.StmtContext(ctx, s.bumpStmt)
	added := int64(0)
	for _, r := range batch {
		r.seq, r.err, err = s.appendIn(ctx, count, insert, bump, r)
		if err != nil {
			failAll(err)
			return
		}
		if r.err == nil {
			added++
		}
	}
	if err := tx.Commit(); err != nil {
		failAll(err)
		return
	}
	if added > 0 {
		s.written += added
		s.noteWrites()
	}
}

// appendIn adds r's entry in the transaction of count, insert and bump,
// returning its seq, or an error of r's own (entryErr) that leaves the
// transaction usable, or one that fails the transaction (txErr).
func (s *Store) appendIn(ctx context.Context, count, insert, bump *sql.Stmt, r *appendReq) (seq int64, entryErr, txErr error) {
	var steps, models, tools int64
	switch r.e.Kind {
	case journal.KindNode:
		steps = 1
	case journal.KindModel:
		models = 1
	case journal.KindTool:
		tools = 1
	}
	var n int64
	err := count.QueryRowContext(ctx, r.name).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound(r.name), nil
	}
	if err != nil {
		return 0, nil, err
	}
	seq = n + 1
	e := r.e
	_, err = insert.ExecContext(ctx, r.name, seq, string(e.Kind), e.Scope, e.Node, e.Digest, jsonOrNil(e.Request), jsonOrNil(e.Response),
		e.Time.UnixNano(), entrySum(seq, e))
	if err != nil {
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY {
			// SQLite undoes the failed statement only: the others stand.
			return 0, fmt.Errorf("%w: thread %q records %d entries but entry %d exists", journal.ErrCorrupt, r.name, n, seq), nil
		}
		return 0, nil, err
	}
	if _, err := bump.ExecContext(ctx, steps, models, tools, r.now.UnixNano(), r.name); err != nil {
		return 0, nil, err
	}
	return seq, nil, nil
}

// Entries returns the named thread's journal; see journal.Store. It reads
// the thread's entry count and its entries in one snapshot, and checks that
// the seqs run 1..count and that every entry matches its checksum: any
// damage fails with an error matching journal.ErrCorrupt that names the
// thread and the first bad seq.
func (s *Store) Entries(ctx context.Context, name string) ([]journal.Entry, error) {
	es, _, err := s.read(ctx, name, 0, -1)
	return es, err
}

// EntryPage returns up to limit entries of the named thread's journal
// after seq after, and its count; see journal.EntryPager. It checks the
// page as Entries checks a journal.
func (s *Store) EntryPage(ctx context.Context, name string, after int64, limit int) ([]journal.Entry, int64, error) {
	return s.read(ctx, name, max(after, 0), max(limit, 1))
}

// read reads the named thread's entry count and up to limit of its
// entries after seq after (limit < 0: all of them) in one snapshot, and
// checks them.
func (s *Store) read(ctx context.Context, name string, after int64, limit int) ([]journal.Entry, int64, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // deferred: a read snapshot
	if err != nil {
		return nil, 0, s.fail("entries of "+name, err)
	}
	defer func() { _ = tx.Rollback() }()
	var count int64
	err = tx.StmtContext(ctx, s.countStmt).QueryRowContext(ctx, name).Scan(&count)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, notFound(name)
	}
	if err != nil {
		return nil, 0, s.fail("entries of "+name, err)
	}
	rows, err := tx.StmtContext(ctx, s.entriesStmt).QueryContext(ctx, name, after, limit)
	if err != nil {
		return nil, 0, s.fail("entries of "+name, err)
	}
	defer func() { _ = rows.Close() }()
	corrupt := func(seq int64, format string, args ...any) error {
		return fmt.Errorf("%w: thread %q, entry %d: %s", journal.ErrCorrupt, name, seq, fmt.Sprintf(format, args...))
	}
	want := max(count-after, 0)
	if limit >= 0 {
		want = min(want, int64(limit))
	}
	out := make([]journal.Entry, 0, min(want, 4096))
	for rows.Next() {
		var (
			e         journal.Entry
			kind, sum string
			req, resp []byte
			ns        int64
			wantSeq   = after + int64(len(out)) + 1
		)
		if err := rows.Scan(&e.Seq, &kind, &e.Scope, &e.Node, &e.Digest, &req, &resp, &ns, &sum); err != nil {
			return nil, 0, s.fail("entries of "+name, err)
		}
		if e.Seq != wantSeq {
			return nil, 0, corrupt(wantSeq, "missing (the next entry is %d)", e.Seq)
		}
		if wantSeq > count {
			return nil, 0, corrupt(wantSeq, "beyond the %d entries the thread records", count)
		}
		e.Kind = journal.Kind(kind)
		if len(req) > 0 {
			e.Request = req
		}
		if len(resp) > 0 {
			e.Response = resp
		}
		e.Time = time.Unix(0, ns).UTC()
		if got := entrySum(e.Seq, e); got != sum {
			return nil, 0, corrupt(e.Seq, "checksum mismatch (content changed)")
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, s.fail("entries of "+name, err)
	}
	if n := after + int64(len(out)); int64(len(out)) < want {
		return nil, 0, corrupt(n+1, "missing (the thread records %d entries, the journal holds %d)", count, n)
	}
	return out, count, nil
}

// entrySum is the hex SHA-256 of an entry's seq and content: a version
// tag, the seq as 8 bytes big-endian, then kind, scope, node, digest,
// request and response, each preceded by its length as 8 bytes
// big-endian so that no field can shift into another. Time is not
// covered.
func entrySum(seq int64, e journal.Entry) string {
	h := sha256.New()
	var b [8]byte
	_, _ = io.WriteString(h, "journal-entry-v1\x00")
	binary.BigEndian.PutUint64(b[:], uint64(seq))
	_, _ = h.Write(b[:])
	field := func(n int, write func()) {
		binary.BigEndian.PutUint64(b[:], uint64(n))
		_, _ = h.Write(b[:])
		write()
	}
	for _, f := range []string{string(e.Kind), e.Scope, e.Node, e.Digest} {
		field(len(f), func() { _, _ = io.WriteString(h, f) })
	}
	for _, f := range [][]byte{e.Request, e.Response} {
		field(len(f), func() { _, _ = h.Write(f) })
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// Lock takes the named thread's lock, an OS file lock on
// "<Path()>.locks/<name>.lock"; see journal.Store. It fails with
// journal.ErrLocked, naming the thread, when any process — this one
// included — holds it, and with journal.ErrBadName for a name that is not
// a journal.ValidName. The thread need not exist yet, so that a creator can
// hold the lock from before Create. The unlock function releases the lock
// and closes its file; calling it again does nothing.
func (s *Store) Lock(ctx context.Context, name string) (func() error, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: lock %q: %w", name, err)
	}
	if err := journal.CheckName(name); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.lockDir, 0o700); err != nil {
		return nil, fmt.Errorf("sqlitestore: lock %q: %w", name, err)
	}
	fl := flock.New(filepath.Join(s.lockDir, name+".lock"), flock.SetPermissions(0o600))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: lock %q: %w", name, err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: thread %q is locked (%s)", journal.ErrLocked, name, fl.Path())
	}
	var (
		once sync.Once
		uerr error
	)
	return func() error {
		once.Do(func() {
			if err := fl.Unlock(); err != nil {
				uerr = fmt.Errorf("sqlitestore: unlock %q: %w", name, err)
			}
		})
		return uerr
	}, nil
}
