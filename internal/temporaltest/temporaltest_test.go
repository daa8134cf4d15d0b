package temporaltest_test

import (
	"os"
	"testing"

	"github.com/planner-engine/planner/internal/temporaltest"
)

// TestBinFollowsTheVariable checks that PLANNER_TEMPORAL_BIN names the
// binary, and that a missing one counts as none.
func TestBinFollowsTheVariable(t *testing.T) {
	t.Setenv(temporaltest.BinEnv, "/nonexistent/temporal")
	if b, ok := temporaltest.Bin(); ok || b != "/nonexistent/temporal" {
		t.Fatalf("Bin() = %q, %v; want the missing path and false", b, ok)
	}
	self := t.TempDir() + "/temporal"
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv(temporaltest.BinEnv, self)
	if b, ok := temporaltest.Bin(); !ok || b != self {
		t.Fatalf("Bin() = %q, %v; want %q and true", b, ok, self)
	}
}
