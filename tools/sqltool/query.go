package sqltool

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/planner-engine/planner/tools"
)

// Query runs one SQL statement and renders its result: a table of the rows
// it returns, or how many rows it changed. See the package documentation
// for what is allowed and the caps that apply.
func (d *DB) Query(ctx context.Context, input string) (string, error) {
	st, err := parseStatement(input)
	if err != nil {
		return "", err
	}
	qctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	conn, err := d.db.Conn(qctx)
	if err != nil {
		return "", d.queryError(ctx, qctx, st, err)
	}
	defer conn.Close()
	if err := limit(conn); err != nil {
		return "", d.queryError(ctx, qctx, st, err)
	}

	var before int64
	if d.cfg.Write {
		if err := conn.QueryRowContext(qctx, "SELECT total_changes()").Scan(&before); err != nil {
			return "", d.queryError(ctx, qctx, st, err)
		}
	}
	rows, err := conn.QueryContext(qctx, st.text)
	if err != nil {
		return "", d.queryError(ctx, qctx, st, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", d.queryError(ctx, qctx, st, err)
	}
	if len(cols) == 0 {
		for rows.Next() {
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return "", d.queryError(ctx, qctx, st, err)
		}
		if !d.cfg.Write {
			return "OK: the statement ran and returned no result.", nil
		}
		var after int64
		if err := conn.QueryRowContext(qctx, "SELECT total_changes()").Scan(&after); err != nil {
			return "", d.queryError(ctx, qctx, st, err)
		}
		return fmt.Sprintf("OK: %s changed.", plural(after-before, "row", "rows")), nil
	}

	res := result{cols: make([]string, len(cols))}
	for i, c := range cols {
		res.cols[i] = d.cell(c)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if len(res.rows) >= d.cfg.MaxRows {
			res.more++
			if res.more >= CountLimit {
				res.moreThan = true
				break
			}
			continue
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", d.queryError(ctx, qctx, st, err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = d.cell(formatValue(v))
		}
		res.rows = append(res.rows, row)
	}
	if err := rows.Err(); err != nil {
		if res.more == 0 || ctx.Err() != nil || qctx.Err() == nil {
			return "", d.queryError(ctx, qctx, st, err)
		}
		// The rows shown are complete; only counting the rest ran out of
		// time.
		res.moreThan = true
	}
	return res.render(d.cfg.MaxOutputBytes), nil
}

// limit sets the connection's SQLite limits: no value over MaxValueBytes
// and no attached database (the authorizer refuses ATTACH too).
func limit(conn *sql.Conn) error {
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, MaxValueBytes); err != nil {
		return err
	}
	_, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_ATTACHED, 0)
	return err
}

// result is the rows of a query, rendered by render.
type result struct {
	cols []string
	rows [][]string
	// more counts the rows past MaxRows; moreThan says counting stopped
	// before the last.
	more     int
	moreThan bool
}

// render lays the result out as a table, columns separated by " | " and
// padded to line up, with a header, a rule and a closing line that counts
// the rows and says what a cap left out. The text stays within limit
// bytes.
func (r result) render(limit int) string {
	widths := make([]int, len(r.cols))
	for i, c := range r.cols {
		widths[i] = utf8.RuneCountInString(c)
	}
	for _, row := range r.rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string) string {
		var b strings.Builder
		for i, c := range cells {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c)
			if i < len(cells)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
			}
		}
		return strings.TrimRight(b.String(), " ") + "\n"
	}
	var b strings.Builder
	b.WriteString(line(r.cols))
	rule := make([]string, len(widths))
	for i, w := range widths {
		rule[i] = strings.Repeat("-", max(w, 1))
	}
	b.WriteString(strings.Join(rule, "-+-") + "\n")

	// Keep room for the closing line.
	const footerRoom = 200
	shown := 0
	for _, row := range r.rows {
		l := line(row)
		if b.Len()+len(l) > limit-footerRoom {
			break
		}
		b.WriteString(l)
		shown++
	}
	if b.Len() > limit-footerRoom {
		// The header alone is too wide.
		s := clip(b.String(), max(limit-footerRoom, 0))
		b.Reset()
		b.WriteString(s + "\n")
	}
	notShown := len(r.rows) - shown + r.more
	switch {
	case notShown == 0:
		fmt.Fprintf(&b, "(%s)\n", plural(shown, "row", "rows"))
	default:
		more := itoa(notShown)
		if r.moreThan {
			more = "more than " + more
		}
		why := "narrow the query with WHERE or LIMIT, or aggregate"
		if shown < len(r.rows) {
			why = fmt.Sprintf("the output reached its %s-byte cap; select fewer columns or rows", itoa(limit))
		}
		fmt.Fprintf(&b, "(%s shown; %s more not shown: %s)\n", plural(shown, "row", "rows"), more, why)
	}
	return b.String()
}

// cell clips a rendered value to MaxCellBytes.
func (d *DB) cell(s string) string {
	s = strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
	return clip(s, d.cfg.MaxCellBytes)
}

// formatValue renders one value as text: NULL for NULL, numbers in full,
// text as is, a blob that is not text as hex.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return strings.ToValidUTF8(x, "\uFFFD")
	case []byte:
		if utf8.Valid(x) && !strings.ContainsRune(string(x), 0) {
			return string(x)
		}
		const show = 32
		if len(x) <= show {
			return "x'" + strings.ToUpper(hex.EncodeToString(x)) + "'"
		}
		return fmt.Sprintf("x'%s…' (%s blob)", strings.ToUpper(hex.EncodeToString(x[:show])), plural(len(x), "byte", "bytes"))
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// isWriteKind reports whether a statement's first keyword is that of one
// that may change a database.
func isWriteKind(kind string) bool {
	switch kind {
	case "INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT", "CREATE", "DROP", "ALTER", "REINDEX", "ANALYZE", "VACUUM", "WITH":
		return true
	}
	return false
}

// queryError turns a failure of st into an error for the model. ctx is the
// call's context, qctx the statement's (with the time limit).
func (d *DB) queryError(ctx, qctx context.Context, st statement, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", QueryName, context.Cause(ctx))
	}
	code := 0
	var se *sqlite.Error
	if errors.As(err, &se) {
		code = se.Code() & 0xff
	}
	if qctx.Err() != nil || code == sqlite3.SQLITE_INTERRUPT || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: the statement ran past the %s limit and was stopped (%w); make it cheaper: add WHERE or LIMIT, avoid unbounded recursion",
			ErrTimeout, d.cfg.Timeout, tools.ErrToolTimeout)
	}
	msg := sqliteMessage(err)
	switch {
	case code == sqlite3.SQLITE_READONLY:
		return tools.BadInput(ErrReadOnly, "%s", d.readOnlyHint(st))
	case code == sqlite3.SQLITE_AUTH || strings.Contains(msg, "not authorized"):
		switch st.kind {
		case "ATTACH", "DETACH":
			return tools.BadInput(ErrNotAllowed, "%s is not allowed: this tool works on its one database", st.kind)
		case "VACUUM":
			return tools.BadInput(ErrNotAllowed, "VACUUM is not allowed: it attaches another database file")
		case "PRAGMA":
			return tools.BadInput(ErrNotAllowed, "this PRAGMA changes a setting or is not known to be read-only; read-only pragmas such as PRAGMA table_info(name) are allowed")
		case "BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE":
			return tools.BadInput(ErrNotAllowed, "transaction statements are not allowed: each call runs on its own")
		}
		if !d.cfg.Write && isWriteKind(st.kind) {
			return tools.BadInput(ErrReadOnly, "%s", d.readOnlyHint(st))
		}
		return tools.BadInput(ErrNotAllowed, "SQLite's guard refused the statement (%s); ATTACH, DETACH, transactions, PRAGMAs that change settings and load_extension are never allowed", msg)
	case code == sqlite3.SQLITE_ERROR || code == sqlite3.SQLITE_CONSTRAINT || code == sqlite3.SQLITE_MISMATCH ||
		code == sqlite3.SQLITE_RANGE || code == sqlite3.SQLITE_TOOBIG:
		hint := ""
		if strings.Contains(msg, "no such table") || strings.Contains(msg, "no such column") {
			hint = "; " + SchemaName + " lists the tables and their columns"
		}
		return tools.BadInput(ErrSQL, "%s%s", msg, hint)
	case code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("%w: the database is locked by another writer (%s); try again later", ErrSQL, msg)
	}
	return fmt.Errorf("%w: %s", ErrSQL, msg)
}

// readOnlyHint explains a refused write.
func (d *DB) readOnlyHint(st statement) string {
	what := "this statement changes the database"
	if st.kind != "" {
		what = st.kind + " statements change the database"
	}
	return what + ", which is read-only here; only queries run (SELECT, WITH ... SELECT, EXPLAIN, read-only PRAGMAs)"
}

// sqliteMessage is an error's message without the " (N)" code modernc
// appends and SQLite's generic "SQL logic error: " prefix.
func sqliteMessage(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, " ("); i > 0 && strings.HasSuffix(msg, ")") {
		if _, convErr := strconv.Atoi(msg[i+2 : len(msg)-1]); convErr == nil {
			msg = msg[:i]
		}
	}
	return strings.TrimPrefix(msg, "SQL logic error: ")
}

// plural returns "1 thing" or "n things".
func plural[T int | int64](n T, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return itoa(n) + " " + many
}

// itoa formats n with thousands separators.
func itoa[T int | int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
