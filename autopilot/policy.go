// Package autopilot holds the paradigm autopilot's learned policy: a plain
// JSON file, written by `planner autopilot fit` from past comparisons
// (package autopilot/fit), that records for each past task how every
// candidate paradigm did on it, and that picks, for a new task, the
// candidate with the best expected success minus cost_weight × cost over
// the most similar past tasks (BM25 neighbours of the task's text).
//
// The package depends only on the keyword index contract, so the
// autopilot node kind (nodes/autopilot) can load and apply a policy
// without the comparison machinery that fits it.
package autopilot

import (
	"context"
	"errors"
)

// Version is the policy file format this package writes and reads.
const Version = 1

// Sentinel errors.
var (
	// ErrBadPolicy means a policy file is not valid JSON of this format,
	// or is inconsistent (an outcome for an unknown candidate, no tasks).
	ErrBadPolicy = errors.New("autopilot: bad policy file")
	// ErrNoCandidates means a policy names none of the candidates a pick
	// may choose from.
	ErrNoCandidates = errors.New("autopilot: no candidate of the policy is available")
	// ErrNoData means fitting found no runs to learn from.
	ErrNoData = errors.New("autopilot: no comparison runs to learn from")
)

// Policy is a fitted policy, as stored in its JSON file.
type Policy struct {
	// Version is the file format (Version).
	Version int `json:"version"`
	// Sources are the comparison folders the policy was fitted from.
	Sources []string `json:"sources"`
	// Model is the model spec the fitted runs used ("sim:perfect",
	// "openai:gpt-4o-mini"); several are joined with ", ".
	Model string `json:"model,omitempty"`
	// Simulated is true when the runs came from the offline simulator:
	// the policy then reflects the simulator, not a model.
	Simulated bool `json:"simulated,omitempty"`
	// CostUnit is what Cost figures count: "usd" (dollars per task) when
	// every run was priced, else "ktokens" (thousands of tokens per task).
	CostUnit string `json:"cost_unit"`
	// CostWeight is the default weight of cost against success: a pick
	// maximises success − CostWeight × cost. Default 0 (success only, the
	// cheaper candidate winning ties).
	CostWeight float64 `json:"cost_weight"`
	// Neighbours is how many similar past tasks a pick reads; 0 or left
	// out: DefaultNeighbours (8).
	Neighbours int `json:"neighbours"`
	// PriorWeight is the strength, in runs, of the prior (the candidate's
	// rate over all tasks) that smooths the rates over the neighbours.
	// DefaultPriorWeight (2) when the file leaves it out; 0 turns the
	// smoothing off.
	PriorWeight float64 `json:"prior_weight"`
	// Relevance drops the neighbours whose BM25 score is below this
	// fraction of the best neighbour's, so that a task with few close
	// matches is judged by those alone rather than by the weak matches
	// that fill its top Neighbours. A fraction of the best score is the
	// same whatever the scale of one query's scores. DefaultRelevance
	// (0.25) when the file leaves it out; 0 keeps every neighbour.
	Relevance float64 `json:"relevance"`
	// Candidates are the candidates in order of expected cost, cheapest
	// first (the cascade's order), with their figures over all tasks.
	Candidates []Candidate `json:"candidates"`
	// Tasks are the past tasks with their outcomes.
	Tasks []Task `json:"tasks"`
}

// Candidate is one candidate's figures over all the policy's tasks.
type Candidate struct {
	// Name is the config name (the pipeline's name:).
	Name string `json:"name"`
	// Outcome is its runs over every task.
	Outcome
}

// Outcome is how a candidate did on one task (or on all of them).
type Outcome struct {
	// Runs is the number of runs; Successes how many succeeded.
	Runs      int `json:"runs"`
	Successes int `json:"successes"`
	// Cost is the mean cost per run in the policy's CostUnit.
	Cost float64 `json:"cost"`
}

// Rate is Successes/Runs, 0 without runs.
func (o Outcome) Rate() float64 {
	if o.Runs == 0 {
		return 0
	}
	return float64(o.Successes) / float64(o.Runs)
}

// Task is one past task.
type Task struct {
	// ID is the task's id in its suite.
	ID string `json:"id"`
	// Text is the task's question, which neighbours are found by.
	Text string `json:"text"`
	// Outcomes are by candidate name.
	Outcomes map[string]Outcome `json:"outcomes"`
}

// Neighbour is a past task a pick read, with its BM25 score.
type Neighbour struct {
	ID    string  `json:"id"`
	Text  string  `json:"text"`
	Score float64 `json:"score"`
	// Outcomes are the task's outcomes, by candidate.
	Outcomes map[string]Outcome `json:"outcomes"`
}

// Estimate is a candidate's expected success and cost for a task.
type Estimate struct {
	Name string `json:"name"`
	// Success is the smoothed success rate over the neighbours.
	Success float64 `json:"success"`
	// Cost is the expected cost in the policy's CostUnit.
	Cost float64 `json:"cost"`
	// Utility is Success − cost_weight × Cost.
	Utility float64 `json:"utility"`
	// Runs is how many of the neighbours' runs the estimate rests on.
	Runs int `json:"runs"`
}

// Choice is a pick and why.
type Choice struct {
	// Candidate is the chosen candidate's name.
	Candidate string `json:"candidate"`
	// Estimates are every available candidate's, best utility first.
	Estimates []Estimate `json:"estimates"`
	// Neighbours are the past tasks read, most similar first. Empty when
	// no past task shares a word with the task: the estimates are then
	// the candidates' overall rates.
	Neighbours []Neighbour `json:"neighbours"`
	// CostWeight is the weight the pick used.
	CostWeight float64 `json:"cost_weight"`
	// PriorWeight is the policy's prior weight the estimates used.
	PriorWeight float64 `json:"prior_weight"`
	// Relevance is the policy's neighbour cut-off the pick used.
	Relevance float64 `json:"relevance"`
	// CostUnit, Model and Simulated are the policy's (see Policy), so
	// that a choice explains itself.
	CostUnit  string `json:"cost_unit"`
	Model     string `json:"model,omitempty"`
	Simulated bool   `json:"simulated,omitempty"`
}

// PickOptions adjust one pick. The zero value uses the policy's settings
// and every candidate.
type PickOptions struct {
	// Available restricts the pick to these candidates (the ones the
	// autopilot node declares); nil means all of the policy's.
	Available []string
	// CostWeight overrides the policy's when not nil.
	CostWeight *float64
	// Neighbours overrides the policy's when > 0.
	Neighbours int
}

// Index is the policy's tasks indexed for neighbour search. It is safe for
// concurrent use until Close.
type Index interface {
	// Pick chooses a candidate for the task text.
	Pick(ctx context.Context, text string, o PickOptions) (Choice, error)
	// Close releases the index.
	Close() error
}
