package compare

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/planner-engine/planner/eval/trajectory"
	_ "modernc.org/sqlite" // pure-Go SQLite driver
)

// Record is the stored outcome of one (config, task) run. Failure holds
// the engine's failure kind (an agent.Failure* constant), FailureError, or
// FailureWrong; the verdict fields (Scored, Correct, EM, F1, HasF1) are
// recomputed from Answer whenever a report is built.
type Record struct {
	Config string `json:"config"`
	TaskID string `json:"task_id"`
	Seed   uint64 `json:"seed"`
	// Fingerprint identifies the pipeline file and llm override the run
	// used; see the package doc.
	Fingerprint string `json:"fingerprint"`
	// Model is the spec of the model the run used (ModelSpec:
	// "sim:noisy", "openai:gpt-4o-mini"): the --llm override, or the
	// pipeline's own llm block.
	Model            string  `json:"model"`
	Answer           string  `json:"answer"`
	Complete         bool    `json:"complete"`
	Correct          bool    `json:"correct"`
	Scored           bool    `json:"scored"`
	EM               float64 `json:"em"`
	F1               float64 `json:"f1"`
	HasF1            bool    `json:"has_f1"`
	Failure          string  `json:"failure,omitempty"`
	Error            string  `json:"error,omitempty"`
	ModelCalls       int     `json:"model_calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	// CachedPromptTokens is the part of PromptTokens the provider served
	// from its prompt cache, where it says (agent.Counters).
	CachedPromptTokens int     `json:"cached_prompt_tokens,omitempty"`
	ToolCalls          int     `json:"tool_calls"`
	Estimated          bool    `json:"estimated"`
	CostUSD            float64 `json:"cost_usd"`
	LatencyMS          float64 `json:"latency_ms"`
	Steps              int     `json:"steps"`
	// Trace locates the run's JSONL trace in the output folder as
	// "traces/<model>/<config>.jsonl:<first line>-<last line>"; empty
	// without one.
	Trace string `json:"trace,omitempty"`
	// Repeat is the run's repeat index (Options.Repeats): Seed minus the
	// comparison's seed. It is not stored: a run is fixed by its seed.
	Repeat int `json:"repeat"`
	// CacheHits counts the run's model calls answered from the response
	// cache (Options.Cache); CacheSavedUSD is what those calls cost when
	// they were made live, which this run did not pay again. The run's
	// CostUSD and tokens count every call, cached or not, so runs compare
	// alike however many of their calls were cached.
	CacheHits     int     `json:"cache_hits,omitempty"`
	CacheSavedUSD float64 `json:"cache_saved_usd,omitempty"`
	// Route is the way an adaptive config went in the run: the autopilot
	// candidate whose answer it gave (the last one it checked), else the
	// last route a router node chose; "" for a fixed config.
	Route string `json:"route,omitempty"`
	// Trajectory is the run's tool calls and plans (package
	// eval/trajectory), read from its trace events, scored against the
	// task's gold steps when a report is built; empty when not recorded.
	Trajectory json.RawMessage `json:"trajectory,omitempty"`
	// Path is the trajectory's score against the task's gold steps
	// (Options.Gold), set when a report is built; nil when the task has
	// none or the run recorded no trajectory.
	Path *trajectory.Metrics `json:"path,omitempty"`
	// Scores holds the verdict of each scorer of Options.Scorers, by
	// name, set when a report is built; nil without scorers.
	Scores map[string]ScoreResult `json:"scores,omitempty"`
	// entry is the comparison's entry the record belongs to, plus 1, set
	// when the comparison reads it back (0: unknown).
	entry int
	// Faults counts the run's trace events by fault kind (FaultKind): the
	// faults the engine met and worked around, such as a parse failure fed
	// back or a provider retry. It is kept whatever the outcome; reports
	// count it as recovered only for runs that succeeded. Nil when none.
	Faults map[string]int `json:"faults,omitempty"`
}

// Store keeps records in SQLite so an interrupted compare resumes. It is
// safe for concurrent use.
type Store struct {
	db *sql.DB
}

// ErrStore marks store failures.
var ErrStore = errors.New("results store")

// OpenStore opens (creating if needed) results.db in dir. Results live in
// the table "records", keyed by config, task id, seed, fingerprint and
// model spec; the "results" and "runs" tables left by earlier versions,
// which keyed results by less and kept no fault counts, are ignored.
func OpenStore(ctx context.Context, dir string) (*Store, error) {
	path := filepath.Join(dir, "results.db")
	// WAL with synchronous=NORMAL: a commit survives the process being
	// killed (all a resume needs) without an fsync per result.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStore, err)
	}
	db.SetMaxOpenConns(1) // one writer; SQLite serialises anyway
	// Two processes opening a new results.db at once (compare and a
	// progress reader such as planner serve) can meet in SQLite's lock
	// upgrade, which answers SQLITE_BUSY at once rather than waiting out
	// busy_timeout: the schema statements are retried for a while.
	if err := retryBusy(ctx, func() error { return createSchema(ctx, db, path) }); err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db}, nil
}

// retryBusy runs f until it succeeds, fails with an error other than
// SQLite's "database is locked", or about two seconds have passed.
func retryBusy(ctx context.Context, f func() error) error {
	var err error
	for attempt := 1; attempt <= 20; attempt++ {
		if err = f(); err == nil || !isBusy(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(attempt) * 10 * time.Millisecond):
		}
	}
	return err
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (primary code 5).
func isBusy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

// createSchema creates the records table and adds the columns added since
// the first version.
func createSchema(ctx context.Context, db *sql.DB, path string) error {
	_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS records (
		config TEXT NOT NULL, task_id TEXT NOT NULL, seed INTEGER NOT NULL, fingerprint TEXT NOT NULL, model TEXT NOT NULL,
		answer TEXT, complete INTEGER, correct INTEGER, scored INTEGER, em REAL, f1 REAL, has_f1 INTEGER,
		failure TEXT, error TEXT, model_calls INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER,
		tool_calls INTEGER, estimated INTEGER, cost_usd REAL, latency_ms REAL, steps INTEGER, trace TEXT, faults TEXT,
		PRIMARY KEY (config, task_id, seed, fingerprint, model))`)
	if err != nil {
		return fmt.Errorf("%w: creating table in %s: %w", ErrStore, path, err)
	}
	// Columns added since: a table made by an earlier version gets them,
	// empty for the results it holds.
	for _, col := range []string{"cached_prompt_tokens INTEGER NOT NULL DEFAULT 0", "cache_hits INTEGER NOT NULL DEFAULT 0",
		"cache_saved_usd REAL NOT NULL DEFAULT 0", "trajectory TEXT NOT NULL DEFAULT ''", "route TEXT NOT NULL DEFAULT ''"} {
		name, _, _ := strings.Cut(col, " ")
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('records') WHERE name = ?`, name).Scan(&n); err != nil {
			return fmt.Errorf("%w: reading the columns of %s: %w", ErrStore, path, err)
		}
		if n == 0 {
			if _, err := db.ExecContext(ctx, `ALTER TABLE records ADD COLUMN `+col); err != nil &&
				!strings.Contains(err.Error(), "duplicate column") { // another process added it first
				return fmt.Errorf("%w: adding column %s to %s: %w", ErrStore, name, path, err)
			}
		}
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Done returns the keys (config, task id, fingerprint, model spec and
// seed joined by NUL bytes) already stored under one of seeds.
func (s *Store) Done(ctx context.Context, seeds []uint64) (map[string]bool, error) {
	in, args := seedsIn(seeds)
	rows, err := s.db.QueryContext(ctx, `SELECT config, task_id, fingerprint, model, seed FROM records WHERE seed IN (`+in+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStore, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var c, t, f, m string
		var seed int64
		if err := rows.Scan(&c, &t, &f, &m, &seed); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStore, err)
		}
		out[storeKey(c, t, f, m, uint64(seed))] = true
	}
	return out, rows.Err()
}

// seedsIn returns the placeholders and arguments of an IN list of seeds.
func seedsIn(seeds []uint64) (string, []any) {
	args := make([]any, len(seeds))
	for i, s := range seeds {
		args[i] = int64(s)
	}
	return strings.TrimSuffix(strings.Repeat("?,", len(seeds)), ","), args
}

// PutAll stores records in one transaction, replacing earlier ones with
// the same keys.
func (s *Store) PutAll(ctx context.Context, recs []Record) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO records (config, task_id, seed, fingerprint, model, answer, complete, correct, scored, em, f1, has_f1,
		failure, error, model_calls, prompt_tokens, completion_tokens, tool_calls, estimated, cost_usd, latency_ms, steps, trace, faults,
		cached_prompt_tokens, cache_hits, cache_saved_usd, trajectory, route) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	defer stmt.Close()
	for _, r := range recs {
		faults := ""
		if len(r.Faults) > 0 {
			b, err := json.Marshal(r.Faults)
			if err != nil {
				return fmt.Errorf("%w: saving %s/%s: %w", ErrStore, r.Config, r.TaskID, err)
			}
			faults = string(b)
		}
		_, err = stmt.ExecContext(ctx, r.Config, r.TaskID, int64(r.Seed), r.Fingerprint, r.Model, r.Answer, r.Complete, r.Correct, r.Scored, r.EM, r.F1, r.HasF1,
			r.Failure, r.Error, r.ModelCalls, r.PromptTokens, r.CompletionTokens, r.ToolCalls, r.Estimated,
			r.CostUSD, r.LatencyMS, r.Steps, r.Trace, faults, r.CachedPromptTokens, r.CacheHits, r.CacheSavedUSD, string(r.Trajectory), r.Route)
		if err != nil {
			return fmt.Errorf("%w: saving %s/%s: %w", ErrStore, r.Config, r.TaskID, err)
		}
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	return nil
}

// All returns every record stored under one of seeds, ordered by config,
// task id, fingerprint, model spec and seed.
func (s *Store) All(ctx context.Context, seeds ...uint64) ([]Record, error) {
	in, args := seedsIn(seeds)
	rows, err := s.db.QueryContext(ctx, `SELECT config, task_id, seed, fingerprint, model, answer, complete, correct, scored, em, f1, has_f1,
		failure, error, model_calls, prompt_tokens, completion_tokens, tool_calls, estimated, cost_usd, latency_ms, steps, trace, faults,
		cached_prompt_tokens, cache_hits, cache_saved_usd, trajectory, route FROM records WHERE seed IN (`+in+`) ORDER BY config, task_id, fingerprint, model, seed`, args...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStore, err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		var seed64 int64
		var faults, traj string
		if err := rows.Scan(&r.Config, &r.TaskID, &seed64, &r.Fingerprint, &r.Model, &r.Answer, &r.Complete, &r.Correct, &r.Scored, &r.EM, &r.F1, &r.HasF1,
			&r.Failure, &r.Error, &r.ModelCalls, &r.PromptTokens, &r.CompletionTokens, &r.ToolCalls, &r.Estimated,
			&r.CostUSD, &r.LatencyMS, &r.Steps, &r.Trace, &faults, &r.CachedPromptTokens, &r.CacheHits, &r.CacheSavedUSD, &traj, &r.Route); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStore, err)
		}
		if traj != "" {
			r.Trajectory = json.RawMessage(traj)
		}
		r.Seed = uint64(seed64)
		if faults != "" {
			if err := json.Unmarshal([]byte(faults), &r.Faults); err != nil {
				return nil, fmt.Errorf("%w: reading the faults of %s/%s: %w", ErrStore, r.Config, r.TaskID, err)
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
