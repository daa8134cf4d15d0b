package temporal

import (
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/planner-engine/planner"
)

// Options configures NewWorker.
type Options struct {
	// Engine loads the pipelines (required).
	Engine *planner.Engine
	// ModelRate caps the Advance activities of the model queue (each makes
	// one model call) per second across every worker of the queue
	// (TaskQueueActivitiesPerSecond): the provider's quota. 0: no cap.
	ModelRate float64
	// Worker is the base options of both of the worker's pollers.
	Worker worker.Options
}

// Worker runs planner workflows and their activities on a task queue and
// the Advance activities that make model calls on its ModelQueue.
type Worker struct {
	main, model worker.Worker
	acts        *Activities
}

// register registers the workflow and activity on w under their names.
func register(w interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}, acts *Activities, withWorkflow bool) {
	if withWorkflow {
		w.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	}
	w.RegisterActivityWithOptions(acts.Advance, activity.RegisterOptions{Name: AdvanceName})
}

// NewWorker returns a worker of queue on c: the workflow and the Advance
// activity on queue, and the Advance activity alone on ModelQueue(queue)
// with the rate limit o.ModelRate. Start or Run it; Stop closes the
// pipelines it built.
func NewWorker(c client.Client, queue string, o Options) (*Worker, error) {
	if queue == "" {
		return nil, fmt.Errorf("%w: no task queue", ErrBadInput)
	}
	acts, err := NewActivities(o.Engine)
	if err != nil {
		return nil, err
	}
	w := &Worker{acts: acts, main: worker.New(c, queue, o.Worker)}
	register(w.main, acts, true)
	mo := o.Worker
	mo.TaskQueueActivitiesPerSecond = o.ModelRate
	mo.DisableWorkflowWorker = true
	w.model = worker.New(c, ModelQueue(queue), mo)
	register(w.model, acts, false)
	return w, nil
}

// Start starts both pollers; it does not block.
func (w *Worker) Start() error {
	if err := w.main.Start(); err != nil {
		return fmt.Errorf("temporal: starting the worker: %w", err)
	}
	if err := w.model.Start(); err != nil {
		w.main.Stop()
		return fmt.Errorf("temporal: starting the model-queue worker: %w", err)
	}
	return nil
}

// Run runs the worker until interrupt delivers (worker.InterruptCh()
// for SIGINT and SIGTERM), then stops it.
func (w *Worker) Run(interrupt <-chan any) error {
	if err := w.Start(); err != nil {
		return err
	}
	<-interrupt
	return w.Stop()
}

// Stop stops both pollers and closes the pipelines.
func (w *Worker) Stop() error {
	w.model.Stop()
	w.main.Stop()
	if err := w.acts.Close(); err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	return nil
}
