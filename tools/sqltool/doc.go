// Package sqltool gives agents SQL access to one SQLite database file: the
// tools sql_query, which runs one statement and shows its result as a
// compact table, and sql_schema, which lists the tables and views with
// their columns.
//
// The database is read-only unless Config.Write is set, and that is
// enforced by SQLite itself, not by reading the SQL: the file is opened
// with mode=ro and PRAGMA query_only, and every connection carries an
// authorizer (sqlite3_set_authorizer) that refuses, while a statement is
// compiled, any write, ATTACH and DETACH (VACUUM INTO among them),
// transaction statements, PRAGMAs that change a setting, and
// load_extension. With Config.Write, writes (INSERT, UPDATE, DELETE,
// CREATE, ALTER, DROP) are allowed and the rest stays refused. Each call
// also sets the connection's SQLite limits: no attached databases, and no
// string or blob over MaxValueBytes.
//
// A call runs one statement: text with a second statement after a ';' is
// refused before it reaches SQLite. Each call runs under Config.Timeout:
// the driver interrupts SQLite when the context ends, so a runaway query
// (an unbounded recursive CTE, say) stops at the limit. Results are capped
// at Config.MaxRows rows, cells at Config.MaxCellBytes and the whole
// output at Config.MaxOutputBytes, each cap saying what it left out.
//
// A DB is safe for concurrent use: calls share a database/sql pool.
package sqltool
