package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/planner-engine/planner/verify"
	"github.com/spf13/cobra"
)

type runFlags struct {
	config, llm, traceFile, reference, record string
	suite, task                               string
	json, quiet, verbose                      bool
	// stream and noStream force the live reply on or off (default: on
	// when the trace stream goes to a terminal); traceTokens writes token
	// events to the --trace file.
	stream, noStream, traceTokens bool
	maxSteps                      int
	timeout                       time.Duration

	// thread names the durable run (--thread) and store its store
	// (--store); noInput never asks on the terminal (--no-input).
	thread, store string
	noInput       bool
	// resume is set by planner resume: the thread exists; decision is
	// resume's decision on the approval it waits for (--approve, --deny).
	resume   bool
	decision *journal.Decision
	// opened is the thread store resume already opened; nil: run opens
	// --store itself.
	opened journal.Store
	// audit is the audit log file (--audit); "" with a thread: audit.db
	// beside the thread store (auditPath).
	audit string
	// keepRequests journals whole model requests (--keep-requests).
	keepRequests bool
	// history are the earlier turns of the conversation a follow-up turn
	// continues (resume of a thread NAME.turnN reads them from its meta).
	history state.History
}

// runOutput is the --json result line.
type runOutput struct {
	Answer   string              `json:"answer"`
	Complete bool                `json:"complete"`
	Reason   string              `json:"reason,omitempty"`
	Failure  string              `json:"failure,omitempty"`
	Error    string              `json:"error,omitempty"`
	Model    string              `json:"model"`
	Usage    state.UsageSnapshot `json:"usage"`
	Steps    []string            `json:"steps"`
	Trace    string              `json:"trace,omitempty"`
	Cassette string              `json:"cassette,omitempty"`
	Pipeline string              `json:"pipeline"`
	// Thread and Status are set for a run with --thread (and resume).
	Thread string `json:"thread,omitempty"`
	Status string `json:"status,omitempty"`
	// Reference is the task's reference answer (--suite/--task, or
	// --reference); Scorer the scorer that judged the answer against it,
	// and Correct its verdict (absent when the run gave no answer or the
	// reference cannot be scored).
	Reference string `json:"reference,omitempty"`
	Scorer    string `json:"scorer,omitempty"`
	Correct   *bool  `json:"correct,omitempty"`
}

// waitingOutput is the --json line of a run that waits for approval.
type waitingOutput struct {
	Status  string              `json:"status"`
	Thread  string              `json:"thread"`
	Pending *journal.Approval   `json:"pending"`
	Model   string              `json:"model"`
	Usage   state.UsageSnapshot `json:"usage"`
}

func newRunCmd(p process) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "run --config FILE [flags] (TASK... | --task ID)",
		Short: "Run one task through a pipeline",
		Long: `Run one task through a YAML pipeline and print the trace and the answer.
The task is the arguments joined by spaces, or standard input when it is "-".

The model is --llm (or PLANNER_LLM), else the pipeline's llm block. A question of your own
needs a real model: --llm openai:gpt-4o-mini (with OPENAI_API_KEY set), --llm ollama:llama3.1
(a local Ollama), ... The offline models play only what they know: --llm sim, a SIMULATED
oracle, plays a task of a suite with gold solutions (--suite demo --task demo-07, or a demo
question word for word); --llm scripted:FILE plays a script of replies (examples/scripts/), and
--llm scripted without a file the "replies" of the suite task (--suite FILE --task ID), in order.
--suite and --task also give any model the task's id and reference answer.

--record FILE saves every model request and response of the run to a cassette (JSON Lines,
secrets scrubbed). The recorder sits right around the provider, inside the retry middleware,
so a failed attempt that was retried is recorded too. --llm replay:FILE plays the cassette back
offline through the same middleware, reaching the identical result with no network; a request
that differs from the recording (a changed prompt or task, or a node's call options such as
temperature or stop words) fails the run with a diff of what changed. The file is created by
the first model call. Only run records; compare has no --record.

Limits: the whole run is bounded by --timeout (default: the pipeline's limits.timeout, which
defaults to ` + config.DefaultTimeout.String() + `). Each model attempt is bounded by the llm block's timeout
(default ` + middleware.DefaultCallTimeout.String() + ` for real providers) and failed attempts are retried up to
retry.max_attempts (default 3); every wait for a retry is printed, and a wait that would outlast
the run's deadline (a long Retry-After) fails at once with the reason.

Exit codes: 0 complete answer; 1 the run failed; 2 usage error; 4 the run ended with an
incomplete best-effort answer (budget, loop or parse failures; the reason is printed);
130 / 143 stopped by SIGINT / SIGTERM (the trace so far is saved; a --thread run is saved and
resumes with planner resume NAME); 3 the run waits for a human's approval of a tool call.

--thread NAME journals the run in the thread store (--store, PLANNER_STORE, default under
$XDG_STATE_HOME/planner/): every node step, model call and tool call is saved before the run goes
on, so Ctrl-C, a crash or a kill loses nothing; planner resume NAME continues without repeating
a saved call. A tool marked approve: true in the pipeline asks on the terminal before each call
(y, n, or n and a reason); without a terminal, or with --no-input, the thread waits (exit 3) until
planner resume NAME --approve or --deny REASON. On a thread that exists and is done, the task is a
follow-up: it runs as the conversation's next turn, thread NAME.turnN, with the thread's pipeline
and model, and its prompts show the earlier turns' questions and answers ({{.History}}).`,
		Example: `  planner run --config configs/react.yaml --llm sim --suite demo --task demo-07
  planner run --config configs/react.yaml --llm sim:noisy "In which city was Galileo Galilei born?"
  echo "Who discovered Saturn's moon Iapetus?" | planner run --config configs/react.yaml --llm sim --json -
  planner run --config configs/react.yaml --llm scripted:examples/scripts/react_demo.yaml "By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?"
  planner run --config configs/react.yaml --llm openai:gpt-4o-mini --trace run.jsonl "How tall is the Eiffel Tower?"   # needs OPENAI_API_KEY
  planner run --config configs/cot.yaml --llm openai:gpt-4o-mini --record cot.cassette.jsonl "What is 17 * 23 + 4?"   # needs OPENAI_API_KEY
  planner run --config configs/cot.yaml --llm replay:cot.cassette.jsonl "What is 17 * 23 + 4?"`,
		Args: func(c *cobra.Command, args []string) error {
			if f.task != "" {
				return nil // the task's own question, unless one is given
			}
			return minArgs(1, "a task (or - to read it from stdin, or --suite/--task)")(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			if f.config == "" {
				return &usageError{cmd: "run", err: errors.New("--config is required")}
			}
			if f.traceTokens && f.traceFile == "" {
				return &usageError{cmd: "run", err: errors.New("--trace-tokens needs --trace FILE")}
			}
			task := strings.Join(args, " ")
			if task == "-" {
				b, err := io.ReadAll(bufio.NewReader(c.InOrStdin()))
				if err != nil {
					return fmt.Errorf("reading task from stdin: %w", err)
				}
				task = strings.TrimSpace(string(b))
			}
			if strings.TrimSpace(task) == "" && (len(args) > 0 || f.task == "") {
				return &usageError{cmd: "run", err: errors.New("the task is empty")}
			}
			if f.thread != "" {
				if asked, err := followUp(c, p, f, task); asked {
					return err
				}
			}
			return runTask(c, p, f, task)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.config, "config", "c", "", "pipeline YAML file (required)")
	fl.StringVar(&f.llm, "llm", "", "model as provider:model (openai:gpt-4o-mini, ollama:llama3.1, scripted:FILE, scripted, sim:noisy); overrides the YAML llm block")
	fl.StringVar(&f.traceFile, "trace", "", "write every trace event as JSONL to this file")
	fl.StringVar(&f.record, "record", "", "save every model request/response to this cassette file (replay it with --llm replay:FILE)")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON object on the last stdout line")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not print the trace stream")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "also print node, route and model-call events")
	fl.BoolVar(&f.stream, "stream", false, "show each model reply as it is written, token by token (default when the trace stream goes to a terminal)")
	fl.BoolVar(&f.noStream, "no-stream", false, "do not stream model replies; show each Thought once parsed")
	fl.BoolVar(&f.traceTokens, "trace-tokens", false, "also write every streamed token as an event to the --trace file (many events)")
	c.MarkFlagsMutuallyExclusive("stream", "no-stream")
	fl.IntVar(&f.maxSteps, "max-steps", 0, "override limits.max_steps (node executions per run)")
	fl.DurationVar(&f.timeout, "timeout", 0, "whole-run time limit (default: the pipeline's limits.timeout, else "+config.DefaultTimeout.String()+"; negative: none)")
	fl.StringVar(&f.reference, "reference", "", "reference answer (used by evaluators such as Reflexion's exact match)")
	fl.StringVar(&f.suite, "suite", "", "run a task of this suite: demo, mixed, sorting, sorting32, sorting64, or a suite file (as compare's --suite); with --task, or matched by its question")
	fl.StringVar(&f.task, "task", "", "id of the --suite task to run (default suite: demo); the question may then be left out")
	fl.StringVar(&f.thread, "thread", "", "journal the run as thread NAME: it survives Ctrl-C and crashes (planner resume NAME), and can wait for approvals")
	storeFlag(c, &f.store)
	fl.BoolVar(&f.noInput, "no-input", false, "never ask on the terminal: a tool call that needs approval makes the thread wait (exit 3)")
	fl.StringVar(&f.audit, "audit", "", "record every tool call in this audit log (planner audit reads it; default with --thread: audit.db beside the thread store)")
	fl.BoolVar(&f.keepRequests, "keep-requests", false, "with --thread, journal each model call's whole prompt rather than its digest (a larger journal; a resume that diverges shows a diff)")
	return c
}

// runTask runs question (or the --suite/--task task) through the --config
// pipeline with the root run path, planner.Pipeline.Run, and prints the
// result. It chooses the task, loads the pipeline and its model, gathers
// the run options (trace sinks, audit log, approver, thread) and reports.
func runTask(c *cobra.Command, proc process, f *runFlags, question string) (err error) {
	ctx := c.Context()
	t, err := chooseTask(ctx, f, question)
	if err != nil {
		return err
	}
	a, err := app.New(append(t.appOptions(f), proc.otel.appOptions()...)...)
	if err != nil {
		return err
	}
	defer closeInto(&err, a.Close)
	l, err := loadRun(ctx, proc, f, a, t)
	if err != nil {
		return err
	}
	defer closeInto(&err, l.p.Close)
	if len(f.history) > 0 {
		l.task.History = f.history
	}
	// The run's own time limit, with a cause that names it: a run that
	// hits it says so, and how to raise it, rather than "context deadline
	// exceeded". The pipeline's own timer then never fires first.
	if limit := l.p.Config().Limits.Timeout; limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, limit, newRunTimeout(proc, f, limit))
		defer cancel()
	}
	// The Engine's scrubber cleans every output of the run: the run itself
	// scrubs the trace stream, the --trace file and the answer with it.
	sc := outputScrubber(a)
	sinks, err := openRunSinks(ctx, c, proc, f)
	if err != nil {
		return err
	}
	if !f.quiet && !f.json {
		fmt.Fprintf(c.OutOrStdout(), "model: %s\n", l.label)
	}
	svc, err := openRunServices(ctx, c, proc, f, sc, t.question)
	if err != nil {
		_ = sinks.close() // the run failed before it started
		return err
	}
	defer closeInto(&err, svc.close)
	opts := append(append([]planner.RunOption{planner.WithTask(l.task)}, sinks.opts...), svc.opts...)
	res, runErr := l.p.Run(ctx, "", opts...)
	if cerr := sinks.close(); cerr != nil && runErr == nil {
		runErr = cerr
	}
	if res == nil {
		return notStarted(runErr)
	}
	return reportRun(ctx, c, f, a, l, sc, res, sinks.shown, runErr)
}

// closeInto calls closeFn and keeps its error in *err unless *err already
// holds one.
func closeInto(err *error, closeFn func() error) {
	if cerr := closeFn(); cerr != nil && *err == nil {
		*err = cerr
	}
}

// chosenTask is the task a run plays: its question, and the suite task
// that --suite/--task name or the question matches (found).
type chosenTask struct {
	query    app.TaskQuery
	question string
	known    suite.Task
	found    bool
}

// chooseTask finds the suite task of the run, if any (app.FindTask). An
// empty question is the task's own.
func chooseTask(ctx context.Context, f *runFlags, question string) (chosenTask, error) {
	t := chosenTask{query: app.TaskQuery{Suite: f.suite, ID: f.task, Question: question}, question: question}
	var err error
	t.known, t.found, err = app.FindTask(ctx, t.query)
	switch {
	case errors.Is(err, app.ErrNoSuchTask):
		return t, &usageError{cmd: "run", err: err}
	case err != nil && f.suite != "":
		return t, &usageError{cmd: "run", err: fmt.Errorf("--suite %s: %w", f.suite, err)}
	case err != nil:
		return t, err
	}
	if t.question == "" {
		t.question = t.known.Question
	}
	return t, nil
}

// appOptions are the options of the run's App: the suite task, which the
// simulator plays by its id following its gold solution, and the --record
// cassette.
func (t chosenTask) appOptions(f *runFlags) []app.Option {
	var opts []app.Option
	if t.found {
		opts = append(opts, app.WithTasks([]suite.Task{t.known}))
	}
	if f.record != "" {
		opts = append(opts, app.WithRecording(f.record))
	}
	return opts
}

// loadedRun is the pipeline a run loaded, the task it runs and its model
// as outputs name it.
type loadedRun struct {
	p     *planner.Pipeline
	task  state.Task
	label string
}

// loadRun loads the --config pipeline with the run's model (--llm, else the
// pipeline's llm block) and limits, and settles the task it runs. Mistakes
// of the command line are *usageError.
func loadRun(ctx context.Context, proc process, f *runFlags, a *app.App, t chosenTask) (loadedRun, error) {
	model, err := parseRunModel(proc, f, a, t)
	if err != nil {
		return loadedRun{}, err
	}
	p, err := a.LoadModel(ctx, f.config, model, f.maxSteps)
	switch {
	case errors.Is(err, app.ErrNoModel):
		return loadedRun{}, &usageError{cmd: "run", err: fmt.Errorf("%w: %s has no llm block and neither --llm nor PLANNER_LLM is set; "+
			"e.g. --llm openai:gpt-4o-mini (needs OPENAI_API_KEY), --llm ollama:llama3.1 (a local Ollama), "+
			"or offline --llm sim --suite demo --task demo-07", app.ErrNoModel, f.config)}
	case errors.Is(err, app.ErrModelFlag):
		return loadedRun{}, &usageError{cmd: "run", err: err}
	case err != nil:
		return loadedRun{}, err
	}
	if f.timeout != 0 {
		p.Config().Limits.Timeout = f.timeout
	}
	l, err := settleTask(f, a, t, model, p)
	if err != nil {
		_ = p.Close() // the usage error is what counts
		return loadedRun{}, err
	}
	return l, nil
}

// parseRunModel parses --llm and checks that the model can play the task.
func parseRunModel(proc process, f *runFlags, a *app.App, t chosenTask) (app.ModelFlag, error) {
	var model app.ModelFlag
	if f.llm != "" {
		var err error
		if model, err = a.ParseModel(f.llm, llmSource(proc, f.llm)); err != nil {
			return model, &usageError{cmd: "run", err: err}
		}
	}
	if app.PlaysTaskReplies(model.LLM) && (!t.found || !t.known.HasReplies()) {
		return model, &usageError{cmd: "run", err: app.TaskRepliesError(t.query, t.known, t.found)}
	}
	if f.record != "" && model.LLM.Provider == "replay" && samePath(model.LLM.Script, f.record) {
		return model, &usageError{cmd: "run", err: fmt.Errorf("--record %s would overwrite the cassette being replayed; record to another file", f.record)}
	}
	return model, nil
}

// settleTask is the run of t on p with model (the --llm one, else p's llm
// block): the task it runs and its model's label.
func settleTask(f *runFlags, a *app.App, t chosenTask, model app.ModelFlag, p *planner.Pipeline) (loadedRun, error) {
	llmCfg := model.LLM
	if llmCfg.Provider == "" {
		llmCfg = p.Config().LLM
	}
	simulated := a.ModelKind(llmCfg.Provider) == llm.KindSimulated
	if simulated && (!t.found || t.known.Gold == nil) {
		return loadedRun{}, &usageError{cmd: "run", err: app.SimTaskError(t.query, t.known, t.found)}
	}
	// Built at all, the per-task scripted model has the task's replies;
	// they may be some configs' only.
	taskReplies := app.PlaysTaskReplies(llmCfg)
	if taskReplies && t.found {
		if err := app.ConfigRepliesError(t.query, t.known, p.Name()); err != nil {
			return loadedRun{}, &usageError{cmd: "run", err: err}
		}
	}
	task := state.Task{Question: t.question}
	// A task named with --suite/--task is run as the suite has it, for any
	// model; a question matched against the demo suite only for the
	// offline models that play a task by its id.
	if t.found && (f.suite != "" || f.task != "" || simulated || taskReplies) {
		task = t.known.Task
		task.Question = t.question
	}
	if f.reference != "" {
		task.Answer = f.reference
	}
	label := a.ModelLabel(llmCfg.Provider)
	if taskReplies {
		label = scripted.TaskLabel
	}
	return loadedRun{p: p, task: task, label: label}, nil
}

// outputScrubber is the scrubber of a's runs (planner.Engine.Scrubber),
// for the command's own outputs; one that keeps text as it is when
// scrubbing is off.
func outputScrubber(a *app.App) trace.Scrubber {
	if sc := a.Engine.Scrubber(); sc != nil {
		return sc
	}
	return noScrub{}
}

// noScrub is a scrubber that keeps text as it is.
type noScrub struct{}

// String returns s.
func (noScrub) String(s string) string { return s }

// runSinks are the run's trace outputs, as run options: the terminal
// stream, the errors it showed (shown) and the --trace file (jsonl, closed
// by close).
type runSinks struct {
	opts  []planner.RunOption
	shown *shownErrors
	jsonl *trace.JSONL
}

// openRunSinks builds the run's trace outputs and creates the --trace
// file. The run streams model replies (planner.WithTokens) when they are
// shown live or written to the --trace file (--trace-tokens); other token
// events are left out of the file. The terminal shows the run's errors as
// explainingSink tells them (ctx is the run's context); the --trace file
// keeps them as they were.
func openRunSinks(ctx context.Context, c *cobra.Command, proc process, f *runFlags) (*runSinks, error) {
	s := &runSinks{shown: &shownErrors{}}
	live := false
	if !f.quiet {
		var term trace.Sink
		term, live = terminalSink(c, proc, f)
		s.opts = append(s.opts, planner.WithTraceSink(&explainingSink{ctx: ctx, next: term}, &explainingSink{ctx: ctx, next: s.shown}))
	}
	if f.traceFile != "" {
		file, err := os.Create(f.traceFile)
		if err != nil {
			return nil, fmt.Errorf("opening trace file: %w", err)
		}
		s.jsonl = trace.NewJSONL(file)
		var sink trace.Sink = s.jsonl
		if !f.traceTokens {
			sink = trace.DropKinds(s.jsonl, trace.KindToken)
		}
		s.opts = append(s.opts, planner.WithTraceSink(sink))
	}
	if live || (f.traceTokens && s.jsonl != nil) {
		s.opts = append(s.opts, planner.WithTokens())
	}
	return s, nil
}

// terminalSink is the run's trace stream, on stdout (stderr with --json);
// live says whether it shows model replies as they are written (--stream,
// or a terminal without --no-stream).
func terminalSink(c *cobra.Command, proc process, f *runFlags) (sink trace.Sink, live bool) {
	w := c.OutOrStdout()
	if f.json {
		w = c.ErrOrStderr()
	}
	tty := false
	if file, ok := w.(*os.File); ok {
		tty = isatty.IsTerminal(file.Fd())
	}
	live = f.stream || (tty && !f.noStream)
	return trace.NewTerminal(w, trace.WithColor(tty && proc.getenv("NO_COLOR") == ""), trace.WithVerbose(f.verbose),
		trace.WithMaxLen(terminalMaxLen), trace.WithTokens(live)), live
}

// close flushes and closes the --trace file, if any.
func (s *runSinks) close() error {
	if s.jsonl == nil {
		return nil
	}
	return s.jsonl.Close()
}

// runServices are what the run's tool calls and its thread use, as run
// options: the audit log, the approver, resume's decision and the thread
// store.
type runServices struct {
	opts  []planner.RunOption
	audit *audit.Log
	// store is the thread store opened for the run; nil without a thread
	// or when resume opened it (f.opened).
	store *sqlitestore.Store
}

// openRunServices opens the run's audit log (auditPath, scrubbed with sc)
// and, for --thread, its thread store, and sets the approver: the
// terminal, or for a thread the wait for planner resume. question is what
// the thread records for resume.
func openRunServices(ctx context.Context, c *cobra.Command, proc process, f *runFlags, sc trace.Scrubber, question string) (_ *runServices, err error) {
	s := &runServices{}
	defer func() {
		if err != nil {
			_ = s.close() // the run failed before it started
		}
	}()
	if s.audit, err = openAudit(ctx, proc, f, sc); err != nil {
		return nil, err
	}
	if s.audit != nil {
		s.opts = append(s.opts, planner.WithAudit(s.audit))
	}
	s.opts = append(s.opts, planner.WithApprover(&cliApprover{in: c.InOrStdin(), out: c.ErrOrStderr(),
		interactive: !f.noInput && isTerminalReader(c.InOrStdin()), canWait: f.thread != ""}))
	if f.decision != nil {
		// Run finds the approval the thread waits for, as resume checked.
		s.opts = append(s.opts, planner.WithDecision(*f.decision))
	}
	if f.thread != "" {
		if err := s.openThread(ctx, proc, f, question); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// close closes the thread store the run opened and the audit log.
func (s *runServices) close() error {
	if s.store != nil {
		_ = s.store.Close() // what the run saved is committed
	}
	if s.audit != nil {
		return s.audit.Close()
	}
	return nil
}

// samePath reports whether two paths name the same file (comparing absolute
// paths, then the files themselves when both exist).
func samePath(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	stA, errA := os.Stat(a)
	stB, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(stA, stB)
}

// terminalMaxLen caps each text the run's trace stream prints, in
// characters.
const terminalMaxLen = 600

// shownErrors is a trace sink next to the terminal one: it keeps the error
// events the terminal printed, so that the run's final error is not
// printed a second time. It is safe for concurrent use.
type shownErrors struct {
	mu    sync.Mutex
	texts []string
}

// Emit keeps the text of an error event the terminal printed whole.
func (s *shownErrors) Emit(e trace.Event) {
	text := strings.TrimSpace(e.Text)
	if e.Kind != trace.KindError || text == "" || utf8.RuneCountInString(text) > terminalMaxLen {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.texts = append(s.texts, text)
}

// covers reports whether an error event printed err's message whole.
func (s *shownErrors) covers(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := err.Error()
	for _, t := range s.texts {
		if strings.HasSuffix(msg, t) {
			return true
		}
	}
	return false
}

// llmSource says where the --llm value spec came from: PLANNER_LLM when
// that variable holds it (bindFlags fills unset flags from it), else the
// flag.
func llmSource(p process, spec string) app.ModelSource {
	if v, ok := p.lookupEnv("PLANNER_LLM"); ok && v == spec {
		return app.FromEnv
	}
	return app.FromFlag
}

// auditPath is the audit log a run records its tool calls in: --audit,
// else for a thread audit.db beside the thread store; "" for none.
func auditPath(proc process, f *runFlags) (string, error) {
	if f.audit != "" || f.thread == "" {
		return f.audit, nil
	}
	store, err := storePath(proc, f.store)
	if err != nil {
		return "", err
	}
	return audit.PathBeside(store), nil
}

// openAudit opens the run's audit log (auditPath), scrubbing with sc; nil
// when the run has none.
func openAudit(ctx context.Context, proc process, f *runFlags, sc audit.Scrubber) (*audit.Log, error) {
	path, err := auditPath(proc, f)
	if err != nil || path == "" {
		return nil, err
	}
	l, err := audit.Open(ctx, path, audit.WithScrubber(sc))
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return l, nil
}

// notStarted is the error of a run that could not start: an empty
// question (a usage error), a thread that another run holds or that
// cannot be read. Run wraps a thread's cause in planner.ErrRun; the
// command line prints the cause, as the thread store said it.
func notStarted(err error) error {
	if errors.Is(err, planner.ErrEmptyQuestion) {
		return &usageError{cmd: "run", err: errors.New("the task is empty")}
	}
	if w, ok := err.(interface{ Unwrap() []error }); ok {
		if errs := w.Unwrap(); len(errs) == 2 && errors.Is(errs[0], planner.ErrRun) {
			err = errs[1]
		}
	}
	if errors.Is(err, journal.ErrLocked) {
		return fmt.Errorf("%w; wait for that run to end, or stop it (Ctrl-C saves it)", err)
	}
	return err
}

// reportRun prints how the run ended: a warning for a cassette it did not
// replay whole, the thread's status (reportThread), then the result as
// the --json line or as text. It returns the error that gives the exit
// code.
func reportRun(ctx context.Context, c *cobra.Command, f *runFlags, a *app.App, l loadedRun, sc trace.Scrubber, res *planner.Result, shown *shownErrors, runErr error) error {
	runErr = explainRunError(ctx, runErr)
	if left := a.UnusedRecordings(); left > 0 && runErr == nil {
		fmt.Fprintf(c.ErrOrStderr(), "planner: warning: %d recorded call(s) of the cassette were not replayed; the run took a different path than the recording\n", left)
	}
	if f.thread != "" {
		if err := reportThread(c, f, res, l.label, sc, runErr); err != nil {
			return err
		}
	}
	verdict := scoreRun(ctx, f, l, res, runErr)
	if f.json {
		return printRunJSON(c.OutOrStdout(), f, a, l, sc, res, verdict, runErr)
	}
	if runErr != nil {
		if shown.covers(runErr) {
			// The trace stream printed the error whole, and "run failed"
			// after it: once is enough.
			return &silentError{runErr}
		}
		return runErr
	}
	printRunText(c.OutOrStdout(), res, verdict)
	if !res.Complete {
		return &incompleteError{reason: res.Reason}
	}
	return nil
}

// printRunJSON prints the result as the --json line, scrubbed with sc.
func printRunJSON(out io.Writer, f *runFlags, a *app.App, l loadedRun, sc trace.Scrubber, res *planner.Result, v verdict, runErr error) error {
	o := runOutput{Thread: f.thread, Status: string(res.Status), Answer: res.Answer, Complete: res.Complete && runErr == nil, Reason: res.Reason,
		Failure: res.Failure, Model: l.label, Usage: res.Usage, Steps: res.Steps, Trace: f.traceFile, Cassette: a.Recording(), Pipeline: l.p.Name(),
		Reference: v.reference, Scorer: v.scorer, Correct: v.correct}
	if runErr != nil {
		o.Error = runErr.Error()
	}
	// Scrub the value, not the encoded bytes: JSON escaping could
	// otherwise hide a secret from the match.
	b, err := json.Marshal(redact.Walk(o, sc))
	if err != nil {
		return err
	}
	fmt.Fprintln(out, string(b))
	if runErr != nil {
		return &silentError{runErr}
	}
	if !res.Complete {
		return &incompleteError{reason: res.Reason}
	}
	return nil
}

// printRunText prints the answer (scrubbed by the run), the reason of an
// incomplete one, and the run's usage. The answer and the reason are
// model text: their control characters are shown escaped
// (trace.Printable), never sent to the terminal.
func printRunText(out io.Writer, res *planner.Result, v verdict) {
	u := res.Usage
	est := ""
	if u.Estimated {
		est = " (estimated)"
	}
	fmt.Fprintf(out, "\nAnswer: %s\n", trace.Printable(res.Answer))
	if !res.Complete {
		fmt.Fprintf(out, "(incomplete: %s)\n", trace.Printable(res.Reason))
	}
	if line := v.line(); line != "" {
		fmt.Fprintln(out, line)
	}
	retries := ""
	if u.ModelAttempts > u.ModelCalls {
		retries = fmt.Sprintf(" (%d attempts)", u.ModelAttempts)
	}
	fmt.Fprintf(out, "usage: %d model calls%s, %d prompt + %d completion tokens%s, %d tool calls, %d steps, %s\n",
		u.ModelCalls, retries, u.PromptTokens, u.CompletionTokens, est, u.ToolCalls, len(res.Steps), res.Duration.Round(1e6))
}

// runTimeoutError is the cause of a run stopped by its time limit: it
// names the limit, where it was set and how to raise it. It matches
// context.DeadlineExceeded under errors.Is.
type runTimeoutError struct {
	limit time.Duration
	// source says where the limit was set: "--timeout", "$PLANNER_TIMEOUT",
	// "limits.timeout in FILE" or "the default limits.timeout".
	source string
	// fix says how to give the run more time.
	fix string
}

// Error says that the run hit its time limit, and how to raise it.
func (e *runTimeoutError) Error() string {
	return fmt.Sprintf("the run hit its time limit of %s (%s) and was stopped; %s", shortDuration(e.limit), e.source, e.fix)
}

// shortDuration writes d as a flag takes it, without zero units: "10m",
// not "10m0s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Is makes the error match context.DeadlineExceeded.
func (e *runTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// newRunTimeout is the cause of f's run stopping at its time limit limit:
// --timeout (or PLANNER_TIMEOUT) when set, else the pipeline's
// limits.timeout, else its default.
func newRunTimeout(proc process, f *runFlags, limit time.Duration) *runTimeoutError {
	more := config.DefaultTimeout
	if limit >= more {
		more = 2 * limit
	}
	e := &runTimeoutError{limit: limit}
	switch {
	case f.timeout != 0:
		e.source = "--timeout"
		if v, ok := proc.lookupEnv("PLANNER_TIMEOUT"); ok {
			if d, err := time.ParseDuration(strings.TrimSpace(v)); err == nil && d == f.timeout {
				e.source = "$PLANNER_TIMEOUT"
			}
		}
		e.fix = fmt.Sprintf("give it more time with a larger %s, e.g. %s", e.source, timeoutFlag(e.source, more))
	case limit == config.DefaultTimeout:
		e.source = "the default limits.timeout"
		e.fix = fmt.Sprintf("set limits.timeout in %s or pass --timeout %s", f.config, shortDuration(more))
	default:
		e.source = "limits.timeout in " + f.config
		e.fix = fmt.Sprintf("raise limits.timeout there or pass --timeout %s", shortDuration(more))
	}
	return e
}

// timeoutFlag is how source is set to d: "--timeout 10m" or
// "PLANNER_TIMEOUT=10m".
func timeoutFlag(source string, d time.Duration) string {
	if source == "$PLANNER_TIMEOUT" {
		return "PLANNER_TIMEOUT=" + shortDuration(d)
	}
	return "--timeout " + shortDuration(d)
}

// runStop returns why ctx, a run's context, ended when the user or the
// time limit ended it: an *interrupted or a *runTimeoutError; nil
// otherwise.
func runStop(ctx context.Context) error {
	cause := context.Cause(ctx)
	var sig *interrupted
	var limit *runTimeoutError
	switch {
	case errors.As(cause, &sig):
		return sig
	case errors.As(cause, &limit):
		return limit
	}
	return nil
}

// explainedError is a run's error told by its real cause (message); it
// unwraps to the error the run returned.
type explainedError struct {
	msg string
	err error
}

func (e *explainedError) Error() string { return e.msg }
func (e *explainedError) Unwrap() error { return e.err }

// explainRunError returns the error of a run whose context ctx the user
// (a signal) or its time limit ended as that cause says it, wrapping
// runErr; any other runErr unchanged.
func explainRunError(ctx context.Context, runErr error) error {
	if runErr == nil {
		return nil
	}
	if stop := runStop(ctx); stop != nil {
		return &explainedError{msg: stop.Error(), err: runErr}
	}
	return runErr
}

// explainingSink passes a run's trace events to next, telling its errors
// by their real cause. When the run's context ctx was ended by a signal,
// the errors it caused and the "run failed" line are left out: the
// command says that the run was interrupted (and how to resume it). When
// the run hit its time limit, the first error says so
// (runTimeoutError) and the rest, which repeat "context deadline
// exceeded", are left out. A thread that stops to wait for approval is no
// failure: its journal.ErrWaiting error is left out, and the command
// prints how to decide. Other events pass unchanged. It is safe for
// concurrent use.
type explainingSink struct {
	ctx  context.Context
	next trace.Sink

	mu        sync.Mutex
	toldLimit bool
}

// Emit passes e to the next sink, told as explained above, or drops it.
func (s *explainingSink) Emit(e trace.Event) {
	if e, ok := s.explain(e); ok {
		s.next.Emit(e)
	}
}

// explain returns e as the terminal should show it, and false to leave it
// out.
func (s *explainingSink) explain(e trace.Event) (trace.Event, bool) {
	if e.Kind == trace.KindError && strings.Contains(e.Text, journal.ErrWaiting.Error()) {
		return e, false
	}
	if e.Kind != trace.KindError && e.Kind != trace.KindRunEnd {
		return e, true
	}
	var sig *interrupted
	var limit *runTimeoutError
	switch stop := runStop(s.ctx); {
	case errors.As(stop, &sig):
		// The error, and the run_end of a failed run: the command prints
		// how it stopped. A run_end that carries an answer stays.
		failed := e.Kind == trace.KindError || e.Data["failure"] != nil
		return e, !failed
	case errors.As(stop, &limit) && e.Kind == trace.KindError:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.toldLimit {
			return e, false
		}
		s.toldLimit = true
		e.Text = limit.Error()
		return e, true
	}
	return e, true
}

// verdict is how a run's answer compares with the task's reference
// answer, for the text output and the --json line.
type verdict struct {
	// reference is the reference answer; "" when the task has none.
	reference string
	// scorer names the scorer that judged the answer ("em", "numeric"...).
	scorer string
	// correct is the scorer's verdict; nil when there is no answer to
	// judge or the reference cannot be scored.
	correct *bool
	// detail explains a verdict that could not be reached.
	detail string
}

// line is the text output's line about the reference: "Reference: X
// (correct; scorer em)"; "" when the task has none.
func (v verdict) line() string {
	if v.reference == "" {
		return ""
	}
	judged := "not scored"
	switch {
	case v.correct != nil && *v.correct:
		judged = "correct"
	case v.correct != nil:
		judged = "wrong"
	case v.detail != "":
		judged = "not scored: " + v.detail
	}
	return fmt.Sprintf("Reference: %s (%s; scorer %s)", trace.Printable(v.reference), trace.Printable(judged), v.scorer)
}

// scoreRun judges the run's answer against the task's reference answer
// (l.task.Answer: the suite's, or --reference) with the scorer compare
// would use: the default scorer of the --suite's format
// (suite.DefaultScorer), exact match for a reference given alone.
func scoreRun(ctx context.Context, f *runFlags, l loadedRun, res *planner.Result, runErr error) verdict {
	v := verdict{reference: l.task.Answer}
	if v.reference == "" {
		return v
	}
	sc := runScorer(ctx, f)
	v.scorer = scorerName(sc)
	if runErr != nil || res == nil {
		return v
	}
	r := sc.Score(res.Answer, verify.Reference{Question: l.task.Question, Answer: v.reference})
	if r.Unscorable {
		v.detail = r.Detail
		return v
	}
	v.correct = &r.Correct
	return v
}

// runScorer is the scorer of f's task: the default of its suite's format
// when the task came from a suite (--suite or --task), else exact match.
func runScorer(ctx context.Context, f *runFlags) verify.Scorer {
	if f.suite == "" && f.task == "" {
		return verify.ExactMatch{}
	}
	name := f.suite
	if name == "" {
		name = app.DemoSuite
	}
	format := suite.FormatJSONL
	if _, bf, ok, _ := suite.Builtin(name); ok {
		format = bf
	} else if df, err := suite.Detect(ctx, name); err == nil {
		format = df
	}
	sc, err := suite.DefaultScorer(format)
	if err != nil {
		return verify.ExactMatch{}
	}
	return sc
}

// scorerName is the name of a built-in scorer, as compare's --scorer
// spells it.
func scorerName(sc verify.Scorer) string {
	switch s := sc.(type) {
	case verify.ExactMatch:
		return "em"
	case verify.Contains:
		return "contains"
	case verify.Numeric:
		return "numeric"
	case verify.Game24:
		return "game24"
	case verify.Sorting:
		return "sorting"
	case verify.Choice:
		return "choice"
	default:
		return fmt.Sprintf("%T", s)
	}
}

// followUp asks question as a new turn of the conversation thread
// f.thread holds, when that thread exists (planner.FollowUp): the turn
// runs as thread NAME.turnN with the conversation's pipeline and model,
// seeing the earlier turns. asked is false when no such thread exists
// (the run starts it, or says why it cannot).
func followUp(c *cobra.Command, p process, f *runFlags, question string) (asked bool, err error) {
	ctx := c.Context()
	store, err := openStore(ctx, p, f.store)
	if err != nil {
		return true, err
	}
	// No such thread: the run starts it. A latest turn that is not done,
	// or a run of a suite task (no question of its own): the run reports
	// that the thread exists and how to continue it.
	latest, err := planner.LatestTurn(ctx, store, f.thread)
	if err != nil || strings.TrimSpace(question) == "" || journal.LiveStatus(ctx, store, latest) != journal.StatusDone {
		return false, store.Close()
	}
	th, err := planner.FollowUp(ctx, store, f.thread, question)
	if cerr := store.Close(); err == nil {
		err = cerr
	}
	switch {
	case errors.Is(err, planner.ErrTurnNotDone), errors.Is(err, journal.ErrExists), errors.Is(err, planner.ErrEmptyQuestion):
		return true, &usageError{cmd: "run", err: err}
	case err != nil:
		return true, err
	}
	fmt.Fprintf(c.ErrOrStderr(), "planner: a follow-up on thread %s: it runs as thread %s, with the conversation's pipeline and model\n", f.thread, th.Name)
	rf := &resumeFlags{store: f.store, traceFile: f.traceFile, json: f.json, quiet: f.quiet, verbose: f.verbose, noInput: f.noInput, keepRequests: f.keepRequests}
	return true, resumeThread(c, p, rf, th.Name)
}
