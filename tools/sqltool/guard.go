package sqltool

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"

	"modernc.org/sqlite"
)

// guardConnector opens the driver's connections and installs the
// authorizer on each before database/sql uses it.
type guardConnector struct {
	driver.Connector
	auth sqlite.AuthorizerFn
}

// Connect opens a connection with the authorizer installed.
func (g guardConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := g.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	r, ok := c.(sqlite.AuthorizerRegisterer)
	if !ok {
		_ = c.Close()
		return nil, errors.New("the SQLite driver offers no authorizer")
	}
	if err := r.RegisterAuthorizer(g.auth); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// authorizer returns the policy SQLite applies to every statement it
// compiles: reads always; writes only when write is set; never ATTACH or
// DETACH (VACUUM INTO attaches too), transaction control, PRAGMAs that
// change a setting, or load_extension. Actions it does not know are
// refused.
func authorizer(write bool) sqlite.AuthorizerFn {
	return func(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
		switch action {
		case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthRecursive:
			return sqlite.AuthorizerOK
		case sqlite.AuthFunction:
			if strings.EqualFold(arg2, "load_extension") {
				return sqlite.AuthorizerDeny
			}
			return sqlite.AuthorizerOK
		case sqlite.AuthPragma:
			if readOnlyPragma(arg1, arg2) {
				return sqlite.AuthorizerOK
			}
			return sqlite.AuthorizerDeny
		case sqlite.AuthInsert, sqlite.AuthUpdate, sqlite.AuthDelete,
			sqlite.AuthCreateTable, sqlite.AuthCreateIndex, sqlite.AuthCreateView, sqlite.AuthCreateTrigger,
			sqlite.AuthCreateTempTable, sqlite.AuthCreateTempIndex, sqlite.AuthCreateTempView, sqlite.AuthCreateTempTrigger,
			sqlite.AuthDropTable, sqlite.AuthDropIndex, sqlite.AuthDropView, sqlite.AuthDropTrigger,
			sqlite.AuthDropTempTable, sqlite.AuthDropTempIndex, sqlite.AuthDropTempView, sqlite.AuthDropTempTrigger,
			sqlite.AuthAlterTable, sqlite.AuthReindex, sqlite.AuthAnalyze,
			sqlite.AuthCreateVTable, sqlite.AuthDropVTable:
			if write {
				return sqlite.AuthorizerOK
			}
			return sqlite.AuthorizerDeny
		}
		// AuthAttach, AuthDetach, AuthTransaction, AuthSavepoint and any
		// action added later.
		return sqlite.AuthorizerDeny
	}
}

// readOnlyPragma reports whether PRAGMA name with argument arg only reads.
// The argument of the pragmas that take an object name (table_info(t))
// is not a setting; the other pragmas listed are allowed only without an
// argument. SQLite hands the authorizer a NULL as "", so a pragma set to
// an empty string looks like one without an argument here: the pragmas
// allowed without an argument are only those an empty value cannot change
// (an empty user_version would set 0 and an empty journal_mode would pick
// DELETE, so neither is among them). parseStatement refuses PRAGMA x = ...
// before SQLite sees it as well.
func readOnlyPragma(name, arg string) bool {
	switch strings.ToLower(name) {
	case "table_info", "table_xinfo", "table_list", "index_info", "index_xinfo", "index_list",
		"foreign_key_list", "foreign_key_check", "integrity_check", "quick_check":
		return true
	case "collation_list", "compile_options", "data_version", "database_list",
		"freelist_count", "function_list", "module_list", "page_count", "pragma_list":
		return arg == ""
	}
	return false
}

// argumentPragma reports whether a pragma's argument names an object
// rather than setting a value.
func argumentPragma(name string) bool {
	return readOnlyPragma(name, "x")
}
