package plan

// Step is one step of a plan.
type Step struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	Tool        string   `json:"tool,omitempty"`
	Input       string   `json:"input,omitempty"`
	DependsOn   []string `json:"depends_on,omitempty"`
	// Status is one of the Status* constants.
	Status string `json:"status,omitempty"`
	// Result is the step's outcome (observation or sub-run answer).
	Result string `json:"result,omitempty"`
	// Error explains a failed or skipped step.
	Error string `json:"error,omitempty"`
}

// Step statuses.
const (
	StatusPending = "pending"
	StatusRunning = "running"
	StatusDone    = "done"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)
