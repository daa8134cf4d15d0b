// Package integrationlog records which integration suites ran: each test
// that uses an outside program (the npm MCP server, Chromium, the Temporal
// dev server) appends a line to the file named by $PLANNER_INTEGRATION_LOG,
// which `make test` reads back (scripts/integration-report.sh) to say which
// suites ran. Tests only import it.
package integrationlog

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// Env names the environment variable that, when set, names the log file.
const Env = "PLANNER_INTEGRATION_LOG"

// Note appends "suite, bin, the test's folder, its name" to the log when
// Env is set, and fails t when the line cannot be written.
func Note(t testing.TB, suite, bin string) {
	t.Helper()
	path := os.Getenv(Env)
	if path == "" {
		return
	}
	dir, _ := os.Getwd() // only a label in the report
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = fmt.Fprintf(f, "%s\t%s\t%s\t%s\n", suite, bin, dir, t.Name())
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Fatalf("%s=%s: %v", Env, path, err)
	}
}
