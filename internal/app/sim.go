package app

import (
	"context"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/tmc/langchaingo/llms"
)

// WithTasks gives the suite's tasks (with their gold solutions and their
// replies, keyed by task id) to the offline models that play them: the
// simulator follows the gold solution of the task whose id its call
// metadata names, and the scripted model without a script (--llm
// scripted) plays that task's own replies. Production providers never see
// them.
func WithTasks(tasks []suite.Task) Option {
	return func(o *options) { o.tasks = tasks }
}

// withSim registers the offline simulator "sim" (package eval/sim) on the
// engine, playing tasks. It is registered as an offline provider: no
// per-attempt timeout unless the llm block sets one, and quick retries,
// since its failures are simulated. The public package leaves it out, as
// it measures the engine rather than serving answers.
func withSim(tasks []suite.Task) planner.Option {
	return planner.WithOfflineProvider("sim", sim.Label, func(_ context.Context, cfg config.LLM, _ string) (llms.Model, error) {
		seed := cfg.Seed
		if seed == 0 {
			seed = 1
		}
		return sim.New(cfg.Profile, sim.WithSeed(seed), sim.WithTasks(tasks))
	}, llm.AsKind(llm.KindSimulated))
}
