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
	"text/tabwriter"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/nodes/flow"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/server"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// exitWaiting: the run stopped to wait for a human's approval of a tool
// call; its thread is saved and resumes with planner resume.
const exitWaiting = 3

// waitingError marks a run that waits for approval (exit code 3). What to
// do next is already printed.
type waitingError struct{ err error }

func (e *waitingError) Error() string { return e.err.Error() }
func (e *waitingError) Unwrap() error { return e.err }

// threadMeta is the thread record `planner run --thread`, `planner serve`
// and `planner resume` share (planner.ThreadMeta).
type threadMeta = planner.ThreadMeta

// storePath is the thread store's path: flag (--store, or serve's deprecated --db)
// when set, else the default one, sqlitestore.DefaultPath read through
// p's variables ($PLANNER_STORE, $XDG_STATE_HOME/planner/threads.db, else
// ~/.local/state/planner/threads.db).
func storePath(p process, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return sqlitestore.DefaultPath(p.getenv)
}

// openStore opens the thread store at path, or the default one.
func openStore(ctx context.Context, p process, path string) (*sqlitestore.Store, error) {
	path, err := storePath(p, path)
	if err != nil {
		return nil, err
	}
	s, err := sqlitestore.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("thread store %s: %w", path, err)
	}
	return s, nil
}

// storeFlag adds --store to c.
func storeFlag(c *cobra.Command, path *string) {
	c.Flags().StringVar(path, "store", "", "thread store file (default $PLANNER_STORE, else $XDG_STATE_HOME/planner/threads.db or ~/.local/state/planner/threads.db)")
}

// resumeHint is the command that resumes thread name.
func resumeHint(name, store string) string {
	s := "planner resume " + name
	if store != "" {
		s += " --store " + store
	}
	return s
}

// cliApprover decides tool calls that need approval for the command
// line: it asks on the terminal when there is one (and --no-input is not
// set), else the thread waits (with a thread) or the run fails (without
// one). A decision given to resume (--approve, --deny) is put in front of
// it with journal.Decide.
type cliApprover struct {
	in          io.Reader
	out         io.Writer
	interactive bool
	canWait     bool

	mu     sync.Mutex
	reader *bufio.Reader
}

// Approve implements journal.Approver.
func (a *cliApprover) Approve(ctx context.Context, ap journal.Approval) (journal.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.interactive {
		return a.ask(ctx, ap)
	}
	if a.canWait {
		return journal.Decision{}, &journal.WaitingError{Approval: ap}
	}
	return journal.Decision{}, fmt.Errorf("%w: tool %s needs a human's approval and there is no terminal to ask (or --no-input is set); "+
		"run with --thread NAME to save the run and decide later with planner resume NAME --approve or --deny REASON", journal.ErrNoApprover, ap.Tool)
}

// ask shows the call on the terminal and reads y, n, or n and a reason.
// The tool's input, written by the model, is shown with its control
// characters escaped (trace.Printable): an approval prompt must show what
// will run, not what an escape sequence makes it look like.
func (a *cliApprover) ask(ctx context.Context, ap journal.Approval) (journal.Decision, error) {
	if a.reader == nil {
		a.reader = bufio.NewReader(a.in)
	}
	for {
		switch ap.Tool {
		case flow.HumanInput:
			fmt.Fprintf(a.out, "\n? node %s asks:\n%s\n  your answer (one line; empty to decline): ", trace.Printable(ap.Node), trace.Printable(textutil.Clip(ap.Input, 4000)))
		case flow.HumanApproval:
			fmt.Fprintf(a.out, "\n? node %s asks for your approval:\n%s\n  [y] approve   [n] reject   [n REASON] reject and say why: ", trace.Printable(ap.Node), trace.Printable(textutil.Clip(ap.Input, 4000)))
		default:
			fmt.Fprintf(a.out, "\n? approve the call of %s (node %s)?\n  input: %s\n  [y] run it   [n] deny   [n REASON] deny and tell the model why: ",
				trace.Printable(ap.Tool), trace.Printable(ap.Node), trace.Printable(textutil.Clip(ap.Input, 2000)))
		}
		type line struct {
			s   string
			err error
		}
		got := make(chan line, 1)
		go func() {
			s, err := a.reader.ReadString('\n')
			got <- line{s, err}
		}()
		var l line
		select {
		case <-ctx.Done():
			return journal.Decision{}, context.Cause(ctx)
		case l = <-got:
		}
		answer := strings.TrimSpace(l.s)
		if ap.Tool == flow.HumanInput && (l.err == nil || answer != "") {
			return journal.Decision{Approved: answer != "", Reason: answer, By: "terminal"}, nil
		}
		verb, reason, _ := strings.Cut(answer, " ")
		switch strings.ToLower(verb) {
		case "y", "yes":
			return journal.Decision{Approved: true, By: "terminal"}, nil
		case "n", "no":
			return journal.Decision{Approved: false, Reason: strings.TrimSpace(reason), By: "terminal"}, nil
		}
		if l.err != nil {
			if a.canWait {
				return journal.Decision{}, &journal.WaitingError{Approval: ap}
			}
			return journal.Decision{}, fmt.Errorf("%w: tool %s: no answer on the terminal: %w", journal.ErrNoApprover, ap.Tool, l.err)
		}
		fmt.Fprintln(a.out, "  please answer y, n, or n followed by a reason")
	}
}

// isTerminalReader reports whether r is a terminal.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

type resumeFlags struct {
	store, as, deny, input, traceFile string
	approve, json, quiet              bool
	verbose, noInput                  bool
	keepRequests                      bool
	from                              int64
}

func newResumeCmd(p process) *cobra.Command {
	f := &resumeFlags{}
	c := &cobra.Command{
		Use:   "resume NAME [--approve | --deny REASON] [--from N --as NEW]",
		Short: "Continue an interrupted, crashed or waiting thread",
		Long: `Resume a thread started with run --thread NAME. The run starts again with the thread's pipeline,
task and model; every model and tool call its journal holds is answered from the journal (none is
made again), and the run continues live where the journal ends. The result prints as run prints it.

A thread waiting for approval of a tool call resumes with --approve (the call runs) or --deny REASON
(the model is told the call was denied, and why). Without either, the call is asked on the terminal,
or the thread waits again.

--from N --as NEW forks a new thread NEW from checkpoint N of NAME (planner history NAME lists them)
and resumes NEW; NAME is left untouched. --from 0 starts NEW from scratch with NAME's task.

Exit codes as run's: 0 complete, 1 failed, 2 usage, 3 waiting for approval, 4 incomplete, 130 stopped.`,
		Example: `  planner run --config configs/react.yaml --llm sim --suite demo --task demo-07 --thread galileo -q
  planner resume galileo   # a done thread replays its journal: the same answer, no model call
  planner resume galileo --from 1 --as galileo-b   # fork: checkpoint 1 replayed, the rest live
  planner resume mythread --approve   # needs a thread waiting for approval
  planner resume mythread --deny "do not email customers"   # needs a thread waiting for approval
  planner resume mythread --input "ship it on Monday"   # needs a thread waiting for a human node (ask: text)`,
		Args: exactArgs(1, "a thread name"),
		RunE: func(c *cobra.Command, args []string) error { return resumeThread(c, p, f, args[0]) },
	}
	fl := c.Flags()
	storeFlag(c, &f.store)
	fl.BoolVar(&f.approve, "approve", false, "approve the tool call the thread waits for")
	fl.StringVar(&f.deny, "deny", "", "deny the tool call the thread waits for, with this reason (shown to the model)")
	fl.StringVar(&f.input, "input", "", "answer the human node the thread waits for (ask: text) with this text")
	fl.Int64Var(&f.from, "from", -1, "fork from this checkpoint (with --as)")
	fl.StringVar(&f.as, "as", "", "name of the new thread forked with --from")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON object on the last stdout line")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not print the trace stream")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "also print node, route and model-call events")
	fl.StringVar(&f.traceFile, "trace", "", "write every trace event of this session as JSONL to this file")
	fl.BoolVar(&f.noInput, "no-input", false, "never ask on the terminal: a call that needs approval makes the thread wait (exit 3)")
	fl.BoolVar(&f.keepRequests, "keep-requests", false, "journal the whole prompt of each new model call rather than its digest (a resume that diverges then shows a diff)")
	return c
}

func resumeThread(c *cobra.Command, p process, f *resumeFlags, name string) error {
	ctx := c.Context()
	usage := func(format string, args ...any) error {
		return &usageError{cmd: "resume", err: fmt.Errorf(format, args...)}
	}
	answers := 0
	for _, set := range []bool{f.approve, c.Flags().Changed("deny"), c.Flags().Changed("input")} {
		if set {
			answers++
		}
	}
	if answers > 1 {
		return usage("--approve, --deny and --input exclude each other")
	}
	if c.Flags().Changed("input") && strings.TrimSpace(f.input) == "" {
		return usage("--input needs the text to answer with")
	}
	if c.Flags().Changed("deny") && strings.TrimSpace(f.deny) == "" {
		return usage("--deny needs a reason (it is shown to the model)")
	}
	forking := c.Flags().Changed("from") || f.as != ""
	if forking && (!c.Flags().Changed("from") || f.as == "") {
		return usage("--from N and --as NEW go together")
	}
	store, err := openStore(ctx, p, f.store)
	if err != nil {
		return err
	}
	th, err := store.Thread(ctx, name)
	if err == nil && !forking {
		// A conversation resumes at its latest turn (planner.FollowUp).
		var latest journal.Thread
		if latest, err = planner.LatestTurn(ctx, store, name); err == nil && latest.Name != name {
			fmt.Fprintf(c.ErrOrStderr(), "planner: thread %s continues in its latest turn, thread %s\n", name, latest.Name)
			th = latest
		}
	}
	if err == nil && forking {
		if th, err = journal.Fork(ctx, store, name, f.as, f.from); err == nil {
			fmt.Fprintf(c.ErrOrStderr(), "planner: forked thread %s from %s at checkpoint %d\n", th.Name, name, f.from)
		}
	}
	defer store.Close()
	switch {
	case errors.Is(err, journal.ErrNotFound):
		return usage("no thread named %q in %s; planner threads lists them", name, storeName(p, f.store))
	case errors.Is(err, journal.ErrExists), errors.Is(err, journal.ErrBadName), errors.Is(err, journal.ErrNoCheckpoint):
		return usage("%w", err)
	case err != nil:
		return err
	}
	var meta threadMeta
	if err := json.Unmarshal(th.Meta, &meta); err != nil || meta.Config == "" {
		return fmt.Errorf("thread %q was not started by planner run (no run settings recorded); resume it through the Go API", th.Name)
	}
	rf := &runFlags{config: meta.Config, llm: meta.LLM, suite: meta.Suite, task: meta.Task, reference: meta.Reference,
		maxSteps: meta.MaxSteps, timeout: meta.Timeout, json: f.json, quiet: f.quiet, verbose: f.verbose, traceFile: f.traceFile,
		thread: th.Name, store: f.store, noInput: f.noInput, resume: true, opened: store, audit: meta.Audit, keepRequests: f.keepRequests,
		history: meta.History}
	if answers > 0 {
		if th.Status != journal.StatusWaiting || th.Pending == nil {
			return usage("thread %q is %s, not waiting for an approval", th.Name, th.Status)
		}
		textWanted := th.Pending.Tool == flow.HumanInput
		switch {
		case c.Flags().Changed("input") && !textWanted:
			return usage("thread %q waits for an approval of %s, not for text: answer with --approve or --deny REASON", th.Name, th.Pending.Tool)
		case f.approve && textWanted:
			return usage("thread %q waits for text from a person (node %s): answer with --input TEXT, or decline with --deny REASON", th.Name, th.Pending.Node)
		}
		d := journal.Decision{Approved: f.approve, Reason: strings.TrimSpace(f.deny), By: "resume --deny"}
		switch {
		case f.approve:
			d.By = "resume --approve"
		case c.Flags().Changed("input"):
			d = journal.Decision{Approved: true, Reason: strings.TrimSpace(f.input), By: "resume --input"}
		}
		rf.decision = &d
	}
	return runTask(c, p, rf, meta.Question)
}

// storeName is the store path to show: --store, else the default.
func storeName(p process, path string) string {
	if d, err := storePath(p, path); err == nil {
		return d
	}
	return "the default store"
}

func newThreadsCmd(p process) *cobra.Command {
	var store string
	var asJSON bool
	c := &cobra.Command{
		Use:   "threads",
		Short: "List the threads of the thread store",
		Long: `List the threads (durable runs started with run --thread NAME): name, pipeline, status
(running, interrupted, waiting, done, failed), node steps, model calls and last update. A thread
whose process died while running shows as interrupted.`,
		Example: `  planner threads
  planner threads --json --store runs.db`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			s, err := openStore(ctx, p, store)
			if err != nil {
				return err
			}
			defer s.Close()
			ts, err := s.Threads(ctx)
			if err != nil {
				return err
			}
			for i := range ts {
				ts[i].Status = journal.LiveStatus(ctx, s, ts[i])
				ts[i].Meta, ts[i].Task = nil, nil
			}
			out := c.OutOrStdout()
			if asJSON {
				if ts == nil {
					ts = []journal.Thread{}
				}
				b, err := json.Marshal(ts)
				if err != nil {
					return err
				}
				fmt.Fprintln(out, string(b))
				return nil
			}
			if len(ts) == 0 {
				fmt.Fprintf(out, "no threads in %s (start one with planner run --thread NAME ...)\n", storeName(p, store))
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPIPELINE\tSTATUS\tSTEPS\tMODEL CALLS\tTOOL CALLS\tUPDATED")
			for _, t := range ts {
				status := string(t.Status)
				if t.Pending != nil {
					status += " (" + t.Pending.Tool + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", t.Name, t.Pipeline, status, t.Steps, t.ModelCalls, t.ToolCalls, t.Updated.Local().Format("2006-01-02 15:04:05"))
			}
			return tw.Flush()
		},
	}
	storeFlag(c, &store)
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func newHistoryCmd(p process) *cobra.Command {
	var store string
	var asJSON bool
	c := &cobra.Command{
		Use:   "history NAME",
		Short: "List a thread's checkpoints",
		Long: `List a thread's checkpoints: every node transition, model call, tool call and approval its
journal holds, numbered. planner resume NAME --from N --as NEW forks a new thread from checkpoint N.
A thread with follow-ups (run --thread NAME on a done thread) lists its turns first: each turn's
thread, status, question and answer.`,
		Example: `  planner run --config configs/react.yaml --llm sim --suite demo --task demo-07 --thread galileo -q
  planner history galileo
  planner history galileo --json`,
		Args: exactArgs(1, "a thread name"),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			s, err := openStore(ctx, p, store)
			if err != nil {
				return err
			}
			defer s.Close()
			th, err := s.Thread(ctx, args[0])
			if errors.Is(err, journal.ErrNotFound) {
				return &usageError{cmd: "history", err: fmt.Errorf("no thread named %q in %s; planner threads lists them", args[0], storeName(p, store))}
			}
			if err != nil {
				return err
			}
			entries, err := s.Entries(ctx, th.Name)
			if err != nil {
				return err
			}
			cps := server.Checkpoints(entries, p.scrub)
			out := c.OutOrStdout()
			if asJSON {
				b, err := json.Marshal(cps)
				if err != nil {
					return err
				}
				fmt.Fprintln(out, string(b))
				return nil
			}
			fmt.Fprintf(out, "thread %s: %s, %s\n", th.Name, journal.LiveStatus(ctx, s, th), th.Pipeline)
			if th.Parent != "" {
				fmt.Fprintf(out, "forked from %s at checkpoint %d\n", th.Parent, th.ForkedAt)
			}
			if err := printTurns(ctx, out, s, th, p.scrub.String); err != nil {
				return err
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "N\tTIME\tKIND\tWHERE\tWHAT")
			for _, cp := range cps {
				where := cp.Scope
				if where == "" {
					where = cp.Node
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", cp.N, cp.Time.Local().Format("15:04:05.000"), cp.Kind, where, cp.Summary)
			}
			return tw.Flush()
		},
	}
	storeFlag(c, &store)
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// openThread opens the thread store of a --thread run (f.opened, else
// --store) and adds the thread's run options: the thread, and for a new
// one the settings planner resume needs to load and run it again, with
// question.
func (s *runServices) openThread(ctx context.Context, proc process, f *runFlags, question string) error {
	if err := journal.CheckName(f.thread); err != nil {
		return &usageError{cmd: "run", err: fmt.Errorf("--thread: %w", err)}
	}
	var store journal.Store = f.opened
	if store == nil {
		opened, err := openStore(ctx, proc, f.store)
		if err != nil {
			return err
		}
		s.store, store = opened, opened
	}
	if !f.resume {
		if th, err := store.Thread(ctx, f.thread); err == nil {
			return &usageError{cmd: "run", err: fmt.Errorf("thread %q exists (%s); continue it with %s, or pick another --thread name",
				f.thread, journal.LiveStatus(ctx, store, th), resumeHint(f.thread, f.store))}
		}
	}
	meta, err := newThreadMeta(f, question)
	if err != nil {
		return err
	}
	s.opts = append(s.opts, planner.WithThread(store, f.thread), planner.WithThreadMeta(f.config, meta))
	if f.keepRequests {
		s.opts = append(s.opts, planner.WithKeptRequests())
	}
	return nil
}

// newThreadMeta is what a thread records of the run f for planner
// resume, with absolute paths: resume may run from another folder.
func newThreadMeta(f *runFlags, question string) (threadMeta, error) {
	config, err := filepath.Abs(f.config)
	if err != nil {
		return threadMeta{}, err
	}
	suite := f.suite
	if st, err := os.Stat(suite); err == nil && !st.IsDir() {
		// A suite file.
		if abs, err := filepath.Abs(suite); err == nil {
			suite = abs
		}
	}
	auditFile := f.audit
	if auditFile != "" {
		if auditFile, err = filepath.Abs(auditFile); err != nil {
			return threadMeta{}, err
		}
	}
	return threadMeta{Config: config, LLM: f.llm, Suite: suite, Task: f.task, Question: question,
		Reference: f.reference, MaxSteps: f.maxSteps, Timeout: f.timeout, Audit: auditFile}, nil
}

// reportThread prints how a thread's run ended. A thread that waits for
// approval is reported whole here (the --json line too, scrubbed with sc)
// and returns a *waitingError; otherwise the caller prints the result as
// for any run.
func reportThread(c *cobra.Command, f *runFlags, res *planner.Result, label string, sc trace.Scrubber, runErr error) error {
	out, errOut := c.OutOrStdout(), c.ErrOrStderr()
	hint := resumeHint(f.thread, f.store)
	if res.Status == journal.StatusWaiting && res.Pending != nil {
		if f.json {
			b, err := json.Marshal(redact.Walk(waitingOutput{Status: string(res.Status), Thread: f.thread, Pending: res.Pending, Model: label, Usage: res.Usage}, sc))
			if err != nil {
				return err
			}
			fmt.Fprintln(out, string(b))
		} else {
			pending := trace.Printable(sc.String(textutil.Clip(res.Pending.Input, 2000)))
			switch res.Pending.Tool {
			case flow.HumanInput:
				fmt.Fprintf(out, "\nThread %s waits for a person's answer (node %s):\n  %s\nAnswer with:  %s --input \"TEXT\"\n    decline:  %s --deny \"REASON\"\n",
					f.thread, trace.Printable(res.Pending.Node), pending, hint, hint)
			case flow.HumanApproval:
				fmt.Fprintf(out, "\nThread %s waits for a person's approval (node %s):\n  %s\nDecide with:  %s --approve\n         or:  %s --deny \"REASON\"\n",
					f.thread, trace.Printable(res.Pending.Node), pending, hint, hint)
			default:
				fmt.Fprintf(out, "\nThread %s waits for approval of %s (node %s) with input:\n  %s\nDecide with:  %s --approve\n         or:  %s --deny \"REASON\"\n",
					f.thread, trace.Printable(res.Pending.Tool), trace.Printable(res.Pending.Node), pending, hint, hint)
			}
		}
		return &waitingError{runErr}
	}
	stopped := res.Status == journal.StatusInterrupted || res.Status == journal.StatusFailed
	if !f.quiet || stopped {
		fmt.Fprintf(errOut, "planner: thread %s: %s; %s replayed from the journal, %d new\n",
			f.thread, res.Status, textutil.Count(res.Replayed, "checkpoint", "checkpoints"), res.Live)
	}
	if stopped {
		fmt.Fprintf(errOut, "planner: resume with: %s\n", hint)
	}
	if res.Unused > 0 && runErr == nil {
		fmt.Fprintf(errOut, "planner: warning: %d journaled call(s) of thread %s were not replayed; the run took a different path than the journal\n", res.Unused, f.thread)
	}
	return nil
}

// printTurns lists the turns of the conversation th starts, when it has
// follow-ups: each turn's thread, status, question and answer, scrubbed
// and clipped.
func printTurns(ctx context.Context, out io.Writer, s journal.Store, th journal.Thread, scrub func(string) string) error {
	latest, err := planner.LatestTurn(ctx, s, th.Name)
	if err != nil || latest.Name == th.Name {
		return err
	}
	short := func(t string) string { return textutil.Clip(textutil.OneLine(scrub(t)), 80) }
	var meta threadMeta
	_ = json.Unmarshal(th.Meta, &meta)
	fmt.Fprintln(out, "turns:")
	turn := th
	for n := max(meta.Turn, 1); ; n++ {
		var task state.Task
		_ = json.Unmarshal(turn.Task, &task)
		fmt.Fprintf(out, "  %d  %s  %s  %s -> %s\n", n, turn.Name, journal.LiveStatus(ctx, s, turn), short(task.Question), short(turn.Answer))
		if turn.Name == latest.Name {
			return nil
		}
		if turn, err = s.Thread(ctx, planner.TurnName(th.Name, n+1)); err != nil {
			return err
		}
	}
}
