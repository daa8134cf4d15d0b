// Package audit keeps an append-only record of tool calls: when each call
// ran, in which thread or run and node, which tool with what input, a
// digest and the size of what it returned, how long it took, how it failed,
// and the human decision on it when it needed approval. A Log is one
// SQLite file (audit.db next to a thread store's journal, or any file a
// plain run names); package node writes to it through node.ToolAuditor and
// `planner audit` reads it.
//
// # Append-only
//
// The calls table has triggers that abort every UPDATE and DELETE, and an
// INSERT that would replace a record (INSERT OR REPLACE), so nothing that
// goes through SQLite can change or remove a record (Query reads; Append
// inserts). This guards against mistakes, not against
// someone who can write the file: dropping the table or the triggers, or
// replacing the file, is still possible.
//
// # Secrets
//
// Append scrubs every text of a record (input, error, reason, node, step,
// tool and decider names) with the Log's scrubber (redact.New() by
// default: the values of secret-named environment variables, bearer
// tokens and API key shapes) before it is queued, then clips the input to
// the input limit (DefaultInputLimit characters). A tool's output is never
// stored: only its SHA-256 digest (of the output as the tool returned it,
// so that it can be compared with a journal's copy) and its size.
//
// # Writes
//
// Append only queues the record; one goroutine per Log writes the queue in
// batches, one SQLite transaction per batch, so a tool call waits for no
// disk. Flush waits until everything appended before it is written, Close
// writes what is left. A process killed at any instant loses at most the
// records appended since the last batch was committed. The file is in WAL
// mode with a busy timeout, so several processes may append to the same
// log (WAL needs a local file system).
package audit

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/redact"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// FileName is the audit log's file name beside a thread store's journal
// database: a store at ~/.local/state/planner/threads.db has its audit
// log at ~/.local/state/planner/audit.db.
const FileName = "audit.db"

// PathBeside returns the audit log's path beside the thread store file
// store: FileName in the same folder.
func PathBeside(store string) string { return filepath.Join(filepath.Dir(store), FileName) }

// DefaultInputLimit is how many characters (runes) of a call's input a
// record keeps by default; the rest is cut and replaced by "…". The
// record's InputBytes still says how long the whole input was.
const DefaultInputLimit = 2000

// errorLimit caps the stored error and reason texts, in characters.
const errorLimit = 2000

// SchemaVersion is the schema version this package writes and reads, kept
// in the file's user_version pragma.
const SchemaVersion = 1

// applicationID marks a SQLite file as an audit log: "audt".
const applicationID = 0x61756474

// Sentinel errors.
var (
	// ErrNoLog: the audit log file does not exist (Open with MustExist).
	ErrNoLog = errors.New("audit: no audit log")
	// ErrNotLog: the file is not an audit log (another SQLite database,
	// or not a database), or was written by a newer schema.
	ErrNotLog = errors.New("audit: not an audit log this program can read")
	// ErrClosed: Append or Flush on a closed Log.
	ErrClosed = errors.New("audit: the log is closed")
)

// Decision is the human decision a call needed, as recorded.
type Decision string

// The decisions of a record.
const (
	// DecisionNone: the tool needs no approval.
	DecisionNone Decision = ""
	// DecisionApproved: a human approved the call, and it ran.
	DecisionApproved Decision = "approved"
	// DecisionDenied: a human denied the call; the tool did not run.
	DecisionDenied Decision = "denied"
	// DecisionPending: the call waits for a decision (the thread was
	// saved as waiting); the tool did not run.
	DecisionPending Decision = "pending"
)

// Record is one tool call.
type Record struct {
	// ID numbers the log's records from 1 in the order they were written.
	// Append ignores it; Query sets it.
	ID int64 `json:"id"`
	// Time is when the call started. Append sets it when zero.
	Time time.Time `json:"time"`
	// Thread is the thread the call belongs to, "" outside a thread.
	Thread string `json:"thread,omitempty"`
	// Run is the run id on the run's trace events.
	Run string `json:"run,omitempty"`
	// Node is the id of the node that made the call.
	Node string `json:"node,omitempty"`
	// Step is the plan step or loop step the call served, if any.
	Step string `json:"step,omitempty"`
	// Tool is the tool's registered name, or the name as written for a
	// tool the registry does not have.
	Tool string `json:"tool"`
	// CallID is the model's id of a native tool call, if any.
	CallID string `json:"call_id,omitempty"`
	// Input is the input the tool got, scrubbed and clipped to the Log's
	// input limit.
	Input string `json:"input"`
	// InputBytes is the size in bytes of the whole input, before
	// scrubbing and clipping. Append sets it from Input when zero.
	InputBytes int `json:"input_bytes"`
	// OutputSHA256 is the hex SHA-256 of the tool's output (Digest), ""
	// when the tool did not run.
	OutputSHA256 string `json:"output_sha256,omitempty"`
	// OutputBytes is the size in bytes of the tool's output.
	OutputBytes int `json:"output_bytes"`
	// DurationMS is how long the tool ran, in milliseconds (microsecond
	// precision).
	DurationMS float64 `json:"duration_ms"`
	// Error is why the call failed (scrubbed, one line), "" when it
	// succeeded.
	Error string `json:"error,omitempty"`
	// Decision is the human decision on a call that needed one.
	Decision Decision `json:"decision,omitempty"`
	// DecidedBy says who decided ("terminal", "resume --approve", ...).
	DecidedBy string `json:"decided_by,omitempty"`
	// Reason is the decider's reason or note.
	Reason string `json:"reason,omitempty"`
}

// Digest returns the hex SHA-256 of s, as Record.OutputSHA256 holds it.
func Digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Filter selects records for Query. The zero value selects them all.
type Filter struct {
	// Thread keeps the records of this thread only ("" all).
	Thread string
	// Tool keeps the calls of this tool only ("" all).
	Tool string
	// Since keeps the records of calls started at or after it (zero: all).
	Since time.Time
	// Limit keeps the newest Limit matching records (0 or less: all).
	Limit int
}

// Scrubber removes secrets from text. *redact.Scrubber implements it; it
// must be safe for concurrent use.
type Scrubber interface {
	String(s string) string
}

// Option configures Open.
type Option func(*config)

type config struct {
	scrub       Scrubber
	inputLimit  int
	busyTimeout time.Duration
	mustExist   bool
}

// WithScrubber scrubs the records with s. Default: redact.New() (built by
// Open, reading the environment then).
func WithScrubber(s Scrubber) Option { return func(c *config) { c.scrub = s } }

// WithInputLimit keeps n characters of each input. Values below 1 keep
// DefaultInputLimit.
func WithInputLimit(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.inputLimit = n
		}
	}
}

// WithBusyTimeout sets how long a write or read waits for another
// process's write transaction before it fails. Default 5 s.
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.busyTimeout = d
		}
	}
}

// MustExist makes Open fail with ErrNoLog when the file does not exist,
// instead of creating it: for readers such as `planner audit`.
func MustExist() Option { return func(c *config) { c.mustExist = true } }

// Log is an append-only audit log in one SQLite file. It is safe for
// concurrent use; Open returns one and Close writes what is queued and
// releases it.
type Log struct {
	db         *sql.DB
	path       string
	scrub      Scrubber
	inputLimit int
	insert     *sql.Stmt

	mu       sync.Mutex
	queue    []Record
	queued   int64         // records ever queued
	written  int64         // records ever handled by the writer (written or lost)
	progress chan struct{} // closed and replaced after every write attempt
	err      error         // the last write attempt's failure; nil once a write succeeds
	lost     int64         // records given up at Close after their writes kept failing
	lostErr  error         // why they were lost
	closed   bool

	wake chan struct{} // tells the writer the queue has records
	done chan struct{} // closed when the writer has ended
}

// The schema of version 1. Times are Unix nanoseconds, durations
// microseconds.
const schema = `
CREATE TABLE calls (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	time          INTEGER NOT NULL,
	thread        TEXT    NOT NULL,
	run           TEXT    NOT NULL,
	node          TEXT    NOT NULL,
	step          TEXT    NOT NULL,
	tool          TEXT    NOT NULL,
	call_id       TEXT    NOT NULL,
	input         TEXT    NOT NULL,
	input_bytes   INTEGER NOT NULL,
	output_sha256 TEXT    NOT NULL,
	output_bytes  INTEGER NOT NULL,
	duration_us   INTEGER NOT NULL,
	error         TEXT    NOT NULL,
	decision      TEXT    NOT NULL,
	decided_by    TEXT    NOT NULL,
	reason        TEXT    NOT NULL
) STRICT;
CREATE INDEX calls_thread ON calls (thread, id);
CREATE INDEX calls_tool ON calls (tool, id);
CREATE TRIGGER calls_no_update BEFORE UPDATE ON calls
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be changed'); END;
CREATE TRIGGER calls_no_delete BEFORE DELETE ON calls
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be deleted'); END;
CREATE TRIGGER calls_no_replace BEFORE INSERT ON calls WHEN EXISTS (SELECT 1 FROM calls WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be replaced'); END;
`

const insertSQL = `INSERT INTO calls (time, thread, run, node, step, tool, call_id, input, input_bytes,
	output_sha256, output_bytes, duration_us, error, decision, decided_by, reason)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const selectColumns = `id, time, thread, run, node, step, tool, call_id, input, input_bytes,
	output_sha256, output_bytes, duration_us, error, decision, decided_by, reason`

// Open opens the audit log at path, creating the file (mode 0600) and its
// folder (0700) when missing (unless MustExist). A file that is not an
// audit log fails with ErrNotLog.
func Open(ctx context.Context, path string, opts ...Option) (*Log, error) {
	cfg := config{inputLimit: DefaultInputLimit, busyTimeout: 5 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.scrub == nil {
		cfg.scrub = redact.New()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("audit: open %s: %w", path, err)
	}
	if cfg.mustExist {
		if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s", ErrNoLog, abs)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, fmt.Errorf("audit: open %s: %w", abs, err)
		}
		f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("audit: open %s: %w", abs, err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("audit: open %s: %w", abs, err)
		}
	}
	dsn := fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate",
		uriPath(abs), cfg.busyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("audit: open %s: %w", abs, err)
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	l := &Log{db: db, path: abs, scrub: cfg.scrub, inputLimit: cfg.inputLimit,
		progress: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
	if err := l.init(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	if l.insert, err = db.PrepareContext(ctx, insertSQL); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("audit: open %s: %w", abs, err)
	}
	go l.writer()
	return l, nil
}

// uriPath escapes the characters that would end or change the path part
// of a SQLite URI filename.
func uriPath(p string) string {
	p = filepath.ToSlash(p)
	p = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
	if filepath.VolumeName(p) != "" {
		p = "/" + p
	}
	return p
}

// init checks the file's identity and version, creating the schema in an
// empty file.
func (l *Log) init(ctx context.Context) error {
	tx, err := l.db.BeginTx(ctx, nil) // immediate: one creator at a time
	if err != nil {
		return l.fail("open", err)
	}
	defer func() { _ = tx.Rollback() }()
	var ver, app, objects int64
	for _, q := range []struct {
		sql string
		v   *int64
	}{{"PRAGMA user_version", &ver}, {"PRAGMA application_id", &app}, {"SELECT count(*) FROM sqlite_schema", &objects}} {
		if err := tx.QueryRowContext(ctx, q.sql).Scan(q.v); err != nil {
			return l.fail("open", err)
		}
	}
	switch {
	case ver == 0 && app == 0 && objects == 0:
		for _, s := range []string{schema, fmt.Sprintf("PRAGMA application_id = %d", applicationID), fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)} {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return l.fail("create schema", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return l.fail("create schema", err)
		}
		return nil
	case app != applicationID:
		return fmt.Errorf("%w: %s is a SQLite database but not an audit log (application_id %#x)", ErrNotLog, l.path, app)
	case ver > SchemaVersion:
		return fmt.Errorf("%w: %s has schema version %d; this program reads up to version %d: use a newer one", ErrNotLog, l.path, ver, SchemaVersion)
	}
	return nil
}

// fail wraps err from operation op; a file that is not a database is
// ErrNotLog.
func (l *Log) fail(op string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed") {
		return fmt.Errorf("%w: %s: %s: %w", ErrNotLog, l.path, op, err)
	}
	return fmt.Errorf("audit: %s %s: %w", op, l.path, err)
}

// Path returns the absolute path of the log's file.
func (l *Log) Path() string { return l.path }

// Append scrubs r, clips its input and queues it for writing; it does not
// wait for the disk (see Flush). It fails only with ErrClosed after Close:
// a batch that cannot be written stays queued and is tried again (Flush
// and Close report the failure).
func (l *Log) Append(_ context.Context, r Record) error {
	if l == nil {
		return fmt.Errorf("%w: no audit log (a nil *Log): the call of %s was not recorded", ErrClosed, r.Tool)
	}
	r = l.prepare(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("%w: %s: the call of %s was not recorded", ErrClosed, l.path, r.Tool)
	}
	l.queue = append(l.queue, r)
	l.queued++
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return nil
}

// prepare scrubs and clips r and fills its defaults.
func (l *Log) prepare(r Record) Record {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	if r.InputBytes == 0 {
		r.InputBytes = len(r.Input)
	}
	s := l.scrub.String
	r.ID = 0
	r.Thread, r.Run, r.Node, r.Step, r.Tool, r.CallID = s(r.Thread), s(r.Run), s(r.Node), s(r.Step), s(r.Tool), s(r.CallID)
	r.Input = textutil.Clip(s(r.Input), l.inputLimit)
	r.Error = textutil.Clip(s(r.Error), errorLimit)
	r.Reason = textutil.Clip(s(r.Reason), errorLimit)
	r.DecidedBy = s(r.DecidedBy)
	return r
}

// maxBackoff bounds the wait between attempts to write a batch that
// failed.
const maxBackoff = 5 * time.Second

// writer writes the queue in batches until Close. A batch that cannot be
// written (the file locked by another process past the busy timeout, a
// full disk) goes back to the head of the queue and is tried again after
// a growing wait; once the log is closed, a batch that still fails is
// given up and counted as lost (Close reports it).
func (l *Log) writer() {
	defer close(l.done)
	backoff := 100 * time.Millisecond
	for {
		<-l.wake
		for {
			l.mu.Lock()
			batch, closed := l.queue, l.closed
			l.queue = nil
			l.mu.Unlock()
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
			err := l.write(batch)
			l.mu.Lock()
			l.err = err
			switch {
			case err == nil:
				l.written += int64(len(batch))
				backoff = 100 * time.Millisecond
			case closed:
				l.written += int64(len(batch))
				l.lost += int64(len(batch))
				l.lostErr = err
			default:
				l.queue = append(batch, l.queue...)
			}
			close(l.progress)
			l.progress = make(chan struct{})
			l.mu.Unlock()
			if err != nil && !closed {
				select {
				case <-time.After(backoff):
				case <-l.wake: // Close, or more records: try again now
				}
				backoff = min(2*backoff, maxBackoff)
			}
		}
	}
}

// write inserts batch in one transaction. A failure is retried by the
// writer (with backoff), on top of SQLite's busy timeout.
func (l *Log) write(batch []Record) error {
	if err := l.writeOnce(batch); err != nil {
		return fmt.Errorf("audit: %s: %d record(s) could not be written: %w", l.path, len(batch), err)
	}
	return nil
}

func (l *Log) writeOnce(batch []Record) error {
	ctx := context.Background() // a record is written even when its run was cancelled
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	st := tx.StmtContext(ctx, l.insert)
	for _, r := range batch {
		_, err := st.ExecContext(ctx, r.Time.UnixNano(), r.Thread, r.Run, r.Node, r.Step, r.Tool, r.CallID, r.Input, r.InputBytes,
			r.OutputSHA256, r.OutputBytes, int64(r.DurationMS*1000), r.Error, string(r.Decision), r.DecidedBy, r.Reason)
		if err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Flush waits until every record appended before it is written, or ctx
// ends. It returns early with the failure of a write attempt made while it
// waits (the records stay queued and are tried again), and it reports
// records that Close had to give up.
func (l *Log) Flush(ctx context.Context) error {
	l.mu.Lock()
	target := l.queued
	for l.written < target {
		ch := l.progress
		l.mu.Unlock()
		select {
		case <-ch:
		case <-l.done:
		case <-ctx.Done():
			return fmt.Errorf("audit: flushing %s: %w", l.path, context.Cause(ctx))
		}
		l.mu.Lock()
		if l.err != nil && l.written < target {
			err := l.err
			l.mu.Unlock()
			return err
		}
	}
	err := l.lossLocked()
	l.mu.Unlock()
	return err
}

// lossLocked is the error for the records given up, or nil; l.mu is held.
func (l *Log) lossLocked() error {
	if l.lost == 0 {
		return nil
	}
	return fmt.Errorf("audit: %s: %d record(s) were given up at close: %w", l.path, l.lost, l.lostErr)
}

// Close writes the queued records (one last round of attempts for a batch
// that kept failing), stops the writer and closes the file. It returns an
// error naming how many records could not be written, if any. A second
// Close does nothing.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	select {
	case l.wake <- struct{}{}:
	default:
	}
	l.mu.Unlock()
	<-l.done
	l.mu.Lock()
	err := l.lossLocked()
	l.mu.Unlock()
	_ = l.insert.Close()
	if cerr := l.db.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("audit: close %s: %w", l.path, cerr))
	}
	return err
}

// Query returns the records f selects, oldest first, after writing what
// this Log has queued.
func (l *Log) Query(ctx context.Context, f Filter) ([]Record, error) {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("%w: %s", ErrClosed, l.path)
	}
	// A write failure is reported by Flush and Close; the records that
	// were written can still be read.
	if err := l.Flush(ctx); err != nil && ctx.Err() != nil {
		return nil, err
	}
	var (
		where []string
		args  []any
	)
	if f.Thread != "" {
		where, args = append(where, "thread = ?"), append(args, f.Thread)
	}
	if f.Tool != "" {
		where, args = append(where, "tool = ?"), append(args, f.Tool)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "time >= ?"), append(args, f.Since.UnixNano())
	}
	q := "SELECT " + selectColumns + " FROM calls"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := l.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, l.fail("query", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var (
			r        Record
			ns, us   int64
			decision string
		)
		if err := rows.Scan(&r.ID, &ns, &r.Thread, &r.Run, &r.Node, &r.Step, &r.Tool, &r.CallID, &r.Input, &r.InputBytes,
			&r.OutputSHA256, &r.OutputBytes, &us, &r.Error, &decision, &r.DecidedBy, &r.Reason); err != nil {
			return nil, l.fail("query", err)
		}
		r.Time, r.DurationMS, r.Decision = time.Unix(0, ns), float64(us)/1000, Decision(decision)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, l.fail("query", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
