//go:build integration

package temporaltest_test

import (
	"context"
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
