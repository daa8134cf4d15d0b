// Package trace defines the single event type every part of a run emits and
// the sinks that consume events: a readable terminal stream and a JSONL file.
// A Tracer built WithScrubber removes secrets from every event before any
// sink sees it.
package trace

import (
	"context"
	"sync"
	"time"

	"github.com/planner-engine/planner/redact"
)

// Kind names what an event reports.
type Kind string

// Event kinds emitted by the runtime and the agent nodes.
const (
	KindRunStart    Kind = "run_start"
	KindRunEnd      Kind = "run_end"
	KindNodeStart   Kind = "node_start"
	KindNodeEnd     Kind = "node_end"
	KindRoute       Kind = "route"
	KindError       Kind = "error"
	KindLLMCall     Kind = "llm_call"
	KindToken       Kind = "token"
	KindThought     Kind = "thought"
	KindAction      Kind = "action"
	KindObservation Kind = "observation"
	KindParseError  Kind = "parse_error"
	KindGuard       Kind = "guard"
	KindPlan        Kind = "plan"
	KindStep        Kind = "step"
	KindDecision    Kind = "decision"
	KindVote        Kind = "vote"
	KindReflection  Kind = "reflection"
	KindCandidate   Kind = "candidate"
	KindAnswer      Kind = "answer"
	KindInfo        Kind = "info"
	// KindRetry reports a failed model attempt that is about to be retried,
	// with the wait (Data: attempt, max_attempts, delay_ms, status, reason).
	KindRetry Kind = "retry"
)

// Usage is the model usage attached to an llm_call event.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedPromptTokens is the part of PromptTokens the provider served
	// from its prompt cache (priced at the cached rate), when it says.
	CachedPromptTokens int     `json:"cached_prompt_tokens,omitempty"`
	Estimated          bool    `json:"estimated,omitempty"`
	CostUSD            float64 `json:"cost_usd,omitempty"`
}

// Event is one thing that happened in a run.
type Event struct {
	RunID string    `json:"run_id"`
	Seq   int64     `json:"seq"`
	Time  time.Time `json:"time"`
	// Node is the graph node id the event comes from; empty for run events.
	Node string `json:"node,omitempty"`
	Kind Kind   `json:"kind"`
	// Text is the event's main human-readable content (a thought, an
	// observation, an answer, an error message).
	Text string `json:"text,omitempty"`
	// Data holds structured details (tool, input, route, plan, votes...).
	Data map[string]any `json:"data,omitempty"`
	// Usage is set on llm_call events.
	Usage *Usage `json:"usage,omitempty"`
	// ElapsedMS is a duration in milliseconds where one applies.
	ElapsedMS float64 `json:"elapsed_ms,omitempty"`
}

// Sink consumes events. Emit is called from the emitting goroutine, possibly
// concurrently; implementations must be safe for concurrent use.
type Sink interface {
	Emit(e Event)
}

// Scrubber removes secrets from text. *redact.Scrubber implements it.
// Implementations must be safe for concurrent use.
type Scrubber interface {
	String(s string) string
}

// Tracer stamps events with the run id, a sequence number and the time,
// scrubs them when it has a Scrubber, and forwards them to its sinks. The
// zero value is not usable; use New or NewWithOptions. A nil *Tracer
// discards events, so code can trace unconditionally.
type Tracer struct {
	runID string
	now   func() time.Time
	scrub Scrubber // nil: events are not scrubbed; set only at construction
	// mu guards seq and sinks: stamping and delivery happen under it.
	mu    sync.Mutex
	seq   int64
	sinks []Sink
}

// Option configures a Tracer built by NewWithOptions.
type Option func(*Tracer)

// WithSinks adds sinks, in order, after any added by earlier options.
// Default: none (add more later with AddSink).
func WithSinks(sinks ...Sink) Option {
	return func(t *Tracer) { t.sinks = append(t.sinks, sinks...) }
}

// WithScrubber scrubs every event once, before any sink sees it: its Text,
// its Node and every string inside Data (see Scrub). Sinks added later with
// AddSink see scrubbed events too. Default: nil, events reach the sinks as
// emitted.
func WithScrubber(s Scrubber) Option {
	return func(t *Tracer) { t.scrub = s }
}

// New returns a tracer for one run that delivers to sinks and does not
// scrub; it is NewWithOptions(runID, WithSinks(sinks...)).
func New(runID string, sinks ...Sink) *Tracer {
	return NewWithOptions(runID, WithSinks(sinks...))
}

// NewWithOptions returns a tracer for one run.
func NewWithOptions(runID string, opts ...Option) *Tracer {
	t := &Tracer{runID: runID, now: time.Now}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Scrub returns e with its Text, its Node and every string inside its Data
// passed through s (see redact.Walk for what Data holds that is reached).
// It does not modify e's Data: maps, slices and structs that hold a changed
// string are copied. A nil s returns e unchanged.
func Scrub(s Scrubber, e Event) Event {
	if s == nil {
		return e
	}
	e.Node = s.String(e.Node)
	e.Text = s.String(e.Text)
	if e.Data != nil {
		e.Data = redact.Walk(e.Data, s)
	}
	return e
}

// TextStream scrubs a text that arrives in pieces, such as the chunks of
// a streamed model reply: Write takes the next piece and returns the
// scrubbed text to emit now, Flush the rest at the end of the text.
// *redact.Stream implements it.
type TextStream interface {
	Write(chunk string) string
	Flush() string
}

// streamScrubber is a Scrubber that can scrub a text in pieces;
// *redact.Scrubber is one.
type streamScrubber interface {
	NewStream() *redact.Stream
}

// NewTextStream returns a TextStream for one streamed text whose pieces
// are then emitted as events, for example token events: Emit scrubs each
// event alone, so a secret split across two pieces would survive it.
// When the tracer's Scrubber can scrub across pieces (it has a NewStream
// method, as *redact.Scrubber has), the TextStream holds back the end of
// the text until no secret can continue across it (see redact.Stream);
// otherwise, and for a nil tracer or one without a Scrubber, it passes
// pieces through as they come.
func (t *Tracer) NewTextStream() TextStream {
	if t != nil {
		if s, ok := t.scrub.(streamScrubber); ok {
			return s.NewStream()
		}
	}
	return passStream{}
}

// passStream is a TextStream that holds nothing back.
type passStream struct{}

func (passStream) Write(chunk string) string { return chunk }
func (passStream) Flush() string             { return "" }

// RunID returns the run id events are stamped with.
func (t *Tracer) RunID() string {
	if t == nil {
		return ""
	}
	return t.runID
}

// AddSink adds a sink for subsequent events.
func (t *Tracer) AddSink(s Sink) {
	t.mu.Lock()
	t.sinks = append(t.sinks, s)
	t.mu.Unlock()
}

// Emit scrubs e (when the tracer has a Scrubber), stamps it and sends it
// to every sink. Sinks see events in sequence order: stamping and delivery
// happen under one lock.
func (t *Tracer) Emit(e Event) {
	if t == nil {
		return
	}
	e = Scrub(t.scrub, e) // outside the lock: the scrubber is safe for concurrent use
	t.mu.Lock()
	defer t.mu.Unlock()
	e.RunID = t.runID
	t.seq++
	e.Seq = t.seq
	if e.Time.IsZero() {
		e.Time = t.now()
	}
	for _, s := range t.sinks {
		s.Emit(e)
	}
}

// Recorder is a sink that keeps every event in memory, for tests and for
// the --json output's trace.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Emit records e.
func (r *Recorder) Emit(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the recorded events.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// OfKind returns the recorded events of one kind.
func (r *Recorder) OfKind(k Kind) []Event {
	var out []Event
	for _, e := range r.Events() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

type ctxKey struct{}

// WithTracer returns a context carrying t, so deeply nested code (models,
// tools) can emit events without threading the tracer through every call.
func WithTracer(ctx context.Context, t *Tracer) context.Context {
	return context.WithValue(ctx, ctxKey{}, t)
}

// From returns the tracer in ctx, or nil (which discards events).
func From(ctx context.Context) *Tracer {
	t, _ := ctx.Value(ctxKey{}).(*Tracer)
	return t
}
