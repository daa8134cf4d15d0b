// Package mcpserver serves planner's pipelines as the tools of a Model
// Context Protocol server: one tool per pipeline of a server.Server's
// configs folder, whose call runs the pipeline on a question through the
// server's Go API (its slots, thread store, audit log and scrubber).
//
// A call forwards the run's events as progress notifications when the
// client asks for progress, cancels the run when the client cancels, and
// asks the client to approve a tool call the run waits for (elicitation)
// when the client can answer; otherwise it returns the waiting thread and
// how to decide it.
package mcpserver

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/server"
)

// DefaultName is the implementation name the MCP server reports.
const DefaultName = "planner"

// DefaultVersion is the implementation version the MCP server reports
// unless WithVersion says otherwise.
const DefaultVersion = "dev"

// ErrCancelled is returned (wrapped) by a tool call whose client went
// away or cancelled it: the run was cancelled and its thread saved as
// interrupted.
var ErrCancelled = errors.New("mcpserver: the call was cancelled; its run was stopped")

// ErrUnknownState is returned (as an error result) for a retried call
// whose request state names no approval this server asked about.
var ErrUnknownState = errors.New("mcpserver: unknown request state")

// ErrNoAnswer is returned (as an error result) for a retried call without
// an answer to the approval.
var ErrNoAnswer = errors.New("mcpserver: no answer to the approval")

// Option configures New and Handler.
type Option func(*options)

type options struct {
	name, version string
	logger        *slog.Logger
}

// WithVersion sets the version the server reports to clients.
func WithVersion(v string) Option { return func(o *options) { o.version = v } }

// WithLogger logs the MCP server's activity (default: none). The logger
// must not write to the stdout of a stdio server.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// Input is a pipeline tool's arguments.
type Input struct {
	// Question is the task the pipeline runs on.
	Question string `json:"question" jsonschema:"the question or task the pipeline answers"`
	// Thread names the thread the run journals into; when it exists, the
	// question is a follow-up on its conversation (server.FollowUp).
	Thread string `json:"thread,omitempty" jsonschema:"optional thread name: a new thread to journal the run into, or an existing one to ask a follow-up on (it sees the earlier answers); default a new thread"`
	// Vars are the run's vars when it starts ({{.Vars.NAME}} in the
	// pipeline's templates).
	Vars map[string]string `json:"vars,omitempty" jsonschema:"optional inputs: the run's vars when it starts, read by the pipeline's templates as {{.Vars.NAME}}"`
}

// Usage is what a run spent.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	ModelCalls       int `json:"model_calls"`
	ToolCalls        int `json:"tool_calls"`
}

// Output is a pipeline tool's structured result.
type Output struct {
	// Answer is the run's answer (empty while it waits or when it failed).
	Answer string `json:"answer"`
	// Complete says whether the pipeline finished its task.
	Complete bool `json:"complete"`
	// Reason says why the run stopped, when it did not complete.
	Reason string `json:"reason,omitempty"`
	// Status is the thread's status: done, waiting, failed or interrupted.
	Status string `json:"status"`
	// Thread is the thread the run journals into.
	Thread string `json:"thread"`
	// RunID identifies the (last) run of the call.
	RunID string `json:"run_id"`
	// Usage is what the (last) run spent.
	Usage Usage `json:"usage"`
}

// toolName is what MCP allows as a tool name.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// New returns an MCP server with one tool per pipeline of srv's configs
// folder that loads, as the folder lists them when New is called. A
// pipeline whose name is no valid MCP tool name is left out (and logged).
func New(srv *server.Server, opts ...Option) *mcp.Server {
	o := options{name: DefaultName, version: DefaultVersion}
	for _, f := range opts {
		f(&o)
	}
	logger := o.logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := mcp.NewServer(&mcp.Implementation{Name: o.name, Version: o.version}, &mcp.ServerOptions{
		Logger:       o.logger,
		Instructions: "Each tool runs one planner pipeline on a question and returns its answer.",
	})
	pending := &pendingApprovals{}
	for _, name := range srv.Pipelines() {
		if !toolName.MatchString(name) {
			logger.Warn("mcpserver: pipeline left out: its name is no valid MCP tool name (letters, digits, _ . - only)", "pipeline", name)
			continue
		}
		t := &tool{srv: srv, pipeline: name, pending: pending}
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: description(srv, name)}, t.call)
	}
	return s
}

// Handler serves New(srv, opts...) over the streamable HTTP transport, to
// mount behind srv's guard: srv.Handle("/mcp", Handler(srv)).
func Handler(srv *server.Server, opts ...Option) http.Handler {
	s := New(srv, opts...)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// description is the tool's description: the pipeline's, and its
// paradigm.
func description(srv *server.Server, name string) string {
	in, err := srv.PipelineInfo(name)
	if err != nil {
		return "Runs the planner pipeline " + name + " on a question."
	}
	d := strings.TrimSpace(in.Description)
	if d == "" {
		d = "Runs the planner pipeline " + name + " on a question."
	}
	if in.Paradigm != "" {
		d += " (paradigm: " + in.Paradigm + ")"
	}
	return srv.Scrubber().String(d)
}

// tool is one pipeline's tool.
type tool struct {
	srv      *server.Server
	pipeline string
	pending  *pendingApprovals // shared by the server's tools
}

// call runs the pipeline on the question. When the run waits for an
// approval and the client can elicit, it returns an input request (a
// multi round-trip result, SEP-2322; the SDK turns it into an
// elicitation/create request for clients on older protocol versions);
// the client's retry, carrying the answer and the request state, decides
// the thread and follows the run that goes on.
func (t *tool) call(ctx context.Context, req *mcp.CallToolRequest, in Input) (*mcp.CallToolResult, Output, error) {
	p := &progress{ss: req.Session, token: req.Params.GetProgressToken(), scrub: t.srv.Scrubber().String}
	var c *server.Call
	if st := req.Params.RequestState; st != "" {
		pa, ok := t.pending.take(st)
		if !ok {
			return t.failure(Output{Status: "failed"}, fmt.Errorf("%w: the approval it answers was decided already or the server restarted; decide the thread with planner resume NAME --approve (or --deny REASON)", ErrUnknownState))
		}
		p.sent = pa.sent
		d, err := decision(req.Params.InputResponses[approvalKey], clientName(req.Session))
		if err != nil {
			return t.failure(Output{Status: "waiting", Thread: pa.thread}, fmt.Errorf("%w (decide thread %s with planner resume %s --approve or --deny REASON)", err, pa.thread, pa.thread))
		}
		if c, err = t.srv.Decide(ctx, pa.thread, d); err != nil {
			return t.failure(Output{Status: "waiting", Thread: pa.thread}, fmt.Errorf("decide thread %s: %w", pa.thread, err))
		}
	} else {
		if strings.TrimSpace(in.Question) == "" {
			return t.failure(Output{Status: "failed"}, errors.New("question is empty: pass the task as the question argument"))
		}
		var err error
		c, err = t.srv.Start(ctx, server.RunRequest{Config: t.pipeline, Question: in.Question, Thread: in.Thread, Vars: in.Vars})
		if errors.Is(err, server.ErrConflict) && in.Thread != "" {
			// The thread exists: the question follows up on its conversation.
			c, err = t.srv.FollowUp(ctx, in.Thread, in.Question)
		}
		if err != nil {
			return t.failure(Output{Status: "failed", Thread: in.Thread}, fmt.Errorf("start %s: %w", t.pipeline, err))
		}
	}
	v, err := p.follow(ctx, c)
	if err != nil {
		return nil, Output{}, fmt.Errorf("%w (thread %s): %w", ErrCancelled, c.Thread(), err)
	}
	out := outputOf(v)
	switch {
	case v.Status == "failed":
		return t.failure(out, errors.New(cmp.Or(v.Error, v.Reason, "the run failed")))
	case v.Status != string(journal.StatusWaiting):
		return t.result(v.Answer), out, nil
	case !canElicit(req.Session) || v.Pending == nil:
		return t.result(waitingText(v)), out, nil
	}
	state := t.pending.put(pendingApproval{thread: v.Thread, sent: p.sent})
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalKey: &mcp.ElicitParams{Mode: "form", Message: t.srv.Scrubber().String(t.question(v)), RequestedSchema: approvalSchema}},
		RequestState:  state,
	}, Output{}, nil
}

// approvalKey names the input request of an approval.
const approvalKey = "approval"

// question is what an elicitation asks.
func (t *tool) question(v server.RunView) string {
	msg := fmt.Sprintf("Pipeline %s (thread %s) wants to call the tool %s", t.pipeline, v.Thread, v.Pending.Tool)
	if v.Pending.Node != "" {
		msg += " (node " + v.Pending.Node + ")"
	}
	return msg + " with input: " + v.Pending.Input + ". Approve it?"
}

// clientName says who decides: the client's name.
func clientName(ss *mcp.ServerSession) string {
	by := "mcp client"
	if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil && ip.ClientInfo.Name != "" {
		by += " " + ip.ClientInfo.Name
	}
	return by
}

// decision reads the client's answer to an approval.
func decision(r mcp.InputResponse, by string) (journal.Decision, error) {
	res, ok := r.(*mcp.ElicitResult)
	if !ok || res == nil {
		return journal.Decision{}, fmt.Errorf("%w: the retried call carries no answer to the input request %q", ErrNoAnswer, approvalKey)
	}
	if res.Action != "accept" {
		return journal.Decision{Approved: false, Reason: "the MCP client's user did not approve (" + res.Action + ")", By: by}, nil
	}
	approve, _ := res.Content["approve"].(bool)
	reason, _ := res.Content["reason"].(string)
	if !approve && reason == "" {
		reason = "denied by the MCP client's user"
	}
	return journal.Decision{Approved: approve, Reason: reason, By: by}, nil
}

// pendingApproval is an approval asked of a client, until its retry.
type pendingApproval struct {
	thread string
	sent   float64 // progress sent so far
}

// maxPending bounds the approvals kept for their retries; the oldest
// goes first.
const maxPending = 1024

// pendingApprovals maps request states to the approvals they answer, so
// that a retry decides only a thread this server asked about.
type pendingApprovals struct {
	mu    sync.Mutex
	m     map[string]pendingApproval
	order []string
}

func (p *pendingApprovals) put(a pendingApproval) string {
	id := rand.Text()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]pendingApproval{}
	}
	for len(p.order) >= maxPending {
		delete(p.m, p.order[0])
		p.order = p.order[1:]
	}
	p.m[id] = a
	p.order = append(p.order, id)
	return id
}

func (p *pendingApprovals) take(id string) (pendingApproval, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.m[id]
	if ok {
		delete(p.m, id)
		p.order = slices.DeleteFunc(p.order, func(s string) bool { return s == id })
	}
	return a, ok
}

// result is a successful result with text as its content.
func (t *tool) result(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t.srv.Scrubber().String(text)}}}
}

// failure is an error result with the scrubbed error as its text.
func (t *tool) failure(out Output, err error) (*mcp.CallToolResult, Output, error) {
	text := t.srv.Scrubber().String(err.Error())
	if out.Status == "" {
		out.Status = "failed"
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
}

// approvalSchema is what an elicitation asks for.
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "description": "run the tool call"},
		"reason":  map[string]any{"type": "string", "description": "why (shown to the model when denied)"},
	},
	"required": []string{"approve"},
}

// canElicit reports whether the client declared it answers elicitations.
func canElicit(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// waitingText says what the run waits for and how to decide it.
func waitingText(v server.RunView) string {
	what := "a tool call"
	if v.Pending != nil {
		what = fmt.Sprintf("the call of tool %s with input %s", v.Pending.Tool, v.Pending.Input)
	}
	return fmt.Sprintf("The run waits for approval of %s on thread %s. Decide it with `planner resume %s --approve` (or `--deny REASON`), "+
		"or POST /api/approvals/%s with {\"approve\": true} to planner serve.", what, v.Thread, v.Thread, v.Thread)
}

// outputOf is the structured result of a run.
func outputOf(v server.RunView) Output {
	out := Output{Answer: v.Answer, Complete: v.Complete, Reason: v.Reason, Status: v.Status, Thread: v.Thread, RunID: v.ID}
	if u := v.Usage; u != nil {
		out.Usage = Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, ModelCalls: u.ModelCalls, ToolCalls: u.ToolCalls}
	}
	return out
}

// progress forwards a call's run events as progress notifications when
// the request carries a progress token; its count goes on across the
// runs of one call (a run, then the runs after each decision).
type progress struct {
	ss    *mcp.ServerSession
	token any
	scrub func(string) string
	sent  float64
}

// follow waits for c's run to end, forwarding its events meanwhile.
func (p *progress) follow(ctx context.Context, c *server.Call) (server.RunView, error) {
	if p.token == nil {
		return c.Wait(ctx)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.forward(ctx, c)
	}()
	v, err := c.Wait(ctx)
	<-done
	if err == nil && p.sent > 0 {
		// A client may handle the notifications it read in one chunk
		// with the response after it, and drop those it handles once
		// the request is answered (the TypeScript SDK over stdio does):
		// a ping round trip makes it read them before the response.
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		_ = p.ss.Ping(pctx, nil)
		cancel()
	}
	return v, err
}

// pingTimeout bounds the ping that flushes a call's progress.
const pingTimeout = 2 * time.Second

// forward sends c's events (but streamed tokens) until its run has finished or ctx ends.
func (p *progress) forward(ctx context.Context, c *server.Call) {
	base, after := p.sent, int64(0)
	for {
		evs, finished, err := c.Events(ctx, after)
		if err != nil {
			return
		}
		for _, e := range evs {
			after = e.Seq
			if e.Kind == "token" { // streamed text: too fine-grained for progress
				continue
			}
			p.sent = base + float64(e.Seq)
			_ = p.ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.sent, Message: p.scrub(summary(e))})
		}
		if finished {
			return
		}
	}
}

// summary is a short text of an event: its kind, node and, where it has
// them, its tool and status.
func summary(e server.CallEvent) string {
	var f struct {
		Kind   string `json:"kind"`
		Node   string `json:"node"`
		Tool   string `json:"tool"`
		Status string `json:"status"`
	}
	_ = json.Unmarshal(e.Data, &f)
	parts := []string{cmp.Or(f.Kind, e.Kind)}
	for _, s := range []string{f.Node, f.Tool, f.Status} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}
