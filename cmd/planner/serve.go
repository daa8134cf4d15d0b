package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/mcpserver"
	"github.com/planner-engine/planner/server"
	"github.com/spf13/cobra"
)

// serveGrace is how long serve waits, after SIGINT or SIGTERM, for its
// runs to save their threads; it stays under stopGrace.
const serveGrace = 2500 * time.Millisecond

type serveFlags struct {
	addr, dir, store, llm, root, compareDir string
	// db is the deprecated, hidden --db: --store under its old name.
	db                               string
	allowEnv                         []string
	maxIdlePipelines, maxValidations int
	pipelineIdle, validateTimeout    time.Duration
}

func newServeCmd(p process) *cobra.Command {
	f := &serveFlags{}
	c := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--dir configs] [--store FILE] [--llm SPEC]",
		Short: "Serve the HTTP API: pipelines, live runs, threads, approvals and comparisons",
		Long: `Serve planner's HTTP API (JSON; the OpenAPI document is at /openapi.json): list, validate and draw
the pipelines of --dir; start runs and follow their events as Server-Sent Events; list, resume and
fork threads; approve or deny waiting tool calls; run comparisons and fetch their reports.

Every run is a thread of the --store store (the same store as planner threads), so a restart loses
none. It listens on 127.0.0.1:8080 unless --addr says otherwise; a non-loopback address needs
PLANNER_SERVE_TOKEN, which every /api request must then send as "Authorization: Bearer TOKEN".
SIGINT or SIGTERM stops it gracefully, with exit code 0: running runs are saved as interrupted
threads that resume later, and it says how many were (or that nothing was running).

Runs of one config share its loaded pipeline (kept while idle for --pipeline-idle-timeout, at most
--max-idle-pipelines of them); queued runs hold none. A pipeline posted for validation may name files
and folders only under --root, and its ${VAR} read only the variables --allow-env names.`,
		Example: `  planner serve   # needs Ctrl-C to stop: it serves until then
  planner serve --llm sim --addr 127.0.0.1:9090 --store runs.db   # needs Ctrl-C to stop
  PLANNER_SERVE_TOKEN=change-me-to-a-long-secret planner serve --addr 0.0.0.0:8080   # needs Ctrl-C to stop`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error { return serve(c, p, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.addr, "addr", server.DefaultAddr, "address to listen on; a non-loopback one needs PLANNER_SERVE_TOKEN")
	fl.StringVar(&f.dir, "dir", server.DefaultDir, "folder of the pipeline configs that runs and comparisons name")
	storeFlag(c, &f.store)
	// --db was the store's name before every command called it --store.
	fl.StringVar(&f.db, "db", "", "deprecated: use --store")
	_ = fl.MarkHidden("db")
	fl.StringVar(&f.llm, "llm", "", "model of runs that name none (sim, scripted:FILE, openai:gpt-4o-mini); default the pipeline's own")
	fl.StringVar(&f.root, "root", ".", "folder that file paths in requests (suites, scripts, cassettes) must lie in")
	fl.StringVar(&f.compareDir, "compare-dir", server.DefaultCompareDir, "folder of the comparisons' run folders")
	fl.StringSliceVar(&f.allowEnv, "allow-env", nil, "environment variables that ${VAR} in pipelines posted for validation may read (names, or prefixes ending in *; comma-separated or repeated); default none")
	fl.IntVar(&f.maxIdlePipelines, "max-idle-pipelines", server.DefaultMaxIdlePipelines, "loaded pipelines kept for later runs while no run uses them")
	fl.DurationVar(&f.pipelineIdle, "pipeline-idle-timeout", server.DefaultPipelineIdleTimeout, "how long a loaded pipeline no run uses is kept")
	fl.IntVar(&f.maxValidations, "max-validations", server.DefaultMaxValidations, "validations of posted pipelines running at once (then 429)")
	fl.DurationVar(&f.validateTimeout, "validate-timeout", server.DefaultValidateTimeout, "time limit of one validation of a posted pipeline (then 504)")
	return c
}

func serve(c *cobra.Command, p process, f *serveFlags) error {
	ctx := c.Context()
	usage := func(err error) error { return &usageError{cmd: "serve", err: err} }
	for _, v := range []struct {
		name string
		n    int64
	}{{"max-idle-pipelines", int64(f.maxIdlePipelines)}, {"max-validations", int64(f.maxValidations)},
		{"pipeline-idle-timeout", int64(f.pipelineIdle)}, {"validate-timeout", int64(f.validateTimeout)}} {
		if v.n <= 0 {
			return usage(fmt.Errorf("--%s must be positive", v.name))
		}
	}
	demo, err := suite.Demo()
	if err != nil {
		return err
	}
	a, err := app.New(app.WithTasks(demo)) // sim plays the demo suite's tasks
	if err != nil {
		return err
	}
	defer a.Close()
	store, err := serveStore(c, f)
	if err != nil {
		return err
	}
	db, err := storePath(p, store)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Config{
		Engine: a.Engine, Dir: f.dir, Root: f.root, StorePath: db, Addr: f.addr, Token: p.getenv("PLANNER_SERVE_TOKEN"),
		LLM: f.llm, CompareDir: f.compareDir, AllowEnv: f.allowEnv,
		MaxIdlePipelines: f.maxIdlePipelines, PipelineIdleTimeout: f.pipelineIdle, MaxValidations: f.maxValidations, ValidateTimeout: f.validateTimeout,
		CompareLoader: func(_ context.Context, tasks []suite.Task) (compare.Loader, error) {
			return app.New(app.WithTasks(tasks))
		},
	})
	if errors.Is(err, server.ErrNoToken) || errors.Is(err, server.ErrConfig) {
		return usage(err)
	}
	if err != nil {
		return err
	}
	defer srv.Close()
	srv.Handle("/mcp", mcpserver.Handler(srv, mcpserver.WithVersion(version))) // the pipelines as MCP tools (mcp.go)
	l, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintf(c.OutOrStdout(), "planner: serving http://%s (API under /api, OpenAPI at /openapi.json; threads in %s)\n", l.Addr(), db)
	// The server stops on sctx, which ends only once the runs in flight
	// when ctx ended are known, so the report can say which were saved.
	sctx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	inFlight := make(chan []server.RunView, 1)
	go func() {
		select {
		case <-ctx.Done():
			inFlight <- activeRuns(srv.Runs())
			stopServing()
		case <-sctx.Done():
		}
	}()
	err = srv.Serve(sctx, l, serveGrace)
	if ctx.Err() == nil || err != nil {
		return err
	}
	before := <-inFlight
	fmt.Fprintf(c.ErrOrStderr(), "planner: serve stopped by %s; %s\n", stopSignal(ctx), savedReport(before, srv.Runs()))
	return &stoppedCleanly{}
}

// stoppedCleanly is what serve returns once a signal stopped it and its
// runs were saved: execute exits 0 for it, since a service manager reads
// a stop it asked for as a success, not as a failure (128+signal).
type stoppedCleanly struct{}

func (*stoppedCleanly) Error() string { return "stopped cleanly" }

// serveStore is the --store value, or the deprecated --db's (with a
// warning); both set differently is a usage error.
func serveStore(c *cobra.Command, f *serveFlags) (string, error) {
	if !c.Flags().Changed("db") {
		return f.store, nil
	}
	fmt.Fprintln(c.ErrOrStderr(), "planner: serve --db (PLANNER_DB) is deprecated; use --store (PLANNER_STORE), as every other command does")
	if c.Flags().Changed("store") && f.store != f.db {
		return "", &usageError{cmd: "serve", err: fmt.Errorf("--store %q and the deprecated --db %q name different thread stores; give --store only", f.store, f.db)}
	}
	return f.db, nil
}

// stopSignal names the signal that ended ctx ("SIGTERM"), or says it was
// stopped.
func stopSignal(ctx context.Context) string {
	var sig *interrupted
	if errors.As(context.Cause(ctx), &sig) {
		return signalName(sig.sig)
	}
	return "a stop request"
}

// activeRuns keeps the runs that are queued or running.
func activeRuns(runs []server.RunView) []server.RunView {
	var out []server.RunView
	for _, r := range runs {
		if r.Status == "queued" || r.Status == "running" {
			out = append(out, r)
		}
	}
	return out
}

// savedReport says what stopping saved: which of the runs in flight
// before the stop (before) ended as interrupted threads (after), that
// nothing was running, or, when the runs could not be listed (err), where
// their threads are.
func savedReport(before, after []server.RunView) string {
	if len(before) == 0 {
		return "nothing was running"
	}
	status := map[string]string{}
	for _, r := range after {
		status[r.ID] = r.Status
	}
	var saved, other []string
	for _, r := range before {
		if st := status[r.ID]; st == string(journal.StatusInterrupted) {
			saved = append(saved, r.Thread)
		} else {
			other = append(other, r.Thread+" ("+cmp.Or(st, "unknown")+")")
		}
	}
	var parts []string
	if len(saved) > 0 {
		parts = append(parts, fmt.Sprintf("%s saved as interrupted threads: %s (planner resume NAME continues one)",
			textutil.Count(len(saved), "running run", "running runs"), strings.Join(saved, ", ")))
	}
	if len(other) > 0 {
		parts = append(parts, fmt.Sprintf("%s ended as it stopped: %s", textutil.Count(len(other), "run", "runs"), strings.Join(other, ", ")))
	}
	return strings.Join(parts, "; ")
}
