package nodekind

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
)

// The English texts a tool call shows the model; ToolMessages fields left
// empty take them.
const (
	// DefaultToolError prefixes the error of a failed call.
	DefaultToolError = "Error: "
	// DefaultNoOutput stands for a tool's empty output.
	DefaultNoOutput = "[the tool returned no output]"
	// DefaultUnknownTool answers a call of a tool the registry does not
	// have: the name as written (%q) and the available names (%s).
	DefaultUnknownTool = "Error: there is no tool named %q. Use one of: %s."
	// DefaultTruncated ends an observation cut at ToolOptions.Limit: the
	// number of characters dropped, with thousands separators (%s).
	DefaultTruncated = "…[truncated %s chars]"
)

// Guard names of the trace events a tool call emits (kind guard,
// Data["guard"]).
const (
	GuardUnknownTool = "unknown_tool"
	GuardToolError   = "tool_error"
	GuardTruncated   = "observation_truncated"
)

// ToolMessages are the texts a tool call shows the model in place of, or
// after, a tool's output. Empty fields take the Default* texts; a node
// that prompts in another language passes its own.
type ToolMessages struct {
	// Error prefixes the error of a failed call. Default DefaultToolError.
	Error string
	// NoOutput stands for an empty output. Default DefaultNoOutput.
	NoOutput string
	// UnknownTool formats the answer to a call of an unknown tool from the
	// name as written and the available names joined by ", ". Default
	// DefaultUnknownTool.
	UnknownTool string
	// Truncated formats the end of a cut observation from the number of
	// characters dropped. Default DefaultTruncated.
	Truncated string
}

func (m ToolMessages) withDefaults() ToolMessages {
	if m.Error == "" {
		m.Error = DefaultToolError
	}
	if m.NoOutput == "" {
		m.NoOutput = DefaultNoOutput
	}
	if m.UnknownTool == "" {
		m.UnknownTool = DefaultUnknownTool
	}
	if m.Truncated == "" {
		m.Truncated = DefaultTruncated
	}
	return m
}

// ToolOptions configure one tool call. The zero value is valid.
type ToolOptions struct {
	// Timeout bounds the call on top of the registry's timeout for the
	// tool; the shorter one ends it. Zero: the registry's alone.
	Timeout time.Duration
	// Limit caps the observation in characters (runes); a longer one is
	// cut and ends with Messages.Truncated. Zero or negative: no limit.
	Limit int
	// Verbatim passes the input to the tool as written, with only the
	// white space around it trimmed: no UnwrapToolInput (quotes, code
	// fences and a {"input": ...} object stay). The ReAct paper's harness
	// passed the text inside Tool[...] this way. Default false.
	Verbatim bool
	// Messages are the texts shown to the model.
	Messages ToolMessages
	// Trace holds extra data for every trace event of the call, such as
	// the caller's "step", "depth" or "tool_call_id". It is not modified.
	Trace map[string]any
}

// ToolCall is one call of a tool, resolved against a registry by
// PrepareTool and run by Call (or, for callers that run several calls
// concurrently and trace them in a fixed order, by Announce, Run and
// Report). Its exported fields are what the caller's guards need before
// the call runs.
type ToolCall struct {
	// Tool is the tool the name resolved to; nil when the registry has no
	// such tool.
	Tool tools.Tool
	// Name is the tool's registered name, or the name as written when it
	// is unknown.
	Name string
	// Input is the input the tool gets: the input as written, unwrapped
	// by UnwrapToolInput (only trimmed with ToolOptions.Verbatim).
	Input string

	reg  *tools.Registry
	meta llm.CallMeta
	opts ToolOptions
}

// ToolResult is what a tool call produced.
type ToolResult struct {
	// Observation is what the model is shown: the tool's output (or
	// Messages.NoOutput), or Messages.Error and what went wrong, or the
	// unknown-tool message; cut to ToolOptions.Limit. It never holds a
	// stack trace.
	Observation string
	// Output is the tool's own output, uncut (a failed tool may return
	// some).
	Output string
	// Err is why the call failed, or nil. It wraps tools.ErrUnknownTool,
	// tools.ErrToolPanic, tools.ErrToolTimeout, tools.ErrNotApproved or
	// the tool's own error; its message is one line without a stack.
	Err error
	// Dropped is how many characters were cut from the observation.
	Dropped int
	// Elapsed is how long the tool ran.
	Elapsed time.Duration

	// detail is the failure with everything known (a panic's stack
	// frames), for the trace only.
	detail string
}

// Unknown reports whether the call named a tool the registry lacks.
func (r ToolResult) Unknown() bool { return errors.Is(r.Err, tools.ErrUnknownTool) }

// CallTool runs one tool call on behalf of the node meta names, the way
// every node calls tools: it resolves name in reg tolerantly, unwraps
// input (UnwrapToolInput), counts the call in st's usage, emits its trace
// events, bounds it by opts.Timeout and the registry's timeout, and turns
// whatever goes wrong with the tool (an error, a panic, a timeout, an
// unknown name) into an observation for the model and ToolResult.Err.
// The only error it returns is the cause of ctx's end (context.Cause),
// when ctx ends before or while the tool runs; the result is then not an
// observation to show. reg and st may be nil (no tools; no accounting).
//
// Trace events (Node meta.Node; each event's Data also holds opts.Trace):
// action before the call (Data: tool, input); then a guard event for an
// unknown tool (guard unknown_tool), a failure (guard tool_error; Data
// detail holds a panic's stack frames) or a cut observation (guard
// observation_truncated, Data dropped); then observation (Data: tool)
// unless the tool was unknown.
func CallTool(ctx context.Context, st *state.State, meta llm.CallMeta, reg *tools.Registry, name, input string, opts ToolOptions) (ToolResult, error) {
	return PrepareTool(reg, meta, name, input, opts).Call(ctx, st)
}

// PrepareTool resolves name in reg (tolerantly, see tools.Registry.Resolve)
// and unwraps input for the tool (UnwrapToolInput; with opts.Verbatim
// only trims it), without calling it.
func PrepareTool(reg *tools.Registry, meta llm.CallMeta, name, input string, opts ToolOptions) ToolCall {
	c := ToolCall{Name: name, Input: input, reg: reg, meta: meta, opts: opts}
	c.opts.Messages = opts.Messages.withDefaults()
	if opts.Verbatim {
		c.Input = strings.TrimSpace(input)
	}
	if t, ok := reg.Resolve(name); ok {
		c.Tool, c.Name = t, t.Name()
		if !opts.Verbatim {
			c.Input = UnwrapToolInput(t, input)
		}
	}
	return c
}

// Call announces, runs and reports c: see CallTool.
func (c ToolCall) Call(ctx context.Context, st *state.State) (ToolResult, error) {
	if err := ctx.Err(); err != nil {
		return ToolResult{}, context.Cause(ctx)
	}
	c.Announce(ctx)
	res, err := c.Run(ctx, st)
	if err != nil {
		return res, err
	}
	c.Report(ctx, res)
	return res, nil
}

// Announce emits c's action event (nothing for an unknown tool).
func (c ToolCall) Announce(ctx context.Context) {
	if c.Tool == nil {
		return
	}
	c.emit(ctx, trace.KindAction, c.Name+": "+c.Input, 0, map[string]any{"tool": c.Name, "input": c.Input})
}

// Run runs c without emitting trace events: usage, timeout, panic
// recovery and observations as in CallTool. It is safe to run several
// calls concurrently and report them in order afterwards.
//
// The call passes the run's tool hooks (st.Hooks(): spans, the audit log,
// approvals, usage, the journal, the program's own; see
// hooks.Set.WrapTool), around the tool itself. An error of a hook (a call
// waiting for approval, a journal that cannot be written or diverged)
// stops the run: Run returns it, with no observation.
func (c ToolCall) Run(ctx context.Context, st *state.State) (ToolResult, error) {
	if err := ctx.Err(); err != nil {
		return ToolResult{}, context.Cause(ctx)
	}
	call := c.hookCall(ctx)
	res, err := st.Hooks().WrapTool(func(ctx context.Context, call *hooks.ToolCall) (*hooks.ToolResult, error) {
		return c.invokeTool(ctx, st, call)
	})(ctx, call)
	if ctx.Err() != nil {
		var out ToolResult
		if res != nil {
			out.Output, out.Elapsed = res.Output, res.Elapsed
		}
		return out, context.Cause(ctx)
	}
	if err != nil {
		return ToolResult{}, err
	}
	if res == nil {
		res = &hooks.ToolResult{}
	}
	return c.result(res), nil
}

// hookCall is the hooks' view of c.
func (c ToolCall) hookCall(ctx context.Context) *hooks.ToolCall {
	call := &hooks.ToolCall{Node: c.meta.Node, Tool: c.Name, Input: c.Input, Unknown: c.Tool == nil, Trace: c.opts.Trace}
	if c.Tool != nil {
		m := tools.MetaOf(c.Tool)
		call.Stateful, call.NeedsApproval = m.Stateful, m.NeedsApproval
	}
	call.Step = cmp.Or(c.meta.StepID, llm.CallMetaFrom(ctx).StepID)
	if s, ok := c.opts.Trace["step"]; call.Step == "" && ok && s != nil {
		call.Step = fmt.Sprint(s)
	}
	call.ID, _ = c.opts.Trace["tool_call_id"].(string)
	return call
}

// invokeTool is the innermost function of a tool call's chain: it runs
// the tool (with the run's vars, see toolvars.go), or answers an unknown
// name with tools.ErrUnknownTool.
func (c ToolCall) invokeTool(ctx context.Context, st *state.State, call *hooks.ToolCall) (*hooks.ToolResult, error) {
	if c.Tool == nil {
		return &hooks.ToolResult{Err: fmt.Errorf("%w %q; available tools: %s", tools.ErrUnknownTool, c.Name, c.available())}, nil
	}
	c.Input = call.Input // a hook may have changed it
	ctx = c.withVars(ctx, st)
	began := time.Now()
	out, err := c.invoke(ctx)
	res := &hooks.ToolResult{Output: out, Err: err, Elapsed: time.Since(began), Live: true}
	if ctx.Err() != nil {
		return res, context.Cause(ctx)
	}
	return res, nil
}

// available lists the registry's tool names for an unknown tool's error
// and observation.
func (c ToolCall) available() string {
	if c.reg.Len() == 0 {
		return "(none)"
	}
	return strings.Join(c.reg.Names(), ", ")
}

// result turns what the chain returned into the observation the model is
// shown.
func (c ToolCall) result(r *hooks.ToolResult) ToolResult {
	m := c.opts.Messages
	res := ToolResult{Output: r.Output, Elapsed: r.Elapsed}
	if c.Tool == nil && errors.Is(r.Err, tools.ErrUnknownTool) {
		res.Observation, res.Err = fmt.Sprintf(m.UnknownTool, c.Name, c.available()), r.Err
		return res
	}
	obs := r.Output
	if r.Err != nil {
		if errors.Is(r.Err, tools.ErrNotApproved) {
			res.Err, res.detail = r.Err, r.Err.Error()
			res.Observation = m.Error + r.Err.Error()
			return res
		}
		res.Err, res.detail = oneLine(r.Err), r.Err.Error()
		obs = m.Error + res.Err.Error()
	} else if strings.TrimSpace(r.Output) == "" {
		obs = m.NoOutput
	}
	res.Observation, res.Dropped = cut(obs, c.opts.Limit, m.Truncated)
	return res
}

// GuardApproval names the trace event of a human's approval of a tool
// call that needs one (Data: tool, approved, by); a denial is reported as
// the call's tool_error.
const GuardApproval = "approval"

// invoke calls the registry under opts.Timeout, recovering a panic the
// registry did not (an approver's, say).
func (c ToolCall) invoke(ctx context.Context) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("tool %q: %w: %v\n%s", c.Name, tools.ErrToolPanic, p, debug.Stack())
		}
	}()
	if c.opts.Timeout <= 0 {
		return c.call(ctx)
	}
	timeout := fmt.Errorf("tool %q: %w after %s", c.Name, tools.ErrToolTimeout, c.opts.Timeout)
	tctx, cancel := context.WithTimeoutCause(ctx, c.opts.Timeout, timeout)
	defer cancel()
	out, err = c.call(tctx)
	if tctx.Err() != nil && ctx.Err() == nil {
		return out, timeout
	}
	return out, err
}

// call runs c's tool through the registry: the Tool PrepareTool resolved
// (which its caller may have bound to its own state), else by name.
func (c ToolCall) call(ctx context.Context) (string, error) {
	if c.Tool != nil {
		return c.reg.Run(ctx, c.Tool, c.Input)
	}
	return c.reg.Call(ctx, c.Name, c.Input)
}

// Report emits the trace events of c's result: see CallTool.
func (c ToolCall) Report(ctx context.Context, res ToolResult) {
	if res.Unknown() {
		c.emit(ctx, trace.KindGuard, res.Observation, 0, map[string]any{"guard": GuardUnknownTool, "tool": c.Name})
		return
	}
	if res.Err != nil {
		data := map[string]any{"guard": GuardToolError, "tool": c.Name}
		if res.detail != res.Err.Error() {
			data["detail"] = res.detail
		}
		c.emit(ctx, trace.KindGuard, res.Err.Error(), 0, data)
	}
	if res.Dropped > 0 {
		c.emit(ctx, trace.KindGuard, fmt.Sprintf("observation of %s cut to %d chars (%d dropped)", c.Name, c.opts.Limit, res.Dropped), 0,
			map[string]any{"guard": GuardTruncated, "tool": c.Name, "dropped": res.Dropped})
	}
	c.emit(ctx, trace.KindObservation, res.Observation, res.Elapsed, map[string]any{"tool": c.Name})
}

func (c ToolCall) emit(ctx context.Context, kind trace.Kind, text string, elapsed time.Duration, data map[string]any) {
	tr := trace.From(ctx)
	if tr == nil {
		return
	}
	all := maps.Clone(c.opts.Trace)
	if all == nil {
		all = map[string]any{}
	}
	maps.Copy(all, data)
	tr.Emit(trace.Event{Node: c.meta.Node, Kind: kind, Text: text, Data: all, ElapsedMS: float64(elapsed.Microseconds()) / 1000})
}

// lineError is an error shown by its first line only (a panic's message
// without its stack frames); it still matches what it wraps.
type lineError struct {
	msg string
	err error
}

func (e *lineError) Error() string { return e.msg }
func (e *lineError) Unwrap() error { return e.err }

// oneLine returns err, or err cut to its first line when it has more.
func oneLine(err error) error {
	msg := err.Error()
	first, _, multi := strings.Cut(msg, "\n")
	if !multi {
		return err
	}
	return &lineError{msg: strings.TrimSpace(first), err: err}
}

// cut shortens s to limit runes (limit <= 0: no limit) and appends the
// marker formatted with the number of runes dropped.
func cut(s string, limit int, marker string) (string, int) {
	n := utf8.RuneCountInString(s)
	if limit <= 0 || n <= limit {
		return s, 0
	}
	i, k := 0, 0
	for i = range s {
		if k == limit {
			break
		}
		k++
	}
	dropped := n - limit
	return s[:i] + fmt.Sprintf(marker, humanize.Comma(int64(dropped))), dropped
}

// UnwrapToolInput undoes the wrapping models put around a tool input: a
// code fence around the whole input (with or without a language tag),
// then matching quotes or backticks around the whole of it (only when the
// character does not occur inside, so quotes that belong to the input
// stay). For a tool without its own schema, which is described to models
// as taking one string argument "input", a JSON object {"input": "x"}
// becomes x. An input that needs none of this is returned unchanged.
func UnwrapToolInput(t tools.Tool, input string) string {
	s := strings.TrimSpace(input)
	changed := false
	if inner, ok := unfence(s); ok {
		s, changed = inner, true
	}
	for {
		inner := tools.Unquote(s, "\"'`")
		if inner == s {
			break
		}
		s, changed = inner, true
	}
	if _, schema := t.(tools.Schemer); !schema && strings.HasPrefix(s, "{") {
		var obj map[string]json.RawMessage
		var v string
		if json.Unmarshal([]byte(s), &obj) == nil && len(obj) == 1 && json.Unmarshal(obj["input"], &v) == nil {
			return v
		}
	}
	if !changed {
		return input
	}
	return s
}

// unfence returns the text inside a code fence that wraps all of s.
func unfence(s string) (string, bool) {
	if len(s) < 6 || !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") {
		return s, false
	}
	body := s[3 : len(s)-3]
	if strings.Contains(body, "```") {
		return s, false
	}
	if tag, rest, ok := strings.Cut(body, "\n"); ok && isFenceTag(strings.TrimSpace(tag)) {
		body = rest
	}
	return strings.TrimSpace(body), true
}

// isFenceTag reports whether s could be a code fence's language tag.
func isFenceTag(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+-_.#", r)) {
			return false
		}
	}
	return true
}
