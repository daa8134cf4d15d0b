// Package tools defines the tool interface used by every agent node, the
// metadata and JSON schema a tool may declare, and the registry that resolves
// tolerant tool names and runs calls with timeouts and panic recovery.
//
// A Tool is method-compatible with langchaingo's tools.Tool, so langchaingo
// tools plug in unchanged.
package tools

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Tool is the interface every tool implements. It matches langchaingo's
// tools.Tool method set.
type Tool interface {
	// Name is the identifier the model uses to call the tool.
	Name() string
	// Description tells the model what the tool does and what input it takes.
	Description() string
	// Call runs the tool on one input and returns the observation text.
	Call(ctx context.Context, input string) (string, error)
}

// Schemer is implemented by tools that declare a JSON schema for their input,
// used for native tool calling. Tools without one get a single string
// argument named "input".
type Schemer interface {
	// Schema returns a JSON-schema object describing the tool's arguments.
	Schema() map[string]any
}

// MetaProvider is implemented by tools that declare metadata.
type MetaProvider interface {
	// Meta returns the tool's metadata.
	Meta() Meta
}

// Meta describes how a tool may be used.
type Meta struct {
	// ReadOnly is true when the tool has no side effects. Default false.
	ReadOnly bool `json:"read_only"`
	// NeedsApproval is true when a human must approve each call the
	// engine makes (a pipeline marks a tool with approve: true). Default
	// false.
	NeedsApproval bool `json:"needs_approval"`
	// Timeout bounds one call; zero means the registry default (30s).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Network is true when the tool reaches the network.
	Network bool `json:"network"`
	// Stateful is true when a call's result depends on earlier calls of
	// the same run (through State), as a docstore lookup depends on the
	// page its search opened. A resumed thread runs the recorded calls of
	// such a tool again, in order, to rebuild that state, and checks they
	// return what the journal holds. Default false.
	Stateful bool `json:"stateful,omitempty"`
}

// Sentinel errors returned by tools and the registry.
var (
	// ErrUnknownTool means no registered tool matches the requested name.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrBadInput means the tool could not understand its input.
	ErrBadInput = errors.New("bad tool input")
	// ErrToolPanic means the tool panicked; the panic value is in the message.
	ErrToolPanic = errors.New("tool panicked")
	// ErrToolTimeout means the tool did not finish within its timeout.
	ErrToolTimeout = errors.New("tool timed out")
	// ErrNotApproved means a tool that needs approval was not approved.
	ErrNotApproved = errors.New("tool call not approved")
)

// RequireApproval returns t marked as needing a human's approval for each
// call the engine makes (Meta.NeedsApproval); its name, description,
// schema and other metadata are t's. A pipeline marks a tool so with
// `approve: true` in its tools entry.
func RequireApproval(t Tool) Tool { return WithApproval(t, true) }

// WithApproval returns t with Meta.NeedsApproval set to need; its name,
// description, schema and other metadata are t's. `approve: false` in a
// pipeline's tools entry lifts the approval a tool asks for by default
// (a files tool with write: true); `approve: true` adds it.
func WithApproval(t Tool, need bool) Tool {
	a := approval{Tool: t, need: need}
	if _, ok := t.(Schemer); ok {
		return approvalSchema{a}
	}
	return a
}

type approval struct {
	Tool
	need bool
}

func (a approval) Meta() Meta {
	m := MetaOf(a.Tool)
	m.NeedsApproval = a.need
	return m
}

type approvalSchema struct{ approval }

func (a approvalSchema) Schema() map[string]any { return a.Tool.(Schemer).Schema() }

// Unquote removes one pair of matching quote characters (any of quotes,
// such as "\"'`") that wraps all of s, when that character does not
// occur inside, and trims the space left inside; otherwise s is returned
// as it is. Models often quote a whole tool input; a quote inside belongs
// to the input and is kept.
func Unquote(s, quotes string) string {
	if len(s) >= 2 {
		q := s[0]
		if strings.IndexByte(quotes, q) >= 0 && s[len(s)-1] == q && strings.IndexByte(s[1:len(s)-1], q) < 0 {
			return strings.TrimSpace(s[1 : len(s)-1])
		}
	}
	return s
}
