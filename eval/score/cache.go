package score

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // pure-Go SQLite driver
)

// cache keeps judge verdicts in the SQLite table judge_verdicts, keyed by
// cacheKey. It is safe for concurrent use; several caches (processes or
// judges) may share one file.
type cache struct {
	db   *sql.DB
	path string
}

// cacheSchema creates the verdict table. The usage columns hold what the
// verdict cost when it was made.
const cacheSchema = `CREATE TABLE IF NOT EXISTS judge_verdicts (
	key               TEXT PRIMARY KEY,
	model             TEXT NOT NULL,
	score             REAL NOT NULL,
	pass              INTEGER NOT NULL,
	reason            TEXT NOT NULL,
	calls             INTEGER NOT NULL,
	prompt_tokens     INTEGER NOT NULL,
	completion_tokens INTEGER NOT NULL,
	cost_usd          REAL NOT NULL,
	created_at        TEXT NOT NULL
)`

// openCache opens (creating if needed) the cache file at path.
func openCache(ctx context.Context, path string) (*cache, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrJudgeCache, path, err)
		}
	}
	// WAL lets readers and a writer, in this process or another, share
	// the file; busy_timeout makes a writer wait for another's commit.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrJudgeCache, path, err)
	}
	db.SetMaxOpenConns(1)
	// Two openers creating the table at once can meet in SQLite's lock
	// upgrade, which answers "database is locked" without waiting.
	for attempt := 1; ; attempt++ {
		_, err = db.ExecContext(ctx, cacheSchema)
		if err == nil || !isBusy(err) || attempt == 20 {
			break
		}
		select {
		case <-ctx.Done():
			err = errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(attempt) * 10 * time.Millisecond):
			continue
		}
		break
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%w %s: creating the verdict table: %w (is it a SQLite file?)", ErrJudgeCache, path, err)
	}
	return &cache{db: db, path: path}, nil
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (primary code 5).
func isBusy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

// Close closes the file.
func (c *cache) Close() error { return c.db.Close() }

// get returns the verdict stored under key, marked Cached.
func (c *cache) get(ctx context.Context, key string) (Verdict, bool, error) {
	var v Verdict
	err := c.db.QueryRowContext(ctx, `SELECT score, pass, reason, calls, prompt_tokens, completion_tokens, cost_usd
		FROM judge_verdicts WHERE key = ?`, key).Scan(&v.Score, &v.Pass, &v.Reason,
		&v.Usage.Calls, &v.Usage.PromptTokens, &v.Usage.CompletionTokens, &v.Usage.CostUSD)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Verdict{}, false, nil
	case err != nil:
		return Verdict{}, false, fmt.Errorf("%w %s: reading: %w", ErrJudgeCache, c.path, err)
	}
	v.Cached = true
	return v, true, nil
}

// put stores v under key; a verdict already stored under it is kept.
func (c *cache) put(ctx context.Context, key, model string, v Verdict) error {
	_, err := c.db.ExecContext(ctx, `INSERT OR IGNORE INTO judge_verdicts
		(key, model, score, pass, reason, calls, prompt_tokens, completion_tokens, cost_usd, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		key, model, v.Score, v.Pass, v.Reason, v.Usage.Calls, v.Usage.PromptTokens, v.Usage.CompletionTokens,
		v.Usage.CostUSD, time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		return fmt.Errorf("%w %s: writing: %w", ErrJudgeCache, c.path, err)
	}
	return nil
}
