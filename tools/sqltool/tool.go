package sqltool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/planner-engine/planner/tools"
)

// queryTool is sql_query.
type queryTool struct{ db *DB }

// schemaTool is sql_schema.
type schemaTool struct{ db *DB }

var (
	_ tools.Tool         = (*queryTool)(nil)
	_ tools.Schemer      = (*queryTool)(nil)
	_ tools.MetaProvider = (*queryTool)(nil)
	_ tools.Tool         = (*schemaTool)(nil)
	_ tools.Schemer      = (*schemaTool)(nil)
	_ tools.MetaProvider = (*schemaTool)(nil)
)

// Name returns "sql_query".
func (t *queryTool) Name() string { return QueryName }

// Description tells the model what sql_query does.
func (t *queryTool) Description() string {
	access := "The database is read-only: SELECT, WITH ... SELECT, EXPLAIN and read-only PRAGMAs run; statements that change it are refused."
	if t.db.cfg.Write {
		access = "Statements may change the database (INSERT, UPDATE, DELETE, CREATE, ALTER, DROP); the result then says how many rows changed."
	}
	return fmt.Sprintf("Runs one SQL statement on the SQLite database %s and returns the result as a table: a header row, then one row per line, "+
		"columns separated by |, NULL for missing values. Input: the SQL statement, or JSON {\"query\": \"...\"}. %s "+
		"Shows at most %d rows; use WHERE, LIMIT or aggregates on big tables. %s lists the tables and columns.",
		t.db.name, access, t.db.cfg.MaxRows, SchemaName)
}

// Schema declares one required string argument, query.
func (t *queryTool) Schema() map[string]any {
	return tools.StringSchema("query", "One SQLite SQL statement, such as SELECT name, count(*) FROM orders GROUP BY name ORDER BY 2 DESC LIMIT 10.")
}

// Meta reports a read-only tool, or with Config.Write one that changes
// the database and by default needs approval.
func (t *queryTool) Meta() tools.Meta { return t.db.meta(t.db.cfg.Write) }

// Call runs the statement input holds: bare SQL or {"query": "..."}.
func (t *queryTool) Call(ctx context.Context, input string) (string, error) {
	q, err := argument(QueryName, input, "query", []string{"query", "sql", "statement", "input", "q"})
	if err != nil {
		return "", err
	}
	return t.db.Query(ctx, q)
}

// Name returns "sql_schema".
func (t *schemaTool) Name() string { return SchemaName }

// Description tells the model what sql_schema does.
func (t *schemaTool) Description() string {
	return fmt.Sprintf("Describes the SQLite database %s: with no input, every table and view with its columns and their types; "+
		"with a table name (or JSON {\"table\": \"...\"}), that table's columns, CREATE statement, indexes and triggers.", t.db.name)
}

// Schema declares one optional string argument, table.
func (t *schemaTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"table": map[string]any{"type": "string", "description": "A table or view to describe in full. Leave out to list them all."},
		},
	}
}

// Meta reports a read-only tool.
func (t *schemaTool) Meta() tools.Meta { return t.db.meta(false) }

// Call describes the schema, or the table input names.
func (t *schemaTool) Call(ctx context.Context, input string) (string, error) {
	table, err := argument(SchemaName, input, "table", []string{"table", "name", "table_name", "input", "view"})
	if err != nil {
		return "", err
	}
	return t.db.Schema(ctx, table)
}

// argument reads a tool's one argument: from a JSON object under any of
// keys (case-insensitive; a null or missing value is ""), or the plain
// text itself, without quotes around all of it.
func argument(tool, input, name string, keys []string) (string, error) {
	s := strings.TrimSpace(input)
	if !strings.HasPrefix(s, "{") {
		return tools.Unquote(s, "\"`"), nil
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&obj); err != nil || dec.More() {
		return "", tools.BadInput(ErrBadArgument, "%s: the input starts with '{' but is not one JSON object; send {%q: \"...\"} or the bare text", tool, name)
	}
	ks := make([]string, 0, len(obj))
	for k := range obj {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var val string
	found := false
	for _, k := range ks {
		known := false
		for _, want := range keys {
			if strings.EqualFold(strings.TrimSpace(k), want) {
				known = true
			}
		}
		if !known {
			return "", tools.BadInput(ErrBadArgument, "%s has no argument %q; its one argument is %q", tool, k, name)
		}
		raw := bytes.TrimSpace(obj[k])
		if bytes.Equal(raw, []byte("null")) {
			continue
		}
		if found {
			return "", tools.BadInput(ErrBadArgument, "%s: give %q once", tool, name)
		}
		if err := json.Unmarshal(raw, &val); err != nil {
			return "", tools.BadInput(ErrBadArgument, "%s: %q must be a string", tool, name)
		}
		found = true
	}
	return strings.TrimSpace(val), nil
}

// Close closes the database behind the tools: sql_query owns the DB that
// DB.Tools made, so a pipeline that closes its tools (io.Closer) closes the
// connection pool. It is safe to call more than once.
func (t *queryTool) Close() error { return t.db.Close() }
