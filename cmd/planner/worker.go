package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/temporal"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
)

// defaultTaskQueue is the task queue planner's workers poll and compare
// --temporal submits to unless --task-queue says otherwise.
const defaultTaskQueue = "planner"

// workerStopTimeout is how long a stopping worker lets the calls in flight
// finish, within the command's grace after a signal (stopGrace); Temporal
// gives the unfinished ones to other workers.
const workerStopTimeout = stopGrace - time.Second

// dialTimeout bounds how long worker and compare --temporal wait for the
// Temporal frontend to answer.
const dialTimeout = 30 * time.Second

// temporalFlags are the flags that reach a Temporal service.
type temporalFlags struct {
	hostPort, namespace, taskQueue string
}

func (f *temporalFlags) add(c *cobra.Command, what string) {
	fl := c.Flags()
	fl.StringVar(&f.hostPort, "temporal", "", what)
	fl.StringVar(&f.namespace, "namespace", "default", "Temporal namespace")
	fl.StringVar(&f.taskQueue, "task-queue", defaultTaskQueue, "Temporal task queue of the planner workers (model calls go to QUEUE-model)")
}

// dial connects to the Temporal frontend at f.hostPort and checks that it
// answers. SDK messages at warning level or above go to stderr.
func (f *temporalFlags) dial(ctx context.Context, cmd string, stderr io.Writer) (client.Client, error) {
	if strings.TrimSpace(f.namespace) == "" || strings.TrimSpace(f.taskQueue) == "" {
		return nil, &usageError{cmd: cmd, err: errors.New("--namespace and --task-queue must not be empty")}
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := client.DialContext(dctx, client.Options{HostPort: f.hostPort, Namespace: f.namespace, Logger: temporalLogger(stderr)})
	if err != nil {
		return nil, fmt.Errorf("connecting to Temporal at %s (is the server running? `temporal server start-dev` starts one on localhost:7233): %w", f.hostPort, err)
	}
	if _, err := c.CheckHealth(dctx, &client.CheckHealthRequest{}); err != nil {
		c.Close()
		return nil, fmt.Errorf("the Temporal service at %s does not answer: %w", f.hostPort, err)
	}
	return c, nil
}

// temporalLogger writes the SDK's warnings and errors to w.
func temporalLogger(w io.Writer) log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

type workerFlags struct {
	temporalFlags
	suite    string
	modelRPS float64
}

func newWorkerCmd() *cobra.Command {
	f := &workerFlags{}
	c := &cobra.Command{
		Use:   "worker --temporal HOST:PORT [--namespace N] [--task-queue Q] [--model-rps R]",
		Short: "Run planner runs submitted to Temporal (compare --temporal) until stopped",
		Long: `Poll a Temporal task queue and run the planner runs submitted to it (planner compare --temporal):
each run is a Temporal workflow whose model and tool calls are activities, so a run whose worker
dies continues on another worker without repeating its finished calls. Start as many workers as
you like, on as many machines; every one must see the same pipeline files (the paths compare
submits) and the same API keys in its environment.

Model calls run on the task queue QUEUE-model; --model-rps caps them per second across every
worker of the queue (Temporal's task-queue rate limit), so ten workers stay within one API key's
quota. Workers of one queue should all pass the same --model-rps.

--suite gives the offline models (sim, scripted) the suite's tasks to play (default: the demo
suite); real models ignore it. A comparison with --llm scripted (each task's own "replies") needs
workers started with the same --suite FILE; with --llm scripted:FILE each run plays the whole
script, whatever other runs the worker served.

A worker keeps each run it advances between its calls, so a call costs one model or tool call,
not a replay of the run; a run whose calls move to another worker is rebuilt there from its
journal. Runs continue as new every few hundred calls, so long runs stay within Temporal's
history limits, and a call whose worker dies is retried within seconds (heartbeats).

SIGINT or SIGTERM stops the worker: it stops polling and lets the calls in flight finish (a few
seconds at most); Temporal gives what remains of its runs to the other workers.`,
		Example: `  planner worker --temporal localhost:7233   # needs Temporal (temporal server start-dev) and Ctrl-C to stop
  planner worker --temporal temporal.internal:7233 --namespace planner --task-queue evals --model-rps 5   # needs Temporal and Ctrl-C to stop`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			return runWorker(c, f)
		},
	}
	f.add(c, "Temporal frontend address HOST:PORT (required), e.g. localhost:7233")
	fl := c.Flags()
	fl.Float64Var(&f.modelRPS, "model-rps", 0, "most model calls per second across every worker of the task queue (0: no cap)")
	fl.StringVar(&f.suite, "suite", app.DemoSuite, "suite whose tasks the offline models (sim, scripted) play: demo, mixed, sorting, sorting32, sorting64, or a file path")
	return c
}

func runWorker(c *cobra.Command, f *workerFlags) error {
	if strings.TrimSpace(f.hostPort) == "" {
		return &usageError{cmd: "worker", err: errors.New("--temporal HOST:PORT is required (e.g. localhost:7233, what `temporal server start-dev` serves)")}
	}
	if f.modelRPS < 0 || math.IsNaN(f.modelRPS) || math.IsInf(f.modelRPS, 0) {
		return &usageError{cmd: "worker", err: fmt.Errorf("--model-rps must be 0 (no cap) or more, got %v", f.modelRPS)}
	}
	ctx := c.Context()
	tasks, err := app.LoadSuite(ctx, f.suite)
	if err != nil {
		return err
	}
	a, err := app.New(app.WithTasks(tasks))
	if err != nil {
		return err
	}
	defer a.Close()
	tc, err := f.dial(ctx, "worker", c.ErrOrStderr())
	if err != nil {
		return err
	}
	defer tc.Close()
	w, err := temporal.NewWorker(tc, f.taskQueue, temporal.Options{Engine: a.Engine, ModelRate: f.modelRPS,
		Worker: worker.Options{WorkerStopTimeout: workerStopTimeout}})
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	rate := "no cap"
	if f.modelRPS > 0 {
		rate = fmt.Sprintf("at most %g per second across the queue's workers", f.modelRPS)
	}
	fmt.Fprintf(c.ErrOrStderr(), "planner worker: polling task queue %s (model calls on %s, %s) on %s, namespace %s; Ctrl-C stops\n",
		f.taskQueue, temporal.ModelQueue(f.taskQueue), rate, f.hostPort, f.namespace)
	<-ctx.Done()
	fmt.Fprintln(c.ErrOrStderr(), "planner worker: stopping")
	return w.Stop()
}
