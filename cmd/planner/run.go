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
planner resume NAME --approve or --deny REASON.`,
		Example: `  planner run --config configs/react.yaml --llm sim --suite demo --task demo-07
  planner run --config configs/react.yaml --llm sim:noisy "In which city was Galileo Galilei born?"
  echo "Who discovered Saturn's moon Iapetus?" | planner run --config configs/cot.yaml --llm sim --json -
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
	fl.StringVar(&f.suite, "suite", "", "run a task of this suite: demo, sorting, sorting32, sorting64, or a suite file (as compare's --suite); with --task, or matched by its question")
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
	// The Engine's scrubber cleans every output of the run: the run itself
	// scrubs the trace stream, the --trace file and the answer with it.
	sc := outputScrubber(a)
	sinks, err := openRunSinks(c, proc, f)
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
	return reportRun(c, f, a, l, sc, res, sinks.shown, runErr)
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
// events are left out of the file.
func openRunSinks(c *cobra.Command, proc process, f *runFlags) (*runSinks, error) {
	s := &runSinks{shown: &shownErrors{}}
	live := false
	if !f.quiet {
		var term trace.Sink
		term, live = terminalSink(c, proc, f)
		s.opts = append(s.opts, planner.WithTraceSink(term, s.shown))
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
func reportRun(c *cobra.Command, f *runFlags, a *app.App, l loadedRun, sc trace.Scrubber, res *planner.Result, shown *shownErrors, runErr error) error {
	if left := a.UnusedRecordings(); left > 0 && runErr == nil {
		fmt.Fprintf(c.ErrOrStderr(), "planner: warning: %d recorded call(s) of the cassette were not replayed; the run took a different path than the recording\n", left)
	}
	if f.thread != "" {
		if err := reportThread(c, f, res, l.label, sc, runErr); err != nil {
			return err
		}
	}
	if f.json {
		return printRunJSON(c.OutOrStdout(), f, a, l, sc, res, runErr)
	}
	if runErr != nil {
		if shown.covers(runErr) {
			// The trace stream printed the error whole, and "run failed"
			// after it: once is enough.
			return &silentError{runErr}
		}
		return runErr
	}
	printRunText(c.OutOrStdout(), res)
	if !res.Complete {
		return &incompleteError{reason: res.Reason}
	}
	return nil
}

// printRunJSON prints the result as the --json line, scrubbed with sc.
func printRunJSON(out io.Writer, f *runFlags, a *app.App, l loadedRun, sc trace.Scrubber, res *planner.Result, runErr error) error {
	o := runOutput{Thread: f.thread, Status: string(res.Status), Answer: res.Answer, Complete: res.Complete && runErr == nil, Reason: res.Reason,
		Failure: res.Failure, Model: l.label, Usage: res.Usage, Steps: res.Steps, Trace: f.traceFile, Cassette: a.Recording(), Pipeline: l.p.Name()}
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
func printRunText(out io.Writer, res *planner.Result) {
	u := res.Usage
	est := ""
	if u.Estimated {
		est = " (estimated)"
	}
	fmt.Fprintf(out, "\nAnswer: %s\n", trace.Printable(res.Answer))
	if !res.Complete {
		fmt.Fprintf(out, "(incomplete: %s)\n", trace.Printable(res.Reason))
	}
	retries := ""
	if u.ModelAttempts > u.ModelCalls {
		retries = fmt.Sprintf(" (%d attempts)", u.ModelAttempts)
	}
	fmt.Fprintf(out, "usage: %d model calls%s, %d prompt + %d completion tokens%s, %d tool calls, %d steps, %s\n",
		u.ModelCalls, retries, u.PromptTokens, u.CompletionTokens, est, u.ToolCalls, len(res.Steps), res.Duration.Round(1e6))
}
