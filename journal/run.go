package journal

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm/cassette"
	"github.com/tmc/langchaingo/llms"
)

// Run is one process's session of a thread: it answers each call the
// journal holds from the journal and appends every live call's result. It
// is safe for concurrent use by the run's branches. Runs that are not
// journaled have no Run: every function of this package then costs one
// context lookup.
type Run struct {
	store  Store
	thread string
	// keep journals model requests whole (KeepRequests).
	keep bool
	// msgs keeps the session's encoded messages.
	msgs *messageCache

	mu sync.Mutex
	// queues holds, per scope, the recorded entries read and not yet
	// replayed, in Seq order.
	queues map[string][]Entry
	// rd reads the journal a page at a time (see take); readErr is the
	// error that stopped it.
	rd       *reader
	readErr  error
	left     int
	replayed int
	live     int
	// gate is the one-live-call mode's state (LiveCalls); nil
	// without a budget.
	gate *gate

	// models are the responses of the model entries read so far, in Seq
	// order; responses decodes them all once, for ModelResponses.
	models    []json.RawMessage
	responses func() []*llms.ContentResponse
}

// KeepRequests makes the session journal each model call's whole request
// — every message and option, as a cassette records it — rather than its
// digests, so that a resumed run whose call differs from the journaled
// one is shown a diff of the two. It is a debugging aid: a whole request
// repeats the whole conversation so far, so a thread's journal grows with
// the square of its calls (a 500-call ReAct thread: tens of megabytes
// rather than under one). Default: off; model requests are journaled as their
// digest, their size and the digests of their options and of their first
// and last messages, which replay needs and a divergence report names.
// Journals read back in any form, whatever the option.
func KeepRequests() OpenOption {
	return func(r *Run) { r.keep = true }
}

// Open starts a session of the named thread: it reads the journal's
// first page, failing with ErrNotFound or ErrCorrupt. The caller holds
// the thread's lock (Store.Lock) for the session's length.
//
// The rest of the journal is read as the run replays it, a page at a time
// from a store that is an EntryPager (all at once from another), and
// always to its end, verified, before the run makes its first live call:
// a journal damaged further on fails the call that reaches the damage, or
// the first live call, with ErrCorrupt, and no call is ever made again
// because part of its journal was unreadable.
func Open(ctx context.Context, s Store, name string, opts ...OpenOption) (*Run, error) {
	r := &Run{store: s, thread: name, queues: map[string][]Entry{}, rd: newReader(s, name), msgs: newMessageCache()}
	for _, o := range opts {
		o(r)
	}
	if err := r.read(ctx); err != nil {
		return nil, err
	}
	r.left = int(r.rd.total)
	r.responses = sync.OnceValue(r.decodeModels)
	return r, nil
}

// read reads the journal's next page into the queues; r.mu is held (or
// the session is not shared yet). A read error stops the session's
// reading: every later call that needs the journal fails with it.
func (r *Run) read(ctx context.Context) error {
	if r.readErr != nil {
		return r.readErr
	}
	page, err := r.rd.next(context.WithoutCancel(ctx))
	if err != nil {
		r.readErr = err
		return err
	}
	for _, e := range page {
		r.queues[e.Scope] = append(r.queues[e.Scope], e)
		if e.Kind == KindModel {
			r.models = append(r.models, e.Response)
		}
	}
	return nil
}

// drain reads the rest of the journal; r.mu is held.
func (r *Run) drain(ctx context.Context) error {
	for !r.rd.done {
		if err := r.read(ctx); err != nil {
			return err
		}
	}
	return r.readErr
}

// ModelResponses returns the responses of the model calls the journal held
// when the session opened, in journal order: what a resumed run is
// answered with instead of calling its models. A recorded response that
// cannot be read is left out (replaying it fails with ErrCorrupt), and so
// are the responses past a part of the journal that cannot be read. A
// model that keeps state from call to call, such as the scripted model's
// place in its script, reads them when it is first called live in a
// session, to carry on where the journaled run left off in another
// process. They are decoded once per session and shared: callers must not
// modify them.
func (r *Run) ModelResponses() []*llms.ContentResponse {
	if r.responses == nil {
		return nil
	}
	return r.responses()
}

// decodeModels reads the rest of the journal and decodes the responses
// of its model entries.
func (r *Run) decodeModels() []*llms.ContentResponse {
	r.mu.Lock()
	_ = r.drain(context.Background())
	models := r.models
	r.mu.Unlock()
	out := make([]*llms.ContentResponse, 0, len(models))
	for _, resp := range models {
		var rec cassette.Response
		if json.Unmarshal(resp, &rec) == nil {
			out = append(out, rec.LLM())
		}
	}
	return out
}

// Thread returns the session's thread name.
func (r *Run) Thread() string { return r.thread }

// Stats counts the session's calls: replayed from the journal, made live
// (and journaled), and recorded entries not replayed (yet).
func (r *Run) Stats() (replayed, live, unused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.replayed, r.live, r.left
}

type runKey struct{}

// WithRun returns ctx carrying the session r. The session's node hook
// (WrapNode) sets it around every node it journals, so that code inside
// the node that needs the session and cannot be handed it — a model that
// keeps its place across calls (llm/scripted) behind the fixed
// llms.Model signature, the ReAct loop's journaled tool retrieval — reads
// it with From. Programs and tests that call nodes, models or tools
// outside a run set it themselves (pipeline.ContextHooks reads it).
func WithRun(ctx context.Context, r *Run) context.Context {
	return context.WithValue(ctx, runKey{}, r)
}

// From returns the journal session in ctx, or nil.
func From(ctx context.Context) *Run {
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}

// Scope returns the call scope in ctx (hooks.Scope): "" outside any node.
func Scope(ctx context.Context) string { return hooks.Scope(ctx) }

// WithScope returns ctx whose calls are journaled in scope (hooks.WithScope).
func WithScope(ctx context.Context, scope string) context.Context {
	return hooks.WithScope(ctx, scope)
}

// NodeScope is the scope of the step-th node execution (1-based), node
// (hooks.NodeScope).
func NodeScope(step int, node string) string { return hooks.NodeScope(step, node) }

// Branch returns ctx for one branch of a parallel fan-out (hooks.Branch):
// the branch's calls are journaled and replayed in a scope of their own,
// so branches that make identical requests get back their own answers
// whatever the order they run in.
func Branch(ctx context.Context, label string) context.Context { return hooks.Branch(ctx, label) }

// WrapProvider makes r a hooks.ProviderHook, the innermost of a
// journaled run's model calls: each is answered from the journal when it
// holds it, or made and journaled (see Model). The journal keeps each
// live reply's usage, measured by the metering (hooks.ModelCall.Measure),
// and answers a replayed call with it (hooks.ModelResult.Measured), so a
// resumed run does not count its replayed calls' tokens again; a call
// journaled without its usage (by an older version) is measured as a
// live one.
func (r *Run) WrapProvider(next hooks.ModelFunc) hooks.ModelFunc {
	return func(ctx context.Context, call *hooks.ModelCall) (*hooks.ModelResult, error) {
		resp, u, err := r.model(ctx, call.Node, call.Role, call.Messages, call.Options, call.Measure, func(ctx context.Context) (*llms.ContentResponse, error) {
			res, err := next(ctx, call)
			if err != nil || res == nil {
				return nil, err
			}
			return res.Response, nil
		})
		if err != nil {
			return nil, err
		}
		res := &hooks.ModelResult{Response: resp}
		if u != nil {
			res.Usage, res.Measured = *u, true
		}
		return res, nil
	}
}

// DivergedError reports a resumed run that asked, in a scope whose
// recorded calls were not all replayed, for something the journal does
// not hold. It matches ErrDiverged.
type DivergedError struct {
	// Thread and Scope say where.
	Thread, Scope string
	// Seq is the first unreplayed entry of the scope, the one the run was
	// expected to ask for.
	Seq int64
	// Kind is what the run asked for.
	Kind Kind
	// Diff shows what changed: a unified diff for model calls, the two
	// requests otherwise.
	Diff string
}

// Error explains the divergence and what to do.
func (e *DivergedError) Error() string {
	return fmt.Sprintf("%s: thread %q, %s, %s call: the journal expected checkpoint %d; the pipeline, the task or the model changed since it was journaled "+
		"(fork from an earlier checkpoint with resume --from N --as NEW to go on from there):\n%s",
		ErrDiverged, e.Thread, scopeName(e.Scope), e.Kind, e.Seq, e.Diff)
}

// Unwrap returns ErrDiverged.
func (e *DivergedError) Unwrap() error { return ErrDiverged }

func scopeName(s string) string {
	if s == "" {
		return "graph"
	}
	return "scope " + s
}

// take returns the unreplayed entry of scope that matches kind and digest
// and marks it replayed; live is true when the scope has no unreplayed
// entry left (the call is made live). When the scope still has entries
// but none matches, expected is the first of them. It reads the journal
// on as far as it needs: to the entry, or to the journal's end before it
// answers live or expected. err is the error of a journal that cannot be
// read (ErrCorrupt).
func (r *Run) take(ctx context.Context, scope string, kind Kind, digest string) (e Entry, live bool, expected *Entry, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		q := r.queues[scope]
		for i := range q {
			if q[i].Kind != kind || q[i].Digest != digest {
				continue
			}
			e = q[i]
			switch {
			case len(q) == 1:
				delete(r.queues, scope)
			case i == 0:
				q[0] = Entry{}
				r.queues[scope] = q[1:]
			default:
				copy(q[i:], q[i+1:])
				q[len(q)-1] = Entry{}
				r.queues[scope] = q[:len(q)-1]
			}
			r.left--
			r.replayed++
			return e, false, nil, nil
		}
		if r.rd.done && r.readErr == nil {
			if len(q) == 0 {
				return Entry{}, true, nil, nil
			}
			first := q[0]
			return Entry{}, false, &first, nil
		}
		if err := r.read(ctx); err != nil {
			return Entry{}, false, nil, err
		}
	}
}

// append journals a live call's entry.
func (r *Run) append(ctx context.Context, e Entry) error {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if _, err := r.store.Append(context.WithoutCancel(ctx), r.thread, e); err != nil {
		return fmt.Errorf("journal: thread %q: saving a %s call: %w", r.thread, e.Kind, err)
	}
	r.mu.Lock()
	r.live++
	r.mu.Unlock()
	return nil
}

// digest is the hex SHA-256 of parts, each preceded by its length so that
// no part can shift into the next.
func digest(parts ...[]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Compact returns e with a model entry's request reduced to its role:
// the whole request (KeepRequests, or a journal written before requests
// were kept as digests) or the shape a session journals by default is
// dropped, leaving the smallest entry that replays. Replay matches
// entries by their digest, so a compacted journal replays exactly as the
// whole one; only the report of a diverged call is poorer (it says the
// journaled request was compacted and shows the actual one). The reply
// and its usage are kept. Other entries, and entries whose request cannot
// be read, are returned as they are. Journals carried in messages, such
// as a Temporal workflow's state, compact what they carry: every byte of
// an entry travels again with every later step.
func Compact(e Entry) Entry {
	if e.Kind != KindModel {
		return e
	}
	var req modelRequest
	if json.Unmarshal(e.Request, &req) != nil || (req.Compacted && req.Shape == nil) {
		return e
	}
	body, err := json.Marshal(modelRequest{Role: req.Role, Compacted: true})
	if err != nil {
		return e
	}
	e.Request = body
	return e
}

// Model answers one model call of node (in role) from the journal, or
// makes it with call and journals the response. A failed call is not
// journaled: resuming makes it again. A replayed response is passed to
// the call's streaming function, if any, as one chunk. The request is
// journaled as digests, or whole with KeepRequests. The usage of a call
// made through Model is not journaled: WrapProvider journals it.
func (r *Run) Model(ctx context.Context, node, role string, msgs []llms.MessageContent, opts []llms.CallOption,
	call func(ctx context.Context) (*llms.ContentResponse, error)) (*llms.ContentResponse, error) {
	resp, _, err := r.model(ctx, node, role, msgs, opts, nil, call)
	return resp, err
}

// model is Model, with the reply's usage: measure measures a live reply
// (nil: its usage is not journaled), and u is the usage journaled with
// the reply (nil when there is none).
func (r *Run) model(ctx context.Context, node, role string, msgs []llms.MessageContent, opts []llms.CallOption,
	measure func(*llms.ContentResponse) hooks.Usage,
	call func(ctx context.Context) (*llms.ContentResponse, error)) (resp *llms.ContentResponse, u *hooks.Usage, err error) {
	lr, err := encodeRequest(r.msgs, role, msgs, opts)
	if err != nil {
		return nil, nil, err
	}
	scope := Scope(ctx)
	e, live, expected, err := r.take(ctx, scope, KindModel, lr.sum)
	switch {
	case err != nil:
		return nil, nil, err
	case expected != nil:
		return nil, nil, r.diverged(scope, KindModel, *expected, lr, lr.body)
	case !live:
		var rec modelResponse
		if err := json.Unmarshal(e.Response, &rec); err != nil {
			return nil, nil, fmt.Errorf("%w: thread %q, checkpoint %d: model response: %w", ErrCorrupt, r.thread, e.Seq, err)
		}
		resp := rec.LLM()
		if err := streamReplayed(ctx, opts, resp); err != nil {
			return nil, nil, err
		}
		if rec.Usage != nil {
			u := rec.Usage.usage()
			return resp, &u, nil
		}
		return resp, nil, nil
	}
	release, err := r.admit(ctx, KindModel, scope, node, lr.sum)
	if err != nil {
		return nil, nil, err
	}
	body, err := lr.record(r.keep)
	if err != nil {
		release(err)
		return nil, nil, err
	}
	resp, u, err = r.liveModel(ctx, call, measure, Entry{Kind: KindModel, Scope: scope, Node: node, Digest: lr.sum, Request: body})
	release(err)
	return resp, u, err
}

// liveModel makes a model call and journals its response, and its usage
// when measure is set, in e.
func (r *Run) liveModel(ctx context.Context, call func(ctx context.Context) (*llms.ContentResponse, error),
	measure func(*llms.ContentResponse) hooks.Usage, e Entry) (*llms.ContentResponse, *hooks.Usage, error) {
	resp, err := call(ctx)
	if err != nil || resp == nil {
		return resp, nil, err
	}
	rec := modelResponse{Response: *cassette.NewResponse(resp)}
	var u *hooks.Usage
	if measure != nil && len(resp.Choices) > 0 {
		m := measure(resp)
		u, rec.Usage = &m, newUsageRecord(m)
	}
	out, err := json.Marshal(rec)
	if err != nil {
		return nil, nil, fmt.Errorf("journal: encoding a model response: %w", err)
	}
	e.Response = out
	if err := r.append(ctx, e); err != nil {
		return nil, nil, err
	}
	return resp, u, nil
}

func streamReplayed(ctx context.Context, opts []llms.CallOption, resp *llms.ContentResponse) error {
	var co llms.CallOptions
	for _, o := range opts {
		o(&co)
	}
	if co.StreamingFunc == nil || len(resp.Choices) == 0 || resp.Choices[0].Content == "" {
		return nil
	}
	return co.StreamingFunc(ctx, []byte(resp.Choices[0].Content))
}

// ToolResult is a tool call's journaled outcome.
type ToolResult struct {
	// Output is the tool's output.
	Output string `json:"output"`
	// Error is the failed call's error text; "" when it succeeded.
	Error string `json:"error,omitempty"`
	// Class classifies the failure for the caller (such as "timeout" or
	// "panic"), so that a replayed failure matches what the live one did.
	Class string `json:"class,omitempty"`
}

type toolRequest struct {
	Tool  string `json:"tool"`
	Input string `json:"input"`
}

// Tool answers one call of tool from the journal, or makes it with call
// and journals its result. call returns an error only when the call did
// not finish (the run was cancelled): that is passed on and not
// journaled; a tool's own failure is a ToolResult.
func (r *Run) Tool(ctx context.Context, node, tool, input string, call func(ctx context.Context) (ToolResult, error)) (ToolResult, error) {
	body, err := json.Marshal(toolRequest{Tool: tool, Input: input})
	if err != nil {
		return ToolResult{}, fmt.Errorf("journal: encoding a tool request: %w", err)
	}
	scope := Scope(ctx)
	sum := digest([]byte(KindTool), body)
	e, live, expected, err := r.take(ctx, scope, KindTool, sum)
	switch {
	case err != nil:
		return ToolResult{}, err
	case expected != nil:
		return ToolResult{}, r.diverged(scope, KindTool, *expected, nil, body)
	case !live:
		var res ToolResult
		if err := json.Unmarshal(e.Response, &res); err != nil {
			return ToolResult{}, fmt.Errorf("%w: thread %q, checkpoint %d: tool result: %w", ErrCorrupt, r.thread, e.Seq, err)
		}
		return res, nil
	}
	release, err := r.admit(ctx, KindTool, scope, node, sum)
	if err != nil {
		return ToolResult{}, err
	}
	res, err := r.liveTool(ctx, call, Entry{Kind: KindTool, Scope: scope, Node: node, Digest: sum, Request: body})
	release(err)
	return res, err
}

// liveTool makes a tool call and journals its result in e.
func (r *Run) liveTool(ctx context.Context, call func(ctx context.Context) (ToolResult, error), e Entry) (ToolResult, error) {
	res, err := call(ctx)
	if err != nil {
		return res, err
	}
	out, err := json.Marshal(res)
	if err != nil {
		return ToolResult{}, fmt.Errorf("journal: encoding a tool result: %w", err)
	}
	e.Response = out
	if err := r.append(ctx, e); err != nil {
		return ToolResult{}, err
	}
	return res, nil
}

type nodeRequest struct {
	Step int    `json:"step"`
	Node string `json:"node"`
}

type nodeResponse struct {
	Route string `json:"route"`
}

// Node journals the end of the step-th node execution, node, which
// returned route; on replay it checks that the node took the recorded
// route.
func (r *Run) Node(ctx context.Context, step int, node, route string) error {
	body, err := json.Marshal(nodeRequest{Step: step, Node: node})
	if err != nil {
		return fmt.Errorf("journal: encoding a node transition: %w", err)
	}
	sum := digest([]byte(KindNode), body)
	e, live, expected, err := r.take(ctx, "", KindNode, sum)
	switch {
	case err != nil:
		return err
	case expected != nil:
		return r.diverged("", KindNode, *expected, nil, body)
	case !live:
		var rec nodeResponse
		if err := json.Unmarshal(e.Response, &rec); err != nil {
			return fmt.Errorf("%w: thread %q, checkpoint %d: node transition: %w", ErrCorrupt, r.thread, e.Seq, err)
		}
		if rec.Route != route {
			return &DivergedError{Thread: r.thread, Seq: e.Seq, Kind: KindNode,
				Diff: fmt.Sprintf("node %q (step %d) took route %q; the journal recorded %q", node, step, route, rec.Route)}
		}
		return nil
	}
	if err := r.quiesce(ctx, KindNode, "", node); err != nil {
		return err
	}
	out, err := json.Marshal(nodeResponse{Route: route})
	if err != nil {
		return fmt.Errorf("journal: encoding a node transition: %w", err)
	}
	return r.append(ctx, Entry{Kind: KindNode, Node: node, Digest: sum, Request: body, Response: out})
}

// diverged builds the error for a call that does not match expected;
// lr is the live model request (nil for other kinds) and body the live
// request's JSON.
func (r *Run) diverged(scope string, kind Kind, expected Entry, lr *liveRequest, body []byte) error {
	de := &DivergedError{Thread: r.thread, Scope: scope, Seq: expected.Seq, Kind: kind}
	var rec modelRequest
	if lr != nil && expected.Kind == KindModel && json.Unmarshal(expected.Request, &rec) == nil {
		switch {
		case rec.Request != nil && !rec.Compacted:
			de.Diff = cassette.Diff(fmt.Sprintf("journaled call (checkpoint %d)", expected.Seq), *rec.Request, "actual call", lr.request())
			if rec.Role != lr.role {
				de.Diff = fmt.Sprintf("role %q, journaled %q\n", lr.role, rec.Role) + de.Diff
			}
		case rec.Shape != nil:
			de.Diff = shapeDiff(expected.Seq, rec, lr)
		default:
			de.Diff = fmt.Sprintf("journaled model call (checkpoint %d, role %q) was compacted to its digest, so its request cannot be shown; actual call (role %q):    %s",
				expected.Seq, rec.Role, lr.role, oneLine(body))
		}
		return de
	}
	de.Diff = fmt.Sprintf("journaled %s: %s\nactual %s:    %s", expected.Kind, oneLine(expected.Request), kind, oneLine(body))
	return de
}

// Approver decides tool calls that need a human's approval.
type Approver interface {
	// Approve returns the decision on a, or an error: a *WaitingError
	// when the decision is deferred (the thread then waits), or why no
	// decision could be had.
	Approve(ctx context.Context, a Approval) (Decision, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, a Approval) (Decision, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, a Approval) (Decision, error) { return f(ctx, a) }

// Decide returns an Approver that answers the call pending (the one a
// waiting thread stopped at: same tool, same input) with d, once, and
// asks next about every other call. It is how a decision given ahead of
// a resume (resume --approve, WithDecision) reaches the call.
func Decide(pending Approval, d Decision, next Approver) Approver {
	return &decided{pending: pending, decision: &d, next: next}
}

type decided struct {
	mu       sync.Mutex
	pending  Approval
	decision *Decision
	next     Approver
}

func (a *decided) Approve(ctx context.Context, ap Approval) (Decision, error) {
	a.mu.Lock()
	if d := a.decision; d != nil && ap.Tool == a.pending.Tool && ap.Input == a.pending.Input {
		a.decision = nil
		a.mu.Unlock()
		return *d, nil
	}
	a.mu.Unlock()
	return a.next.Approve(ctx, ap)
}

// WaitingError stops a run whose tool call waits for approval. It matches
// ErrWaiting.
type WaitingError struct {
	// Approval is the call that waits.
	Approval Approval
}

// Error names the waiting call.
func (e *WaitingError) Error() string {
	return fmt.Sprintf("%s: tool %s with input %q", ErrWaiting, e.Approval.Tool, clip(e.Approval.Input, 200))
}

// Unwrap returns ErrWaiting.
func (e *WaitingError) Unwrap() error { return ErrWaiting }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Approve decides a: from the session's journal when it holds the
// decision (a resumed run is not asked twice), else by ap, whose decision
// is journaled. With no approver it fails with ErrNoApprover; an
// approver's error (a *WaitingError) is returned as is. A nil r (a run
// without a journal) asks ap and records nothing.
func (r *Run) Approve(ctx context.Context, ap Approver, a Approval) (Decision, error) {
	var (
		body  []byte
		sum   string
		scope = Scope(ctx)
	)
	if r != nil {
		var err error
		if body, err = json.Marshal(toolRequest{Tool: a.Tool, Input: a.Input}); err != nil {
			return Decision{}, fmt.Errorf("journal: encoding an approval: %w", err)
		}
		sum = digest([]byte(KindApproval), body)
		e, live, expected, err := r.take(ctx, scope, KindApproval, sum)
		switch {
		case err != nil:
			return Decision{}, err
		case expected != nil:
			return Decision{}, r.diverged(scope, KindApproval, *expected, nil, body)
		case !live:
			var d Decision
			if err := json.Unmarshal(e.Response, &d); err != nil {
				return Decision{}, fmt.Errorf("%w: thread %q, checkpoint %d: approval: %w", ErrCorrupt, r.thread, e.Seq, err)
			}
			return d, nil
		}
		if err := r.quiesce(ctx, KindApproval, scope, a.Node); err != nil {
			return Decision{}, err
		}
	}
	if ap == nil {
		return Decision{}, fmt.Errorf("%w: tool %q", ErrNoApprover, a.Tool)
	}
	d, err := ap.Approve(ctx, a)
	if err != nil {
		var we *WaitingError
		if errors.As(err, &we) || errors.Is(err, ErrWaiting) {
			return Decision{}, err
		}
		return Decision{}, fmt.Errorf("approval of tool %q: %w", a.Tool, err)
	}
	if r != nil {
		out, err := json.Marshal(d)
		if err != nil {
			return Decision{}, fmt.Errorf("journal: encoding a decision: %w", err)
		}
		if err := r.append(ctx, Entry{Kind: KindApproval, Scope: scope, Node: a.Node, Digest: sum, Request: body, Response: out}); err != nil {
			return Decision{}, err
		}
	}
	return d, nil
}

// Defer is an Approver that decides nothing: every call it is asked about
// waits (a *WaitingError), so a thread stops and saves itself until
// someone resumes it with a decision.
func Defer() Approver {
	return ApproverFunc(func(_ context.Context, a Approval) (Decision, error) {
		return Decision{}, &WaitingError{Approval: a}
	})
}
