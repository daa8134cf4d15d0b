package executor

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// ErrBranchEnded means Next was called on a branch that ended with a final
// answer or was stopped by a guard.
var ErrBranchEnded = errors.New("react: the branch has ended")

// Branch is a ReAct run paused between model turns: the prompt, the steps
// so far and what the guards remember (the calls made, for the repeat
// guard; the format errors in a row, for the parse guard). Next extends it
// by one turn into a new Branch and leaves the old one unchanged, so a tree
// search can grow several branches from one state (LATS does); Loop.Run is
// one chain of such turns plus the iteration budget and the finalizer.
// Next may be called concurrently on one Branch; the branches share the
// run state, of which they change only the Usage.
type Branch struct {
	r     *run
	ended bool
}

// TurnOptions adjust one turn of a Branch.
type TurnOptions struct {
	// Reflections, when not nil, replace the lessons the prompt shows
	// (Input.Reflections) from this turn on.
	Reflections []string
	// CallOptions are added after the loop's own options to this turn's
	// model call, for example a seed or a temperature.
	CallOptions []llms.CallOption
}

// Turn is what one turn of a Branch did.
type Turn struct {
	// Entries are the turn's scratchpad entries: one per tool call
	// (with its observation, or the guard message as Error), or one for
	// the final answer or for a reply that could not be used (Error is the
	// feedback the model sees next turn).
	Entries []state.Entry
	// Final is true when the model gave its final answer, Answer. The
	// branch has ended.
	Final  bool
	Answer string
	// Invalid is true when the reply could not be used: a format error,
	// answered with feedback in the next turn.
	Invalid bool
	// Failure is state.FailureParse or state.FailureLoop when a guard
	// stopped the branch (too many format errors in a row, a call repeated
	// too often), with the Reason; the branch has ended.
	Failure, Reason string
}

// Ended reports whether the turn ended its branch.
func (t Turn) Ended() bool { return t.Final || t.Failure != "" }

// Begin starts a branch for in: the prompt is rendered, no model call is
// made. in.Task is required, as for Run.
func (l *Loop) Begin(st *state.State, in Input) (*Branch, error) {
	r, err := l.begin(st, in)
	if err != nil {
		return nil, err
	}
	return &Branch{r: r}, nil
}

// Next asks the model for one more turn and runs its tool calls (with
// every guard of the loop), and returns the extended branch and what the
// turn did. b itself is unchanged. The iteration budget and the finalizer
// are the caller's: Next never stops a branch for its length. It fails
// with ErrBranchEnded on an ended branch, and otherwise only as Run does:
// when the model call fails, a template cannot be rendered, or ctx ends.
func (b *Branch) Next(ctx context.Context, opts TurnOptions) (*Branch, Turn, error) {
	if b.ended {
		return nil, Turn{}, ErrBranchEnded
	}
	r := b.r.fork()
	r.tr = trace.From(ctx)
	if opts.Reflections != nil {
		r.in.Reflections = opts.Reflections
		if err := r.renderHead(); err != nil {
			return nil, Turn{}, err
		}
	}
	entries, steps := len(r.out.Entries), len(r.steps)
	done, h, err := r.turn(ctx, opts.CallOptions)
	if err != nil {
		return nil, Turn{}, err
	}
	t := Turn{Entries: slices.Clone(r.out.Entries[entries:]), Final: done}
	t.Invalid = len(r.steps) > steps && r.steps[len(r.steps)-1].kind == stepInvalid
	if done {
		r.out.Complete = true
		t.Answer = r.out.Answer
	}
	if h != nil {
		t.Failure, t.Reason = h.failure, h.reason
		r.out.Failure, r.out.Reason = h.failure, h.reason
		r.guard(h.failure, len(r.steps), h.reason, map[string]any{"failure": h.failure, "finalize": false})
	}
	return &Branch{r: r, ended: t.Ended()}, t, nil
}

// fork returns a copy of r that can take turns without changing r.
func (r *run) fork() *run {
	c := *r
	c.steps = slices.Clip(r.steps)
	c.out.Entries = slices.Clip(r.out.Entries)
	c.seen = maps.Clone(r.seen)
	for k, v := range c.seen {
		cp := *v
		c.seen[k] = &cp
	}
	return &c
}

// Entries returns the branch's scratchpad: every turn's entries, in order.
func (b *Branch) Entries() []state.Entry { return slices.Clone(b.r.out.Entries) }

// Turns returns how many model turns the branch has taken.
func (b *Branch) Turns() int { return b.r.out.Iterations }

// Ended reports whether the branch ended with a final answer or was
// stopped by a guard.
func (b *Branch) Ended() bool { return b.ended }

// Transcript renders the branch's steps as the ReAct text the prompt and
// the finalizer use (thought, action, action input and observation lines;
// format errors left out), every observation in full, and the final answer
// last when the branch ended with one.
func (b *Branch) Transcript() string {
	text := b.r.transcript(false)
	if !b.r.out.Complete {
		return text
	}
	if text == b.r.l.lb.nothingYet {
		text = ""
	}
	return strings.TrimSpace(text + "\n" + b.r.finalText())
}
