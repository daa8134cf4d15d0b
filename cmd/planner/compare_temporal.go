package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/temporal"
	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// pollerGrace is how long compare --temporal waits before it checks that
// a worker polls its task queue, and says so when none does.
const pollerGrace = 10 * time.Second

// useTemporal makes opts run each (config, task) of the comparison as a
// Temporal workflow on the workers of f's task queue (compare
// --temporal), and returns what closes the connection. The comparison
// itself (store, resume, progress bar, reports) stays in this process.
func useTemporal(c *cobra.Command, f *compareFlags, opts *compare.Options) (func(), error) {
	switch {
	case f.threads:
		return nil, &usageError{cmd: "compare", err: errors.New("--threads has no use with --temporal: Temporal keeps each run's finished calls itself; leave out --threads")}
	case f.maxModelCalls > 0 || f.maxTokens > 0 || f.maxCostUSD > 0:
		return nil, &usageError{cmd: "compare", err: errors.New("--max-model-calls, --max-tokens and --max-cost-usd do not reach runs on Temporal workers yet; " +
			"leave them out (each pipeline's own limits still bound its runs)")}
	case opts.LLM.Provider == "sim" && f.seed != 1:
		return nil, &usageError{cmd: "compare", err: fmt.Errorf("--seed %d: the sim model on Temporal workers plays seed 1 only for now; leave out --seed", f.seed)}
	}
	tc, err := f.temporal.dial(c.Context(), "compare", c.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.OutDir)
	if err != nil {
		tc.Close()
		return nil, err
	}
	opts.RunFunc = temporalRunFunc(tc, f.temporal.taskQueue, dir)
	fmt.Fprintf(c.ErrOrStderr(), "compare: runs go to the Temporal workers of task queue %s at %s (planner worker --temporal %s)\n",
		f.temporal.taskQueue, f.temporal.hostPort, f.temporal.hostPort)
	if app.PlaysTaskReplies(opts.LLM) {
		// The workers play the replies of their own suite's tasks.
		fmt.Fprintf(c.ErrOrStderr(), "compare: --llm scripted plays each task's replies from the workers' suite: start them with --suite %s\n", f.suite)
	}
	wctx, stopWatch := context.WithCancel(c.Context())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchPollers(wctx, tc, pollerCheck{queue: f.temporal.taskQueue, hostPort: f.temporal.hostPort, namespace: f.temporal.namespace, grace: pollerGrace}, c.ErrOrStderr())
	}()
	return func() {
		stopWatch()
		<-watched
		tc.Close()
	}, nil
}

// queueDescriber is the part of the Temporal client watchPollers uses.
type queueDescriber interface {
	DescribeTaskQueue(ctx context.Context, queue string, kind enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error)
}

// pollerCheck is what watchPollers checks: the workflow task queue of a
// comparison's workers, at the Temporal frontend hostPort (in namespace),
// after grace.
type pollerCheck struct {
	queue, hostPort, namespace string
	// grace is the wait before the check; 0 checks at once.
	grace time.Duration
}

// watchPollers waits p.grace, then asks Temporal whether any worker polls
// p.queue; when none does, it says so once on w, with the command that
// starts one, since the comparison's runs wait for a worker without a
// word. It returns when ctx ends (the comparison is over), after the
// check, or when Temporal cannot answer (the runs will tell that
// themselves).
func watchPollers(ctx context.Context, d queueDescriber, p pollerCheck, w io.Writer) {
	if p.grace > 0 {
		t := time.NewTimer(p.grace)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	resp, err := d.DescribeTaskQueue(ctx, p.queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil || ctx.Err() != nil || len(resp.GetPollers()) > 0 {
		return
	}
	ns := ""
	if p.namespace != "" && p.namespace != "default" {
		ns = " --namespace " + p.namespace
	}
	fmt.Fprintf(w, "compare: no worker polls task queue %s on %s, so the runs wait; start one: planner worker --temporal %s%s --task-queue %s\n",
		p.queue, p.hostPort, p.hostPort, ns, p.queue)
}

// workflowID is the Temporal workflow id of one run of the comparison in
// run folder dir: "planner-<hash>-<config>-<task>", where <hash> covers
// the folder's absolute path and the run's identity (config, model, task,
// seed, fingerprint). Running the comparison again gives the same id, so
// it attaches to the workflow, running or finished, instead of starting
// it again; an edited config or another model gets a new one.
func workflowID(dir string, run compare.RunSpec) string {
	sum := sha256.Sum256([]byte(dir + "\x00" + run.RunID))
	id := fmt.Sprintf("planner-%s-%s-%s", hex.EncodeToString(sum[:6]), idUnsafe.ReplaceAllString(run.Config, "_"), idUnsafe.ReplaceAllString(run.Task.ID, "_"))
	if len(id) > 200 {
		id = id[:200]
	}
	return id
}

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// temporalRunFunc returns the compare.Options.RunFunc that submits each
// run to queue on tc (or attaches to it: workflowID), waits for its
// outcome and returns its result, with the run's trace events. The run
// keeps to its time limit (RunInput.Timeout) on the workers; a comparison
// interrupted (Ctrl-C) leaves its runs running there, and the next one
// attaches to them.
func temporalRunFunc(tc client.Client, queue, dir string) func(context.Context, compare.RunSpec) (*planner.Result, error) {
	return func(ctx context.Context, run compare.RunSpec) (*planner.Result, error) {
		cfg, err := filepath.Abs(run.ConfigPath)
		if err != nil {
			return nil, err
		}
		in := temporal.RunInput{Config: cfg, Task: run.Task, Timeout: run.Timeout}
		if run.LLM.Provider != "" {
			in.LLM = compare.ModelSpec(run.LLM)
		}
		id := workflowID(dir, run)
		began := time.Now()
		wr, err := temporal.Start(ctx, tc, temporal.StartOptions{ID: id, Queue: queue, Input: in})
		if err != nil {
			return nil, err
		}
		var out temporal.Outcome
		if err := wr.Get(ctx, &out); err != nil {
			return nil, fmt.Errorf("temporal: run %s: %w", id, err)
		}
		return outcomeResult(ctx, tc, id, run.RunID, &out, time.Since(began))
	}
}

// eventsTimeout bounds the query of a finished run's trace events.
const eventsTimeout = 10 * time.Second

// outcomeResult turns a finished workflow's outcome into the result
// Pipeline.Run would have returned for run runID: its Trace holds the
// run's trace events (as many as the workflow keeps, temporal.MaxEvents),
// stamped with runID and numbered from 1.
func outcomeResult(ctx context.Context, tc client.Client, id, runID string, out *temporal.Outcome, took time.Duration) (*planner.Result, error) {
	qctx, cancel := context.WithTimeout(ctx, eventsTimeout) // a query needs a worker to answer it
	evs, err := temporal.Events(qctx, tc, id)
	cancel()
	if err != nil { // without them the run only has no trace
		evs = nil
	}
	for i := range evs {
		evs[i].RunID, evs[i].Seq = runID, int64(i+1)
	}
	res := &planner.Result{RunID: runID, Answer: out.Answer, Complete: out.Complete, Reason: out.Reason, Failure: out.Failure,
		Usage: out.Usage, Steps: out.Steps, Duration: took, Trace: evs}
	if out.Status == temporal.StatusFailed {
		msg := out.Error
		if msg == "" {
			msg = "the run failed"
		}
		if res.Failure == "" {
			res.Failure = compare.FailureError
		}
		return res, errors.New(msg)
	}
	return res, nil
}
