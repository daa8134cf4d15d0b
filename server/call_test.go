package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartFollowsARunsEventsToItsAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withLLM("scripted:spiders.yaml"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := e.srv.Start(ctx, server.RunRequest{Config: "react", Question: spiders, Thread: "go-api"})
	require.NoError(t, err)
	assert.Equal(t, "go-api", c.Thread())
	var (
		after int64
		kinds []string
	)
	for {
		evs, finished, err := c.Events(ctx, after)
		require.NoError(t, err)
		for _, ev := range evs {
			require.Greater(t, ev.Seq, after, "events come in seq order, each once")
			after = ev.Seq
			kinds = append(kinds, ev.Kind)
			var m map[string]any
			require.NoError(t, json.Unmarshal(ev.Data, &m), "%s", ev.Data)
			assert.Equal(t, ev.Kind, m["kind"])
		}
		if finished {
			break
		}
	}
	assert.Contains(t, kinds, "observation")
	assert.Equal(t, "run_end", kinds[len(kinds)-1])
	v, err := c.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, "done", v.Status)
	assert.Equal(t, "24", v.Answer)

	_, err = e.srv.Start(ctx, server.RunRequest{Config: "react", Question: spiders, Thread: "go-api"})
	assert.ErrorIs(t, err, server.ErrConflict, "the thread exists")
	_, err = e.srv.Start(ctx, server.RunRequest{Config: "reakt", Question: spiders})
	assert.ErrorIs(t, err, server.ErrNotFound)
	assert.Equal(t, []string{"approval", "broken", "direct", "react"}, e.srv.Pipelines(), "every config that parses; broken fails when a run loads it")
}

func TestDecideGoesOnWithTheWaitingThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withLLM("scripted:spiders.yaml"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := e.srv.Start(ctx, server.RunRequest{Config: "approval", Question: spiders})
	require.NoError(t, err)
	v, err := c.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, "waiting", v.Status)
	require.NotNil(t, v.Pending)
	assert.Equal(t, "calculator", v.Pending.Tool)

	c2, err := e.srv.Decide(ctx, c.Thread(), journal.Decision{Approved: true, By: "test"})
	require.NoError(t, err)
	v, err = c2.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, "done", v.Status)
	assert.Equal(t, "24", v.Answer)
	_, err = e.srv.Decide(ctx, c.Thread(), journal.Decision{Approved: true})
	assert.ErrorIs(t, err, server.ErrConflict, "nothing waits any more")
}

func TestWaitCancelsTheRunWhenTheCallerGoesAway(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.gate.Hold()
	c, err := e.srv.Start(ctx, server.RunRequest{Config: "react", Question: "Add them, steps:4", LLM: e.gated})
	require.NoError(t, err)
	wctx, wcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := c.Wait(wctx); done <- err }()
	require.Eventually(t, func() bool { return e.gate.Waiting() > 0 }, 20*time.Second, 5*time.Millisecond, "the run waits in its first model call")
	wcancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Eventually(t, func() bool { return c.View().Status == "interrupted" }, 20*time.Second, 10*time.Millisecond)
}

// A handler mounted with Handle sits behind the server's guard: the token,
// the Host check and the cross-origin check apply to it as to /api.
func TestHandleMountsBehindTheGuard(t *testing.T) {
	t.Parallel()
	mounted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("mounted")) })
	withToken := newEnv(t, func(c *server.Config) { c.Token = "s3cret" })
	withToken.srv.Handle("/mcp", mounted)
	r := withToken.do("POST", "/mcp", map[string]any{})
	assert.Equal(t, http.StatusOK, r.code, "%s", r.body)
	assert.Equal(t, "mounted", string(r.body))
	req := httptest.NewRequest("POST", "/mcp", nil)
	rec := httptest.NewRecorder()
	withToken.srv.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "no token")
	assert.NotContains(t, rec.Body.String(), "mounted")

	open := newEnv(t)
	open.srv.Handle("/mcp", mounted)
	r = open.do("POST", "/mcp", map[string]any{}, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, r.code, "cross-site")
	assert.NotContains(t, string(r.body), "mounted")
	req = httptest.NewRequest("POST", "/mcp", nil)
	req.Host = "evil.example:8080" // DNS rebinding
	rec = httptest.NewRecorder()
	open.srv.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusForbidden, rec.Code, "a non-loopback Host")
	r = open.do("POST", "/mcp", map[string]any{})
	assert.Equal(t, http.StatusOK, r.code)
}

func TestAFollowUpTurnSeesTheFirstAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withLLM("scripted:turns.yaml"))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "turns.yaml"), []byte(`strict: false
replies:
  - {node: direct, regex: '(?s)Assistant: Paris\n.*How many people live there', text: "About 2.1 million"}
  - {node: direct, contains: "capital of France", text: "Paris"}
`), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := e.srv.Start(ctx, server.RunRequest{Config: "direct", Question: "What is the capital of France?", Thread: "conv"})
	require.NoError(t, err)
	v, err := c.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, "Paris", v.Answer)

	r := e.do("POST", "/api/threads/conv/turns", map[string]any{"question": "How many people live there?"})
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var acc server.Accepted
	r.json(t, &acc)
	assert.Equal(t, "conv.turn2", acc.Thread)
	v = e.wait(acc.RunID)
	assert.Equal(t, "done", v.Status)
	assert.Equal(t, "About 2.1 million", v.Answer)
	assert.Equal(t, "turn", v.Kind)

	r = e.do("POST", "/api/threads/conv/turns", map[string]any{"question": ""})
	assert.Equal(t, http.StatusBadRequest, r.code)
	r = e.do("POST", "/api/threads/nosuch/turns", map[string]any{"question": "Why?"})
	assert.Equal(t, http.StatusNotFound, r.code)
}

func TestARunStartsWithTheCallersVars(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withLLM("scripted:vars.yaml"))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "vars.yaml"), []byte("strict: false\nreplies:\n  - {node: direct, contains: \"capital of France\", text: Paris}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "configs", "capital.yaml"), []byte(`name: capital
inputs: [country]
nodes:
  - {id: answer, type: direct, prompt: "{{.Question}} What is the capital of {{.Vars.country}}?"}
edges:
  - {from: START, to: answer}
  - {from: answer, to: END}
`), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := e.srv.Start(ctx, server.RunRequest{Config: "capital", Question: "Answer briefly.", Vars: map[string]string{"country": "France"}})
	require.NoError(t, err)
	v, err := c.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, "Paris", v.Answer)

	_, err = e.srv.Start(ctx, server.RunRequest{Config: "capital", Question: "Answer briefly.", Vars: map[string]string{"1bad": "x"}})
	require.ErrorIs(t, err, server.ErrBadRequest)
	assert.Contains(t, err.Error(), "1bad")
}
