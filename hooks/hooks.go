// Package hooks is the contract of run hooks: code that wraps every node
// execution, model call and tool call of a run, in the manner of
// Temporal's interceptors or Eino's callbacks. The engine's own
// cross-cutting concerns (the journal, OpenTelemetry spans, the audit log,
// usage and cost, budgets, trace events, token streaming) are hooks; a
// program adds its own through the Go API (planner.WithHooks,
// planner.WithRunHooks), for example a filter that removes personal data
// from prompts, or metrics of its own.
//
// A hook is any value that implements one or more of NodeHook, ModelHook,
// ProviderHook and ToolHook; each wraps the next function of its chain and
// may act before it (change the call, refuse it with an error), after it
// (read or change the result) or instead of it (answer from a journal or a
// cache). A Set holds a run's hooks in order, outermost first.
//
// A model call passes two chains: the ModelHooks wrap the metered call
// (their result carries the call's usage and cost), and inside the
// metering the ProviderHooks wrap the provider request itself (their
// result has no usage yet: a journal or a response cache answers there, and
// the call is metered the same whether it was answered live or not). A
// ProviderHook that keeps replies to answer later calls with (the journal)
// keeps their usage too: it measures a live reply with ModelCall.Measure
// and answers a later call with the usage it kept (ModelResult.Measured),
// so a replayed call is not measured again.
//
// The package imports only the standard library and langchaingo's llms
// types, so every layer of the engine can use it.
package hooks

import (
	"context"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// Node is one execution of a graph node.
type Node struct {
	// ID is the node's id; Kind its type (`type:` in the pipeline).
	ID, Kind string
	// Step is the execution's number in the run, from 1.
	Step int
}

// NodeFunc runs a node execution and returns the route it takes.
type NodeFunc func(ctx context.Context, n Node) (route string, err error)

// NodeHook wraps node executions.
type NodeHook interface {
	WrapNode(next NodeFunc) NodeFunc
}

// ModelCall is one model call.
type ModelCall struct {
	// Node, Kind and Role say who calls: the node's id and type, and a
	// finer role inside it ("finalize", "evaluate"; "" for the node's main
	// call).
	Node, Kind, Role string
	// TaskID is the run's task id; StepID the plan step the call serves.
	TaskID, StepID string
	// Provider and Model name the model ("openai", "gpt-4o-mini").
	Provider, Model string
	// Messages and Options are the request; a hook may replace them
	// (Options is a fresh slice per call: appending to it is safe).
	Messages []llms.MessageContent
	Options  []llms.CallOption
	// EmptyRetry is n when the call is the n-th retry (of EmptyRetries)
	// after an empty reply, else 0.
	EmptyRetry, EmptyRetries int
	// Measure measures and prices resp as this call's reply, the way the
	// metering does. The metering sets it for the ProviderHooks; it is nil
	// outside the metering (for ModelHooks, and for calls nobody meters).
	// A ProviderHook that keeps replies to answer later calls with (the
	// journal) keeps their usage with them, and answers with that usage
	// (ModelResult.Measured) rather than have the reply measured again.
	Measure func(resp *llms.ContentResponse) Usage
}

// Usage is a model call's tokens and cost.
type Usage struct {
	PromptTokens, CompletionTokens, CachedPromptTokens int
	// Estimated is true when a tokenizer counted the tokens because the
	// provider reported none.
	Estimated bool
	// CostUSD is the call's price in US dollars (0 when unknown).
	CostUSD float64
}

// ModelResult is what a model call returned.
type ModelResult struct {
	// Response is the provider's reply.
	Response *llms.ContentResponse
	// Usage is set by the metering, between the ModelHooks and the
	// ProviderHooks; ProviderHooks see it zero from the provider. A
	// ProviderHook that answers the call with a reply and its usage (the
	// journal replaying a call it recorded with ModelCall.Measure) sets it
	// and Measured.
	Usage Usage
	// Measured is true when a ProviderHook set Usage: the metering keeps
	// it rather than measure the reply (a resumed run does not count the
	// tokens of its replayed calls again).
	Measured bool
	// Attempts counts the provider attempts the call took (retries
	// included), at least 1; set by the metering.
	Attempts int
	// Elapsed is the call's wall time, set by the metering.
	Elapsed time.Duration
}

// ModelFunc makes a model call.
type ModelFunc func(ctx context.Context, call *ModelCall) (*ModelResult, error)

// ModelHook wraps metered model calls.
type ModelHook interface {
	WrapModel(next ModelFunc) ModelFunc
}

// ProviderHook wraps the provider request of a model call, inside the
// metering.
type ProviderHook interface {
	WrapProvider(next ModelFunc) ModelFunc
}

// ToolCall is one tool call, after its name was resolved against the
// run's tools.
type ToolCall struct {
	// Node is the calling node's id; Step the plan step or ReAct step the
	// call belongs to, when known; ID the provider's tool-call id, when
	// the model called it natively.
	Node, Step, ID string
	// Tool is the tool's registered name; Input what it gets.
	Tool, Input string
	// Stateful is true for tools whose calls change state later calls
	// read (tools.Meta.Stateful); NeedsApproval for tools a human approves.
	Stateful, NeedsApproval bool
	// Unknown is true when the name matched no tool: the call fails with
	// tools.ErrUnknownTool without running anything (the model is told the
	// tools there are), and it is neither counted, approved nor journaled.
	Unknown bool
	// Trace is extra data the caller attaches to every trace event of the
	// call (its "step", "depth", "tool_call_id"). Read-only.
	Trace map[string]any
}

// Decision is a human's decision on a tool call that needs approval.
type Decision struct {
	Approved bool
	// By says who decided; Reason why.
	By, Reason string
}

// ToolResult is what a tool call returned.
type ToolResult struct {
	// Output is the tool's output; Err the tool's failure (a failed call is
	// a result, not an error of the chain: the chain's error stops the run).
	Output string
	Err    error
	// Elapsed is how long the tool ran (0 when it did not run live).
	Elapsed time.Duration
	// Live is true when the tool ran in this call; false when the result
	// was answered without running it (from a journal).
	Live bool
	// Decision is the human decision the call needed, nil when it needed
	// none; Asked is true when a human was asked for it in this call (not
	// replayed from a journal).
	Decision *Decision
	Asked    bool
}

// ToolFunc runs a tool call.
type ToolFunc func(ctx context.Context, call *ToolCall) (*ToolResult, error)

// ToolHook wraps tool calls.
type ToolHook interface {
	WrapTool(next ToolFunc) ToolFunc
}
