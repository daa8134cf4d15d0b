package state

import (
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/plan"
)

// State is the run state shared by every agent node of one run. It is plain
// data with JSON tags. Nodes run one at a time; a node that fans work out to
// goroutines must merge results itself, in a fixed order. Usage and Vars
// are the fields safe for concurrent updates.
type State struct {
	// Task is the input.
	Task Task `json:"task"`
	// Plan is the current plan, for plan-based paradigms.
	Plan []plan.Step `json:"plan,omitempty"`
	// Scratchpad holds the ReAct entries of the current (sub-)run.
	Scratchpad []Entry `json:"scratchpad,omitempty"`
	// Reflections are lessons from earlier failed trials (episodic memory).
	Reflections []string `json:"reflections,omitempty"`
	// Trials records each finished trial of a retrying paradigm (Reflexion).
	Trials []Trial `json:"trials,omitempty"`
	// Candidates are sampled answers or thoughts (self-consistency, ToT).
	Candidates []Candidate `json:"candidates,omitempty"`
	// SelfConsistency is the vote of a self_consistency nodekind.
	SelfConsistency *Tally `json:"self_consistency,omitempty"`
	// SubQuestions are a least_to_most node's decomposition, in solving
	// order (the task itself last), each with its answer once solved.
	SubQuestions []SubQuestion `json:"subquestions,omitempty"`
	// ThoughtPath is the path of thoughts a tot node followed to its answer
	// (or to its deepest state when no answer was reached).
	ThoughtPath []string `json:"thought_path,omitempty"`
	// Notes are named intermediate outputs that pipelines pass between
	// nodes through templates (for example a CoT rationale saved under a
	// node's note key), keyed by name.
	Notes map[string]string `json:"notes,omitempty"`
	// Vars are the run's working memory: named values that nodes
	// (`output: var:NAME`), tools (the `vars` tool) and the execute node
	// (each plan step's result, under StepVar of its id) set and prompt
	// templates read as {{.Vars.NAME}}. Safe for concurrent use.
	Vars Vars `json:"vars,omitzero"`
	// Replans counts re-planning rounds.
	Replans int `json:"replans,omitempty"`
	// Answer is the final answer once one is known.
	Answer string `json:"answer,omitempty"`
	// Done is true once a node has set the final answer.
	Done bool `json:"done,omitempty"`
	// Complete is false when the answer is a best effort after a budget
	// ran out or a step failed.
	Complete bool `json:"complete"`
	// Reason explains an incomplete answer.
	Reason string `json:"reason,omitempty"`
	// Failure classifies why the run did not complete normally, if it did
	// not: one of the Failure* constants.
	Failure string `json:"failure,omitempty"`
	// Incidents are the failure kinds of parts of the run that failed and
	// were worked around (a plan step whose sub-run ran out of budget, a
	// tool error), in order. Reports count them as the cause of an
	// unsuccessful run that has no Failure, or as recovered failures.
	Incidents []string `json:"incidents,omitempty"`
	// Usage counts model and tool usage.
	Usage Usage `json:"usage"`

	// hooks are the run's hooks (SetHooks): the run's services, which every
	// model and tool call of the run passes. Not part of the JSON.
	hooks *hooks.Set
}

// SetHooks gives the run its hooks; the pipeline sets them once, before
// the run starts. Every model call (llm.Model.Call) and tool call
// (nodekind.ToolCall) made with s passes them.
func (s *State) SetHooks(h *hooks.Set) { s.hooks = h }

// Hooks returns the run's hooks; nil (no hooks) for a nil s or a state
// whose run set none.
func (s *State) Hooks() *hooks.Set {
	if s == nil {
		return nil
	}
	return s.hooks
}

// TaskID returns the id of the run's task; "" for a nil s.
func (s *State) TaskID() string {
	if s == nil {
		return ""
	}
	return s.Task.ID
}

// Failure kinds, used by reports to group unsuccessful runs.
const (
	FailureParse    = "parse"
	FailureLoop     = "loop"
	FailureBudget   = "budget"
	FailureTool     = "tool"
	FailureProvider = "provider"
	FailureTimeout  = "timeout"
	FailurePlan     = "plan"
	// FailureWrong marks an answer an evaluator judged wrong (Reflexion's
	// trials or LATS's search ran out without a passing answer).
	FailureWrong = "wrong"
	// FailureWaiting marks a run stopped to wait for a human's approval of
	// a tool call; its thread resumes once the call is decided.
	FailureWaiting = "waiting"
	// FailureError marks a run that failed with an error of no other kind.
	FailureError = "error"
)

// NewState returns a state for a task.
// Its vars start as the task's (Task.Vars); a var that cannot be set (see
// Task.CheckVars, which callers check first) is left out.
func NewState(task Task) *State {
	st := &State{Task: task, Notes: map[string]string{}}
	for _, name := range slices.Sorted(maps.Keys(task.Vars)) {
		_ = st.Vars.Set(name, task.Vars[name])
	}
	return st
}

// SetAnswer records a complete final answer.
func (s *State) SetAnswer(answer string) {
	s.Answer, s.Done, s.Complete, s.Reason = answer, true, true, ""
}

// SetPartial records a best-effort answer with the reason it is incomplete
// and the failure kind.
func (s *State) SetPartial(answer, reason, failure string) {
	s.Answer, s.Done, s.Complete, s.Reason = answer, true, false, reason
	if s.Failure == "" {
		s.Failure = failure
	}
}

// NoteIncident records the failure kind of a part of the run that failed
// without ending it.
func (s *State) NoteIncident(kind string) {
	if kind != "" {
		s.Incidents = append(s.Incidents, kind)
	}
}

// Note records a named intermediate output.
func (s *State) Note(key, value string) {
	if s.Notes == nil {
		s.Notes = map[string]string{}
	}
	s.Notes[key] = value
}

// Entry is one ReAct scratchpad entry: a thought, then either an action with
// its observation, a final answer, or a format error fed back to the model.
type Entry struct {
	Thought     string `json:"thought,omitempty"`
	Tool        string `json:"tool,omitempty"`
	Input       string `json:"input,omitempty"`
	Observation string `json:"observation,omitempty"`
	// Raw is the model text this entry was parsed from.
	Raw string `json:"raw,omitempty"`
	// Error is the parse or guard error shown to the model, if any.
	Error string `json:"error,omitempty"`
	// Final is set when the entry is the final answer.
	Final string `json:"final,omitempty"`
	// ToolCallID links native tool calls to their responses.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// Trial is one finished attempt of a retrying paradigm.
type Trial struct {
	Answer  string `json:"answer"`
	Success bool   `json:"success"`
	// Feedback is the evaluator's verdict text.
	Feedback string `json:"feedback,omitempty"`
	// Lesson is the reflection written after a failed trial.
	Lesson string `json:"lesson,omitempty"`
}

// Tally is a self-consistency vote: how many samples were drawn, how many
// failed, and the votes per distinct answer, most votes first.
type Tally struct {
	Samples int    `json:"samples"`
	Failed  int    `json:"failed,omitempty"`
	Votes   []Vote `json:"votes,omitempty"`
}

// Vote is the count of one distinct answer among the samples.
type Vote struct {
	Answer string `json:"answer"`
	Count  int    `json:"count"`
	// First is the index of the first sample that gave this answer.
	First int `json:"first"`
}

// SubQuestion is one Least-to-Most sub-question and its answer ("" until
// solved).
type SubQuestion struct {
	Question string `json:"question"`
	Answer   string `json:"answer,omitempty"`
}

// Candidate is a sampled answer or a thought with a score.
type Candidate struct {
	Text   string  `json:"text"`
	Answer string  `json:"answer,omitempty"`
	Score  float64 `json:"score"`
	Parent int     `json:"parent"`
	Depth  int     `json:"depth"`
}

// Counters are the counts Usage keeps for the whole run and for each nodekind.
type Counters struct {
	// ModelCalls counts model calls that returned a reply.
	ModelCalls int `json:"model_calls"`
	// ModelAttempts counts provider attempts, failed and retried ones
	// included: a call that succeeded on its third try adds 1 to
	// ModelCalls and 3 here.
	ModelAttempts int `json:"model_attempts"`
	// FailedCalls counts model calls that failed after every attempt.
	FailedCalls      int `json:"failed_model_calls,omitempty"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedPromptTokens is the part of PromptTokens the provider served
	// from its prompt cache, where it says (priced at the cached rate).
	CachedPromptTokens int `json:"cached_prompt_tokens,omitempty"`
	ToolCalls          int `json:"tool_calls"`
}

func (c *Counters) addModelCall(prompt, completion int) {
	c.ModelCalls++
	c.PromptTokens += prompt
	c.CompletionTokens += completion
}

func (c *Counters) addAttempts(attempts int, failed bool) {
	c.ModelAttempts += attempts
	if failed {
		c.FailedCalls++
	}
}

// Usage counts a run's consumption. Methods are safe for concurrent use.
type Usage struct {
	mu sync.Mutex
	Counters
	Estimated bool                  `json:"estimated,omitempty"`
	CostUSD   float64               `json:"cost_usd,omitempty"`
	PerNode   map[string]*NodeUsage `json:"per_node,omitempty"`
}

// NodeUsage is the usage of one nodekind.
type NodeUsage = Counters

func (u *Usage) node(id string) *NodeUsage {
	if u.PerNode == nil {
		u.PerNode = map[string]*NodeUsage{}
	}
	n := u.PerNode[id]
	if n == nil {
		n = &NodeUsage{}
		u.PerNode[id] = n
	}
	return n
}

// AddModelCall adds one model call's tokens and cost, attributed to nodekind.
func (u *Usage) AddModelCall(node string, prompt, completion int, estimated bool, cost float64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.addModelCall(prompt, completion)
	u.Estimated = u.Estimated || estimated
	u.CostUSD += cost
	u.node(node).addModelCall(prompt, completion)
}

// AddCachedTokens counts n prompt tokens of a model call of node that the
// provider served from its prompt cache (already in the call's prompt
// tokens).
func (u *Usage) AddCachedTokens(node string, n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.CachedPromptTokens += n
	u.node(node).CachedPromptTokens += n
}

// AddAttempts counts provider attempts of one model call of node, and
// whether the call failed in the end (after its retries).
func (u *Usage) AddAttempts(node string, attempts int, failed bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.addAttempts(attempts, failed)
	u.node(node).addAttempts(attempts, failed)
}

// AddToolCall counts one tool call attributed to nodekind.
func (u *Usage) AddToolCall(node string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ToolCalls++
	u.node(node).ToolCalls++
}

// Snapshot returns a copy of the counters that is safe to read and marshal
// while the run goes on.
func (u *Usage) Snapshot() UsageSnapshot {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := UsageSnapshot{Counters: u.Counters, Estimated: u.Estimated, CostUSD: u.CostUSD}
	if len(u.PerNode) > 0 {
		s.PerNode = make(map[string]NodeUsage, len(u.PerNode))
		for k, v := range u.PerNode {
			s.PerNode[k] = *v
		}
	}
	return s
}

// Totals returns the run's totals without the per-node breakdown: what
// Snapshot returns, minus the copy of PerNode, for checks made before
// every model call (run budgets).
func (u *Usage) Totals() UsageSnapshot {
	u.mu.Lock()
	defer u.mu.Unlock()
	return UsageSnapshot{Counters: u.Counters, Estimated: u.Estimated, CostUSD: u.CostUSD}
}

// UsageSnapshot is an immutable copy of Usage.
type UsageSnapshot struct {
	Counters
	Estimated bool                 `json:"estimated,omitempty"`
	CostUSD   float64              `json:"cost_usd,omitempty"`
	PerNode   map[string]NodeUsage `json:"per_node,omitempty"`
}

// Nodes returns the node ids with usage, sorted.
func (s UsageSnapshot) Nodes() []string {
	out := make([]string, 0, len(s.PerNode))
	for k := range s.PerNode {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
