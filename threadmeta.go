package planner

import "time"

// ThreadMeta is what a durable thread records of the run that started it,
// so that `planner resume` or `planner serve` can load the same pipeline
// and model and start it again: the format both write into a thread's
// journal.Thread.Meta. Empty fields were not given (the pipeline's own
// llm block, the default limits).
type ThreadMeta struct {
	// Config is the pipeline file's path.
	Config string `json:"config"`
	// LLM is the model spec that overrode the pipeline's llm block.
	LLM string `json:"llm,omitempty"`
	// Suite and Task name the suite task the run played, if any.
	Suite string `json:"suite,omitempty"`
	Task  string `json:"task,omitempty"`
	// Question is the run's question; Reference its reference answer.
	Question  string `json:"question,omitempty"`
	Reference string `json:"reference,omitempty"`
	// MaxSteps and Timeout override the pipeline's limits.
	MaxSteps int           `json:"max_steps,omitempty"`
	Timeout  time.Duration `json:"timeout,omitempty"`
	// Audit is the audit log file the run records its tool calls in
	// (run --audit); "" for audit.db beside the thread store.
	Audit string `json:"audit,omitempty"`
}
