package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/trace"
	"github.com/spf13/cobra"
)

type runFlags struct {
	config, llm, traceFile, reference, record string
	json, quiet, verbose                      bool
	maxSteps                                  int
	timeout                                   time.Duration
}

// runOutput is the --json result line.
type runOutput struct {
	Answer   string              `json:"answer"`
	Complete bool                `json:"complete"`
	Reason   string              `json:"reason,omitempty"`
	Failure  string              `json:"failure,omitempty"`
	Error    string              `json:"error,omitempty"`
	Model    string              `json:"model"`
	Usage    agent.UsageSnapshot `json:"usage"`
	Steps    []string            `json:"steps"`
	Trace    string              `json:"trace,omitempty"`
	Cassette string              `json:"cassette,omitempty"`
	Pipeline string              `json:"pipeline"`
}

func newRunCmd(p process) *cobra.Command {
	f := &runFlags{}
	c := &cobra.Command{
		Use:   "run --config FILE [flags] TASK...",
		Short: "Run one task through a pipeline",
		Long: `Run one task through a YAML pipeline and print the trace and the answer.
The task is the arguments joined by spaces, or standard input when it is "-".

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
130 / 143 stopped by SIGINT / SIGTERM (the trace so far is saved). 3 is reserved for a run
that waits for approval.`,
		Example: `  planner run --config configs/direct.yaml "What is the capital of France?"
  planner run --config configs/react.yaml --llm openai:gpt-4o-mini --trace run.jsonl "How tall is ..."
  echo "What is 2+2?" | planner run --config configs/cot.yaml --json -
  planner run --config configs/cot.yaml --llm openai:gpt-4o-mini --record cot.cassette.jsonl "What is 17 * 23 + 4?"
  planner run --config configs/cot.yaml --llm replay:cot.cassette.jsonl "What is 17 * 23 + 4?"`,
		Args: minArgs(1, "a task (or - to read it from stdin)"),
		RunE: func(c *cobra.Command, args []string) error {
			if f.config == "" {
				return &usageError{cmd: "run", err: errors.New("--config is required")}
			}
			task := strings.Join(args, " ")
			if task == "-" {
				b, err := io.ReadAll(bufio.NewReader(c.InOrStdin()))
				if err != nil {
					return fmt.Errorf("reading task from stdin: %w", err)
				}
				task = strings.TrimSpace(string(b))
			}
			if task == "" {
				return &usageError{cmd: "run", err: errors.New("the task is empty")}
			}
			return runTask(c, p, f, task)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.config, "config", "c", "", "pipeline YAML file (required)")
	fl.StringVar(&f.llm, "llm", "", "model as provider:model (openai:gpt-4o-mini, ollama:llama3.1, scripted:FILE, sim:noisy); overrides the YAML llm block")
	fl.StringVar(&f.traceFile, "trace", "", "write every trace event as JSONL to this file")
	fl.StringVar(&f.record, "record", "", "save every model request/response to this cassette file (replay it with --llm replay:FILE)")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON object on the last stdout line")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not print the trace stream")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "also print node, route and model-call events")
	fl.IntVar(&f.maxSteps, "max-steps", 0, "override limits.max_steps (node executions per run)")
	fl.DurationVar(&f.timeout, "timeout", 0, "whole-run time limit (default: the pipeline's limits.timeout, else "+config.DefaultTimeout.String()+"; negative: none)")
	fl.StringVar(&f.reference, "reference", "", "reference answer (used by evaluators such as Reflexion's exact match)")
	return c
}

func runTask(c *cobra.Command, proc process, f *runFlags, question string) (err error) {
	ctx := c.Context()
	var spec config.LLM
	if f.llm != "" {
		if spec, err = llm.ParseSpec(f.llm); err != nil {
			return &usageError{cmd: "run", err: err}
		}
	}
	var opts []app.Option
	if f.record != "" {
		if spec.Provider == "replay" && samePath(spec.Script, f.record) {
			return &usageError{cmd: "run", err: fmt.Errorf("--record %s would overwrite the cassette being replayed; record to another file", f.record)}
		}
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
	if f.llm != "" && !slices.Contains(a.Models.Providers(), spec.Provider) {
		return &usageError{cmd: "run", err: fmt.Errorf("%w %q in --llm (available: %s)",
			llm.ErrUnknownProvider, spec.Provider, strings.Join(a.Models.Providers(), ", "))}
	}
	p, err := a.LoadWith(ctx, f.config, spec, f.maxSteps)
	if errors.Is(err, app.ErrNoModel) {
		return &usageError{cmd: "run", err: err}
	}
	if err != nil {
		return err
	}
	if f.timeout != 0 {
		p.Config.Limits.Timeout = f.timeout
	}
	out := c.OutOrStdout()
	// One scrubber for every output of the run: the terminal stream, the
	// --trace file, the --json line and the answer.
	sc := redact.New()
	tracer := trace.NewWithOptions(newRunID(), trace.WithScrubber(sc))
	if !f.quiet {
		tty := false
		if file, ok := out.(*os.File); ok {
			tty = isatty.IsTerminal(file.Fd())
		}
		w := out
		if f.json {
			w = c.ErrOrStderr()
		}
		tracer.AddSink(trace.NewTerminal(w, trace.WithColor(tty && proc.getenv("NO_COLOR") == ""), trace.WithVerbose(f.verbose)))
	}
	var jsonl *trace.JSONL
	if f.traceFile != "" {
		file, err := os.Create(f.traceFile)
		if err != nil {
			return fmt.Errorf("opening trace file: %w", err)
		}
		jsonl = trace.NewJSONL(file)
		tracer.AddSink(jsonl)
	}
	provider := spec.Provider
	if provider == "" {
		provider = p.Config.LLM.Provider
	}
	label := a.ModelLabel(provider)
	if !f.quiet && !f.json {
		fmt.Fprintf(out, "model: %s\n", label)
	}
	res, runErr := p.Run(ctx, agent.Task{Question: question, Answer: f.reference}, tracer)
	if jsonl != nil {
		if err := jsonl.Close(); err != nil && runErr == nil {
			runErr = err
		}
	}
	if left := a.UnusedRecordings(); left > 0 && runErr == nil {
		fmt.Fprintf(c.ErrOrStderr(), "planner: warning: %d recorded call(s) of the cassette were not replayed; the run took a different path than the recording\n", left)
	}
	st := res.State
	if f.json {
		o := runOutput{Answer: st.Answer, Complete: st.Complete && runErr == nil, Reason: st.Reason, Failure: st.Failure,
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
