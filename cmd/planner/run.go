package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
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
	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/pipeline"
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
	// resume is set by planner resume: the thread exists; pending and
	// decision are the approval it waits for and resume's decision on it.
	resume   bool
	pending  *journal.Approval
	decision *journal.Decision
	// opened is the thread store resume already opened; nil: run opens
	// --store itself.
	opened journal.Store
	// audit is the audit log file (--audit); "" with a thread: audit.db
	// beside the thread store (auditPath).
	audit string
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
			if task == "" && (len(args) > 0 || f.task == "") {
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
	fl.StringVar(&f.suite, "suite", "", "run a task of this suite: demo, or a suite file (as compare's --suite); with --task, or matched by its question")
	fl.StringVar(&f.task, "task", "", "id of the --suite task to run (default suite: demo); the question may then be left out")
	fl.StringVar(&f.thread, "thread", "", "journal the run as thread NAME: it survives Ctrl-C and crashes (planner resume NAME), and can wait for approvals")
	storeFlag(c, &f.store)
	fl.BoolVar(&f.noInput, "no-input", false, "never ask on the terminal: a tool call that needs approval makes the thread wait (exit 3)")
	fl.StringVar(&f.audit, "audit", "", "record every tool call in this audit log (planner audit reads it; default with --thread: audit.db beside the thread store)")
	return c
}

func runTask(c *cobra.Command, proc process, f *runFlags, question string) (err error) {
	ctx := c.Context()
	query := app.TaskQuery{Suite: f.suite, ID: f.task, Question: question}
	known, found, err := app.FindTask(ctx, query)
	switch {
	case errors.Is(err, app.ErrNoSuchTask):
		return &usageError{cmd: "run", err: err}
	case err != nil && f.suite != "":
		return &usageError{cmd: "run", err: fmt.Errorf("--suite %s: %w", f.suite, err)}
	case err != nil:
		return err
	}
	if question == "" {
		question = known.Question
	}
	var opts []app.Option
	if found {
		// The simulator plays the task by its id, following its gold solution.
		opts = append(opts, app.WithTasks([]suite.Task{known}))
	}
	if f.record != "" {
		opts = append(opts, app.WithRecording(f.record))
	}
	a, err := app.New(opts...)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := a.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	var model app.ModelFlag
	if f.llm != "" {
		if model, err = a.ParseModel(f.llm, llmSource(proc, f.llm)); err != nil {
			return &usageError{cmd: "run", err: err}
		}
	}
	if app.PlaysTaskReplies(model.LLM) && (!found || len(known.Replies) == 0) {
		return &usageError{cmd: "run", err: app.TaskRepliesError(query, known, found)}
	}
	if f.record != "" && model.LLM.Provider == "replay" && samePath(model.LLM.Script, f.record) {
		return &usageError{cmd: "run", err: fmt.Errorf("--record %s would overwrite the cassette being replayed; record to another file", f.record)}
	}
	p, err := a.LoadModel(ctx, f.config, model, f.maxSteps)
	if errors.Is(err, app.ErrNoModel) {
		return &usageError{cmd: "run", err: fmt.Errorf("%w: %s has no llm block and neither --llm nor PLANNER_LLM is set; "+
			"e.g. --llm openai:gpt-4o-mini (needs OPENAI_API_KEY), --llm ollama:llama3.1 (a local Ollama), "+
			"or offline --llm sim --suite demo --task demo-07", app.ErrNoModel, f.config)}
	}
	if errors.Is(err, app.ErrModelFlag) {
		return &usageError{cmd: "run", err: err}
	}
	if err != nil {
		return err
	}
	defer func() {
		if cerr := p.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	provider := model.LLM.Provider
	if provider == "" {
		provider = p.Config.LLM.Provider
	}
	simulated := a.ModelKind(provider) == llm.KindSimulated
	if simulated && (!found || known.Gold == nil) {
		return &usageError{cmd: "run", err: app.SimTaskError(query, known, found)}
	}
	llmCfg := model.LLM
	if llmCfg.Provider == "" {
		llmCfg = p.Config.LLM
	}
	// Built at all, the per-task scripted model has the task's replies.
	taskReplies := app.PlaysTaskReplies(llmCfg)
	task := state.Task{Question: question}
	// A task named with --suite/--task is run as the suite has it, for any
	// model; a question matched against the demo suite only for the
	// offline models that play a task by its id.
	if found && (f.suite != "" || f.task != "" || simulated || taskReplies) {
		task = known.Task
		task.Question = question
	}
	if f.reference != "" {
		task.Answer = f.reference
	}
	if f.timeout != 0 {
		p.Config.Limits.Timeout = f.timeout
	}
	out := c.OutOrStdout()
	// One scrubber for every output of the run: the terminal stream, the
	// --trace file, the --json line and the answer.
	sc := redact.New()
	tracer := trace.NewWithOptions(newRunID(), trace.WithScrubber(sc))
	shown := &shownErrors{}
	live := false
	if !f.quiet {
		w := out
		if f.json {
			w = c.ErrOrStderr()
		}
		tty := false
		if file, ok := w.(*os.File); ok {
			tty = isatty.IsTerminal(file.Fd())
		}
		live = f.stream || (tty && !f.noStream)
		tracer.AddSink(trace.NewTerminal(w, trace.WithColor(tty && proc.getenv("NO_COLOR") == ""), trace.WithVerbose(f.verbose),
			trace.WithMaxLen(terminalMaxLen), trace.WithTokens(live)))
		tracer.AddSink(shown)
	}
	var jsonl *trace.JSONL
	if f.traceFile != "" {
		file, err := os.Create(f.traceFile)
		if err != nil {
			return fmt.Errorf("opening trace file: %w", err)
		}
		jsonl = trace.NewJSONL(file)
		if f.traceTokens {
			tracer.AddSink(jsonl)
		} else {
			tracer.AddSink(trace.DropKinds(jsonl, trace.KindToken))
		}
	}
	if live || (f.traceTokens && jsonl != nil) {
		ctx = llm.WithTokenEvents(ctx)
	}
	label := a.ModelLabel(provider)
	if taskReplies {
		label = scripted.TaskLabel
	}
	if !f.quiet && !f.json {
		fmt.Fprintf(out, "model: %s\n", label)
	}
	auditLog, err := openAudit(ctx, proc, f, sc)
	if err != nil {
		return err
	}
	if auditLog != nil {
		defer func() {
			if cerr := auditLog.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		ctx = nodekind.WithToolAuditor(ctx, auditLog)
	}
	var approver journal.Approver = &cliApprover{in: c.InOrStdin(), out: c.ErrOrStderr(),
		interactive: !f.noInput && isTerminalReader(c.InOrStdin()), canWait: f.thread != ""}
	if f.decision != nil {
		approver = journal.Decide(*f.pending, *f.decision, approver)
	}
	var (
		res    *pipeline.Result
		tr     pipeline.ThreadResult
		runErr error
	)
	if f.thread == "" {
		res, runErr = p.Run(journal.WithApprover(ctx, approver), task, tracer)
	} else {
		res, tr, runErr = runThread(ctx, proc, f, p, task, tracer, approver, question)
		if res == nil {
			if jsonl != nil {
				_ = jsonl.Close()
			}
			return runErr
		}
	}
	if jsonl != nil {
		if err := jsonl.Close(); err != nil && runErr == nil {
			runErr = err
		}
	}
	if left := a.UnusedRecordings(); left > 0 && runErr == nil {
		fmt.Fprintf(c.ErrOrStderr(), "planner: warning: %d recorded call(s) of the cassette were not replayed; the run took a different path than the recording\n", left)
	}
	st := res.State
	if f.thread != "" {
		if err := reportThread(c, f, tr, label, st, runErr); err != nil {
			return err
		}
	}
	if f.json {
		o := runOutput{Thread: f.thread, Status: string(tr.Status), Answer: st.Answer, Complete: st.Complete && runErr == nil, Reason: st.Reason, Failure: st.Failure,
			Model: label, Usage: st.Usage.Snapshot(), Steps: res.Steps, Trace: f.traceFile, Cassette: a.Recording(), Pipeline: p.Config.Name}
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
		if !st.Complete {
			return &incompleteError{reason: st.Reason}
		}
		return nil
	}
	if runErr != nil {
		if shown.covers(runErr) {
			// The trace stream printed the error whole, and "run failed"
			// after it: once is enough.
			return &silentError{runErr}
		}
		return runErr
	}
	u := st.Usage.Snapshot()
	est := ""
	if u.Estimated {
		est = " (estimated)"
	}
	fmt.Fprintf(out, "\nAnswer: %s\n", sc.String(st.Answer))
	if !st.Complete {
		fmt.Fprintf(out, "(incomplete: %s)\n", sc.String(st.Reason))
	}
	retries := ""
	if u.ModelAttempts > u.ModelCalls {
		retries = fmt.Sprintf(" (%d attempts)", u.ModelAttempts)
	}
	fmt.Fprintf(out, "usage: %d model calls%s, %d prompt + %d completion tokens%s, %d tool calls, %d steps, %s\n",
		u.ModelCalls, retries, u.PromptTokens, u.CompletionTokens, est, u.ToolCalls, len(res.Steps), res.Duration.Round(1e6))
	if !st.Complete {
		return &incompleteError{reason: st.Reason}
	}
	return nil
}

// newRunID returns a random id for a run's trace events.
func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
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
