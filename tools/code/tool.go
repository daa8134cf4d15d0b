package code

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/planner-engine/planner/tools"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Name is the name the code tool is registered under.
const Name = "code"

// NoOutput is the observation of a program that printed nothing and did
// not end with an expression of a value other than None.
const NoOutput = "(no output; print a value or end with an expression)"

// filename names the program in positions; messages show only lines and
// columns.
const filename = "code"

// stopGrace is how long Run waits, once a program has been told to stop,
// for it to reach a step boundary before returning without it (it may be
// inside one long built-in operation, which cannot be interrupted).
const stopGrace = 500 * time.Millisecond

// metaMargin is added to Config.Timeout for Meta.Timeout, to cover
// parsing, the stop grace and rendering.
const metaMargin = 2 * time.Second

// Tool is the code tool: it runs a Starlark program (a dialect of Python)
// in a fresh, hermetic interpreter per call and returns what the program
// printed and the value of its last expression. It is safe for concurrent
// use.
type Tool struct {
	cfg         Config
	guards      *guards
	opts        *syntax.FileOptions
	predeclared starlark.StringDict
	grace       time.Duration // stopGrace; tests shorten it
}

// Compile-time checks that Tool implements the planner tool interfaces.
var (
	_ tools.Tool         = (*Tool)(nil)
	_ tools.Schemer      = (*Tool)(nil)
	_ tools.MetaProvider = (*Tool)(nil)
)

// New returns a code tool with the limits of cfg (zero fields take their
// defaults).
func New(cfg Config) *Tool {
	cfg = cfg.withDefaults()
	g := &guards{cfg: cfg}
	return &Tool{
		cfg:         cfg,
		guards:      g,
		opts:        dialect(),
		predeclared: g.predeclared(),
		grace:       stopGrace,
	}
}

// Config returns the tool's limits, defaults filled in.
func (t *Tool) Config() Config { return t.cfg }

// Name returns "code".
func (t *Tool) Name() string { return Name }

// Description tells the model what the tool runs and what it lacks.
func (t *Tool) Description() string {
	return "Runs a short program in Starlark, a sandboxed dialect of Python, and returns what it printed " +
		"followed by the value of its last line if that is an expression (like a notebook cell). " +
		"Use it for exact arithmetic, counting, loops, string, list and dict processing, and JSON. " +
		"Python syntax works (def, lambda, if, for, while, comprehensions, recursion, % and .format) " +
		"except: no imports (the modules math and json are already loaded), no classes, no try/except " +
		"(use fail(\"msg\")), no f-strings, no ** (use pow(x, y)), strings are not iterable (use s.elems()), " +
		"and there is no file, network or clock access. Built-ins include print, len, range, sorted, min, max, " +
		"sum, abs, round, pow, divmod, map, filter, enumerate, zip, any, all, int, float, str, list, dict, set, tuple. " +
		fmt.Sprintf("Limits: %s steps, %s, %s of printed output. ", withCommas(t.cfg.MaxSteps), t.cfg.Timeout, byteSize(int64(t.cfg.MaxOutput))) +
		"Input: the program text."
}

// Schema declares a single required string argument "code".
func (t *Tool) Schema() map[string]any {
	return tools.StringSchema("code", "The Starlark (Python-like) program to run; print results or end with an expression.")
}

// Meta reports that the tool has no side effects; its timeout is the
// program's time limit plus a margin.
func (t *Tool) Meta() tools.Meta {
	return tools.Meta{ReadOnly: true, Timeout: t.cfg.Timeout + metaMargin}
}

// Call runs the program in input (see Program for the forms accepted) and
// returns its observation (see Result.String). A failing program yields
// an *Error matching one of the sentinel errors and tools.ErrBadInput; a
// cancelled ctx yields its error.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	res, err := t.Run(ctx, Program(input))
	if err != nil {
		return "", err
	}
	return res.String(), nil
}

// Result is what a program produced.
type Result struct {
	// Output is the text the program printed, at most Config.MaxOutput
	// bytes of it.
	Output string
	// OutputTruncated is true when the program printed more than Output
	// holds.
	OutputTruncated bool
	// Value is the repr of the program's last expression, at most
	// Config.MaxOutput bytes of it; empty when the program did not end
	// with an expression or its value is None.
	Value string
	// ValueTruncated is true when Value was cut.
	ValueTruncated bool
	// Steps is the number of steps the program ran.
	Steps uint64
}

// String renders the result as the tool's observation: the printed text,
// a note when it was truncated, then the value on its own line; NoOutput
// when both are empty.
func (r Result) String() string {
	var b strings.Builder
	b.WriteString(r.Output)
	if r.OutputTruncated {
		if b.Len() > 0 && !strings.HasSuffix(r.Output, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("…[printed output truncated here]\n")
	}
	if r.Value != "" {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		b.WriteString(r.Value)
		if r.ValueTruncated {
			b.WriteString("…[value truncated]")
		}
	}
	s := strings.TrimRight(b.String(), "\n")
	if strings.TrimSpace(s) == "" {
		return NoOutput
	}
	return s
}

// Run runs program, the Starlark source itself, and returns what it
// printed and the value of its last expression. A program that cannot be
// parsed, fails, or exceeds a limit yields an *Error; a cancelled ctx
// yields the context's error. Each call runs in a fresh interpreter.
func (t *Tool) Run(ctx context.Context, program string) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("code: %w", context.Cause(ctx))
	}
	if strings.TrimSpace(program) == "" {
		return Result{}, fmt.Errorf("%w: no program given; write a Starlark (Python-like) program, e.g. print(1 + 2)", tools.ErrBadInput)
	}
	if len(program) > t.cfg.MaxSource {
		return Result{}, &Error{Kind: ErrSourceTooLarge, Msg: fmt.Sprintf("the program is %s long, over the limit of %s; write a shorter one",
			byteSize(int64(len(program))), byteSize(int64(t.cfg.MaxSource)))}
	}
	prog, hasResult, err := t.compile(program)
	if err != nil {
		return Result{}, err
	}
	return t.exec(ctx, program, prog, hasResult)
}

// compile parses, rewrites and resolves the program.
func (t *Tool) compile(src string) (*starlark.Program, bool, error) {
	f, err := t.opts.Parse(filename, src, 0)
	if err != nil {
		return nil, false, syntaxError(src, err)
	}
	hasResult, err := rewrite(f)
	if err != nil {
		return nil, false, syntaxError(src, err)
	}
	prog, err := starlark.FileProgram(f, t.predeclared.Has)
	if err != nil {
		return nil, false, syntaxError(src, err)
	}
	return prog, hasResult, nil
}

// exec runs a compiled program under the limits.
func (t *Tool) exec(ctx context.Context, src string, prog *starlark.Program, hasResult bool) (Result, error) {
	r := newRun(t.cfg)
	defer r.done()
	thread := &starlark.Thread{
		Name:  "code",
		Print: func(_ *starlark.Thread, msg string) { r.out.print(starlark.Tuple{starlark.String(msg)}, "", "\n") },
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, errors.New("load() is not available")
		},
		OnMaxSteps: r.onMaxSteps,
	}
	thread.SetLocal(localKey, r)
	thread.SetMaxExecutionSteps(min(checkEvery, t.cfg.MaxSteps))
	r.thread = thread

	timer := time.AfterFunc(t.cfg.Timeout, func() { r.stop(causeTime) })
	defer timer.Stop()
	unhook := context.AfterFunc(ctx, func() { r.stop(causeContext) })
	defer unhook()

	type outcome struct {
		globals starlark.StringDict
		err     error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{err: fmt.Errorf("code: %w: %v", tools.ErrToolPanic, p)}
			}
		}()
		g, err := prog.Init(thread, t.predeclared)
		done <- outcome{g, err}
	}()

	var res outcome
	select {
	case res = <-done:
	case <-r.stopped:
		// A limit the interpreter checks itself stopped it at a step
		// boundary, and it is unwinding; the time limit or the context
		// may have found it inside one long built-in operation, so it
		// gets a grace period before Run gives up on it. Its goroutine
		// ends when the operation does.
		var giveUp <-chan time.Time
		if c := r.stopCause(); c == causeTime || c == causeContext {
			giveUp = time.After(t.grace)
		}
		select {
		case res = <-done:
		case <-ctx.Done():
			return Result{}, fmt.Errorf("code: program cancelled: %w", context.Cause(ctx))
		case <-giveUp:
			if r.stopCause() == causeContext {
				return Result{}, fmt.Errorf("code: program cancelled: %w", context.Cause(ctx))
			}
			out, _ := r.out.snapshot()
			return Result{}, t.limitError(src, r.stopCause(), nil, out)
		}
	}

	out, truncated := r.out.snapshot()
	if res.err != nil {
		if errors.Is(res.err, tools.ErrToolPanic) {
			return Result{}, res.err
		}
		switch cause := r.stopCause(); cause {
		case causeNone:
			return Result{}, runtimeError(src, res.err, out)
		case causeContext:
			return Result{}, fmt.Errorf("code: program cancelled: %w", context.Cause(ctx))
		default:
			return Result{}, t.limitError(src, cause, res.err, out)
		}
	}
	result := Result{Output: out, OutputTruncated: truncated, Steps: thread.ExecutionSteps()}
	if v, ok := res.globals[resultVar]; ok && hasResult && v != starlark.None {
		w := &limitWriter{max: t.cfg.MaxOutput}
		(&renderer{w: w}).repr(v, 0)
		result.Value, result.ValueTruncated = string(w.buf), w.full
	}
	return result, nil
}

// syntaxError describes a parser, resolver or load error with its
// position, the offending line and a hint.
func syntaxError(src string, err error) error {
	var (
		pos  syntax.Position
		msg  = err.Error()
		hint string
		more int
	)
	var se syntax.Error
	var sep *syntax.Error
	var re resolve.ErrorList
	var le *loadError
	switch {
	case errors.As(err, &se):
		pos, msg = se.Pos, se.Msg
	case errors.As(err, &sep):
		pos, msg = sep.Pos, sep.Msg
	case errors.As(err, &re) && len(re) > 0:
		pos, msg, more = re[0].Pos, re[0].Msg, len(re)-1
		hint = resolveHint(msg)
	case errors.As(err, &le):
		pos, msg = le.pos, le.Error()
	}
	line, col := int(pos.Line), int(pos.Col)
	text := sourceLine(src, line)
	if hint == "" && le == nil && re == nil {
		hint = syntaxHint(msg, text)
	}
	var b strings.Builder
	b.WriteString("syntax error")
	if line > 0 {
		fmt.Fprintf(&b, " at line %d, column %d", line, col)
	}
	b.WriteString(": ")
	b.WriteString(shorten(msg, 300))
	if text != "" {
		fmt.Fprintf(&b, " (line %d: %s)", line, text)
	}
	if more > 0 {
		fmt.Fprintf(&b, "; %d more error(s) after this one", more)
	}
	if hint != "" {
		b.WriteString("; hint: ")
		b.WriteString(hint)
	}
	return &Error{Kind: ErrSyntax, Msg: b.String(), Line: line, Col: col, cause: err}
}

// frame is a call frame of a failed program, from starlark's call stack.
type frame struct {
	name      string
	line, col int
	builtin   bool
}

// framesOf returns the call stack of an evaluation error, outermost
// first, without the hidden guards.
func framesOf(err error) []frame {
	var ee *starlark.EvalError
	if !errors.As(err, &ee) {
		return nil
	}
	var fs []frame
	for _, cf := range ee.CallStack {
		if strings.HasPrefix(cf.Name, hiddenPrefix) {
			continue
		}
		fs = append(fs, frame{
			name:    cf.Name,
			line:    int(cf.Pos.Line),
			col:     int(cf.Pos.Col),
			builtin: cf.Pos.Filename() != filename,
		})
	}
	return fs
}

// where describes the innermost frame of the program's own code: "line 5
// in f (called from line 9)", with the built-in it was in, if any, unless
// msg already names it.
func where(fs []frame, msg string) (desc string, line, col int) {
	inner := -1
	for i := len(fs) - 1; i >= 0; i-- {
		if !fs[i].builtin {
			inner = i
			break
		}
	}
	if inner < 0 {
		return "", 0, 0
	}
	f := fs[inner]
	var b strings.Builder
	fmt.Fprintf(&b, "line %d", f.line)
	if f.name != "<toplevel>" {
		fmt.Fprintf(&b, " in %s", f.name)
	}
	// Callers, innermost first, a run of calls from one line counted once.
	var callers []string
	for i := inner - 1; i >= 0 && len(callers) < 3; i-- {
		if fs[i].builtin {
			continue
		}
		n := 1
		for i > 0 && !fs[i-1].builtin && fs[i-1].line == fs[i].line {
			i--
			n++
		}
		c := fmt.Sprintf("line %d", fs[i].line)
		if n > 1 {
			c += fmt.Sprintf(" (%d times)", n)
		}
		callers = append(callers, c)
		if len(callers) == 3 && countCode(fs[:i]) > 0 {
			callers = append(callers, "…")
		}
	}
	if len(callers) > 0 {
		fmt.Fprintf(&b, " (called from %s)", strings.Join(callers, ", "))
	}
	if last := fs[len(fs)-1]; inner < len(fs)-1 && last.builtin && !strings.HasPrefix(msg, last.name+":") {
		fmt.Fprintf(&b, ", in %s()", last.name)
	}
	return b.String(), f.line, f.col
}

// countCode counts the frames of the program's own code.
func countCode(fs []frame) int {
	n := 0
	for _, f := range fs {
		if !f.builtin {
			n++
		}
	}
	return n
}

// traceback renders the frames as Python does, outermost first, a run
// of identical frames (recursion) shown once with its count, and the
// middle of a deep stack elided.
func traceback(src string, fs []frame) string {
	if len(fs) == 0 {
		return ""
	}
	type entry struct {
		f     frame
		times int
	}
	var es []entry
	for _, f := range fs {
		if n := len(es); n > 0 && es[n-1].f.name == f.name && es[n-1].f.line == f.line && es[n-1].f.builtin == f.builtin {
			es[n-1].times++
			continue
		}
		es = append(es, entry{f, 1})
	}
	var b strings.Builder
	b.WriteString("Traceback (most recent call last):")
	const head, tail = 4, 8
	for i, e := range es {
		if len(es) > head+tail+1 && i == head {
			fmt.Fprintf(&b, "\n  ... %d more calls ...", len(es)-head-tail)
		}
		if len(es) > head+tail+1 && i >= head && i < len(es)-tail {
			continue
		}
		if e.f.builtin {
			fmt.Fprintf(&b, "\n  in built-in %s", e.f.name)
		} else {
			fmt.Fprintf(&b, "\n  line %d, in %s", e.f.line, e.f.name)
			if text := sourceLine(src, e.f.line); text != "" {
				b.WriteString(": ")
				b.WriteString(text)
			}
		}
		if e.times > 1 {
			fmt.Fprintf(&b, "\n  [previous line repeated %d more times]", e.times-1)
		}
	}
	return b.String()
}

// runtimeError describes a program's failure: the message, where it
// happened, the offending line, a hint and the end of what it printed.
func runtimeError(src string, err error, out string) error {
	kind := ErrRuntime
	if errors.Is(err, ErrValueTooLarge) {
		kind = ErrValueTooLarge
	}
	msg := err.Error()
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		msg = ee.Msg
	}
	fs := framesOf(err)
	desc, line, col := where(fs, msg)
	var b strings.Builder
	b.WriteString("error")
	if desc != "" {
		b.WriteString(" at ")
		b.WriteString(desc)
	}
	b.WriteString(": ")
	b.WriteString(shorten(strings.Join(strings.Fields(msg), " "), 500))
	if text := sourceLine(src, line); text != "" {
		fmt.Fprintf(&b, " (line %d: %s)", line, text)
	}
	if hint := runtimeHint(msg); hint != "" {
		b.WriteString("; hint: ")
		b.WriteString(hint)
	}
	if out != "" {
		b.WriteString("; printed before the error: ")
		b.WriteString(quotedTail(out, 300))
	}
	return &Error{Kind: kind, Msg: b.String(), Line: line, Col: col, Traceback: traceback(src, fs), Output: out, cause: err}
}

// limitError describes a program stopped by a limit, where it was when
// stopped (if known), and what it printed.
func (t *Tool) limitError(src string, cause stopCause, err error, out string) error {
	fs := framesOf(err)
	desc, line, col := where(fs, "")
	at := ""
	if desc != "" {
		at = " at " + desc
	}
	var kind error
	var msg string
	switch cause {
	case causeSteps:
		kind = ErrStepLimit
		msg = fmt.Sprintf("the program was stopped%s after %s steps (the step limit): is there an endless loop? Do less work, or break out of loops sooner", at, withCommas(t.cfg.MaxSteps))
	case causeTime:
		kind = ErrTimeLimit
		msg = fmt.Sprintf("the program was stopped%s after running for %s (the time limit): is there an endless loop? Do less work", at, t.cfg.Timeout)
	case causeDepth:
		kind = ErrDepthLimit
		msg = fmt.Sprintf("maximum recursion depth exceeded%s: calls nested more than %d deep; use a loop instead of deep recursion", at, t.cfg.MaxDepth)
	default:
		kind = ErrMemoryLimit
		msg = fmt.Sprintf("the program was stopped%s after using more than %s of memory (the memory limit); build smaller data", at, byteSize(t.cfg.MaxMemory))
	}
	if text := sourceLine(src, line); text != "" {
		msg += fmt.Sprintf(" (line %d: %s)", line, text)
	}
	if out != "" {
		msg += "; printed before: " + quotedTail(out, 300)
	}
	return &Error{Kind: kind, Msg: msg, Line: line, Col: col, Traceback: traceback(src, fs), Output: out, cause: err}
}
