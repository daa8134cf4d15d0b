package sqltool

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"

	"github.com/planner-engine/planner/tools"
)

// Tool names.
const (
	// QueryName is the name of the query tool.
	QueryName = "sql_query"
	// SchemaName is the name of the schema tool.
	SchemaName = "sql_schema"
)

// Defaults of the Config fields.
const (
	// DefaultMaxRows is Config.MaxRows when unset.
	DefaultMaxRows = 100
	// DefaultMaxCellBytes is Config.MaxCellBytes when unset.
	DefaultMaxCellBytes = 200
	// DefaultMaxOutputBytes is Config.MaxOutputBytes when unset: 16 KiB.
	DefaultMaxOutputBytes = 16 << 10
	// DefaultTimeout is Config.Timeout when unset.
	DefaultTimeout = 10 * time.Second
	// MinOutputBytes is the smallest Config.MaxOutputBytes; smaller
	// values are raised to it.
	MinOutputBytes = 512
	// MaxStatementBytes caps the SQL text of one call.
	MaxStatementBytes = 100 << 10
	// MaxValueBytes caps any one string or blob a statement makes or
	// reads (SQLITE_LIMIT_LENGTH), so that SELECT randomblob(1e9) fails
	// instead of taking a gigabyte.
	MaxValueBytes = 32 << 20
	// CountLimit is how many rows past MaxRows a query counts to say how
	// many more there are; past it the result says "more than".
	CountLimit = 10_000
)

// Errors the tools return, each wrapped with a message for the model.
// Those the model's input causes also wrap tools.ErrBadInput; ErrTimeout
// also wraps tools.ErrToolTimeout.
var (
	// ErrInvalidConfig means Open was given an unusable Config.
	ErrInvalidConfig = errors.New("invalid sql configuration")
	// ErrNoDatabase means the database file does not exist or is not a
	// SQLite database.
	ErrNoDatabase = errors.New("no database")
	// ErrEmptyStatement means the input holds no SQL statement.
	ErrEmptyStatement = errors.New("no SQL statement")
	// ErrMultipleStatements means the input holds more than one statement.
	ErrMultipleStatements = errors.New("more than one SQL statement")
	// ErrReadOnly means a statement tried to change a read-only database.
	ErrReadOnly = errors.New("read-only database")
	// ErrNotAllowed means SQLite refused a statement the tool never
	// allows: ATTACH, DETACH, transactions, PRAGMAs that change settings,
	// load_extension.
	ErrNotAllowed = errors.New("statement not allowed")
	// ErrSQL means SQLite rejected the statement (a syntax error, an
	// unknown table or column, a constraint).
	ErrSQL = errors.New("SQL error")
	// ErrTimeout means a statement ran past Config.Timeout and was
	// interrupted.
	ErrTimeout = errors.New("query time limit reached")
	// ErrBadArgument means a tool's JSON input is malformed or has an
	// unknown key.
	ErrBadArgument = errors.New("bad argument")
	// ErrNoTable means sql_schema was asked for a table that does not
	// exist.
	ErrNoTable = errors.New("no such table")
)

// Config configures a DB. Zero values take the documented defaults; only
// Path is required. The mapstructure tags are the keys of a pipeline's sql
// tools entry.
type Config struct {
	// Path is the SQLite database file. Required; it must exist unless
	// Write and Create are both set. A relative Path is relative to the
	// working directory (the pipeline builder resolves it against the
	// pipeline's folder first).
	Path string `mapstructure:"path"`
	// Write lets sql_query change the database (INSERT, UPDATE, DELETE,
	// CREATE, ALTER, DROP). Default false: the file is opened read-only.
	Write bool `mapstructure:"write"`
	// Create, with Write, creates the database file when it is missing.
	// Default false: a missing file is an error.
	Create bool `mapstructure:"create"`
	// ApproveWrites says whether sql_query, when Write is set, asks a
	// human to approve each call (its Meta.NeedsApproval). Default (nil)
	// true.
	ApproveWrites *bool `mapstructure:"approve_writes"`
	// MaxRows caps the rows one result shows. Default DefaultMaxRows
	// (100).
	MaxRows int `mapstructure:"max_rows"`
	// MaxCellBytes caps each value shown, in bytes; longer ones end with
	// "…". Default DefaultMaxCellBytes (200).
	MaxCellBytes int `mapstructure:"max_cell_bytes"`
	// MaxOutputBytes caps the text of one call. Default
	// DefaultMaxOutputBytes (16 KiB); values under MinOutputBytes (512)
	// are raised to it.
	MaxOutputBytes int `mapstructure:"max_output_bytes"`
	// Timeout bounds one statement; SQLite is interrupted when it passes.
	// Default DefaultTimeout (10s).
	Timeout time.Duration `mapstructure:"timeout"`
}

// DB is one SQLite database and its tools. It is safe for concurrent use.
// Close it to release the connection pool.
type DB struct {
	db   *sql.DB
	cfg  Config
	name string
}

// Open checks cfg, opens the database and checks that it is a SQLite
// database. It fails with ErrInvalidConfig for a bad Config and with
// ErrNoDatabase when the file is missing (and not to be created), is a
// folder or is not a database.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if err := checkConfig(&cfg); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: path %q: %w", ErrInvalidConfig, cfg.Path, err)
	}
	mode := "ro"
	switch st, err := os.Stat(abs); {
	case errors.Is(err, fs.ErrNotExist) && cfg.Write && cfg.Create:
		mode = "rwc"
	case errors.Is(err, fs.ErrNotExist):
		hint := ""
		if cfg.Write {
			hint = " (set create: true to make a new database)"
		}
		return nil, fmt.Errorf("%w: the database file %q does not exist%s", ErrNoDatabase, cfg.Path, hint)
	case err != nil:
		return nil, fmt.Errorf("%w: %q: %w", ErrNoDatabase, cfg.Path, err)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%w: %q is not a regular file", ErrNoDatabase, cfg.Path)
	case cfg.Write:
		mode = "rw"
	}

	connector, err := sqlite.NewConnector(dsn(abs, mode, cfg))
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrNoDatabase, cfg.Path, err)
	}
	db := sql.OpenDB(guardConnector{Connector: connector, auth: authorizer(cfg.Write)})
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	d := &DB{db: db, cfg: cfg, name: filepath.Base(abs)}

	cctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	var n int
	if err := db.QueryRowContext(cctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		_ = db.Close()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("%w: %q cannot be read as a SQLite database: %s", ErrNoDatabase, cfg.Path, sqliteMessage(err))
	}
	return d, nil
}

// checkConfig validates cfg and fills in its defaults.
func checkConfig(cfg *Config) error {
	if strings.TrimSpace(cfg.Path) == "" {
		return fmt.Errorf("%w: path is required", ErrInvalidConfig)
	}
	if cfg.Create && !cfg.Write {
		return fmt.Errorf("%w: create needs write: true (a read-only database is never created)", ErrInvalidConfig)
	}
	for _, l := range []struct {
		name string
		v    int64
	}{
		{"max_rows", int64(cfg.MaxRows)}, {"max_cell_bytes", int64(cfg.MaxCellBytes)},
		{"max_output_bytes", int64(cfg.MaxOutputBytes)}, {"timeout", int64(cfg.Timeout)},
	} {
		if l.v < 0 {
			return fmt.Errorf("%w: %s must not be negative", ErrInvalidConfig, l.name)
		}
	}
	if cfg.MaxRows <= 0 {
		cfg.MaxRows = DefaultMaxRows
	}
	if cfg.MaxCellBytes <= 0 {
		cfg.MaxCellBytes = DefaultMaxCellBytes
	}
	if cfg.MaxOutputBytes <= 0 {
		cfg.MaxOutputBytes = DefaultMaxOutputBytes
	}
	cfg.MaxOutputBytes = max(cfg.MaxOutputBytes, MinOutputBytes)
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.ApproveWrites == nil {
		approve := true
		cfg.ApproveWrites = &approve
	}
	return nil
}

// dsn is the SQLite URI of the file at abs, opened in mode (ro, rw or
// rwc). A read-only connection also sets PRAGMA query_only. Waits for a
// lock end with the timeout.
func dsn(abs, mode string, cfg Config) string {
	q := url.Values{}
	q.Set("mode", mode)
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.Timeout.Milliseconds()))
	if mode == "ro" {
		q.Set("_query_only", "1")
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

// Close closes the connection pool.
func (d *DB) Close() error { return d.db.Close() }

// Tools returns sql_query and sql_schema.
func (d *DB) Tools() []tools.Tool {
	return []tools.Tool{&queryTool{d}, &schemaTool{d}}
}

// meta is the metadata of a tool of d; write says the tool may change the
// database. The timeout leaves the statement's own limit room to end the
// call first, with its clearer message.
func (d *DB) meta(write bool) tools.Meta {
	return tools.Meta{
		ReadOnly:      !write,
		NeedsApproval: write && *d.cfg.ApproveWrites,
		Timeout:       d.cfg.Timeout + 5*time.Second,
	}
}
