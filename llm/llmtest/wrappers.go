package llmtest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// Request is one call as a Recorder saw it.
type Request struct {
	// Messages are the call's messages (the slice is a copy; the messages
	// are the caller's).
	Messages []llms.MessageContent
	// Options are the call's options, applied to zero llms.CallOptions.
	Options llms.CallOptions
	// Meta is what the Recorder's Meta function took from the call's
	// context; nil without one.
	Meta any
}

// Text returns the text of the request's messages (see Text).
func (r Request) Text() string { return Text(r.Messages) }

// Recorder passes every call to Model and keeps it as a Request, in the
// order the calls started. It also counts the calls in flight and keeps
// the most in flight at once. Its methods may be called while calls run.
type Recorder struct {
	// Model answers the calls; nil answers each with an empty text reply.
	Model llms.Model
	// Meta, when set, takes what the test needs from each call's context
	// (a value the code under test put there) into Request.Meta.
	Meta func(ctx context.Context) any

	mu             sync.Mutex
	reqs           []Request
	inFlight, peak int
}

// GenerateContent records the call and passes it to Model.
func (r *Recorder) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	req := Request{Messages: slices.Clone(msgs), Options: Options(opts...)}
	if r.Meta != nil {
		req.Meta = r.Meta(ctx)
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.inFlight++
	r.peak = max(r.peak, r.inFlight)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
	}()
	return orEmpty(r.Model).GenerateContent(ctx, msgs, opts...)
}

// Call answers a single prompt through GenerateContent.
func (r *Recorder) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, r, prompt, opts...)
}

// Requests returns a copy of the requests so far.
func (r *Recorder) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// Calls returns how many calls have started.
func (r *Recorder) Calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// InFlight returns how many calls are running now.
func (r *Recorder) InFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inFlight
}

// Peak returns the most calls that were in flight at once.
func (r *Recorder) Peak() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak
}

// Gate holds each call until the test lets it go, then passes it to
// Model; a held call whose context ends fails with the context's error. A
// zero Gate holds every call: one never released waits for its context.
// Release lets calls go one at a time, Open lets every call go (those
// held and those to come) until Hold; Wrap puts other models behind the
// same gate. Use a pointer: a Gate must not be copied once used.
type Gate struct {
	// Model answers the calls let go; nil answers each with an empty text
	// reply.
	Model llms.Model
	// Started, when set, receives a value, without blocking, as each call
	// reaches the gate.
	Started chan<- struct{}

	mu      sync.Mutex
	open    bool
	tokens  int           // releases not yet taken by a call
	waiting int           // calls at the gate now
	wake    chan struct{} // closed and replaced whenever the gate changes
}

// Release lets n calls go: those held now, then those to come.
func (g *Gate) Release(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tokens += n
	g.changed()
}

// Open lets every call go, those held and those to come, until Hold.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = true
	g.changed()
}

// Hold makes calls wait at the gate again after Open; releases not yet
// taken are kept.
func (g *Gate) Hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = false
}

// Waiting returns how many calls are held at the gate now.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}

// changed wakes the calls at the gate; g.mu is held.
func (g *Gate) changed() {
	if g.wake != nil {
		close(g.wake)
	}
	g.wake = make(chan struct{})
}

// GenerateContent waits until the gate lets the call go, then passes it
// to Model.
func (g *Gate) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := g.pass(ctx); err != nil {
		return nil, err
	}
	return orEmpty(g.Model).GenerateContent(ctx, msgs, opts...)
}

// pass waits for the gate to let the call go, or for ctx to end.
func (g *Gate) pass(ctx context.Context) error {
	g.mu.Lock()
	g.waiting++
	if g.wake == nil {
		g.wake = make(chan struct{})
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
	}()
	if g.Started != nil {
		select {
		case g.Started <- struct{}{}:
		default:
		}
	}
	for {
		g.mu.Lock()
		if g.open {
			g.mu.Unlock()
			return nil
		}
		if g.tokens > 0 {
			g.tokens--
			g.mu.Unlock()
			return nil
		}
		wake := g.wake
		g.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Wrap returns a model that passes each call to m once g lets it go, as
// g passes its own calls to Model: one gate can hold the calls of several
// models (those a provider builds for each run, say).
func (g *Gate) Wrap(m llms.Model) llms.Model { return &gated{gate: g, model: m} }

// gated is a model behind a gate (Gate.Wrap).
type gated struct {
	gate  *Gate
	model llms.Model
}

// GenerateContent waits until the gate lets the call go, then passes it
// to the model.
func (m *gated) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := m.gate.pass(ctx); err != nil {
		return nil, err
	}
	return orEmpty(m.model).GenerateContent(ctx, msgs, opts...)
}

// Call answers a single prompt through GenerateContent.
func (m *gated) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// Call answers a single prompt through GenerateContent.
func (g *Gate) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, g, prompt, opts...)
}

// Latency passes each call to Model after Delay; a call whose context
// ends first fails with the context's error.
type Latency struct {
	// Model answers the calls; nil answers each with an empty text reply.
	Model llms.Model
	// Delay is how long each call waits before Model answers it.
	Delay time.Duration
}

// GenerateContent waits Delay, then passes the call to Model.
func (l *Latency) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := sleep(ctx, l.Delay); err != nil {
		return nil, err
	}
	return orEmpty(l.Model).GenerateContent(ctx, msgs, opts...)
}

// Call answers a single prompt through GenerateContent.
func (l *Latency) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, l, prompt, opts...)
}

// sleep waits d, or returns ctx's error if ctx ends first; it returns nil
// at once when d is not positive.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
