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
// the disk, at a cost per Append.
//
// # Integrity
//
// Each entry carries a SHA-256 checksum of its content (see Entries), and
// a thread records how many entries it has, so a changed, missing or
// truncated journal fails with journal.ErrCorrupt instead of replaying
// part of a run. SQLite's own "malformed"/"not a database" errors are
// reported as journal.ErrCorrupt too.
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
	"context"
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

// Store is a journal.Store kept in one SQLite file. It is safe for
// concurrent use, and several processes may open the same file; Open
// returns one, Close releases it.
type Store struct {
	db      *sql.DB
	path    string
	lockDir string
	// Prepared statements of the hot paths, Append and Entries.
	countStmt, insertStmt, bumpStmt, entriesStmt *sql.Stmt
	// write serialises this process's write transactions, so that they
	// queue in Go (honouring their contexts) instead of spinning in
	// SQLite's busy handler; busy_timeout arbitrates between processes.
	write chan struct{}
}

var _ journal.Store = (*Store)(nil)

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
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&s.countStmt, countSQL}, {&s.insertStmt, insertSQL}, {&s.bumpStmt, bumpSQL}, {&s.entriesStmt, entriesSQL},
	} {
		if *p.stmt, err = db.PrepareContext(ctx, p.sql); err != nil {
			_ = db.Close()
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
		if err := s.lockWrite(ctx); err != nil {
			return s.fail("open", err)
		}
		defer s.unlockWrite()
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return s.fail("open", err)
		}
		defer func() { _ = tx.Rollback() }()
		// Another process may have created it meanwhile.
		if ver, app, objects, err = s.identity(ctx, tx); err != nil {
			return err
		}
		if ver == 0 && app == 0 && objects == 0 {
			if _, err := tx.ExecContext(ctx, schema); err != nil {
				return s.fail("create schema", err)
			}
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
				return s.fail("create schema", err)
			}
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
				return s.fail("create schema", err)
			}
			if err := tx.Commit(); err != nil {
				return s.fail("create schema", err)
			}
			return nil
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
	return nil
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
		_ = st.Close()
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
		(name, pipeline, task, meta, status, pending, error, parent, forked_at,
		 entries, steps, model_calls, tool_calls, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, ?, ?)
		ON CONFLICT (name) DO NOTHING`,
		t.Name, t.Pipeline, jsonOrNil(t.Task), jsonOrNil(t.Meta), string(t.Status), pending, t.Error,
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
		FROM entries WHERE thread = ? ORDER BY seq`
)

const threadColumns = `name, pipeline, task, meta, status, pending, error, parent, forked_at,
	entries, steps, model_calls, tool_calls, created, updated`

// scanThread reads one row of threadColumns.
func scanThread(row interface{ Scan(...any) error }) (journal.Thread, error) {
	var (
		t                journal.Thread
		status           string
		task, meta, pend []byte
		created, updated int64
	)
	if err := row.Scan(&t.Name, &t.Pipeline, &task, &meta, &status, &pend, &t.Error, &t.Parent, &t.ForkedAt,
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
	res, err := s.db.ExecContext(ctx, `UPDATE threads SET status = ?, pending = ?, error = ?, updated = max(updated, ?)
		WHERE name = ?`, string(u.Status), pending, u.Error, time.Now().UnixNano(), name)
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

// Append adds e to the named thread's journal in one write transaction
// and returns its seq; see journal.Store. Request and Response are stored
// as given (the store does not check that they are JSON).
func (s *Store) Append(ctx context.Context, name string, e journal.Entry) (int64, error) {
	now := time.Now()
	if e.Time.IsZero() {
		e.Time = now
	}
	var steps, models, tools int64
	switch e.Kind {
	case journal.KindNode:
		steps = 1
	case journal.KindModel:
		models = 1
	case journal.KindTool:
		tools = 1
	}

	if err := s.lockWrite(ctx); err != nil {
		return 0, s.fail("append to "+name, err)
	}
	defer s.unlockWrite()
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return 0, s.fail("append to "+name, err)
	}
	defer func() { _ = tx.Rollback() }()
	var count int64
	err = tx.StmtContext(ctx, s.countStmt).QueryRowContext(ctx, name).Scan(&count)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound(name)
	}
	if err != nil {
		return 0, s.fail("append to "+name, err)
	}
	seq := count + 1
	_, err = tx.StmtContext(ctx, s.insertStmt).ExecContext(ctx,
		name, seq, string(e.Kind), e.Scope, e.Node, e.Digest, jsonOrNil(e.Request), jsonOrNil(e.Response),
		e.Time.UnixNano(), entrySum(seq, e))
	if err != nil {
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY {
			return 0, fmt.Errorf("%w: thread %q records %d entries but entry %d exists", journal.ErrCorrupt, name, count, seq)
		}
		return 0, s.fail("append to "+name, err)
	}
	_, err = tx.StmtContext(ctx, s.bumpStmt).ExecContext(ctx,
		steps, models, tools, now.UnixNano(), name)
	if err != nil {
		return 0, s.fail("append to "+name, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, s.fail("append to "+name, err)
	}
	return seq, nil
}

// Entries returns the named thread's journal; see journal.Store. It reads
// the thread's entry count and its entries in one snapshot, and checks that
// the seqs run 1..count and that every entry matches its checksum: any
// damage fails with an error matching journal.ErrCorrupt that names the
// thread and the first bad seq.
func (s *Store) Entries(ctx context.Context, name string) ([]journal.Entry, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // deferred: a read snapshot
	if err != nil {
		return nil, s.fail("entries of "+name, err)
	}
	defer func() { _ = tx.Rollback() }()
	var count int64
	err = tx.StmtContext(ctx, s.countStmt).QueryRowContext(ctx, name).Scan(&count)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(name)
	}
	if err != nil {
		return nil, s.fail("entries of "+name, err)
	}
	rows, err := tx.StmtContext(ctx, s.entriesStmt).QueryContext(ctx, name)
	if err != nil {
		return nil, s.fail("entries of "+name, err)
	}
	defer func() { _ = rows.Close() }()
	corrupt := func(seq int64, format string, args ...any) error {
		return fmt.Errorf("%w: thread %q, entry %d: %s", journal.ErrCorrupt, name, seq, fmt.Sprintf(format, args...))
	}
	out := make([]journal.Entry, 0, min(max(count, 0), 4096))
	for rows.Next() {
		var (
			e         journal.Entry
			kind, sum string
			req, resp []byte
			ns        int64
			wantSeq   = int64(len(out)) + 1
		)
		if err := rows.Scan(&e.Seq, &kind, &e.Scope, &e.Node, &e.Digest, &req, &resp, &ns, &sum); err != nil {
			return nil, s.fail("entries of "+name, err)
		}
		if e.Seq != wantSeq {
			return nil, corrupt(wantSeq, "missing (the next entry is %d)", e.Seq)
		}
		if wantSeq > count {
			return nil, corrupt(wantSeq, "beyond the %d entries the thread records", count)
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
			return nil, corrupt(e.Seq, "checksum mismatch (content changed)")
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("entries of "+name, err)
	}
	if n := int64(len(out)); n < count {
		return nil, corrupt(n+1, "missing (the thread records %d entries, the journal holds %d)", count, n)
	}
	return out, nil
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
