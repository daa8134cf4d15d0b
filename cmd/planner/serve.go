package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/server"
	"github.com/spf13/cobra"
)

// serveGrace is how long serve waits, after SIGINT or SIGTERM, for its
// runs to save their threads; it stays under stopGrace.
const serveGrace = 2500 * time.Millisecond

type serveFlags struct {
	addr, dir, db, llm, root, compareDir string
	allowEnv                             []string
	maxIdlePipelines, maxValidations     int
	pipelineIdle, validateTimeout        time.Duration
}

func newServeCmd(p process) *cobra.Command {
	f := &serveFlags{}
	c := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--dir configs] [--db FILE] [--llm SPEC]",
		Short: "Serve the HTTP API: pipelines, live runs, threads, approvals and comparisons",
		Long: `Serve planner's HTTP API (JSON; the OpenAPI document is at /openapi.json): list, validate and draw
the pipelines of --dir; start runs and follow their events as Server-Sent Events; list, resume and
fork threads; approve or deny waiting tool calls; run comparisons and fetch their reports.

Every run is a thread of the --db store (the same store as planner threads), so a restart loses
none. It listens on 127.0.0.1:8080 unless --addr says otherwise; a non-loopback address needs
PLANNER_SERVE_TOKEN, which every /api request must then send as "Authorization: Bearer TOKEN".
SIGINT or SIGTERM stops it: running runs are saved as interrupted threads that resume later.

Runs of one config share its loaded pipeline (kept while idle for --pipeline-idle-timeout, at most
--max-idle-pipelines of them); queued runs hold none. A pipeline posted for validation may name files
and folders only under --root, and its ${VAR} read only the variables --allow-env names.`,
		Example: `  planner serve   # needs Ctrl-C to stop: it serves until then
  planner serve --llm sim --addr 127.0.0.1:9090 --db runs.db   # needs Ctrl-C to stop
  PLANNER_SERVE_TOKEN=change-me-to-a-long-secret planner serve --addr 0.0.0.0:8080   # needs Ctrl-C to stop`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error { return serve(c, p, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.addr, "addr", server.DefaultAddr, "address to listen on; a non-loopback one needs PLANNER_SERVE_TOKEN")
	fl.StringVar(&f.dir, "dir", server.DefaultDir, "folder of the pipeline configs that runs and comparisons name")
	fl.StringVar(&f.db, "db", "", "thread store file (default $PLANNER_STORE, else $XDG_STATE_HOME/planner/threads.db or ~/.local/state/planner/threads.db)")
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
	db, err := storePath(p, f.db)
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
	l, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintf(c.OutOrStdout(), "planner: serving http://%s (API under /api, OpenAPI at /openapi.json; threads in %s)\n", l.Addr(), db)
	err = srv.Serve(ctx, l, serveGrace)
	if ctx.Err() != nil && err == nil {
		fmt.Fprintln(c.ErrOrStderr(), "planner: serve stopped; running runs were saved as interrupted threads")
	}
	return err
}
