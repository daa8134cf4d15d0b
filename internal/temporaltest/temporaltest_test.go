package temporaltest_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/planner-engine/planner/internal/temporaltest"
	"go.temporal.io/sdk/client"
)

// TestStart starts a dev server, dials it, checks its health, and stops
// it.
func TestStart(t *testing.T) {
	s := temporaltest.Start(t)
	if s.Namespace != "default" || s.HostPort == "" {
		t.Fatalf("server = %+v", s)
	}
	c := s.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}
	s.Stop()
	if !s.Exited() {
		t.Fatalf("the server is still running after Stop")
	}
	s.Stop() // a second Stop does nothing
}

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
