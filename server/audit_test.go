package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/server"
	"github.com/planner-engine/planner/state"
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

// A thread started with its own audit log (`planner run --audit FILE`)
// keeps recording there when the server runs it.
func TestServerRecordsInTheThreadsOwnAuditLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	serverLog, err := audit.Open(ctx, filepath.Join(t.TempDir(), "server-audit.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = serverLog.Close() })
	e := newEnv(t, func(c *server.Config) { c.Audit = serverLog })
	own := filepath.Join(t.TempDir(), "calls.db")
	meta, err := json.Marshal(planner.ThreadMeta{Config: filepath.Join(e.dir, "configs", "approval.yaml"), LLM: "scripted:" + e.script, Question: spiders, Audit: own})
	require.NoError(t, err)
	store, err := sqlitestore.Open(ctx, filepath.Join(e.dir, "threads.db"))
	require.NoError(t, err)
	task, err := json.Marshal(state.Task{Question: spiders})
	require.NoError(t, err)
	require.NoError(t, store.Create(ctx, journal.Thread{Name: "cli", Pipeline: "approval", Task: task, Status: journal.StatusInterrupted, Meta: meta}))
	require.NoError(t, store.Close())

	r := e.do("POST", "/api/threads/cli/resume", nil)
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var acc server.Accepted
	r.json(t, &acc)
	v := e.wait(acc.RunID)
	require.Equal(t, "waiting", v.Status, "%+v", v)

	l, err := audit.Open(ctx, own, audit.MustExist())
	require.NoError(t, err)
	defer l.Close()
	rs, err := l.Query(ctx, audit.Filter{Thread: "cli", Tool: "calculator"})
	require.NoError(t, err)
	require.Len(t, rs, 1, "%+v", rs)
	assert.Equal(t, audit.DecisionPending, rs[0].Decision)
	in, err := serverLog.Query(ctx, audit.Filter{Thread: "cli"})
	require.NoError(t, err)
	assert.Empty(t, in, "nothing of the thread in the server's log")
}

// hideScrubber scrubs one text that the default scrubber keeps.
type hideScrubber struct{ secret string }

func (h hideScrubber) String(s string) string { return strings.ReplaceAll(s, h.secret, "[HIDDEN]") }

// A thread's own audit log is scrubbed with the engine's scrubber, as the
// server's own log is: what the engine hides is not written there either.
func TestThreadsOwnAuditLogIsScrubbed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eng, err := planner.New(append(full.Options(), planner.WithScrubber(hideScrubber{secret: "3*8"}))...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close() })
	e := newEnv(t, func(c *server.Config) { c.Engine = eng })
	own := filepath.Join(t.TempDir(), "calls.db")
	meta, err := json.Marshal(planner.ThreadMeta{Config: filepath.Join(e.dir, "configs", "approval.yaml"), LLM: "scripted:" + e.script, Question: spiders, Audit: own})
	require.NoError(t, err)
	store, err := sqlitestore.Open(ctx, filepath.Join(e.dir, "threads.db"))
	require.NoError(t, err)
	task, err := json.Marshal(state.Task{Question: spiders})
	require.NoError(t, err)
	require.NoError(t, store.Create(ctx, journal.Thread{Name: "cli", Pipeline: "approval", Task: task, Status: journal.StatusInterrupted, Meta: meta}))
	require.NoError(t, store.Close())

	r := e.do("POST", "/api/threads/cli/resume", nil)
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var acc server.Accepted
	r.json(t, &acc)
	require.Equal(t, "waiting", e.wait(acc.RunID).Status)

	l, err := audit.Open(ctx, own, audit.MustExist())
	require.NoError(t, err)
	defer l.Close()
	rs, err := l.Query(ctx, audit.Filter{Thread: "cli", Tool: "calculator"})
	require.NoError(t, err)
	require.Len(t, rs, 1, "%+v", rs)
	assert.Equal(t, "[HIDDEN]", rs[0].Input, "the input passed through the engine's scrubber")
}
