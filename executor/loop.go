package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor/parse"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// Typed failures of a run that stopped without a final answer. Outcome.Err
// wraps one of them; Run itself returns a nil error for these, because the
// outcome still carries a best-effort answer.
var (
	// ErrTooManyParseFailures means MaxParseFailures replies in a row could
	// not be parsed (failure kind "parse").
	ErrTooManyParseFailures = errors.New("react: too many consecutive replies in the wrong format")
	// ErrLoopDetected means the model repeated an identical tool call more
	// than MaxRepeats times (failure kind "loop").
	ErrLoopDetected = errors.New("react: the model kept repeating the same tool call")
	// ErrBudget means MaxIterations model turns passed without a final
	// answer (failure kind "budget").
	ErrBudget = errors.New("react: iteration budget exhausted")
)

// ErrEmptyTask means Run was given no task text.
var ErrEmptyTask = errors.New("react: empty task")

// Loop is a configured ReAct loop: reason, call a tool, observe, repeat,
// until a final answer or a budget. It is immutable and safe for concurrent
// use; each Run has its own scratchpad.
type Loop struct {
	s         settings
	lb        labels
	model     llm.Model
	tools     *tools.Registry
	system    *nodekind.Template
	prompt    *nodekind.Template
	finalize  *nodekind.Template
	summary   *nodekind.Template
	examples  string
	toolInfos []promptTool
	toolNames string
	callOpts  []llms.CallOption
	finOpts   []llms.CallOption
	// notice is the text of the examples_fallback event each run emits,
	// or empty.
	notice string
	// retrieval selects the tools each model call shows (tool_retrieval);
	// nil when every call shows every tool.
	retrieval *toolRetrieval
}

// Input is one task for the loop.
type Input struct {
	// NodeID is the calling node's id, for traces and usage. Required for
	// meaningful traces; empty is allowed.
	NodeID string
	// Kind is the calling node's type, passed to the model as the caller
	// kind. Default "react".
	Kind string
	// Role is the role of the loop's model calls (llm.CallMeta.Role), for
	// a node that runs ReAct turns as one of its roles (LATS's "expand").
	// Default empty. The finalizer's call has the role "finalize".
	Role string
	// Task is what to solve: the question, or a plan step's description.
	// Required.
	Task string
	// Context is extra text shown before the task, for example the results
	// of earlier plan steps. Optional.
	Context string
	// Reflections are lessons from earlier failed attempts, shown as a
	// numbered list. Optional.
	Reflections []string
}

// Outcome is the result of one Run.
type Outcome struct {
	// Answer is the final answer; after a failure, the finalizer's
	// best-effort answer (empty when finalize is off).
	Answer string `json:"answer"`
	// Complete is true when the model gave a final answer within the
	// budget and guards.
	Complete bool `json:"complete"`
	// Reason explains an incomplete outcome.
	Reason string `json:"reason,omitempty"`
	// Failure is state.FailureBudget, state.FailureParse or
	// state.FailureLoop for an incomplete outcome, else empty.
	Failure string `json:"failure,omitempty"`
	// Entries are the scratchpad: one per thought/action/observation,
	// format error or final answer, in order.
	Entries []state.Entry `json:"entries"`
	// Iterations counts the model turns, not counting retries of empty
	// replies or the finalizer call; in completion style, the steps (a
	// step's action-only call is not counted).
	Iterations int `json:"iterations"`
}

// Err returns nil for a complete outcome and otherwise an error wrapping
// ErrBudget, ErrTooManyParseFailures or ErrLoopDetected, with the reason.
func (o Outcome) Err() error {
	if o.Complete {
		return nil
	}
	var base error
	switch o.Failure {
	case state.FailureParse:
		base = ErrTooManyParseFailures
	case state.FailureLoop:
		base = ErrLoopDetected
	case state.FailureBudget:
		base = ErrBudget
	default:
		return fmt.Errorf("react: incomplete: %s", o.Reason)
	}
	return fmt.Errorf("%w: %s", base, o.Reason)
}

// NewLoop checks cfg, applies its defaults, selects the tools and compiles
// the templates. Errors are *config.SettingError naming the setting at fault.
func NewLoop(env nodekind.Env, cfg ReActConfig) (*Loop, error) {
	s, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	l := &Loop{s: s, lb: labelsFor(s.language), model: env.Model}
	l.tools = env.Tools
	if len(cfg.Tools) > 0 {
		if l.tools, err = env.Tools.Subset(cfg.Tools); err != nil {
			return nil, unknownToolSetting(err)
		}
	}
	if l.tools.Len() == 0 {
		return nil, config.SettingErrorf("tools", "a ReAct loop needs at least one tool; list some under the pipeline's tools:")
	}
	if s.recall {
		if l.tools.Has(RecallToolName) {
			return nil, config.SettingErrorf("recall", "the loop adds a tool named %q, and the pipeline has a tool of that name; rename the pipeline's tool or set recall: false", RecallToolName)
		}
		recall, err := newRecallTool(env)
		if err != nil {
			return nil, err
		}
		if l.tools, err = l.tools.With(recall); err != nil {
			return nil, config.SettingErrorf("recall", "%v", err)
		}
	}
	tr, err := newToolRetrieval(env, l, s.retrieval)
	if err != nil {
		return nil, err
	}
	if err := l.addSearchTool(tr); err != nil {
		return nil, err
	}
	var llmTools []llms.Tool
	for _, t := range l.tools.Tools() {
		l.toolInfos = append(l.toolInfos, promptTool{Name: t.Name(), Description: t.Description(), Schema: tools.SchemaJSON(t)})
		llmTools = append(llmTools, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
			Name: t.Name(), Description: t.Description(), Parameters: tools.SchemaOf(t)}})
		if tr != nil {
			tr.native[t.Name()] = llmTools[len(llmTools)-1]
		}
	}
	l.toolNames = strings.Join(l.tools.Names(), ", ")
	l.attachRetrieval(tr)

	system, task, finalize := templateSpecs(s.mode, s.style)
	texts := []struct {
		inline, file, def string
		spec              nodekind.TemplateSpec
		out               **nodekind.Template
	}{
		{cfg.System, cfg.SystemFile, defaultSystem(s), system, &l.system},
		{cfg.Prompt, cfg.PromptFile, defaultTask(s), task, &l.prompt},
		{cfg.FinalizePrompt, cfg.FinalizePromptFile, embedded("finalize_" + s.language + ".tmpl"), finalize, &l.finalize},
		{cfg.SummarizePrompt, cfg.SummarizePromptFile, embedded("summarize_" + s.language + ".tmpl"), summarizeSpec(), &l.summary},
	}
	// env.Template checks each template against its declaration (every
	// field reference, and a render with sample values).
	for _, t := range texts {
		if *t.out, err = env.Template(t.spec, t.inline, t.file, t.def); err != nil {
			return nil, err
		}
	}
	if l.examples, l.notice, err = loadExamples(env, cfg); err != nil {
		return nil, err
	}
	if l.examples == "" {
		l.examples = defaultExamples(s)
	}

	if cfg.Temperature != nil {
		l.finOpts = append(l.finOpts, llms.WithTemperature(*cfg.Temperature))
	}
	if cfg.MaxTokens > 0 {
		l.finOpts = append(l.finOpts, llms.WithMaxTokens(cfg.MaxTokens))
	}
	l.callOpts = append([]llms.CallOption(nil), l.finOpts...)
	switch {
	case s.mode == ModeTools:
		l.callOpts = append(l.callOpts, llms.WithTools(llmTools))
	case !s.completion():
		// Completion style sets the stop words of each call.
		l.callOpts = append(l.callOpts, llms.WithStopWords(l.lb.stops))
	}
	return l, nil
}

// ExamplesNotice says, when the loop's examples_file was missing and the
// built-in examples of examples_fallback stand in for it, which file was
// missing and where to get the paper's; otherwise it is empty. Each run
// also emits it as a guard event (GuardExamplesFallback).
func (l *Loop) ExamplesNotice() string { return l.notice }

// parseOpts are the parser's options: in format react-paper the text in
// Tool[...] is the input as written.
func (l *Loop) parseOpts() []parse.Option {
	if l.s.format == FormatPaper {
		return []parse.Option{parse.WithVerbatimCalls()}
	}
	return nil
}

func (l *Loop) systemData() map[string]any {
	return map[string]any{"Tools": l.toolInfos, "ToolNames": l.toolNames, "Examples": l.examples,
		"Format": l.s.format, "Mode": l.s.mode}
}

func taskData(in Input) map[string]any {
	return map[string]any{"Task": in.Task, "Context": in.Context, "Lessons": in.Reflections}
}

func finalizeData(in Input, why, scratchpad string) map[string]any {
	return map[string]any{"Task": in.Task, "Context": in.Context, "Lessons": in.Reflections, "Why": why, "Scratchpad": scratchpad}
}

// Tools returns the names of the tools the loop may call.
func (l *Loop) Tools() []string { return l.tools.Names() }

// stepKind classifies a step of the scratchpad.
type stepKind int

const (
	stepAction stepKind = iota
	stepInvalid
)

// step is one model turn that did not end the run.
type step struct {
	n       int
	kind    stepKind
	thought string
	// text is the reply shown back for a format error (invented
	// observations cut).
	text string
	// feedback is the format error shown to the model.
	feedback string
	calls    []*call
	// action is the action as the model wrote it (completion style),
	// shown back exactly so.
	action string
	// vars is the state block shown after the step's observations: the
	// vars its calls changed, or empty.
	vars string
}

// call is one tool call of a step.
type call struct {
	id   string // native tool call id
	name string // the tool name as the model wrote it
	// tc is the call resolved against the loop's tools.
	tc nodekind.ToolCall
	// input is the tool input (unwrapped for the tool); args the raw
	// native arguments.
	input, args string
	// full is the tool's whole output, uncut (for recall and the tool
	// search), or obs when the call failed or returned nothing.
	full string
	// obs is what the model is shown (already truncated).
	obs string
	// fromTool is true when obs is the tool's output or error, false for
	// a guard message.
	fromTool bool
	// guard is the guard message (unknown tool, repeat), also in obs.
	guard string
}

// toolName is the tool's registered name, or the name as written when
// there is no such tool.
func (c *call) toolName() string { return c.tc.Name }

// seenCall remembers the first occurrence of a (tool, input, observation)
// triple and how often it came back.
type seenCall struct {
	count int
	step  int
}

// halt is why a run stopped without a final answer.
type halt struct {
	failure, reason, why string
}

// run is the state of one Run, or of one Branch.
type run struct {
	l          *Loop
	st         *state.State
	in         Input
	caller     llm.CallMeta
	tr         *trace.Tracer
	system     string
	head       []llms.MessageContent
	steps      []*step
	out        Outcome
	parseFails int
	seen       map[string]*seenCall
	// recall is the run's tool calls as of the current turn's start, which
	// the turn's recall calls read (snapshotRecall); nil without recall.
	recall *recallView
	// compacted counts the leading steps that are compacted in the
	// prompt (with compaction "window", those whose events were
	// emitted; the prompt follows run.old).
	compacted int
	// header is the completion-style prompt's head: the system
	// template's text, the task line and a line break.
	header string
	// final is the step that gave the final answer (completion style).
	final *step
	// summary is the model's summary of the first summarized steps
	// (compaction "summarize"), shown after the task; summarized counts
	// the steps it covers, which the prompt no longer shows.
	summary    string
	summarized int
	// headVars is the state block the task message shows (ShowVars);
	// varsVer the version of the vars last shown.
	headVars string
	varsVer  uint64
	// shown are the tools the last model call's prompt showed, when tool
	// retrieval is on (see showTools).
	shown []string
}

// Run runs the loop on in until the model gives a final answer or a guard or
// budget stops it. It never aborts for a tool error (that becomes an
// observation) and returns an error only when the model call fails, ctx
// ends, or the input or templates are invalid; Outcome then holds the
// entries so far. A stop without a final answer is not an error: the
// Outcome is incomplete, carries the failure kind, and (with finalize on)
// a best-effort answer; Outcome.Err reports it as a typed error.
//
// Run changes st only through its Usage (model and tool calls), so
// concurrent runs may share one state.
func (l *Loop) Run(ctx context.Context, st *state.State, in Input) (Outcome, error) {
	r, err := l.begin(st, in)
	if err != nil {
		return Outcome{}, err
	}
	r.tr = trace.From(ctx)
	return r.loop(ctx)
}

// announce emits the examples_fallback event before a run's first turn.
func (r *run) announce() {
	if r.l.notice != "" && r.out.Iterations == 0 {
		r.guard(GuardExamplesFallback, 1, r.l.notice, nil)
	}
}

// begin checks in and renders the head of the prompt: nothing is asked
// yet.
func (l *Loop) begin(st *state.State, in Input) (*run, error) {
	if strings.TrimSpace(in.Task) == "" {
		return nil, ErrEmptyTask
	}
	if in.Kind == "" {
		in.Kind = "react"
	}
	r := &run{l: l, st: st, in: in, caller: llm.CallMeta{Node: in.NodeID, Kind: in.Kind, Role: in.Role}, seen: map[string]*seenCall{}}
	var err error
	if r.system, err = l.system.Render(st, l.systemData()); err != nil {
		return nil, err
	}
	r.headState()
	if err := r.renderHead(); err != nil {
		return nil, err
	}
	return r, nil
}

// renderHead renders the system message and the task (with r.in's
// lessons): the part of the prompt that is never dropped.
func (r *run) renderHead() error {
	task, err := r.l.prompt.Render(r.st, taskData(r.in))
	if err != nil {
		return err
	}
	if r.l.s.completion() {
		r.header = r.system + strings.TrimRight(task, "\r\n") + "\n"
		return nil
	}
	task = strings.TrimSpace(task)
	if block := r.summaryBlock(); block != "" {
		task += "\n\n" + block
	}
	if r.headVars != "" {
		task += "\n\n" + r.varsBlock(r.headVars)
	}
	r.head = llm.Prompt(r.system, task)
	return nil
}

func (r *run) emit(kind trace.Kind, text string, data map[string]any) {
	r.tr.Emit(trace.Event{Node: r.in.NodeID, Kind: kind, Text: text, Data: data})
}

func (r *run) guard(name string, step int, text string, extra map[string]any) {
	data := map[string]any{"guard": name, "step": step}
	for k, v := range extra {
		data[k] = v
	}
	r.emit(trace.KindGuard, text, data)
}

func (r *run) loop(ctx context.Context) (Outcome, error) {
	for r.out.Iterations < r.l.s.maxIter {
		done, h, err := r.turn(ctx, nil)
		switch {
		case errors.Is(err, llm.ErrBudgetExceeded):
			return r.stop(ctx, halt{failure: state.FailureBudget, reason: err.Error(), why: r.l.lb.whyRunBudget})
		case err != nil:
			return r.out, err
		case done:
			r.out.Complete = true
			return r.out, nil
		case h != nil:
			return r.stop(ctx, *h)
		}
	}
	return r.stop(ctx, halt{failure: state.FailureBudget,
		reason: fmt.Sprintf("the iteration budget ran out: %d model turns (max_iterations) without a final answer", r.l.s.maxIter),
		why:    fmt.Sprintf(r.l.lb.whyBudget, r.l.s.maxIter)})
}

// turn asks the model for one turn, with opts after the loop's call
// options, and handles the reply: a final answer (done), a stop by a guard
// (h), or a step to go on from.
func (r *run) turn(ctx context.Context, opts []llms.CallOption) (done bool, h *halt, err error) {
	if err := ctx.Err(); err != nil {
		return false, nil, err
	}
	r.announce()
	if opts, err = r.showTools(ctx, opts); err != nil {
		return false, nil, err
	}
	if r.l.s.completion() {
		r.snapshotRecall()
		done, h, err = r.completionTurn(ctx, len(r.steps)+1, opts)
		if err == nil && !done && h == nil {
			err = r.compact(ctx)
		}
		return done, h, err
	}
	rep, err := r.ask(ctx, opts)
	if err != nil {
		return false, nil, fmt.Errorf("react step %d: %w", len(r.steps)+1, err)
	}
	r.out.Iterations++
	n := len(r.steps) + 1
	r.snapshotRecall()
	if r.l.s.mode == ModeTools {
		done, h, err = r.toolsTurn(ctx, n, rep)
	} else {
		done, h, err = r.textTurn(ctx, n, rep)
	}
	if err == nil && !done && h == nil {
		if len(r.steps) >= n && r.steps[len(r.steps)-1].kind == stepAction {
			r.noteVars(r.steps[len(r.steps)-1])
		}
		err = r.compact(ctx)
	}
	return done, h, err
}

// reply is one model turn's output.
type reply struct {
	text  string
	calls []llms.ToolCall
	empty bool
}

// ask calls the model, whose Call retries empty replies up to
// MaxEmptyRetries times.
// Tool calls are read from every choice: Anthropic returns them in a
// choice of their own.
func (r *run) ask(ctx context.Context, opts []llms.CallOption) (reply, error) {
	callOpts := r.l.callOpts
	if len(opts) > 0 {
		callOpts = append(slices.Clip(callOpts), opts...)
	}
	// Model.Call retries empty replies (guard "empty_reply"): the loop's
	// max_empty_retries, when set, replaces the llm block's empty_retries
	// for its turns (the loop never retries on its own); in tools mode the nudge
	// (in text mode too) is the loop's own, in the prompt's language,
	// unless the llm block sets one.
	model := r.l.model
	if r.l.s.maxEmpty >= 0 {
		model.EmptyRetries = r.l.s.maxEmpty
	}
	if model.EmptyNudge == "" {
		model.EmptyNudge = r.l.lb.emptyText
		if r.l.s.mode == ModeTools {
			model.EmptyNudge = r.l.lb.emptyReply
		}
	}
	text, resp, err := model.Call(ctx, r.st, r.caller, r.messages(), callOpts...)
	if err != nil {
		return reply{}, err
	}
	rep := reply{text: text}
	for _, ch := range resp.Choices {
		if ch == nil {
			continue
		}
		if strings.TrimSpace(rep.text) == "" && strings.TrimSpace(ch.Content) != "" {
			rep.text = ch.Content
		}
		if r.l.s.mode == ModeTools {
			rep.calls = append(rep.calls, ch.ToolCalls...)
		}
	}
	if strings.TrimSpace(rep.text) != "" || len(rep.calls) > 0 {
		return rep, nil
	}
	// The retries ran out: the caller feeds the empty reply back.
	return reply{text: rep.text, empty: true}, nil
}

// textTurn handles one text-mode reply.
func (r *run) textTurn(ctx context.Context, n int, rep reply) (bool, *halt, error) {
	// Replies are parsed in both grammars (parse's default) whatever the
	// prompt asked for: a paper-style action in a "react" run (or the
	// reverse) is accepted rather than costing a retry.
	res := parse.Parse(rep.text, r.l.parseOpts()...)
	if res.Truncated {
		r.guard("invented_observation", n, "cut an Observation the model wrote itself, and everything after it", nil)
	}
	switch res.Kind {
	case parse.KindFinal:
		r.parseFails = 0
		r.thought(n, res.Thought, res.Notes)
		r.out.Answer = res.Answer
		r.out.Entries = append(r.out.Entries, state.Entry{Thought: res.Thought, Final: res.Answer, Raw: rep.text})
		return true, nil, nil
	case parse.KindAction:
		r.parseFails = 0
		r.thought(n, res.Thought, res.Notes)
		c := &call{name: res.Tool, input: res.Input}
		r.resolve(n, c)
		s := &step{n: n, kind: stepAction, thought: res.Thought, calls: []*call{c}}
		c.tc.Announce(ctx)
		out, err := c.tc.Run(ctx, r.st)
		if err != nil {
			return false, nil, err
		}
		c.observe(out)
		h := r.checkRepeat(n, c)
		c.report(ctx, out)
		if h != nil {
			e := entryOf(s.thought, c, rep.text)
			e.Error = h.reason
			r.out.Entries = append(r.out.Entries, e)
			return false, h, nil
		}
		r.steps = append(r.steps, s)
		r.out.Entries = append(r.out.Entries, entryOf(s.thought, c, rep.text))
		return false, nil, nil
	}
	text, _ := parse.CutObservation(rep.text)
	return false, r.invalid(n, res.Thought, text, res.Error, rep.text), nil
}

// invalid records a reply that could not be used and the feedback sent
// back; it halts after MaxParseFailures in a row.
func (r *run) invalid(n int, thought, text, feedback, raw string) *halt {
	r.parseFails++
	r.steps = append(r.steps, &step{n: n, kind: stepInvalid, thought: thought, text: text, feedback: feedback})
	r.out.Entries = append(r.out.Entries, state.Entry{Thought: thought, Raw: raw, Error: feedback})
	r.emit(trace.KindParseError, feedback, map[string]any{"step": n, "consecutive": r.parseFails, "raw": textutil.Clip(raw, 500)})
	if r.parseFails < r.l.s.maxParse {
		return nil
	}
	return &halt{failure: state.FailureParse,
		reason: fmt.Sprintf("%d replies in a row could not be parsed (max_parse_failures); the last error: %s", r.parseFails, feedback),
		why:    r.l.lb.whyParse}
}

func (r *run) thought(n int, text string, notes []string) {
	if text == "" && len(notes) == 0 {
		return
	}
	data := map[string]any{"step": n}
	if len(notes) > 0 {
		data["notes"] = notes
	}
	r.emit(trace.KindThought, text, data)
}

// checkRepeat applies the repeat guard to c once its tool has answered.
// It counts repeated (tool, input, observation) triples, not repeated
// calls: the same Lookup[x] that pages to the next result is progress,
// the same call returning the same text again is a loop. A repeat gets a
// warning appended to its observation; more than MaxRepeats repeats of one
// triple return a halt.
func (r *run) checkRepeat(n int, c *call) *halt {
	l := r.l
	key := tools.NormalizeName(c.toolName()) + "\x00" + normalizeInput(c.input) + "\x00" + c.obs
	prior := r.seen[key]
	if prior == nil {
		r.seen[key] = &seenCall{step: n}
		return nil
	}
	prior.count++
	if prior.count > l.s.maxRepeats {
		reason := fmt.Sprintf("the model repeated the call %s(%s) %d times and got the same result each time (max_repeats %d)", c.toolName(), textutil.Clip(c.input, 80), prior.count, l.s.maxRepeats)
		return &halt{failure: state.FailureLoop, reason: reason, why: l.lb.whyLoop}
	}
	warning := fmt.Sprintf(l.lb.repeated, c.toolName(), prior.step)
	r.guard("repeat", n, fmt.Sprintf("repeated call %s(%s) with the same result, repeat %d of %d tolerated", c.toolName(), textutil.Clip(c.input, 80), prior.count, l.s.maxRepeats),
		map[string]any{"tool": c.toolName(), "input": c.input, "repeats": prior.count, "first_step": prior.step})
	if c.fromTool {
		c.obs += "\n" + warning
	} else {
		c.guard += "\n" + warning
		c.obs = c.guard
	}
	return nil
}

// resolve prepares c's tool call (nodekind.PrepareTool): the tool c names, if
// the loop has it, and the input unwrapped for it. The call's trace
// events carry the step number and the native call id.
func (r *run) resolve(n int, c *call) {
	data := map[string]any{"step": n}
	if c.id != "" {
		data["tool_call_id"] = c.id
	}
	c.tc = nodekind.PrepareTool(r.l.tools, r.caller, c.name, c.input, nodekind.ToolOptions{Limit: r.l.s.obsLimit, Messages: r.l.lb.tool, Trace: data,
		Verbatim: r.l.s.verbatim()})
	if rt, ok := c.tc.Tool.(recallTool); ok {
		// The recall tool reads this run's calls as of the turn's start.
		rt.view = r.recall
		c.tc.Tool = rt
	}
	c.input = c.tc.Input
	r.noteUnshown(n, c)
}

// report emits c's result events; the observation event holds what the
// model is shown, a repeat guard's warning included.
func (c *call) report(ctx context.Context, res nodekind.ToolResult) {
	if c.fromTool {
		res.Observation = c.obs
	}
	c.tc.Report(ctx, res)
}

// observe records the result of c's call: a tool's output or failure is
// the observation, the answer to an unknown tool a guard message.
func (c *call) observe(res nodekind.ToolResult) {
	c.obs = res.Observation
	c.full = res.Output
	if res.Err != nil || res.Output == "" {
		c.full = res.Observation
	}
	if res.Unknown() {
		c.guard = res.Observation
		return
	}
	c.fromTool = true
}

func entryOf(thought string, c *call, raw string) state.Entry {
	e := state.Entry{Thought: thought, Tool: c.toolName(), Input: c.input, Raw: raw, ToolCallID: c.id}
	if c.fromTool {
		e.Observation = c.obs
	} else {
		e.Error = c.guard
	}
	return e
}

// compact moves the end of the compacted steps after a step was added,
// and emits a guard event for each step that has just been compacted and
// had an observation elided. With compaction "window" every step but the
// last KeepSteps is compacted; with "block" and "summarize" nothing moves
// until the steps shown in full pass the budget, and then all but the
// last KeepSteps are compacted at once ("summarize" has the model
// summarize them first, see run.summarize). It fails only when a summary
// call ends the turn (ctx, budget, journal).
func (r *run) compact(ctx context.Context) error {
	k := r.l.s.keepSteps
	if k == 0 {
		return nil
	}
	end := len(r.steps) - k
	if r.l.s.compaction != CompactionWindow {
		live := 0
		for _, s := range r.steps[r.compacted:] {
			live += s.size()
		}
		if live <= r.l.s.budget || end <= r.compacted {
			return nil
		}
	}
	if r.l.s.compaction == CompactionSummarize && end > r.summarized {
		if err := r.summarize(ctx, end); err != nil {
			return err
		}
		if r.summarized == end {
			r.compacted = end
			return nil
		}
	}
	for ; r.compacted < end; r.compacted++ {
		s := r.steps[r.compacted]
		for _, c := range s.calls {
			if c.elidable() {
				r.guard("compaction", s.n, fmt.Sprintf("elided the observation of step %d (%d chars) from the prompt", s.n, len([]rune(c.obs))),
					map[string]any{"elided_step": s.n, "tool": c.toolName()})
			}
		}
	}
	return nil
}

// stop ends a run without a final answer: it records why and, with
// finalize on, asks the model for a best-effort answer from the work so far.
func (r *run) stop(ctx context.Context, h halt) (Outcome, error) {
	r.out.Complete = false
	r.out.Reason = h.reason
	r.out.Failure = h.failure
	r.guard(h.failure, len(r.steps), h.reason, map[string]any{"failure": h.failure, "finalize": r.l.s.finalize})
	if !r.l.s.finalize {
		return r.out, nil
	}
	user, err := r.l.finalize.Render(r.st, finalizeData(r.in, h.why, r.transcript(true)))
	if err != nil {
		return r.out, err
	}
	caller := r.caller
	caller.Role = "finalize"
	text, _, err := r.l.model.Call(ctx, r.st, caller, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, strings.TrimSpace(user))}, r.l.finOpts...)
	if err != nil {
		return r.out, fmt.Errorf("react finalizer: %w", err)
	}
	r.out.Answer, _ = finalReply(text)
	r.emit(trace.KindThought, strings.TrimSpace(text), map[string]any{"role": "finalize"})
	return r.out, nil
}

// finalReply reads a reply that should end with "Final Answer: ...": the
// answer and the thought before it. Without that label the whole reply is
// the answer and there is no thought.
func finalReply(text string) (answer, thought string) {
	if res := parse.Parse(text); res.Kind == parse.KindFinal {
		return res.Answer, res.Thought
	}
	return strings.TrimSpace(text), ""
}

// unknownToolSetting is the error of a node's tools setting that names a
// tool the pipeline does not have: the nearest of the pipeline's tools, or
// where to declare it when the pipeline declares none.
func unknownToolSetting(err error) error {
	var ue *tools.UnknownToolError
	if !errors.As(err, &ue) {
		return &config.SettingError{Key: "tools", Err: fmt.Errorf("%w: %w", config.ErrSettings, err)}
	}
	if len(ue.Known) == 0 {
		return &config.SettingError{Key: "tools", Err: fmt.Errorf("%w: %w %q: the pipeline declares no tools; add it to the pipeline's tools: block",
			config.ErrSettings, tools.ErrUnknownTool, ue.Name)}
	}
	return &config.SettingError{Key: "tools", Err: fmt.Errorf("%w: %w %q (%sthe pipeline's tools: %s; a node lists only tools of the pipeline's tools: block)",
		config.ErrSettings, tools.ErrUnknownTool, ue.Name, config.DidYouMean(ue.Name, ue.Known), strings.Join(ue.Known, ", "))}
}
