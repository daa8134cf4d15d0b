package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// approvals lists the waiting calls.
func (e *env) approvals() []server.ApprovalView {
	e.t.Helper()
	r := e.do("GET", "/api/approvals", nil)
	require.Equal(e.t, http.StatusOK, r.code)
	var out struct {
		Approvals []server.ApprovalView `json:"approvals"`
	}
	r.json(e.t, &out)
	return out.Approvals
}

// A run whose tool needs approval waits; the approval resumes it in a new
// run whose events stream live, and the strict script goes on where it
// stopped (the server keeps the waiting thread's pipeline).
func TestApprovalFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	assert.Empty(t, e.approvals())
	acc := e.start(server.RunRequest{Config: "approval", Question: spiders, LLM: "scripted:spiders.yaml", Thread: "ask"})
	v := e.wait(acc.RunID)
	require.Equal(t, "waiting", v.Status, "%+v", v)
	require.NotNil(t, v.Pending)
	assert.Equal(t, "calculator", v.Pending.Tool)
	assert.Equal(t, "3*8", v.Pending.Input)
	assert.Empty(t, v.Error)

	ap := e.approvals()
	require.Len(t, ap, 1)
	assert.Equal(t, server.ApprovalView{Thread: "ask", Pipeline: ap[0].Pipeline, Question: spiders, Node: "act", Tool: "calculator", Input: "3*8", Since: ap[0].Since}, ap[0])
	r := e.do("GET", "/api/threads/ask", nil)
	assert.Contains(t, string(r.body), `"status":"waiting","pending":{"node":"act","tool":"calculator","input":"3*8"}`)

	for _, c := range []struct {
		body any
		code int
	}{
		{map[string]any{}, http.StatusBadRequest},
		{map[string]any{"approve": "yes"}, http.StatusBadRequest},
		{map[string]any{"approve": true, "why": "x"}, http.StatusBadRequest},
		{map[string]any{"approve": false, "reason": strings.Repeat("x", 5000)}, http.StatusBadRequest},
	} {
		r := e.do("POST", "/api/approvals/ask", c.body)
		assert.Equal(t, c.code, r.code, "%v: %s", c.body, r.body)
		r.errCode(t)
	}
	assert.Equal(t, http.StatusNotFound, e.do("POST", "/api/approvals/nosuch", map[string]any{"approve": true}).code)

	r = e.do("POST", "/api/approvals/ask", map[string]any{"approve": true, "by": "alice"})
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var dec server.Accepted
	r.json(t, &dec)
	assert.Equal(t, "ask", dec.Thread)
	_, ch := e.stream(context.Background(), dec.RunID, "")
	var kinds []string
	var end server.RunView
	for {
		ev, ok := next(t, ch)
		require.True(t, ok)
		if ev.event == "end" {
			require.NoError(t, json.Unmarshal([]byte(ev.data), &end))
			break
		}
		kinds = append(kinds, ev.event)
	}
	assert.Contains(t, kinds, "observation")
	assert.Equal(t, "done", end.Status)
	assert.Equal(t, "24", end.Answer)
	assert.True(t, end.Complete)
	assert.Equal(t, server.KindApprove, end.Kind)
	assert.Empty(t, e.approvals())

	r = e.do("GET", "/api/threads/ask", nil)
	assert.Contains(t, string(r.body), `"summary":"calculator approved by alice"`)
	r = e.do("POST", "/api/approvals/ask", map[string]any{"approve": true})
	assert.Equal(t, http.StatusConflict, r.code)
	assert.Contains(t, string(r.body), `thread \"ask\" is done, not waiting for an approval`)
}

// A denial is journaled with its reason, which the model is shown.
func TestDenyTellsTheModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.wait(e.start(server.RunRequest{Config: "approval", Question: "Add them, steps:1", LLM: e.gated, Thread: "deny"}).RunID)
	require.Equal(t, "waiting", v.Status)
	r := e.do("POST", "/api/approvals/deny", map[string]any{"approve": false, "reason": "do it in your head"})
	require.Equal(t, http.StatusAccepted, r.code, "%s", r.body)
	var acc server.Accepted
	r.json(t, &acc)
	e.wait(acc.RunID)
	r = e.do("GET", "/api/runs/"+acc.RunID+"/events", nil)
	assert.Contains(t, string(r.body), "a human denied this call of calculator (api): do it in your head")
	r = e.do("GET", "/api/threads/deny", nil)
	assert.Contains(t, string(r.body), `"summary":"calculator denied by api: do it in your head"`)
}
