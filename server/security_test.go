package server_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNonLoopbackNeedsAToken(t *testing.T) {
	t.Parallel()
	eng := sharedEngine
	dir := t.TempDir()
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "192.168.1.5:80", "[::]:8080", "example.com:80"} {
		_, err := server.New(server.Config{Engine: eng, Addr: addr, StorePath: filepath.Join(dir, "t.db")})
		assert.ErrorIs(t, err, server.ErrNoToken, addr)
	}
	for _, addr := range []string{"127.0.0.1:8080", "localhost:0", "[::1]:9000"} {
		s, err := server.New(server.Config{Engine: eng, Addr: addr, StorePath: filepath.Join(dir, "t.db")})
		require.NoError(t, err, addr)
		require.NoError(t, s.Close())
	}
	_, err := server.New(server.Config{Addr: "127.0.0.1:1"})
	assert.ErrorIs(t, err, server.ErrConfig)
	_, err = server.New(server.Config{Engine: eng, Addr: "nonsense"})
	assert.ErrorIs(t, err, server.ErrConfig)
}

func TestTokenIsRequiredOnEveryAPIRequest(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token-for-the-test"
	e := newEnv(t, func(c *server.Config) { c.Addr, c.Token = "0.0.0.0:8080", token })
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/pipelines"}, {"POST", "/api/pipelines/validate"}, {"GET", "/api/pipelines/react/graph"},
		{"POST", "/api/runs"}, {"GET", "/api/runs"}, {"GET", "/api/runs/x"}, {"GET", "/api/runs/x/events"}, {"POST", "/api/runs/x/cancel"},
		{"GET", "/api/threads"}, {"GET", "/api/threads/x"}, {"POST", "/api/threads/x/resume"}, {"POST", "/api/threads/x/fork"},
		{"GET", "/api/approvals"}, {"POST", "/api/approvals/x"}, {"POST", "/api/compares"}, {"GET", "/api/compares"},
		{"GET", "/api/compares/x"}, {"GET", "/api/compares/x/report"}, {"GET", "/api/nosuch"},
	} {
		for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", "Basic " + token, token} {
			r := e.do(c.method, c.path, nil, "Authorization", auth)
			assert.Equal(t, http.StatusUnauthorized, r.code, "%s %s with %q", c.method, c.path, auth)
			assert.Equal(t, "unauthorized", r.errCode(t))
		}
	}
	r := e.do("GET", "/api/pipelines", nil)
	assert.Equal(t, http.StatusOK, r.code, "the token opens the API")
	r = e.do("GET", "/api/pipelines", nil, "Authorization", "bearer "+token)
	assert.Equal(t, http.StatusOK, r.code, "the scheme is case-insensitive")
	r = e.do("GET", "/healthz", nil, "Authorization", "")
	assert.Equal(t, http.StatusOK, r.code, "health needs no token")
	assert.NotContains(t, string(e.do("GET", "/api/threads", nil).body), token)
}

func TestCrossOriginStateChangesAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := server.RunRequest{Config: "react", Question: spiders, LLM: "scripted:spiders.yaml"}
	for _, hdr := range [][]string{
		{"Origin", "https://evil.example"},
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Origin", "http://localhost:1"},
	} {
		r := e.do("POST", "/api/runs", body, hdr...)
		assert.Equal(t, http.StatusForbidden, r.code, "%v", hdr)
		assert.Equal(t, "forbidden", r.errCode(t))
		assert.Empty(t, r.header.Get("Access-Control-Allow-Origin"))
	}
	r := e.do("POST", "/api/approvals/x", map[string]any{"approve": true}, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, r.code)
	// Same origin, and programs that send neither header, may.
	r = e.do("POST", "/api/runs", body, "Origin", e.ts.URL, "Sec-Fetch-Site", "same-origin")
	assert.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var acc server.Accepted
	r.json(t, &acc)
	e.wait(acc.RunID)
	// Reading is allowed from anywhere the browser lets it (no CORS
	// headers, so a cross-origin page cannot read the answer).
	r = e.do("GET", "/api/threads", nil, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusOK, r.code)
	assert.Empty(t, r.header.Get("Access-Control-Allow-Origin"))
	r = e.do("OPTIONS", "/api/runs", nil, "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
	assert.Empty(t, r.header.Get("Access-Control-Allow-Origin"))
	assert.Empty(t, r.header.Get("Access-Control-Allow-Methods"))
}

// Without a token, only loopback Host names are answered: a page on
// another name that resolves to 127.0.0.1 (DNS rebinding) gets nothing.
func TestHostMustBeLoopbackWithoutAToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	req, err := http.NewRequest("GET", e.ts.URL+"/api/threads", nil)
	require.NoError(t, err)
	req.Host = "evil.example:8080"
	res, err := e.ts.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	for _, h := range []string{"localhost:8080", "127.0.0.1", "[::1]:1"} {
		req.Host = h
		res, err := e.ts.Client().Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, h)
	}
}

// A provider key in the environment never appears in any response, even
// when the model writes it into its thoughts and answer.
func TestKeysNeverReachResponses(t *testing.T) {
	const key = "zz-test-provider-key-0123456789abcdef"
	t.Setenv("PLANNERTEST_PROVIDER_API_KEY", key)
	eng, err := planner.New(full.Options()...) // its scrubber reads the environment now
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close() })
	e := newEnv(t, func(c *server.Config) { c.Engine = eng })
	script := strings.ReplaceAll(spidersScript, "Thought: 3 spiders have 24 legs.", "Thought: my key is "+key+".")
	script = strings.ReplaceAll(script, "Final Answer: 24", "Final Answer: 24 (key "+key+")")
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "leaky.yaml"), []byte(script), 0o644))
	acc := e.start(server.RunRequest{Config: "approval", Question: spiders + " " + key, LLM: "scripted:leaky.yaml", Thread: "leak"})
	v := e.wait(acc.RunID)
	require.Equal(t, "waiting", v.Status)
	var bodies []string
	for _, p := range []string{"/api/runs", "/api/runs/" + acc.RunID, "/api/runs/" + acc.RunID + "/events", "/api/threads", "/api/threads/leak", "/api/approvals"} {
		bodies = append(bodies, string(e.do("GET", p, nil).body))
	}
	r := e.do("POST", "/api/approvals/leak", map[string]any{"approve": true, "by": key})
	require.Equal(t, http.StatusAccepted, r.code)
	var dec server.Accepted
	r.json(t, &dec)
	v = e.wait(dec.RunID)
	assert.Contains(t, v.Answer, "24 (key [REDACTED")
	for _, p := range []string{"/api/runs/" + dec.RunID, "/api/runs/" + dec.RunID + "/events", "/api/threads/leak", "/api/runs"} {
		bodies = append(bodies, string(e.do("GET", p, nil).body))
	}
	bodies = append(bodies, string(e.do("POST", "/api/runs", map[string]any{"config": key}).body))
	for i, b := range bodies {
		assert.NotContains(t, b, key, "response %d", i)
	}
	assert.Contains(t, bodies[2], "[REDACTED:PLANNERTEST_PROVIDER_API_KEY]", "the events say where a secret was")
}

func TestRunLimitsAnswer429(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *server.Config) { c.MaxRuns, c.MaxQueued = 1, 1 })
	e.gate.Hold()
	a := e.start(server.RunRequest{Config: "react", Question: "Add them, steps:1", LLM: e.gated})
	b := e.start(server.RunRequest{Config: "react", Question: "Add them, steps:1", LLM: e.gated})
	r := e.do("POST", "/api/runs", server.RunRequest{Config: "react", Question: "Add them, steps:1", LLM: e.gated})
	assert.Equal(t, http.StatusTooManyRequests, r.code)
	assert.Equal(t, "busy", r.errCode(t))
	statuses := []any{e.do("GET", "/api/runs/"+a.RunID, nil).json2(t)["status"], e.do("GET", "/api/runs/"+b.RunID, nil).json2(t)["status"]}
	assert.ElementsMatch(t, []any{"running", server.StatusQueued}, statuses, "one runs, the other waits for its slot")
	for range 4 {
		e.gate.Release(1)
	}
	assert.Equal(t, "done", e.wait(a.RunID).Status)
	assert.Equal(t, "done", e.wait(b.RunID).Status)
}

// Close cancels the runs in flight; their threads stay resumable.
func TestCloseInterruptsRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gate.Hold()
	acc := e.start(server.RunRequest{Config: "react", Question: "Add them, steps:3", LLM: e.gated, Thread: "stopped"})
	require.NoError(t, e.srv.Close())
	th, err := e.srv.Store().Thread(context.Background(), "stopped")
	require.NoError(t, err)
	assert.Equal(t, "interrupted", string(th.Status))
	assert.Contains(t, string(e.do("GET", "/api/threads/stopped", nil).body), `"status":"interrupted"`)
	r := e.do("POST", "/api/runs", server.RunRequest{Config: "react", Question: "q", LLM: e.gated})
	assert.Equal(t, http.StatusServiceUnavailable, r.code)
	assert.Equal(t, "shutting_down", r.errCode(t))
	assert.Equal(t, http.StatusServiceUnavailable, e.do("GET", "/healthz", nil).code)
	assert.Equal(t, "interrupted", e.do("GET", "/api/runs/"+acc.RunID, nil).json2(t)["status"])
}

// Serve stops on its context: the runs are cancelled and saved as
// interrupted, their streams end with event: end, and Serve returns.
func TestServeShutsDownGracefully(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gate.Hold()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.srv.Serve(ctx, l, 5*time.Second) }()
	e.ts.URL = "http://" + l.Addr().String() // talk to Serve's listener
	acc := e.start(server.RunRequest{Config: "react", Question: "Add them, steps:3", LLM: e.gated, Thread: "served"})
	_, ch := e.stream(context.Background(), acc.RunID, "")
	ev, ok := next(t, ch)
	require.True(t, ok)
	assert.Equal(t, "run_start", ev.event)
	stop()
	for {
		ev, ok := next(t, ch)
		require.True(t, ok, "the stream ends with event: end")
		if ev.event == "end" {
			assert.Contains(t, ev.data, `"status":"interrupted"`)
			break
		}
	}
	select {
	case err := <-served:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	th, err := e.srv.Store().Thread(context.Background(), "served")
	require.NoError(t, err)
	assert.Equal(t, "interrupted", string(th.Status), "the thread resumes later")
}
