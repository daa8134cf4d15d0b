package sqltool

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/tools"
)

// object is a table or view of the schema.
type object struct {
	typ, name, sql string
}

// Schema describes the database: with an empty table, every table and view
// with its columns, one line each; with a table or view name, its columns,
// CREATE statement, indexes and triggers. An unknown name fails with
// ErrNoTable, listing the known ones.
func (d *DB) Schema(ctx context.Context, table string) (string, error) {
	table = strings.TrimSpace(table)
	qctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	st := statement{kind: "SELECT"}
	conn, err := d.db.Conn(qctx)
	if err != nil {
		return "", d.schemaError(ctx, qctx, st, err)
	}
	defer conn.Close()
	objs, err := objects(qctx, conn)
	if err != nil {
		return "", d.schemaError(ctx, qctx, st, err)
	}
	if table == "" || table == "*" || strings.EqualFold(table, "all") {
		return d.listing(ctx, qctx, conn, objs, st)
	}
	o, ok := find(objs, table)
	if !ok {
		names := make([]string, 0, len(objs))
		for _, o := range objs {
			names = append(names, o.name)
		}
		known := "the database has no tables or views"
		if len(names) > 0 {
			known = "the tables and views are " + clip(strings.Join(names, ", "), 2000)
		}
		return "", tools.BadInput(ErrNoTable, "%q is not a table or view of the database; %s", table, known)
	}
	out, err := d.detail(qctx, conn, o)
	if err != nil {
		return "", d.schemaError(ctx, qctx, st, err)
	}
	return capText(out, d.cfg.MaxOutputBytes), nil
}

// schemaError is queryError for sql_schema's own statements.
func (d *DB) schemaError(ctx, qctx context.Context, st statement, err error) error {
	err = d.queryError(ctx, qctx, st, err)
	return fmt.Errorf("%s: %w", SchemaName, err)
}

// objects lists the tables and views, tables first, SQLite's own left out.
func objects(ctx context.Context, conn *sql.Conn) ([]object, error) {
	rows, err := conn.QueryContext(ctx, `SELECT type, name, coalesce(sql, '') FROM sqlite_schema
		WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
		ORDER BY type = 'view', name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []object
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.typ, &o.name, &o.sql); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// find looks a table up by name: exactly, then ignoring case (as SQLite
// does), after dropping quotes and a "main." prefix.
func find(objs []object, name string) (object, bool) {
	name = strings.TrimPrefix(strings.TrimPrefix(name, "main."), "MAIN.")
	if len(name) >= 2 {
		switch q, e := name[0], name[len(name)-1]; {
		case q == '"' && e == '"', q == '`' && e == '`', q == '[' && e == ']', q == '\'' && e == '\'':
			name = name[1 : len(name)-1]
		}
	}
	for _, o := range objs {
		if o.name == name {
			return o, true
		}
	}
	for _, o := range objs {
		if strings.EqualFold(o.name, name) {
			return o, true
		}
	}
	return object{}, false
}

// column is one column of a table or view.
type column struct {
	name, typ string
	notNull   bool
	dflt      sql.NullString
	pk        int
	ref       string
}

// describe renders a column: name, type and constraints.
func (c column) describe(withDefault bool) string {
	parts := []string{c.name}
	if c.typ != "" {
		parts = append(parts, c.typ)
	}
	if c.pk > 0 {
		parts = append(parts, "PRIMARY KEY")
	}
	if c.notNull {
		parts = append(parts, "NOT NULL")
	}
	if withDefault && c.dflt.Valid {
		parts = append(parts, "DEFAULT "+c.dflt.String)
	}
	if c.ref != "" {
		parts = append(parts, "REFERENCES "+c.ref)
	}
	return strings.Join(parts, " ")
}

// columns lists the columns of a table or view, with the foreign keys of
// a table.
func columns(ctx context.Context, conn *sql.Conn, o object) ([]column, error) {
	rows, err := conn.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`, o.name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []column
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.name, &c.typ, &c.notNull, &c.dflt, &c.pk); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if o.typ != "table" {
		return cols, nil
	}
	fks, err := conn.QueryContext(ctx, `SELECT "from", "table", coalesce("to", '') FROM pragma_foreign_key_list(?)`, o.name)
	if err != nil {
		return nil, err
	}
	defer fks.Close()
	for fks.Next() {
		var from, table, to string
		if err := fks.Scan(&from, &table, &to); err != nil {
			return nil, err
		}
		ref := table
		if to != "" {
			ref += "(" + to + ")"
		}
		for i := range cols {
			if cols[i].name == from {
				cols[i].ref = ref
			}
		}
	}
	return cols, fks.Err()
}

// listing renders every table and view on one line each, within
// MaxOutputBytes. ctx is the call's context, qctx the one with the time
// limit.
func (d *DB) listing(ctx, qctx context.Context, conn *sql.Conn, objs []object, st statement) (string, error) {
	if len(objs) == 0 {
		return "The database has no tables or views.\n", nil
	}
	var b strings.Builder
	tables, views, shown := 0, 0, 0
	const footerRoom = 200
	for _, o := range objs {
		if o.typ == "table" {
			tables++
		} else {
			views++
		}
		cols, err := columns(qctx, conn, o)
		if err != nil {
			if qctx.Err() != nil {
				return "", d.schemaError(ctx, qctx, st, err)
			}
			cols = nil
		}
		descs := make([]string, len(cols))
		for i, c := range cols {
			descs[i] = c.describe(false)
		}
		line := fmt.Sprintf("%s %s: %s\n", o.typ, o.name, strings.Join(descs, ", "))
		if err != nil {
			line = fmt.Sprintf("%s %s: (columns unavailable: %s)\n", o.typ, o.name, sqliteMessage(err))
		}
		if b.Len()+len(line) > d.cfg.MaxOutputBytes-footerRoom {
			continue
		}
		b.WriteString(line)
		shown++
	}
	counts := plural(tables, "table", "tables")
	if views > 0 {
		counts += ", " + plural(views, "view", "views")
	}
	if shown < len(objs) {
		fmt.Fprintf(&b, "(%s; %d not shown as the output reached its cap: ask %s for one by name)\n", counts, len(objs)-shown, SchemaName)
	} else {
		fmt.Fprintf(&b, "(%s; %s with a table name shows its CREATE statement, indexes and triggers)\n", counts, SchemaName)
	}
	return b.String(), nil
}

// detail renders one table or view: columns, CREATE statement, indexes and
// triggers.
func (d *DB) detail(ctx context.Context, conn *sql.Conn, o object) (string, error) {
	cols, err := columns(ctx, conn, o)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s, %s:\n", o.typ, o.name, plural(len(cols), "column", "columns"))
	for _, c := range cols {
		b.WriteString("  " + c.describe(true) + "\n")
	}
	if o.sql != "" {
		b.WriteString(o.sql + "\n")
	}
	rows, err := conn.QueryContext(ctx, `SELECT type, name, coalesce(sql, '') FROM sqlite_schema
		WHERE type IN ('index', 'trigger') AND tbl_name = ? ORDER BY type, name`, o.name)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			return "", err
		}
		if text == "" {
			text = fmt.Sprintf("%s %s (made by SQLite for a UNIQUE or PRIMARY KEY constraint)", typ, name)
		}
		b.WriteString(text + "\n")
	}
	return b.String(), rows.Err()
}

// capText cuts s to limit bytes, saying so.
func capText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	return clip(s, max(limit-80, 0)) + "\n[output cut at the " + itoa(limit) + "-byte cap]\n"
}
