package server_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The server's runs record their tool calls in Config.Audit: the call
// that waited, and the one its approval ran, with who approved it.
func TestServerRunsAreAudited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, err := audit.Open(ctx, filepath.Join(t.TempDir(), "audit.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	e := newEnv(t, func(c *server.Config) { c.Audit = l })
	v := e.wait(e.start(server.RunRequest{Config: "approval", Question: spiders, LLM: "scripted:spiders.yaml", Thread: "ask"}).RunID)
	require.Equal(t, "waiting", v.Status, "%+v", v)
	r := e.do("POST", "/api/approvals/ask", map[string]any{"approve": true, "by": "alice"})
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var dec server.Accepted
	r.json(t, &dec)
	require.Equal(t, "done", e.wait(dec.RunID).Status)

	rs, err := l.Query(ctx, audit.Filter{Thread: "ask", Tool: "calculator"})
	require.NoError(t, err)
	require.Len(t, rs, 2, "%+v", rs)
	assert.Equal(t, audit.DecisionPending, rs[0].Decision)
	assert.Equal(t, v.ID, rs[0].Run)
	assert.Equal(t, audit.DecisionApproved, rs[1].Decision)
	assert.Equal(t, "alice", rs[1].DecidedBy)
	assert.Equal(t, dec.RunID, rs[1].Run)
	assert.Equal(t, audit.Digest("24"), rs[1].OutputSHA256)
}

// A server that opens its own store keeps its audit log beside it.
func TestServerOpensTheAuditLogBesideItsStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := server.New(server.Config{Engine: sharedEngine, Dir: dir, Root: dir, StorePath: filepath.Join(dir, "state", "threads.db")})
	require.NoError(t, err)
	require.NoError(t, srv.Close())
	_, err = os.Stat(filepath.Join(dir, "state", audit.FileName))
	require.NoError(t, err)
	l, err := audit.Open(context.Background(), filepath.Join(dir, "state", audit.FileName), audit.MustExist())
	require.NoError(t, err, "it is an audit log")
	require.NoError(t, l.Close())
}
